// Escape tests: every attack of the tables in cases_*.cc, run unsandboxed (it must land: else
// "attack broken") and sandboxed (it must not land: else an escape), judged from outside.
//
// The program prints one line per case and, at the end, exactly
//   escapes: N of M
// N = attacks that escaped, M = attacks that ran (not counting "not applicable" ones, e.g. the
// root-only routes for an unprivileged caller). The test of a case fails when it escaped, was
// broken, or its sandboxed run did not start.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "escape_cases.h"

namespace cordon::escape_test {
namespace {

// Escapes that this kernel cannot close. Each still counts in N and is printed as an escape;
// it fails the test only when the machine has what closing it needs (then cordon must use it).
// Anything escaping that is not listed here fails. docs/sandbox-linux.md ("Known gaps") and
// `cordon status` (`unsupported`) say the same to users.
struct KernelLimit {
  int landlock_abi;  // the Landlock ABI that closes it
  const char* why;
};

const std::map<std::string, KernelLimit>& KernelLimitedEscapes() {
  // Empty: every case must be contained on every kernel cordon runs on. The two host sockets
  // bound during the run ("network/unix-socket-created-during-run" and its /run twin with
  // network allow) were listed here until connect() went through the supervisor
  // (docs/decisions/0019); before that they needed Landlock ABI 9.
  static const std::map<std::string, KernelLimit> limited = {};
  return limited;
}

int LandlockAbi() {
  // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION): the ABI, or -1.
  const long abi = ::syscall(444, nullptr, 0, 1U << 0);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

struct Tally {
  int escaped = 0;
  int kernel_limited = 0;  // of `escaped`: need a kernel feature this machine lacks
  int total = 0;
  std::vector<std::string> lines;
  // Cases that failed (an escape, a baseline that did not land, a sandboxed run that did not
  // start): repeated after the count, where a log's tail shows them.
  std::vector<std::string> failures;
};

Tally& Summary() {
  static Tally tally;
  return tally;
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = AllCases();
  return cases;
}

class Escape : public ::testing::TestWithParam<std::size_t> {};

TEST_P(Escape, AttackLandsUnsandboxedButNotSandboxed) {
  const Case& c = Cases()[GetParam()];
  const CaseResult result = RunCase(c);
  const auto limit = KernelLimitedEscapes().find(c.Id());
  const bool kernel_limited =
      limit != KernelLimitedEscapes().end() && LandlockAbi() < limit->second.landlock_abi;
  std::string line = std::string("escape case ") + c.Id() + ": " + VerdictName(result.verdict);
  if (result.verdict == Verdict::kEscaped && kernel_limited) {
    line += " (kernel limitation: " + std::string(limit->second.why) + " needs Landlock ABI " +
            std::to_string(limit->second.landlock_abi) + ", this kernel has " +
            std::to_string(LandlockAbi()) + ")";
  }
  if (result.verdict == Verdict::kNotApplicable) line += " (" + result.detail + ")";
  std::printf("%s\n", line.c_str());
  // CORDON_ESCAPE_VERBOSE=1: what the sandboxed run said, to see *why* each attack failed.
  if (const char* verbose = std::getenv("CORDON_ESCAPE_VERBOSE");
      verbose != nullptr && std::string(verbose) == "1") {
    std::printf("%s\n", result.detail.c_str());
  }
  std::fflush(stdout);
  Summary().lines.push_back(line);
  if (result.verdict != Verdict::kNotApplicable) ++Summary().total;
  switch (result.verdict) {
    case Verdict::kContained:
      break;
    case Verdict::kNotApplicable:
      GTEST_SKIP() << result.detail;
    case Verdict::kEscaped:
      ++Summary().escaped;
      if (kernel_limited) {
        ++Summary().kernel_limited;
        break;  // counted and printed; nothing cordon can use here would close it
      }
      ADD_FAILURE() << "ESCAPE: " << c.Id() << "\n" << result.detail;
      Summary().failures.push_back("ESCAPE " + std::string(c.Id()));
      break;
    case Verdict::kBroken:
    case Verdict::kDidNotRun:
      ADD_FAILURE() << c.Id() << ": " << VerdictName(result.verdict) << ": " << result.detail;
      Summary().failures.push_back(std::string(c.Id()) + ": " + VerdictName(result.verdict) + ": " +
                                   result.detail.substr(0, 2000));
      break;
  }
}

std::string CaseName(const ::testing::TestParamInfo<std::size_t>& info) {
  std::string name = Cases()[info.param].Id();
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Attacks, Escape, ::testing::Range<std::size_t>(0, Cases().size()),
                         CaseName);

// The harness itself: with the "sandboxed" run in mode off, an attack must be reported as an
// escape (a harness that judged the wrong tree or output would call everything contained).
TEST(EscapeHarness, ReportsAnEscapeWhenTheSandboxedRunIsUnconfined) {
  Case c;
  c.category = "self-test";
  c.name = "mode-off";
  c.script = "echo pwned > @OUT@/landed";
  c.mode = SandboxMode::kOff;
  c.landed = [](const Fixture& f) { return Exists(f.out / "landed"); };
  EXPECT_EQ(RunCase(c).verdict, Verdict::kEscaped);
}

// Prints the summary after the last test, and removes the run directories.
class SummaryPrinter : public ::testing::EmptyTestEventListener {
  void OnTestProgramEnd(const ::testing::UnitTest& /*unit*/) override {
    RemoveSessionDirectory();
    std::printf("escapes: %d of %d\n", Summary().escaped, Summary().total);
    if (Summary().kernel_limited > 0) {
      std::printf("  %d of them need a kernel feature this machine lacks (see above)\n",
                  Summary().kernel_limited);
    }
    for (const std::string& failure : Summary().failures) {
      std::printf("failed: %s\n", failure.c_str());
    }
    std::fflush(stdout);
  }
};

}  // namespace
}  // namespace cordon::escape_test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string why_not;
  if (cordon::escape_test::BaseDirectory(&why_not).empty()) {
    std::fprintf(stderr, "escape tests: %s\n", why_not.c_str());
    std::printf("escapes: unknown (the tests did not run)\n");
    return 1;
  }
  ::testing::UnitTest::GetInstance()->listeners().Append(new cordon::escape_test::SummaryPrinter);
  return RUN_ALL_TESTS();
}
