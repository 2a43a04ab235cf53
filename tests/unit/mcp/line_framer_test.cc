#include "mcp/line_framer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cordon::mcp {
namespace {

struct Collected {
  std::vector<std::string> lines;
  int oversized = 0;
};

LineFramer MakeFramer(std::size_t cap, Collected& out) {
  return LineFramer(cap, {.on_line = [&out](std::string_view l) { out.lines.emplace_back(l); },
                          .on_oversized = [&out] { ++out.oversized; }});
}

TEST(LineFramer, DeliversCompleteLinesAndHoldsAPartialLineUntilItsNewline) {
  Collected out;
  LineFramer framer = MakeFramer(1024, out);
  framer.Feed("{\"a\":1}\n{\"b\"");
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_EQ(out.lines[0], "{\"a\":1}");
  framer.Feed(":2}\n");
  ASSERT_EQ(out.lines.size(), 2u);
  EXPECT_EQ(out.lines[1], "{\"b\":2}");
}

TEST(LineFramer, StripsTheCarriageReturnOfCrlfLines) {
  Collected out;
  LineFramer framer = MakeFramer(1024, out);
  framer.Feed("{}\r\n");
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_EQ(out.lines[0], "{}");
}

TEST(LineFramer, SkipsBlankLinesButNotContent) {
  Collected out;
  LineFramer framer = MakeFramer(1024, out);
  framer.Feed("\n  \n\r\nx\n");
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_EQ(out.lines[0], "x");
}

TEST(LineFramer, DeliversAFinalLineWithoutNewlineAtEndOfStream) {
  Collected out;
  LineFramer framer = MakeFramer(1024, out);
  framer.Feed("{\"last\":true}");
  EXPECT_TRUE(out.lines.empty());
  framer.Finish();
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_EQ(out.lines[0], "{\"last\":true}");
}

TEST(LineFramer, AcceptsALineExactlyAtTheCap) {
  Collected out;
  LineFramer framer = MakeFramer(16, out);
  framer.Feed(std::string(16, 'a') + "\n");
  EXPECT_EQ(out.oversized, 0);
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_EQ(out.lines[0].size(), 16u);
}

TEST(LineFramer, RejectsALineOneByteOverTheCapAndKeepsGoing) {
  Collected out;
  LineFramer framer = MakeFramer(16, out);
  framer.Feed(std::string(17, 'a') + "\nnext\n");
  EXPECT_EQ(out.oversized, 1);
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_EQ(out.lines[0], "next");
}

TEST(LineFramer, DiscardsA100MegabyteLineWithoutBufferingIt) {
  Collected out;
  constexpr std::size_t kCap = 1024 * 1024;
  constexpr std::size_t kChunk = 64 * 1024;
  LineFramer framer = MakeFramer(kCap, out);
  const std::string chunk(kChunk, 'x');
  std::size_t max_capacity = 0;
  for (std::size_t sent = 0; sent < 100u * 1024 * 1024; sent += kChunk) {
    framer.Feed(chunk);
    max_capacity = std::max(max_capacity, framer.buffered_capacity());
  }
  EXPECT_TRUE(framer.discarding());
  framer.Feed("tail of the huge line\n{\"after\":1}\n");
  EXPECT_EQ(out.oversized, 1);
  // Bounded by the cap (string growth may round up), nowhere near 100 MB.
  EXPECT_LE(max_capacity, 2 * kCap);
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_EQ(out.lines[0], "{\"after\":1}");
}

TEST(LineFramer, AnOversizedLineCutByEndOfStreamDeliversNothing) {
  Collected out;
  LineFramer framer = MakeFramer(8, out);
  framer.Feed(std::string(100, 'z'));
  framer.Finish();
  EXPECT_EQ(out.oversized, 1);
  EXPECT_TRUE(out.lines.empty());
}

}  // namespace
}  // namespace cordon::mcp
