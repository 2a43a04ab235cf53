// Fixture for tests that drive the cordon binary: a private HOME (with its own config dir) and
// a workspace, both temporary.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>

#include "support/host_files.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

namespace cordon::e2e {

// The host-side helpers (tests/support) under the names these tests use.
using test_support::Invocation;
using test_support::Outcome;
using test_support::ReadFile;
using test_support::RunBinary;
using test_support::TempDir;
using test_support::WriteFile;

// The cordon binary under test: $CORDON_BIN when set (scripts/run_unprivileged.sh runs a copy
// the test user can reach), else the one this build made.
inline std::string CordonBinary() {
  const char* bin = std::getenv("CORDON_BIN");
  return bin != nullptr && bin[0] == '/' ? bin : CORDON_BINARY;
}

// Copies the cordon under test into `dir` so that it runs from there (a sandboxed command may
// not see the build tree, which can lie below /tmp): the front as dir/bin/cordon with the full
// executable where it looks for it (dir/cli/cordon, decision 0028), or the full executable
// alone when there is no front. Returns the path to run.
// The full executable beside the front `under_test` (where the front looks for it), or empty
// when `under_test` is the full executable itself.
inline std::filesystem::path FullCordonOf(const std::filesystem::path& under_test) {
  const std::filesystem::path bin = under_test.parent_path();
  for (const std::filesystem::path& candidate :
       {bin / "../libexec/cordon/cordon", bin / "../cli/cordon"}) {
    std::error_code ec;
    if (std::filesystem::exists(candidate, ec) &&
        !std::filesystem::equivalent(candidate, under_test, ec)) {
      return candidate;
    }
  }
  return {};
}

inline std::filesystem::path StageCordon(const std::filesystem::path& dir) {
  const std::filesystem::path under_test = CordonBinary();
  const std::filesystem::path full = FullCordonOf(under_test);
  std::filesystem::create_directories(dir / "bin");
  const std::filesystem::path staged = dir / "bin/cordon";
  std::filesystem::copy_file(under_test, staged, std::filesystem::copy_options::overwrite_existing);
  if (!full.empty()) {
    std::filesystem::create_directories(dir / "cli");
    std::filesystem::copy_file(full, dir / "cli/cordon",
                               std::filesystem::copy_options::overwrite_existing);
  }
  return staged;
}

class CliTest : public ::testing::Test {
 protected:
  CliTest() : home_(tmp_.path() / "home"), workspace_(tmp_.path() / "workspace") {
    std::filesystem::create_directories(home_);
    std::filesystem::create_directories(workspace_);
  }

  std::filesystem::path ConfigPath() const { return home_ / ".config/cordon/config.json"; }

  void WriteConfig(const std::string& json) {
    std::filesystem::create_directories(ConfigPath().parent_path());
    WriteFile(ConfigPath(), json);
  }

  // cordon with `args`, a minimal environment, the private HOME, in the workspace.
  Invocation CordonInvocation(std::initializer_list<std::string> args,
                              std::vector<std::string> extra_env = {}) const {
    Invocation inv;
    inv.argv.push_back(CordonBinary());
    inv.argv.insert(inv.argv.end(), args.begin(), args.end());
    inv.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home_.string(), "LANG=C.UTF-8"};
    // No run server unless a test starts its own: one the user left running (cordon serve)
    // would take the commands and make the tests depend on it. None started on demand either
    // (decision 0030) unless a test asks: it would outlive the test.
    auto given = [&](std::string_view name) {
      return std::any_of(extra_env.begin(), extra_env.end(),
                         [&](const std::string& e) { return e.starts_with(name); });
    };
    if (!given("XDG_RUNTIME_DIR=")) inv.env.push_back(NoRunServer());
    if (!given("CORDON_RUN_SERVER=")) inv.env.push_back("CORDON_RUN_SERVER=use");
    inv.env.insert(inv.env.end(), extra_env.begin(), extra_env.end());
    inv.cwd = workspace_;
    return inv;
  }

  // An XDG_RUNTIME_DIR without a run server in it (the directory does not exist).
  std::string NoRunServer() const {
    return "XDG_RUNTIME_DIR=" + (tmp_.path() / "no-run-server").string();
  }

  Outcome Cordon(std::initializer_list<std::string> args,
                 std::vector<std::string> extra_env = {}) const {
    return RunBinary(CordonInvocation(args, std::move(extra_env)));
  }

  TempDir tmp_;
  std::filesystem::path home_;
  std::filesystem::path workspace_;
};

}  // namespace cordon::e2e
