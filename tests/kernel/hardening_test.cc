// What the command inherits: environment, capabilities, the right to remount. And the run
// result's own guarantees: policy denials start nothing, output is capped with head and tail.
#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <sstream>

#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

using HardeningTest = KernelTest;

constexpr const char* kCanaryName = "CORDON_KERNEL_CANARY_TOKEN";
constexpr const char* kCanaryValue = "canary-5f1d0c-secret";

class CanaryEnvironment {
 public:
  CanaryEnvironment() { ::setenv(kCanaryName, kCanaryValue, 1); }
  ~CanaryEnvironment() { ::unsetenv(kCanaryName); }
};

TEST_F(HardeningTest, CanaryEnvironmentVariableDoesNotReachTheCommand) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  CanaryEnvironment canary;
  const RunResult result = Shell(*session, "env; cat /proc/self/environ");
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_FALSE(result.stdout_data.data.empty());
  EXPECT_EQ(result.stdout_data.data.find(kCanaryValue), std::string::npos) << Describe(result);
}

// The command can read what its sandbox enforces (so a script skips a download under network
// deny instead of retrying), and the values are the configuration's, not the caller's.
TEST_F(HardeningTest, TheCommandIsToldTheModeNetworkAndHomeItRunsUnder) {
  ::setenv("CORDON_SANDBOX_NETWORK", "allow", 1);
  Config config = MakeConfig();
  config.sandbox.mode = SandboxMode::kReadOnly;
  auto session = SessionOrSkip(config);
  const RunResult result =
      session ? Shell(*session,
                      "echo $CORDON_SANDBOX $CORDON_SANDBOX_MODE $CORDON_SANDBOX_NETWORK "
                      "$CORDON_SANDBOX_HOME")
              : RunResult{};
  ::unsetenv("CORDON_SANDBOX_NETWORK");
  if (!session) return;
  const std::string home = HomeViewName(session->GetCapabilities().home);
  EXPECT_EQ(result.stdout_data.data, "1 read_only deny " + home + "\n") << Describe(result);
}

TEST_F(HardeningTest, SandboxInitDoesNotShowTheCallersEnvironmentToTheCommand) {
  // init starts with the caller's whole environment; it is non-dumpable, so its
  // /proc/1/environ is closed to the command. The twin: the command's own environ is readable.
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  CanaryEnvironment canary;
  const RunResult init = Shell(*session, "cat /proc/1/environ; echo \"status $?\"");
  EXPECT_EQ(init.stdout_data.data.find(kCanaryValue), std::string::npos) << Describe(init);
  EXPECT_EQ(init.stdout_data.data.find("status 0"), std::string::npos) << Describe(init);
  const RunResult own =
      Shell(*session, "cat /proc/self/environ | tr '\\0' '\\n' | grep -c '^PATH='");
  EXPECT_EQ(own.stdout_data.data, "1\n") << Describe(own);
}

TEST_F(HardeningTest, VariableNamedInEnvironmentPassReachesTheCommand) {
  Config config = MakeConfig();
  config.environment.pass = {kCanaryName};
  auto session = SessionOrSkip(config);
  if (!session) return;
  CanaryEnvironment canary;
  const RunResult result = Shell(*session, fmt::format("printenv {}", kCanaryName));
  EXPECT_EQ(result.stdout_data.data, std::string(kCanaryValue) + "\n") << Describe(result);
}

// True when all five Cap* lines are there and every mask is zero.
bool AllCapabilitiesZero(const std::string& lines) {
  std::istringstream in(lines);
  int count = 0;
  for (std::string name, mask; in >> name >> mask; ++count) {
    if (mask.find_first_not_of('0') != std::string::npos) return false;
  }
  return count == 5;
}

TEST_F(HardeningTest, CommandHasNoCapabilitiesEvenWhenTheCallerIsRoot) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult result =
      Shell(*session, "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status");
  EXPECT_TRUE(AllCapabilitiesZero(result.stdout_data.data)) << Describe(result);
  EXPECT_TRUE(result.enforcement.capabilities_dropped);
}

