#include "config/enums.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cordon::config {
namespace {

using ::testing::HasSubstr;

TEST(ParseEnums, EveryDocumentedNameParsesBackToItsValue) {
  for (std::string_view name : kSandboxModeNames) {
    auto mode = ParseSandboxMode(name);
    ASSERT_TRUE(mode.has_value()) << name;
    EXPECT_EQ(SandboxModeName(*mode), name);
  }
  for (std::string_view name : kNetworkPolicyNames) {
    auto net = ParseNetworkPolicy(name);
    ASSERT_TRUE(net.has_value()) << name;
    EXPECT_EQ(NetworkPolicyName(*net), name);
  }
  for (std::string_view name : kBackendChoiceNames) {
    auto backend = ParseBackendChoice(name);
    ASSERT_TRUE(backend.has_value()) << name;
    EXPECT_EQ(BackendChoiceName(*backend), name);
  }
  EXPECT_EQ(*ParseSandboxMode("read_only"), SandboxMode::kReadOnly);
  EXPECT_EQ(*ParseNetworkPolicy("allow"), NetworkPolicy::kAllow);
  EXPECT_EQ(*ParseNetworkPolicy("domains"), NetworkPolicy::kDomains);
  EXPECT_EQ(*ParseBackendChoice("seatbelt"), BackendChoice::kSeatbelt);
}

TEST(ParseEnums, UnknownNameIsAnErrorListingTheValidValues) {
  auto mode = ParseSandboxMode("readonly");
  ASSERT_FALSE(mode.has_value());
  EXPECT_EQ(mode.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(mode.error().message,
            "invalid sandbox mode \"readonly\": expected one of \"off\", \"read_only\", "
            "\"workspace_write\"");
  auto net = ParseNetworkPolicy("Deny");
  ASSERT_FALSE(net.has_value());
  EXPECT_EQ(net.error().message,
            "invalid network policy \"Deny\": expected one of \"deny\", \"allow\", \"domains\"");
  auto backend = ParseBackendChoice("");
  ASSERT_FALSE(backend.has_value());
  EXPECT_THAT(backend.error().message, HasSubstr("\"auto\", \"native\", \"bwrap\", \"seatbelt\""));
}

}  // namespace
}  // namespace cordon::config
