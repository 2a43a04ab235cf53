// The Seatbelt dispatch through a whole Session on Linux: backend seatbelt with a FAKE
// sandbox-exec (session::SetSandboxExecForTesting). The fake "enforces" only the probe's denied
// write (it refuses a target named denied-probe), records its argv and execs the command after
// "--". What is checked: the session probes it, status names it and says why, runs go through
// it, and a sandbox-exec that does not enforce is refused before anything runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "cordon/session.h"
#include "session/backend_choice.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;

class SeatbeltSession : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cordon-sb-session-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = fs::canonical(pattern);
    fs::create_directories(root_ / "ws");
    config_.sandbox.backend = BackendChoice::kSeatbelt;
  }
  void TearDown() override {
    session::SetSandboxExecForTesting({});
    fs::remove_all(root_);
  }
  // A fake sandbox-exec at root_/NAME; `enforcing`: it fails the probe's denied write.
  fs::path WriteFake(const char* name, bool enforcing) {
    const fs::path fake = root_ / name;
    std::ofstream out(fake);
    out << "#!/bin/sh\n"
        << "printf '%s\\n' \"$@\" > '" << (root_ / "argv").string() << "'\n"
        << "while [ \"$#\" -gt 0 ]; do a=$1; shift; [ \"$a\" = -- ] && break; done\n";
    if (enforcing) out << "case \"$2\" in *denied-probe) exit 1;; esac\n";
    out << "exec \"$@\"\n";
    out.close();
    fs::permissions(fake, fs::perms::owner_all);
    return fake;
  }
  std::string RecordedArgv() {
    std::ifstream in(root_ / "argv");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path root_;
  Config config_;
};

TEST_F(SeatbeltSession, RunsGoThroughAnEnforcingSandboxExecAndStatusSaysSo) {
  session::SetSandboxExecForTesting(WriteFake("sandbox-exec", true));
  Result<Session> session = Session::Create(config_, root_ / "ws");
  ASSERT_TRUE(session.has_value()) << session.error().message;
  const Capabilities caps = session->GetCapabilities();
  EXPECT_EQ(caps.backend, "seatbelt");
  EXPECT_NE(caps.backend_reason.find("enforces a test profile"), std::string::npos)
      << caps.backend_reason;
  ASSERT_TRUE(caps.can_run()) << caps.missing.front();

  CommandRequest request;
  request.argv = {"/bin/sh", "-c", "echo \"$HOME\"; exit 3"};
  const RunResult result = session->Run(request);
  ASSERT_EQ(result.status, RunStatus::kExited) << result.error;
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.enforcement.backend, "seatbelt");
  const std::string argv = RecordedArgv();
  EXPECT_EQ(argv.rfind("-p\n(version 1)", 0), 0u) << argv;
  EXPECT_NE(argv.find("\n--\n/bin/sh\n-c\necho \"$HOME\"; exit 3\n"), std::string::npos) << argv;
  // HOME was the private directory, gone after the run.
  const fs::path home = result.stdout_data.data.substr(0, result.stdout_data.data.size() - 1);
  EXPECT_EQ(home.filename(), "home");
  EXPECT_FALSE(fs::exists(home.parent_path())) << home;
}

TEST_F(SeatbeltSession, ASandboxExecThatDoesNotEnforceIsRefusedAndNothingRuns) {
  session::SetSandboxExecForTesting(WriteFake("sandbox-exec", false));
  Result<Session> session = Session::Create(config_, root_ / "ws");
  ASSERT_TRUE(session.has_value()) << session.error().message;
  const Capabilities caps = session->GetCapabilities();
  EXPECT_EQ(caps.backend, "seatbelt");
  ASSERT_FALSE(caps.can_run());
  EXPECT_NE(caps.missing.front().find("did not enforce"), std::string::npos)
      << caps.missing.front();
  fs::remove(root_ / "argv");  // the probe's own runs
  CommandRequest request;
  request.argv = {"/bin/true"};
  const RunResult result = session->Run(request);
  EXPECT_EQ(result.status, RunStatus::kSetupFailed);
  EXPECT_EQ(result.CliExitCode(), 125);
  EXPECT_FALSE(fs::exists(root_ / "argv")) << "the fake ran the command";
}

