#include "bwrap/backend.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace cordon::bwrap {
namespace {

// The test binary is not next to the trampoline; the backend looks next to the running
// executable, so these cases only check what does not need it.

TEST(BwrapBackend, RefusesBwrapInsideAWritableRoot) {
  if (!std::filesystem::exists("/usr/bin/bwrap")) GTEST_SKIP() << "bubblewrap not installed";
  auto backend = BwrapBackend::Create({"/usr"});
  ASSERT_FALSE(backend.has_value());
  EXPECT_EQ(backend.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(backend.error().message.find("writable root"), std::string::npos)
      << backend.error().message;
}

TEST(BwrapBackend, RefusesAMissingConfiguredBwrap) {
  auto backend = BwrapBackend::Create({}, "/nonexistent/bwrap");
  ASSERT_FALSE(backend.has_value());
  EXPECT_NE(backend.error().message.find("bubblewrap not found"), std::string::npos);
}

TEST(BwrapBackend, RefusesWhenTheTrampolineIsMissing) {
  if (!std::filesystem::exists("/usr/bin/bwrap")) GTEST_SKIP() << "bubblewrap not installed";
  auto backend = BwrapBackend::Create({});  // the unit-test directory has no trampoline
  ASSERT_FALSE(backend.has_value());
  EXPECT_NE(backend.error().message.find("cordon-bwrap-exec not found"), std::string::npos)
      << backend.error().message;
}

}  // namespace
}  // namespace cordon::bwrap
