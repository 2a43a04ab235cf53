#include "cli/option_values.h"

#include <gtest/gtest.h>

namespace cordon::cli {
namespace {

TEST(OptionValues, SecondsCountsAndSizesParseAndEverythingElseIsRefused) {
  EXPECT_EQ(ParseSeconds("2.5"), 2.5);
  EXPECT_EQ(ParseSeconds("1e3"), 1000.0);
  for (const char* bad : {"", "abc", "5s", " 5", "nan", "inf", "1e999"}) {
    EXPECT_FALSE(ParseSeconds(bad)) << bad;
  }
  EXPECT_EQ(ParseCount("0"), 0u);
  EXPECT_EQ(ParseCount("4096"), 4096u);
  for (const char* bad : {"", "-1", "1.5", "12k", "99999999999999999999"}) {
    EXPECT_FALSE(ParseCount(bad)) << bad;
  }
  EXPECT_EQ(ParseSize("512"), 512u);
  EXPECT_EQ(ParseSize("512M"), 512u << 20);
  EXPECT_EQ(ParseSize("2g"), 2ull << 30);
  EXPECT_EQ(ParseSize("2GiB"), 2ull << 30);
  EXPECT_EQ(ParseSize("2GB"), 2ull << 30);
  EXPECT_EQ(ParseSize("1T"), 1ull << 40);
  EXPECT_EQ(ParseSize("7b"), 7u);
  for (const char* bad : {"", "12Q", "M", "1.5G", "-1M", "2 G", "99999999999T", "1KBB"}) {
    EXPECT_FALSE(ParseSize(bad)) << bad;
  }
}

// What a person reads: the flag, what was expected, what was given; the size becomes bytes.
TEST(OptionValues, ABadValueStopsTheParseInCordonsWords) {
  double timeout = 0;
  std::uint64_t memory = 0;
  std::uint64_t processes = 0;
  CLI::App app;
  app.add_option("--timeout", timeout)->check(SecondsValue(86400));
  app.add_option("--memory", memory)->transform(SizeValue());
  app.add_option("--processes", processes)->check(CountValue());
  auto parse = [&](std::vector<std::string> args) -> std::string {
    std::reverse(args.begin(), args.end());
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(parse({"--timeout", "1e9"}),
            "--timeout: expected a number of seconds greater than 0 and at most 86400, found "
            "\"1e9\"");
  EXPECT_EQ(parse({"--timeout", "abc"}),
            "--timeout: expected a number of seconds greater than 0 and at most 86400, found "
            "\"abc\"");
  EXPECT_EQ(parse({"--memory", "12Q"}),
            "--memory: expected a size in bytes such as 512M, 2G or 1073741824 (units K, M, G, "
            "T: powers of 1024), found \"12Q\"");
  EXPECT_EQ(parse({"--processes", "ten"}), "--processes: expected a whole number, found \"ten\"");
  // The twins: good values parse, the size into bytes.
  EXPECT_EQ(parse({"--timeout", "2.5", "--memory", "2G", "--processes", "64"}), "");
  EXPECT_EQ(timeout, 2.5);
  EXPECT_EQ(memory, 2ull << 30);
  EXPECT_EQ(processes, 64u);
}

}  // namespace
}  // namespace cordon::cli