// A fake that behaves as sandbox-exec does where it cannot apply or compile a profile: its
// complaint on stderr and its own exit status, nothing run. `when`: a shell test deciding it
// (on the profile in $2, or a marker file), else it runs the command like WriteFake.
fs::path WriteFailingFake(const fs::path& dir, int code, const std::string& complaint,
                          const std::string& when) {
  const fs::path fake = dir / "sandbox-exec";
  std::ofstream out(fake);
  out << "#!/bin/sh\n"
      << "echo run >> '" << (dir / "runs").string() << "'\n"
      << "if " << when << "; then echo '" << complaint << "' >&2; echo failed-" << code << " >> '"
      << (dir / "runs").string() << "'; exit " << code << "; fi\n"
      << "while [ \"$#\" -gt 0 ]; do a=$1; shift; [ \"$a\" = -- ] && break; done\n"
      << "case \"$2\" in *denied-probe) exit 1;; esac\n"
      << "exec \"$@\"\n";
  out.close();
  fs::permissions(fake, fs::perms::owner_all);
  return fake;
}

TEST_F(SeatbeltSession, InsideAnotherSandboxTheRefusalNamesTheCauseAndTheFix) {
  // Codex or Claude Code running cordon inside their own Seatbelt sandbox: sandbox_apply fails.
  session::SetSandboxExecForTesting(
      WriteFailingFake(root_, 71, "sandbox-exec: sandbox_apply: Operation not permitted", "true"));
  Result<Session> session = Session::Create(config_, root_ / "ws");
  ASSERT_TRUE(session.has_value()) << session.error().message;
  const Capabilities caps = session->GetCapabilities();
  ASSERT_FALSE(caps.can_run());
  const std::string& why = caps.missing.front();
  EXPECT_NE(why.find("sandbox_apply: Operation not permitted"), std::string::npos) << why;
  EXPECT_NE(why.find("already runs inside a sandbox"), std::string::npos) << why;
  EXPECT_NE(why.find("fix:"), std::string::npos) << why;
}

TEST_F(SeatbeltSession, TheProbeCompilesEveryVariantOfTheProfile) {
  // Only the profile with the network allowed is refused (exit 65, as sandbox-exec does for a
  // rule it cannot compile): the probe must try that variant too.
  session::SetSandboxExecForTesting(
      WriteFailingFake(root_, 65, "sandbox-exec: unbound variable: x",
                       "case \"$2\" in *'(allow network*)'*) true;; *) false;; esac"));
  Result<Session> session = Session::Create(config_, root_ / "ws");
  ASSERT_TRUE(session.has_value()) << session.error().message;
  const Capabilities caps = session->GetCapabilities();
  ASSERT_FALSE(caps.can_run());
  const std::string& why = caps.missing.front();
  EXPECT_NE(why.find("refused cordon's profile (exit 65: \"sandbox-exec: unbound variable: x\")"),
            std::string::npos)
      << why;
  // Twin: the same fake refusing nothing passes the probe.
  fs::remove(root_ / "sandbox-exec");
  session::SetSandboxExecForTesting(
      WriteFailingFake(root_, 65, "sandbox-exec: unbound variable: x", "false"));
  Result<Session> twin = Session::Create(config_, root_ / "ws");
  ASSERT_TRUE(twin.has_value()) << twin.error().message;
  EXPECT_TRUE(twin->GetCapabilities().can_run());
}

