// `cordon run` end to end: exit codes, policy before anything starts, and real development work
// inside the sandbox (git, make, pipelines), each next to what the sandbox refuses.
#include <sys/stat.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "cli_fixture.h"

namespace cordon::e2e {
namespace {

using RunCommand = CliTest;
namespace fs = std::filesystem;

TEST_F(RunCommand, PassesTheCommandsExitCodeThrough) {
  EXPECT_EQ(Cordon({"run", "--", "sh", "-c", "exit 7"}).exit_code, 7);
  EXPECT_EQ(Cordon({"run", "-c", "exit 0"}).exit_code, 0);
}

TEST_F(RunCommand, StreamsStdoutAndStderrToTheTerminal) {
  Outcome o = Cordon({"run", "-c", "echo to-out; echo to-err >&2"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "to-out\n");
  EXPECT_NE(o.err.find("to-err"), std::string::npos);
}

TEST_F(RunCommand, ADeniedCommandNeverStartsAndExits126) {
  Outcome o = Cordon({"run", "-c", "touch started; sudo true"});
  EXPECT_EQ(o.exit_code, 126);
  EXPECT_NE(o.err.find("denied by policy"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(workspace_ / "started"));
  // Twin: the same first step alone runs and its write lands.
  EXPECT_EQ(Cordon({"run", "-c", "touch started"}).exit_code, 0);
  EXPECT_TRUE(fs::exists(workspace_ / "started"));
}

TEST_F(RunCommand, UnknownModeIsASetupErrorNamingTheValidModes) {
  Outcome o = Cordon({"run", "--mode", "readonly", "--", "true"});
  EXPECT_EQ(o.exit_code, 125);
  EXPECT_NE(o.err.find("read_only"), std::string::npos) << o.err;
}

// --allow-domain takes one word and selects network domains (said to the command as
// CORDON_SANDBOX_NETWORK and CORDON_NETWORK); with another --network, or with a bad pattern,
// nothing runs.
TEST_F(RunCommand, AllowDomainSelectsDomainsAndContradictsAnotherNetwork) {
  Outcome o = Cordon({"run", "--allow-domain", "pkg.test", "--", "sh", "-c",
                      "echo $CORDON_SANDBOX_NETWORK $CORDON_NETWORK"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "domains domains\n");
  Outcome contradicts =
      Cordon({"run", "--network", "allow", "--allow-domain", "pkg.test", "--", "true"});
  EXPECT_EQ(contradicts.exit_code, 125);
  EXPECT_NE(contradicts.err.find("--allow-domain needs --network domains"), std::string::npos)
      << contradicts.err;
  Outcome bad = Cordon({"run", "--allow-domain", "https://pkg.test", "--", "true"});
  EXPECT_EQ(bad.exit_code, 125);
  EXPECT_NE(bad.err.find("--allow-domain \"https://pkg.test\""), std::string::npos) << bad.err;
}

TEST_F(RunCommand, MissingCommandIsASetupError) { EXPECT_EQ(Cordon({"run"}).exit_code, 125); }

// As a shell says: 127 for a command that is not found, with cordon's reason on stderr (and a
// hint when one argument holds shell text); the twin finds it.
TEST_F(RunCommand, ACommandNotFoundExits127SayingWhy) {
  Outcome o = Cordon({"run", "--", "cordon-no-such-command"});
  EXPECT_EQ(o.exit_code, 127) << o.err;
  EXPECT_NE(o.err.find("cordon: cordon-no-such-command: command not found"), std::string::npos)
      << o.err;
  o = Cordon({"run", "--", "echo hi && true"});
  EXPECT_EQ(o.exit_code, 127) << o.err;
  EXPECT_NE(o.err.find("-c"), std::string::npos) << o.err;
  EXPECT_EQ(Cordon({"run", "--", "true"}).exit_code, 0);
}

TEST_F(RunCommand, WorkspaceThatDoesNotExistIsASetupError) {
  Outcome o = Cordon({"run", "--workspace", "/nonexistent/ws", "--", "true"});
  EXPECT_EQ(o.exit_code, 125);
  EXPECT_NE(o.err.find("/nonexistent/ws"), std::string::npos) << o.err;
}

TEST_F(RunCommand, TimeoutKillsTheCommandAndExits124) {
  auto start = std::chrono::steady_clock::now();
  Outcome o = Cordon({"run", "--timeout", "0.5", "--", "sleep", "30"});
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(o.exit_code, 124) << o.err;
  EXPECT_LT(elapsed, std::chrono::seconds(10));
}

TEST_F(RunCommand, JsonResultReportsExitOutputAndLayers) {
  Outcome o = Cordon({"run", "--json", "-c", "echo hello; exit 3"});
  ASSERT_EQ(o.exit_code, 3) << o.err;
  auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["status"], "exited");
  EXPECT_EQ(j["command_exit_code"], 3);
  EXPECT_EQ(j["stdout"], "hello\n");
  EXPECT_EQ(j["timed_out"], false);
  EXPECT_EQ(j["denied"], false);
  EXPECT_EQ(j["enforcement"]["filesystem"], true);
  EXPECT_EQ(j["enforcement"]["network"], true);
}

TEST_F(RunCommand, WriteInTheWorkspaceLandsButWriteInItsParentDoesNot) {
  fs::path outside = tmp_.path() / "outside.txt";
  // The parent lies under the host's /tmp, which the sandbox replaces with a private one: the
  // write may succeed in there, but it must not land on the host.
  Cordon({"run", "-c", "echo x > " + outside.string()});
  EXPECT_FALSE(fs::exists(outside));
  Outcome etc = Cordon({"run", "-c", "echo x > /etc/cordon-e2e-probe"});
  EXPECT_NE(etc.exit_code, 0);
  EXPECT_FALSE(fs::exists("/etc/cordon-e2e-probe"));

  Outcome allowed = Cordon({"run", "-c", "echo x > inside.txt"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(ReadFile(workspace_ / "inside.txt"), "x\n");
}

TEST_F(RunCommand, AWritableRootFlagTakesOnePathAndLeavesTheCommandAlone) {
  // `--writable-root P -- CMD` once lost CMD to the option (a vector option takes many words).
  // The root lies under the host's /tmp like the workspace: bound into the sandbox, the write
  // lands on the host.
  const fs::path root = tmp_.path() / "extra-root";
  fs::create_directories(root);
  Outcome with_root =
      Cordon({"run", "--workspace", workspace_.string(), "--writable-root", root.string(), "--",
              "sh", "-c", "echo y > " + (root / "y").string()});
  EXPECT_EQ(with_root.exit_code, 0) << with_root.err;
  EXPECT_EQ(ReadFile(root / "y"), "y\n");
  // Twin: without the flag the same write does not land.
  Outcome without = Cordon({"run", "--workspace", workspace_.string(), "--", "sh", "-c",
                            "echo z > " + (root / "z").string()});
  EXPECT_FALSE(fs::exists(root / "z"));
}

TEST_F(RunCommand, UnsafeRunsUnconfinedAndWarns) {
  fs::path outside = tmp_.path() / "outside.txt";
  Outcome o = Cordon({"run", "--unsafe", "-c", "echo x > " + outside.string()});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(fs::exists(outside));
  EXPECT_NE(o.err.find("WARNING"), std::string::npos) << o.err;
}

TEST_F(RunCommand, CallerSecretsDoNotReachTheCommand) {
  Outcome o = Cordon({"run", "-c", "echo ${DATABASE_URL:-unset} ${LANG:-nolang}"},
                     {"DATABASE_URL=postgres://user:hunter2@db/prod"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "unset C.UTF-8\n");
}

TEST_F(RunCommand, AShellPipelineWorks) {
  Outcome o = Cordon({"run", "-c", "seq 1 1000 | sort -rn | head -n 1 | tee top.txt"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "1000\n");
  EXPECT_EQ(ReadFile(workspace_ / "top.txt"), "1000\n");
}

TEST_F(RunCommand, MakeBuildsACProgramInTheWorkspace) {
  WriteFile(workspace_ / "hello.c",
            "#include <stdio.h>\nint main(void){puts(\"built in cordon\");return 0;}\n");
  WriteFile(workspace_ / "Makefile", "hello: hello.c\n\tcc -O1 -o hello hello.c\n");
  Outcome o = Cordon({"run", "--", "make"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  ASSERT_TRUE(fs::exists(workspace_ / "hello"));
  Outcome ran = Cordon({"run", "--", "./hello"});
  EXPECT_EQ(ran.out, "built in cordon\n");
}

TEST_F(RunCommand, GitStatusAndDiffWorkInARepositoryWorkspace) {
  // The repository is made on the host; the sandbox only reads it.
  Invocation git;
  git.env = {"PATH=/usr/bin:/bin",   "HOME=" + home_.string(), "GIT_AUTHOR_NAME=t",
             "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t",   "GIT_COMMITTER_EMAIL=t@e"};
  git.cwd = workspace_;
  WriteFile(workspace_ / "file.txt", "one\n");
  for (auto args : {std::vector<std::string>{"/usr/bin/git", "init", "-q"},
                    std::vector<std::string>{"/usr/bin/git", "add", "file.txt"},
                    std::vector<std::string>{"/usr/bin/git", "commit", "-qm", "first"}}) {
    git.argv = args;
    ASSERT_EQ(RunBinary(git).exit_code, 0);
  }
  WriteFile(workspace_ / "file.txt", "two\n");

  Outcome status = Cordon({"run", "--", "git", "status", "--porcelain"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(status.out, " M file.txt\n");
  Outcome diff = Cordon({"run", "--", "git", "diff", "--no-color"});
  EXPECT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_NE(diff.out.find("+two"), std::string::npos) << diff.out;
}

}  // namespace
}  // namespace cordon::e2e

namespace cordon::e2e {
namespace {

TEST_F(RunCommand, AServerAndClientOnTheSandboxesOwnLoopbackWorkWithNetworkDenied) {
  // The probe binds 127.0.0.1:0 inside the sandbox and connects to itself. It is copied into
  // the workspace: the build tree may lie under the host's /tmp, which the sandbox hides.
  std::filesystem::copy_file(CORDON_PROBE_BINARY, workspace_ / "probe");
  Outcome o = Cordon({"run", "--network", "deny", "--", "./probe", "loopback-echo"});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out.rfind("ok", 0), 0u) << o.out;
  // Twin: an internet socket of another family than the loopback is refused.
  Outcome packet = Cordon({"run", "--", "./probe", "socket", "packet"});
  EXPECT_NE(packet.exit_code, 0) << packet.out;
}

}  // namespace
}  // namespace cordon::e2e

namespace cordon::e2e {
namespace {

// ADR 0064 on the terminal: `cordon run --outside-sandbox` asks the person on /dev/tty.
class OutsideSandbox : public CliTest {
 protected:
  // Runs cordon under `script`, which gives it a pseudo-terminal fed with `answer`.
  Outcome WithTerminal(const std::string& cordon_args, const std::string& answer) {
    Invocation inv;
    inv.argv = {"/usr/bin/script", "-qec", std::string(CORDON_BINARY) + " " + cordon_args,
                "/dev/null"};
    inv.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home_.string(), "LANG=C.UTF-8",
               "TERM=dumb", NoRunServer()};
    inv.cwd = workspace_;
    inv.stdin_data = answer;
    return RunBinary(inv);
  }
  std::string TouchOutside() const {
    return "run --outside-sandbox --justification 'needs the host' -c 'touch " + outside_.string() +
           "'";
  }

  std::filesystem::path outside_ = tmp_.path() / "outside.txt";
};

TEST_F(OutsideSandbox, ApprovedOnTheTerminalRunsOnceUnconfined) {
  Outcome o = WithTerminal(TouchOutside(), "y\n");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("needs the host"), std::string::npos) << o.out;  // the prompt showed it
  EXPECT_TRUE(std::filesystem::exists(outside_));
}

TEST_F(OutsideSandbox, DeclinedOnTheTerminalRunsNothing) {
  Outcome o = WithTerminal(TouchOutside(), "n\n");
  EXPECT_EQ(o.exit_code, 126) << o.out << o.err;
  EXPECT_FALSE(std::filesystem::exists(outside_));
}

TEST_F(OutsideSandbox, WithoutATerminalItIsRefused) {
  Invocation inv;
  inv.argv = {"/usr/bin/setsid",           "-w", CORDON_BINARY, "run", "--outside-sandbox", "-c",
              "touch " + outside_.string()};
  inv.env = {"PATH=/usr/bin:/bin", "HOME=" + home_.string()};
  inv.cwd = workspace_;
  inv.stdin_data = "y\n";  // stdin is not a terminal: an agent could write this
  Outcome o = RunBinary(inv);
  EXPECT_EQ(o.exit_code, 126) << o.err;
  EXPECT_NE(o.err.find("terminal"), std::string::npos) << o.err;
  EXPECT_FALSE(std::filesystem::exists(outside_));
}

TEST_F(OutsideSandbox, TurnedOffByTheOperatorItIsRefusedWithoutAsking) {
  WriteConfig(R"({"sandbox": {"allow_outside_sandbox": false}})");
  Outcome o = WithTerminal(TouchOutside(), "y\n");
  EXPECT_EQ(o.exit_code, 126) << o.out;
  EXPECT_EQ(o.out.find("[y/N]"), std::string::npos) << o.out;
  EXPECT_FALSE(std::filesystem::exists(outside_));
}

TEST_F(OutsideSandbox, ThePolicyStillAppliesBeforeAnyoneIsAsked) {
  Outcome o =
      WithTerminal("run --outside-sandbox -c 'sudo touch " + outside_.string() + "'", "y\n");
  EXPECT_EQ(o.exit_code, 126) << o.out;
  EXPECT_EQ(o.out.find("[y/N]"), std::string::npos) << o.out;
  EXPECT_FALSE(std::filesystem::exists(outside_));
}

TEST_F(RunCommand, OpenFilesFlagIsTheLimitTheCommandSees) {
  Outcome o = Cordon({"run", "--open-files", "37", "--", "sh", "-c", "ulimit -n"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "37\n");
  // Twin: without the flag the inherited limit stays.
  EXPECT_NE(Cordon({"run", "--", "sh", "-c", "ulimit -n"}).out, "37\n");
}

TEST_F(RunCommand, CpuLimitEndsASpinAndSaysWhichLimit) {
  Outcome o = Cordon({"run", "--cpu-seconds", "1", "--", "sh", "-c", "while :; do :; done"});
  EXPECT_EQ(o.exit_code, 128 + 24) << o.err;  // SIGXCPU
  EXPECT_NE(o.err.find("ended by the cpu limit (limits.cpu_seconds)"), std::string::npos) << o.err;
  // Twin: a short command under the same limit says nothing of limits.
  Outcome fine = Cordon({"run", "--cpu-seconds", "1", "--", "true"});
  EXPECT_EQ(fine.exit_code, 0);
  EXPECT_EQ(fine.err.find("limit"), std::string::npos) << fine.err;
}

TEST_F(RunCommand, MemoryFlagTakesSizeSuffixesAndRejectsOthers) {
  Outcome bad = Cordon({"run", "--memory", "12X", "--", "touch", "ran"});
  EXPECT_EQ(bad.exit_code, 125);
  EXPECT_NE(bad.err.find("--memory"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(workspace_ / "ran"));
  // 64M either runs under a memory limit (and the bomb is ended by it) or, where no cgroup
  // can enforce it, is refused before anything starts: never run without the limit.
  Outcome bomb =
      Cordon({"run", "--memory", "64M", "--", "sh", "-c", "touch ran; exec tail -n 1 /dev/zero"});
  if (bomb.exit_code == 125) {
    EXPECT_NE(bomb.err.find("limits.memory_bytes"), std::string::npos) << bomb.err;
    EXPECT_FALSE(fs::exists(workspace_ / "ran"));
  } else {
    EXPECT_EQ(bomb.exit_code, 128 + 9) << bomb.err;
    EXPECT_NE(bomb.err.find("ended by the memory limit"), std::string::npos) << bomb.err;
  }
}

}  // namespace
}  // namespace cordon::e2e
