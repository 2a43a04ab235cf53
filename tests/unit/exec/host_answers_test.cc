// HostAnswers: what the host's DNS said of each name, as the broker read the replies; a name is
// "without an answer" (a parent proxy may be asked for it by name) only when both kinds were
// asked and neither brought a record.
#include "exec/host_answers.h"

#include <gtest/gtest.h>

#include <vector>

namespace cordon::exec {
namespace {

constexpr std::uint16_t kA = 1;
constexpr std::uint16_t kAaaa = 28;

// A reply header: `rcode`, `answers` records, truncated or not.
std::vector<std::uint8_t> Reply(unsigned rcode, unsigned answers, bool truncated = false) {
  std::vector<std::uint8_t> r(12, 0);
  r[2] = static_cast<std::uint8_t>(0x80 | (truncated ? 0x02 : 0));
  r[3] = static_cast<std::uint8_t>(0x80 | rcode);
  r[6] = static_cast<std::uint8_t>(answers >> 8);
  r[7] = static_cast<std::uint8_t>(answers & 0xff);
  return r;
}

const HostAnswers::Clock::time_point kStart{};

TEST(HostAnswersTest, BothKindsWithoutARecordIsNoAnswer) {
  for (const unsigned rcode : {0u, 3u}) {  // NOERROR, NXDOMAIN
    HostAnswers answers;
    answers.Asked("a.test", kA, kStart);
    answers.Asked("a.test", kAaaa, kStart);
    EXPECT_FALSE(answers.NoAnswer("a.test", kStart)) << "still waiting";
    answers.Replied("a.test", kA, Reply(rcode, 0));
    EXPECT_FALSE(answers.NoAnswer("a.test", kStart)) << "AAAA still waiting";
    answers.Replied("a.test", kAaaa, Reply(rcode, 0));
    EXPECT_TRUE(answers.NoAnswer("a.test", kStart)) << rcode;
  }
}

TEST(HostAnswersTest, ARecordOfEitherKindIsAnAnswerForGood) {
  HostAnswers answers;
  answers.Asked("a.test", kA, kStart);
  answers.Asked("a.test", kAaaa, kStart);
  answers.Replied("a.test", kA, Reply(0, 1));  // an A record (an internal one, say)
  answers.Replied("a.test", kAaaa, Reply(3, 0));
  EXPECT_FALSE(answers.NoAnswer("a.test", kStart));
  // Asked again, none this time: the record it had still counts.
  answers.Asked("a.test", kA, kStart);
  answers.Replied("a.test", kA, Reply(3, 0));
  EXPECT_FALSE(answers.NoAnswer("a.test", kStart));
  // Records with an error code (a CNAME chain ending in NXDOMAIN) are an answer too.
  answers.Asked("b.test", kA, kStart);
  answers.Asked("b.test", kAaaa, kStart);
  answers.Replied("b.test", kA, Reply(3, 1));
  answers.Replied("b.test", kAaaa, Reply(3, 0));
  EXPECT_FALSE(answers.NoAnswer("b.test", kStart));
}

TEST(HostAnswersTest, OneKindAloneNeverAnotherNameNever) {
  HostAnswers answers;
  answers.Asked("a.test", kA, kStart);
  answers.Replied("a.test", kA, Reply(3, 0));
  EXPECT_FALSE(answers.NoAnswer("a.test", kStart));  // AAAA never asked
  EXPECT_FALSE(answers.NoAnswer("b.test", kStart));  // never asked at all
  answers.Asked("c.test", 16, kStart);               // TXT: not counted
  answers.Replied("c.test", 16, Reply(3, 0));
  EXPECT_FALSE(answers.NoAnswer("c.test", kStart));
}

TEST(HostAnswersTest, LostTruncatedOrOddRepliesTeachNothing) {
  HostAnswers answers;
  answers.Asked("a.test", kA, kStart);
  answers.Asked("a.test", kAaaa, kStart);
  answers.Lost("a.test", kA);                           // forgotten, a failed TCP retry
  answers.Replied("a.test", kAaaa, Reply(0, 0, true));  // truncated, no record in it
  EXPECT_FALSE(answers.NoAnswer("a.test", kStart));
  // NOTIMP, SERVFAIL, REFUSED say nothing of the name (a loaded or rate-limiting server says
  // them too, and a flood of questions could provoke them).
  for (const unsigned rcode : {2u, 4u, 5u}) {
    HostAnswers odd;
    odd.Asked("b.test", kA, kStart);
    odd.Asked("b.test", kAaaa, kStart);
    odd.Replied("b.test", kA, Reply(rcode, 0));
    odd.Replied("b.test", kAaaa, Reply(3, 0));
    EXPECT_FALSE(odd.NoAnswer("b.test", kStart)) << rcode;
  }
  answers.Asked("c.test", kA, kStart);
  answers.Asked("c.test", kAaaa, kStart);
  answers.Replied("c.test", kA, std::vector<std::uint8_t>(5, 0));  // shorter than a header
  answers.Replied("c.test", kAaaa, Reply(3, 0));
  EXPECT_FALSE(answers.NoAnswer("c.test", kStart));
}

TEST(HostAnswersTest, ASilentUpstreamCountsAfterItsWaitAndOnlyWhileItIsSilent) {
  HostAnswers silent;
  silent.Asked("a.test", kA, kStart);
  silent.Asked("a.test", kAaaa, kStart);
  EXPECT_FALSE(silent.NoAnswer("a.test", kStart + std::chrono::seconds(4)));
  EXPECT_TRUE(silent.NoAnswer("a.test", kStart + HostAnswers::kNoReplyWait));

  // An upstream that replies to other questions is not silent: a question of this name still
  // waiting may bring a record.
  HostAnswers busy;
  busy.Asked("a.test", kA, kStart);
  busy.Asked("a.test", kAaaa, kStart);
  busy.Asked("b.test", kA, kStart);
  busy.Replied("b.test", kA, Reply(0, 1));
  EXPECT_FALSE(busy.NoAnswer("a.test", kStart + std::chrono::seconds(60)));
}

TEST(HostAnswersTest, ATruncatedReplyAskedAgainIsHeard) {
  // Truncated over UDP, asked again over TCP (which hangs): the upstream is not silent, and
  // the records the truncated reply held are an answer.
  HostAnswers answers;
  answers.Asked("a.test", kA, kStart);
  answers.Asked("a.test", kAaaa, kStart);
  answers.Heard("a.test", Reply(0, 40, true));
  EXPECT_FALSE(answers.NoAnswer("a.test", kStart + std::chrono::seconds(60)));
  // Without records, it still breaks the silence: the waiting questions stay unknown.
  HostAnswers quiet;
  quiet.Asked("b.test", kA, kStart);
  quiet.Asked("b.test", kAaaa, kStart);
  quiet.Heard("b.test", Reply(0, 0, true));
  EXPECT_FALSE(quiet.NoAnswer("b.test", kStart + std::chrono::seconds(60)));
}

TEST(HostAnswersTest, NoUpstreamAnswersNothing) {
  HostAnswers answers;
  for (const std::uint16_t type : {kA, kAaaa}) {
    answers.Asked("a.test", type, kStart);
    answers.Unanswerable("a.test", type);
  }
  EXPECT_TRUE(answers.NoAnswer("a.test", kStart));
}

TEST(HostAnswersTest, NamesPastTheBoundAreNotRecorded) {
  HostAnswers answers;
  for (std::size_t i = 0; i < HostAnswers::kMaxNames; ++i) {
    answers.Asked("n" + std::to_string(i) + ".test", kA, kStart);
  }
  answers.Asked("late.test", kA, kStart);
  answers.Asked("late.test", kAaaa, kStart);
  answers.Replied("late.test", kA, Reply(3, 0));
  answers.Replied("late.test", kAaaa, Reply(3, 0));
  EXPECT_FALSE(answers.NoAnswer("late.test", kStart));
}

}  // namespace
}  // namespace cordon::exec