TEST_F(SeatbeltSession, SandboxExecsOwnFailureAtARunIsASetupFailureNotTheCommandsStatus) {
  const fs::path marker = root_ / "fail-now";
  session::SetSandboxExecForTesting(
      WriteFailingFake(root_, 71, "sandbox-exec: sandbox_apply: Operation not permitted",
                       "[ -e '" + marker.string() + "' ]"));
  Result<Session> session = Session::Create(config_, root_ / "ws");
  ASSERT_TRUE(session.has_value()) << session.error().message;
  ASSERT_TRUE(session->GetCapabilities().can_run());
  CommandRequest request;
  request.argv = {"/bin/sh", "-c", "exit 71"};
  // The command's own 71 stays the command's.
  RunResult result = session->Run(request);
  ASSERT_EQ(result.status, RunStatus::kExited) << result.error;
  EXPECT_EQ(result.exit_code, 71);
  // sandbox-exec failing before the command: a setup failure naming the cause.
  std::ofstream(marker) << "x";
  request.argv = {"/bin/sh", "-c", "touch '" + (root_ / "ran").string() + "'"};
  result = session->Run(request);
  EXPECT_EQ(result.status, RunStatus::kSetupFailed);
  EXPECT_EQ(result.CliExitCode(), 125);
  EXPECT_NE(result.error.find("already runs inside a sandbox"), std::string::npos) << result.error;
  EXPECT_FALSE(fs::exists(root_ / "ran"));
}

TEST_F(SeatbeltSession, AReCheckThatFailsAnotherWayLeavesTheCommandsStatus) {
  // The command exits 71 itself; the re-check then fails too, but not as sandbox-exec does
  // (another status: spawn trouble, a process limit the command's leftovers hit). Nothing
  // proves sandbox-exec failed: the run keeps the command's status.
  const fs::path marker = root_ / "recheck-fails";
  session::SetSandboxExecForTesting(WriteFailingFake(
      root_, 70, "sandbox-exec: something else",
      "[ -e '" + marker.string() + "' ] && [ \"$(eval echo \\${$#})\" = /usr/bin/true ]"));
  Result<Session> session = Session::Create(config_, root_ / "ws");
  ASSERT_TRUE(session.has_value()) << session.error().message;
  ASSERT_TRUE(session->GetCapabilities().can_run());
  std::ofstream(marker) << "x";
  CommandRequest request;
  request.argv = {"/bin/sh", "-c", "exit 71"};
  const RunResult result = session->Run(request);
  ASSERT_EQ(result.status, RunStatus::kExited) << result.error;
  EXPECT_EQ(result.exit_code, 71);
  std::ifstream runs(root_ / "runs");
  const std::string log((std::istreambuf_iterator<char>(runs)), std::istreambuf_iterator<char>());
  EXPECT_NE(log.find("failed-70"), std::string::npos) << "the re-check ran and failed: " << log;
}

TEST_F(SeatbeltSession, AMissingSandboxExecIsRefusedWithTheFix) {
  session::SetSandboxExecForTesting(root_ / "no-sandbox-exec");
  Result<Session> session = Session::Create(config_, root_ / "ws");
  ASSERT_TRUE(session.has_value()) << session.error().message;
  const Capabilities caps = session->GetCapabilities();
  ASSERT_FALSE(caps.can_run());
  EXPECT_NE(caps.missing.front().find("missing"), std::string::npos) << caps.missing.front();
  EXPECT_NE(caps.missing.front().find("fix:"), std::string::npos) << caps.missing.front();
}

TEST_F(SeatbeltSession, WithoutTheTestOverrideLinuxRefusesSeatbelt) {
  Result<Session> session = Session::Create(config_, root_ / "ws");
  ASSERT_TRUE(session.has_value()) << session.error().message;
  const Capabilities caps = session->GetCapabilities();
  ASSERT_FALSE(caps.can_run());
  EXPECT_NE(caps.missing.front().find("macOS-only"), std::string::npos) << caps.missing.front();
}

}  // namespace
}  // namespace cordon