TEST_F(HardeningTest, ModeOffKeepsTheCallersCapabilities) {
  // The twin: as root without a sandbox, the bounding set is full. (An unprivileged caller
  // has a bounding set too, so that line is non-zero for every caller.)
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kOff));
  if (!session) return;
  const RunResult result = Shell(*session, "grep -E '^CapBnd:' /proc/self/status");
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_FALSE(AllCapabilitiesZero(result.stdout_data.data)) << Describe(result);
  if (::geteuid() == 0) {
    const RunResult eff = Shell(*session, "grep -E '^CapEff:' /proc/self/status");
    EXPECT_EQ(eff.stdout_data.data.find("0000000000000000"), std::string::npos) << Describe(eff);
  }
}

TEST_F(HardeningTest, RemountingTheRootReadWriteFails) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult result = Shell(*session, "mount -o remount,rw / 2>&1; echo \"status $?\"");
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_EQ(result.stdout_data.data.find("status 0"), std::string::npos) << Describe(result);
  // And the host root is not writable from inside afterwards either.
  const std::filesystem::path target = "/" + unique_;
  cleanup_.push_back(target);
  const RunResult write = Shell(*session, fmt::format("mount -o remount,rw / 2>/dev/null; "
                                                      "echo x > '{}'",
                                                      target.string()));
  EXPECT_FALSE(Exists(target)) << Describe(write);
}

TEST_F(HardeningTest, PolicyDenialStartsNothing) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::filesystem::path marker = workspace_ / "ran";
  const RunResult denied = Shell(*session, fmt::format("touch '{}'; sudo true", marker.string()));
  EXPECT_EQ(denied.status, RunStatus::kDenied) << Describe(denied);
  EXPECT_EQ(denied.CliExitCode(), 126);
  EXPECT_FALSE(denied.decision.allowed());
  EXPECT_FALSE(denied.decision.rule_id.empty());
  EXPECT_FALSE(Exists(marker));
  // The twin: the same side effect without the denied part runs.
  const RunResult allowed = Shell(*session, fmt::format("touch '{}'", marker.string()));
  EXPECT_EQ(allowed.status, RunStatus::kExited) << Describe(allowed);
  EXPECT_TRUE(allowed.decision.allowed());
  EXPECT_TRUE(Exists(marker));
}

TEST_F(HardeningTest, OutputOverTheCapKeepsHeadAndTail) {
  Config config = MakeConfig();
  config.limits.output_bytes = 1024;  // the smallest a configuration file may set
  auto session = SessionOrSkip(config);
  if (!session) return;
  const RunResult big =
      Shell(*session, "head -c 100000 /dev/zero | tr '\\0' a; printf END; echo small >&2");
  EXPECT_EQ(big.status, RunStatus::kExited) << Describe(big);
  EXPECT_EQ(big.stdout_data.total_bytes, 100003u);
  EXPECT_EQ(big.stdout_data.truncated_bytes, 100003u - 1024u);
  EXPECT_TRUE(big.stdout_data.data.starts_with(std::string(500, 'a')));
  EXPECT_TRUE(big.stdout_data.data.ends_with("END"));
  EXPECT_NE(big.stdout_data.data.find("[cordon: 98979 bytes omitted]"), std::string::npos);
  // The twin: a stream under the cap is whole.
  EXPECT_EQ(big.stderr_data.data, "small\n");
  EXPECT_EQ(big.stderr_data.truncated_bytes, 0u);
}

TEST_F(HardeningTest, ExitCodesAndSignalsOfTheCommandAreReported) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult exited = Shell(*session, "exit 42");
  EXPECT_EQ(exited.status, RunStatus::kExited) << Describe(exited);
  EXPECT_EQ(exited.CliExitCode(), 42);
  const RunResult signaled = Shell(*session, "kill -TERM $$");
  EXPECT_EQ(signaled.status, RunStatus::kSignaled) << Describe(signaled);
  EXPECT_EQ(signaled.signal, SIGTERM);
  EXPECT_EQ(signaled.CliExitCode(), 128 + SIGTERM);
  // The twin of the signal: a command that exits with 128+N itself is not reported as killed.
  const RunResult exited_high = Shell(*session, "exit 143");
  EXPECT_EQ(exited_high.status, RunStatus::kExited) << Describe(exited_high);
  EXPECT_EQ(exited_high.exit_code, 143);
}

}  // namespace
}  // namespace cordon::kernel_test
