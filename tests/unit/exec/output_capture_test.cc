#include "exec/output_capture.h"

#include <gtest/gtest.h>

#include <string>

namespace cordon::exec {
namespace {

TEST(HeadTailBuffer, KeepsEverythingThatFitsUnderTheCap) {
  HeadTailBuffer buffer(10);
  buffer.Append("hello");
  buffer.Append("world");
  CapturedOutput out = buffer.Finish();
  EXPECT_EQ(out.data, "helloworld");
  EXPECT_EQ(out.total_bytes, 10u);
  EXPECT_EQ(out.truncated_bytes, 0u);
}

TEST(HeadTailBuffer, KeepsHeadAndTailAndCountsTheBytesCutFromTheMiddle) {
  HeadTailBuffer buffer(10);
  buffer.Append("hello");
  buffer.Append("world");
  buffer.Append("!");
  CapturedOutput out = buffer.Finish();
  EXPECT_EQ(out.data, "hello" + OmittedMarker(1) + "orld!");
  EXPECT_EQ(out.total_bytes, 11u);
  EXPECT_EQ(out.truncated_bytes, 1u);
}

TEST(HeadTailBuffer, TailIsTheLastBytesWhateverTheChunkSizes) {
  // Byte-at-a-time, odd-sized and oversized chunks all end with the same tail.
  std::string input;
  for (int i = 0; i < 1000; ++i) input += static_cast<char>('a' + i % 26);
  for (std::size_t chunk : {1u, 3u, 7u, 64u, 999u}) {
    HeadTailBuffer buffer(100);
    for (std::size_t at = 0; at < input.size(); at += chunk) {
      buffer.Append(std::string_view(input).substr(at, chunk));
    }
    CapturedOutput out = buffer.Finish();
    EXPECT_EQ(out.data, input.substr(0, 50) + OmittedMarker(900) + input.substr(950))
        << "chunk size " << chunk;
    EXPECT_EQ(out.truncated_bytes, 900u);
  }
}

TEST(HeadTailBuffer, OddCapGivesTheExtraByteToTheHead) {
  HeadTailBuffer buffer(5);
  buffer.Append("0123456789");
  EXPECT_EQ(buffer.Finish().data, "012" + OmittedMarker(5) + "89");
}

TEST(HeadTailBuffer, ZeroCapKeepsNothingButCountsEverything) {
  HeadTailBuffer buffer(0);
  buffer.Append("abc");
  CapturedOutput out = buffer.Finish();
  EXPECT_EQ(out.data, OmittedMarker(3));
  EXPECT_EQ(out.total_bytes, 3u);
  EXPECT_EQ(out.truncated_bytes, 3u);
}

TEST(HeadTailBuffer, CountOnlyKeepsNothingAndCutsNothing) {
  HeadTailBuffer buffer = HeadTailBuffer::CountOnly();
  buffer.Append("abc");
  buffer.Append(std::string(1000, 'x'));
  EXPECT_EQ(buffer.total_bytes(), 1003u);
  EXPECT_EQ(buffer.truncated_bytes(), 0u);
  CapturedOutput out = buffer.Finish();
  EXPECT_EQ(out.data, "");
  EXPECT_EQ(out.total_bytes, 1003u);
  EXPECT_EQ(out.truncated_bytes, 0u);
}

TEST(HeadTailBuffer, EmptyStreamCapturesNothing) {
  HeadTailBuffer buffer(16);
  CapturedOutput out = buffer.Finish();
  EXPECT_EQ(out.data, "");
  EXPECT_EQ(out.total_bytes, 0u);
}

TEST(HeadTailBuffer, MarkerNamesTheOmittedByteCount) {
  EXPECT_EQ(OmittedMarker(1234), "\n[cordon: 1234 bytes omitted]\n");
}

}  // namespace
}  // namespace cordon::exec
