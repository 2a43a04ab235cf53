#include "plan/toolchain_env.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "plan/environment.h"

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

bool Has(const std::vector<std::string>& env, const std::string& entry) {
  return std::find(env.begin(), env.end(), entry) != env.end();
}

bool HasName(const std::vector<std::string>& env, const std::string& name) {
  return std::any_of(env.begin(), env.end(),
                     [&](const std::string& e) { return e.starts_with(name + "="); });
}

class ToolchainEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/cordon-toolchain-env-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = fs::canonical(tmpl);
    first_ = base_ / "first";
    second_ = base_ / "second";
    fs::create_directories(first_ / ".pyenv");
    fs::create_directories(second_ / ".rustup");
    fs::create_directories(second_ / ".pyenv");
    fs::create_directories(base_ / "real-nvm");
    fs::create_directory_symlink(base_ / "real-nvm", first_ / ".nvm");
    fs::create_directories(first_);
  }
  void TearDown() override { fs::remove_all(base_); }
  fs::path base_, first_, second_;
};

TEST_F(ToolchainEnvTest, PointsEachPresentToolchainAtTheFirstHomeThatHasIt) {
  const std::vector<std::string> pointers = ToolchainPointers({first_, second_});
  EXPECT_TRUE(Has(pointers, "RUSTUP_HOME=" + (second_ / ".rustup").string()));
  EXPECT_TRUE(Has(pointers, "PYENV_ROOT=" + (first_ / ".pyenv").string()));
  EXPECT_FALSE(Has(pointers, "PYENV_ROOT=" + (second_ / ".pyenv").string()));
  // A link is followed: a hidden home grants the real directory, not the link.
  EXPECT_TRUE(Has(pointers, "NVM_DIR=" + (base_ / "real-nvm").string()));
  // The twins: what no home has gets no pointer.
  EXPECT_FALSE(HasName(pointers, "SDKMAN_DIR"));
  EXPECT_FALSE(HasName(pointers, "VOLTA_HOME"));
  EXPECT_TRUE(ToolchainPointers({base_ / "absent"}).empty());
}

TEST_F(ToolchainEnvTest, ThePointersYieldToTheCallersOwnValueAndToConfiguredSet) {
  const std::vector<std::string> pointers = ToolchainPointers({first_, second_});
  EnvironmentConfig config;
  config.set = {{"PYENV_ROOT", "/configured"}};
  const std::vector<std::string> env =
      BuildEnvironment({"RUSTUP_HOME=/opt/rustup", "PATH=/usr/bin"}, config, "/h", "/t", pointers);
  EXPECT_TRUE(Has(env, "RUSTUP_HOME=/opt/rustup"));
  EXPECT_TRUE(Has(env, "PYENV_ROOT=/configured"));
  EXPECT_TRUE(Has(env, "NVM_DIR=" + (base_ / "real-nvm").string()));
  EXPECT_TRUE(Has(env, "HOME=/h"));
}

TEST(ToolchainNames, LocationsAndBuildSettingsPassButNoCacheRegistryOrSecret) {
  for (const char* name : {"JAVA_HOME", "GOROOT", "GOFLAGS", "VIRTUAL_ENV", "RUSTUP_HOME",
                           "RUSTUP_TOOLCHAIN", "CC", "CFLAGS", "RUSTFLAGS", "CONDA_PREFIX"}) {
    EXPECT_TRUE(IsToolchainName(name)) << name;
  }
  // Caches (decision 0002: the host's are never the command's to write), registry addresses
  // (they carry tokens), and anything secret-shaped stay out.
  for (const char* name :
       {"CARGO_HOME", "GOPATH", "GOMODCACHE", "npm_config_cache", "PIP_INDEX_URL", "GOPROXY",
        "NPM_TOKEN", "JAVA_TOOL_OPTIONS", "LD_PRELOAD", "JAVA_HOMEX", "CC_"}) {
    EXPECT_FALSE(IsToolchainName(name)) << name;
  }
  const std::vector<std::string> env = BuildEnvironment(
      {"JAVA_HOME=/usr/lib/jvm/x", "GOFLAGS=-mod=mod", "CARGO_HOME=/root/.cargo"}, {}, "/h", "/t");
  EXPECT_TRUE(Has(env, "JAVA_HOME=/usr/lib/jvm/x"));
  EXPECT_TRUE(Has(env, "GOFLAGS=-mod=mod"));
  EXPECT_FALSE(HasName(env, "CARGO_HOME"));
}

TEST(ToolchainNames, DirectoriesAreTheAbsoluteValuesOfTheLocationVariables) {
  const std::vector<fs::path> dirs =
      ToolchainDirectories({"JAVA_HOME=/opt/jdk", "JAVA_HOME=/second", "RUSTUP_HOME=relative",
                            "PYENV_ROOT=/p", "CMAKE_PREFIX_PATH=/a:/b", "PATH=/usr/bin"});
  EXPECT_EQ(dirs, (std::vector<fs::path>{"/opt/jdk", "/p"}));
}

}  // namespace
}  // namespace cordon::plan
