#include "config/diagnostics.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace cordon::config {
namespace {

TEST(Diagnostics, PointerTokensAreEscapedAsRfc6901Says) {
  EXPECT_EQ(PointerAppend("/environment/set", "A"), "/environment/set/A");
  EXPECT_EQ(PointerAppend("", "a/b~c"), "/a~1b~0c");
  EXPECT_EQ(PointerAppend("/command_policy/deny", std::size_t{3}), "/command_policy/deny/3");
}

TEST(Diagnostics, ClosestNameOffersOnlyLikelyTypos) {
  constexpr std::string_view kKeys[] = {"mode", "network", "writable_roots", "backend"};
  EXPECT_EQ(ClosestName("writeable_roots", kKeys), "writable_roots");
  EXPECT_EQ(ClosestName("netwrok", kKeys), "network");
  EXPECT_EQ(ClosestName("timeout", kKeys), "");
  EXPECT_EQ(ClosestName("", kKeys), "");
}

TEST(Diagnostics, QuoteEscapesAndShortens) {
  EXPECT_EQ(Quote("a\"b\n"), "\"a\\\"b\\n\"");
  EXPECT_EQ(Quote(std::string(100, 'x'), 4), "\"xxxx...\"");
  EXPECT_EQ(Quote("\xff"), "\"\\ufffd\"");  // invalid UTF-8 never reaches the terminal raw
}

TEST(Diagnostics, DescribeJsonShowsScalarsAndNamesContainers) {
  EXPECT_EQ(DescribeJson(nlohmann::json("x")), "\"x\"");
  EXPECT_EQ(DescribeJson(nlohmann::json(3)), "3");
  EXPECT_EQ(DescribeJson(nlohmann::json(false)), "false");
  EXPECT_EQ(DescribeJson(nlohmann::json(nullptr)), "null");
  EXPECT_EQ(DescribeJson(nlohmann::json::object()), "an object");
  EXPECT_EQ(DescribeJson(nlohmann::json::array()), "an array");
}

}  // namespace
}  // namespace cordon::config
