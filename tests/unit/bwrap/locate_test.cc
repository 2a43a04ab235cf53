#include "bwrap/locate.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace cordon::bwrap {
namespace {

namespace fs = std::filesystem;

TEST(BwrapVersion, ParsesTheVersionLine) {
  auto v = ParseBwrapVersion("bubblewrap 0.8.0\n");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, (BwrapVersion{0, 8, 0}));
  auto two = ParseBwrapVersion("bubblewrap 0.11\n");
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(*two, (BwrapVersion{0, 11, 0}));
}

TEST(BwrapVersion, RejectsOtherOutput) {
  EXPECT_FALSE(ParseBwrapVersion("").has_value());
  EXPECT_FALSE(ParseBwrapVersion("bwrap 0.8.0").has_value());
  EXPECT_FALSE(ParseBwrapVersion("bubblewrap x.y").has_value());
  EXPECT_FALSE(ParseBwrapVersion("bubblewrap 0.8.0-evil").has_value());
}

TEST(BwrapVersion, OrdersVersions) {
  EXPECT_LT((BwrapVersion{0, 4, 1}), kMinimumBwrapVersion);
  EXPECT_GE((BwrapVersion{0, 8, 0}), kMinimumBwrapVersion);
}

class TrustedPath : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/cordon-bwrap-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ::chmod(dir_.c_str(), 0755);
    file_ = dir_ / "bwrap";
    std::ofstream(file_) << "#!/bin/sh\n";
    ::chmod(file_.c_str(), 0755);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  fs::path file_;
};

TEST_F(TrustedPath, AcceptsAFileOwnedByTheCallerInPrivateDirectories) {
  auto ok = CheckTrustedPath("/usr/bin/env", ::getuid(), {});
  EXPECT_TRUE(ok.has_value()) << (ok ? "" : ok.error().message);
}

TEST_F(TrustedPath, AcceptsAStickyWorldWritableAncestorAboveTrustedEntries) {
  // /var/tmp is world-writable but sticky: nobody else can rename or remove dir_ (the caller's,
  // 0755) inside it, so a build tree there is as safe as one in the home.
  auto ok = CheckTrustedPath(file_, ::getuid(), {});
  EXPECT_TRUE(ok.has_value()) << (ok ? "" : ok.error().message);
}

TEST_F(TrustedPath, RefusesAWorldWritableAncestorWithoutTheStickyBit) {
  ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);
  auto r = CheckTrustedPath(file_, ::getuid(), {});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find(dir_.string()), std::string::npos) << r.error().message;
}

TEST_F(TrustedPath, RefusesAGroupWritableBinary) {
  ::chmod(file_.c_str(), 0775);
  auto r = CheckTrustedPath(file_, ::getuid(), {});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find(file_.string()), std::string::npos) << r.error().message;
}

TEST_F(TrustedPath, RefusesAPathInsideAWritableRoot) {
  auto r = CheckTrustedPath("/usr/bin/env", ::getuid(), {"/usr"});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("writable root"), std::string::npos);
}

TEST_F(TrustedPath, RefusesAFileOwnedBySomebodyElse) {
  if (::getuid() != 0) GTEST_SKIP() << "chown needs root";
  ASSERT_EQ(::chown(file_.c_str(), 12345, 12345), 0);
  auto r = CheckTrustedPath(file_, 0, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("uid 12345"), std::string::npos) << r.error().message;
}

TEST(LocateBwrap, FindsTheDistributionBinary) {
  if (!fs::exists("/usr/bin/bwrap")) GTEST_SKIP() << "bubblewrap is not installed";
  auto found = LocateBwrap({}, {});
  ASSERT_TRUE(found.has_value()) << found.error().message;
  EXPECT_EQ(found->path, fs::path("/usr/bin/bwrap"));
  EXPECT_GE(found->version, kMinimumBwrapVersion);
}

TEST(LocateBwrap, RefusesARelativeConfiguredPath) {
  auto found = LocateBwrap("bin/bwrap", {});
  ASSERT_FALSE(found.has_value());
  EXPECT_NE(found.error().message.find("PATH is never searched"), std::string::npos);
}

TEST(LocateBwrap, RefusesAConfiguredBinaryInsideAWritableRoot) {
  if (!fs::exists("/usr/bin/bwrap")) GTEST_SKIP() << "bubblewrap is not installed";
  auto found = LocateBwrap("/usr/bin/bwrap", {"/usr/bin"});
  ASSERT_FALSE(found.has_value());
  EXPECT_NE(found.error().message.find("not trusted"), std::string::npos) << found.error().message;
}

TEST(LocateBwrap, SaysHowToInstallWhenMissing) {
  auto found = LocateBwrap("/nonexistent/bwrap", {});
  ASSERT_FALSE(found.has_value());
  EXPECT_EQ(found.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(found.error().message.find("apt install bubblewrap"), std::string::npos);
}

}  // namespace
}  // namespace cordon::bwrap
