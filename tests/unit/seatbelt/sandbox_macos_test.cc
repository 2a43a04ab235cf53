// The real Seatbelt sandbox, checked from outside: macOS only (registered only on APPLE).
// Not yet run on a Mac (README says so). On a Mac: scripts/macos_test.sh (docs/backends.md).
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "exec/command_pipes.h"
#include "exec/supervisor.h"
#include "seatbelt/launch.h"
#include "seatbelt/probe.h"
#include "seatbelt/profile.h"

extern char** environ;  // macOS's <unistd.h> does not declare it

namespace cordon::seatbelt {
namespace {

namespace fs = std::filesystem;

int RunBare(const std::vector<std::string>& argv) {
  std::vector<char*> words;
  for (const auto& w : argv) words.push_back(const_cast<char*>(w.c_str()));
  words.push_back(nullptr);
  pid_t pid = 0;
  if (::posix_spawn(&pid, words[0], nullptr, nullptr, words.data(), environ) != 0) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class SeatbeltSandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(fs::temp_directory_path()) / ("cordon-sb-" + std::to_string(::getpid()));
    fs::create_directories(root_ / "ws");
    fs::create_directories(root_ / "home/.ssh");
    std::ofstream(root_ / "home/.ssh/id") << "secret";
    ASSERT_TRUE(ProbeSeatbelt(root_ / "probe").has_value());
    policy_.writable = {root_ / "ws"};
    policy_.hidden_dirs = {root_ / "home/.ssh"};
  }
  void TearDown() override { fs::remove_all(root_); }
  int Sandboxed(const std::string& shell) {
    return RunBare(SandboxExecArgv(RenderSeatbelt(policy_), {"/bin/sh", "-c", shell}));
  }
  fs::path root_;
  SeatbeltPolicy policy_;
};

TEST_F(SeatbeltSandbox, WriteInTheWorkspaceLands) {
  EXPECT_EQ(Sandboxed("echo x > '" + (root_ / "ws/in").string() + "'"), 0);
  EXPECT_TRUE(fs::exists(root_ / "ws/in"));
}

TEST_F(SeatbeltSandbox, WriteOutsideTheWorkspaceDoesNot) {
  EXPECT_NE(Sandboxed("echo x > '" + (root_ / "out").string() + "'"), 0);
  EXPECT_FALSE(fs::exists(root_ / "out"));
}

TEST_F(SeatbeltSandbox, CredentialsAreUnreadable) {
  EXPECT_NE(Sandboxed("cat '" + (root_ / "home/.ssh/id").string() + "'"), 0);
  EXPECT_EQ(RunBare({"/bin/cat", (root_ / "home/.ssh/id").string()}), 0);  // twin: readable bare
}

TEST_F(SeatbeltSandbox, NetworkIsDeniedUnlessAllowed) {
  EXPECT_NE(Sandboxed("/usr/bin/nc -z -G 2 1.1.1.1 53"), 0);
  policy_.network_allowed = true;
  EXPECT_EQ(Sandboxed("/usr/bin/nc -z -G 2 1.1.1.1 53"), 0);
}

// Tools that need the Command Line Tools (the xcrun shims) or another install: skipped, with
// the reason, where missing.
bool Have(const std::string& program) {
  return RunBare({"/bin/sh", "-c", "command -v " + program + " >/dev/null"}) == 0;
}
bool HaveCommandLineTools() { return RunBare({"/usr/bin/xcrun", "--find", "git"}) == 0; }

TEST_F(SeatbeltSandbox, GitStatusThroughTheXcrunShim) {
  if (!HaveCommandLineTools()) GTEST_SKIP() << "no Command Line Tools (xcode-select --install)";
  ASSERT_EQ(RunBare({"/usr/bin/git", "init", "-q", (root_ / "ws").string()}), 0);
  policy_.read_only = {root_ / "ws/.git"};
  EXPECT_EQ(Sandboxed("cd '" + (root_ / "ws").string() + "' && /usr/bin/git status"), 0);
  // Twin: .git stays read-only.
  EXPECT_NE(Sandboxed("echo x > '" + (root_ / "ws/.git/hooks/pre-commit").string() + "'"), 0);
  EXPECT_FALSE(fs::exists(root_ / "ws/.git/hooks/pre-commit"));
}

TEST_F(SeatbeltSandbox, PythonMultiprocessingLockAndNameLookups) {
  if (!HaveCommandLineTools()) GTEST_SKIP() << "no Command Line Tools (xcode-select --install)";
  EXPECT_EQ(Sandboxed("/usr/bin/python3 -c 'import multiprocessing; multiprocessing.Lock()'"), 0);
  // DNS through mDNSResponder needs the network allowed; localhost answers from /etc/hosts.
  const std::string lookup =
      "/usr/bin/python3 -c 'import socket; socket.getaddrinfo(\"localhost\", 80)'";
  policy_.network_allowed = true;
  EXPECT_EQ(Sandboxed(lookup), 0);
}

// A TLS client and server on the loopback, in one Go program: the self-signed certificate is
// not trusted, and the verifier must say so through trustd. Without trustd's service Go's
// crypto/x509 fails with "OSStatus -26276" instead, for every certificate.
constexpr const char* kGoTlsProbe = R"go(package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"os"
	"strings"
	"time"
)

func main() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1),
		Subject: pkix.Name{CommonName: "cordon.test"}, DNSNames: []string{"cordon.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(2)
	}
	go func() {
		if c, err := ln.Accept(); err == nil {
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	_, err = tls.Dial("tcp", ln.Addr().String(), &tls.Config{ServerName: "cordon.test"})
	fmt.Println(err)
	if err == nil || strings.Contains(err.Error(), "OSStatus") || !strings.Contains(err.Error(), "x509") {
		os.Exit(1)
	}
}
)go";

TEST_F(SeatbeltSandbox, AGoProgramVerifiesCertificatesThroughTrustd) {
  if (!Have("go")) GTEST_SKIP() << "go is not installed";
  fs::create_directories(root_ / "gotls");
  std::ofstream(root_ / "gotls/main.go") << kGoTlsProbe;
  const std::string dir = root_ / "gotls";
  ASSERT_EQ(
      RunBare({"/bin/sh", "-c",
               "cd '" + dir + "' && go mod init tlsprobe >/dev/null 2>&1; go build -o tlsprobe ."}),
      0);
  policy_.network_allowed = true;
  EXPECT_EQ(Sandboxed("'" + dir + "/tlsprobe'"), 0);
}

TEST_F(SeatbeltSandbox, NodeSeesTheCpus) {
  if (!Have("node")) GTEST_SKIP() << "node is not installed";
  EXPECT_EQ(Sandboxed("node -e 'process.exit(require(\"os\").cpus().length > 0 ? 0 : 1)'"), 0);
}

TEST_F(SeatbeltSandbox, ScriptGetsAPseudoTerminalButNotTheHostsTerminals) {
  EXPECT_EQ(Sandboxed("/usr/bin/script -q /dev/null /usr/bin/true"), 0);
  // Twin: an existing terminal of the host (this test's own, if it has one) is not opened.
  EXPECT_NE(Sandboxed("for t in /dev/ttys[0-9]*; do cat \"$t\" </dev/null >/dev/null 2>&1 & "
                      "p=$!; sleep 0.2; kill $p 2>/dev/null && exit 0; done; exit 1"),
            0);
}

TEST_F(SeatbeltSandbox, AUnixSocketServerInTheWorkspaceAnswers) {
  const std::string ws = root_ / "ws";
  EXPECT_EQ(Sandboxed("cd '" + ws +
                      "' && (/usr/bin/nc -U -l s > got &) && sleep 0.5 && "
                      "echo hi | /usr/bin/nc -U s; sleep 0.5; grep -q hi got"),
            0);
  // Twin: a socket outside the writable areas is not reached (nor made).
  EXPECT_NE(Sandboxed("/usr/bin/nc -U -l '" + (root_ / "outside.sock").string() + "'"), 0);
}

TEST_F(SeatbeltSandbox, AMissingGitIsNotCreatedInAnyCase) {
  policy_.read_only = {root_ / "ws/.git"};  // absent: denied by name
  for (const char* name : {".git", ".GIT", ".Git"}) {
    EXPECT_NE(Sandboxed("mkdir '" + (root_ / "ws" / name).string() + "'"), 0) << name;
  }
  EXPECT_FALSE(fs::exists(root_ / "ws/.git"));  // the volume is case-insensitive: any of them
  EXPECT_EQ(Sandboxed("mkdir '" + (root_ / "ws/.gitx").string() + "'"), 0);  // twin
}

TEST_F(SeatbeltSandbox, AMissingDirectoryOnTheWayToAHostRunFileIsNotCreatedInAnyCase) {
  policy_.read_only = {root_ / "ws/.config/mise.toml"};  // absent, and so is .config
  const std::string ws = root_ / "ws";
  EXPECT_NE(Sandboxed("mkdir '" + ws + "/.CONFIG' && echo x > '" + ws + "/.CONFIG/mise.toml'"), 0);
  EXPECT_NE(Sandboxed("ln -s '" + (root_ / "ws/elsewhere").string() + "' '" + ws + "/.Config'"), 0);
  EXPECT_FALSE(fs::exists(root_ / "ws/.config/mise.toml"));
  EXPECT_EQ(Sandboxed("mkdir '" + ws + "/.configs'"), 0);  // twin: another name
  // With .config made and pinned (as the launcher holds it for a run): a planted directory is
  // not renamed over it, nor is it renamed away.
  fs::create_directories(root_ / "ws/.config");
  if (HaveCommandLineTools()) {
    EXPECT_NE(Sandboxed("cd '" + ws +
                        "' && mkdir evil && echo x > evil/mise.toml && "
                        "/usr/bin/python3 -c 'import os; os.rename(\"evil\", \".config\")'"),
              0);
  }
  EXPECT_NE(Sandboxed("mv '" + ws + "/.config' '" + ws + "/away'"), 0);
  EXPECT_FALSE(fs::exists(root_ / "ws/.config/mise.toml"));
}

TEST_F(SeatbeltSandbox, TheHostsUnixSocketsStayOutWithTheNetworkAllowed) {
  // A host socket outside the writable areas (as tmux's in /private/tmp, an agent's): a
  // listener started outside the sandbox.
  const std::string sock = root_ / "host.sock";
  ASSERT_EQ(
      RunBare({"/bin/sh", "-c", "(/usr/bin/nc -U -l '" + sock + "' >/dev/null &) ; sleep 0.5"}), 0);
  policy_.network_allowed = true;
  EXPECT_NE(Sandboxed("echo hi | /usr/bin/nc -U '" + sock + "'"), 0);
  // Nor through a link to it made in the workspace (the rule must match the socket itself).
  const std::string link = root_ / "ws/s";
  EXPECT_NE(
      Sandboxed("ln -s '" + sock + "' '" + link + "' && echo hi | /usr/bin/nc -U '" + link + "'"),
      0);
  // Twin: the same from outside connects.
  EXPECT_EQ(RunBare({"/bin/sh", "-c", "echo hi | /usr/bin/nc -U '" + sock + "'"}), 0);
}

TEST_F(SeatbeltSandbox, NoHardLinkOrCloneReachesAProtectedOrHiddenFile) {
  ASSERT_EQ(RunBare({"/usr/bin/git", "init", "-q", (root_ / "ws").string()}), 0);
  policy_.read_only = {root_ / "ws/.git"};
  const std::string ws = root_ / "ws";
  EXPECT_NE(
      Sandboxed("ln '" + ws + "/.git/config' '" + ws + "/x' && echo '[core]' >> '" + ws + "/x'"),
      0);
  EXPECT_FALSE(fs::exists(root_ / "ws/x"));
  const std::string key = root_ / "home/.ssh/id";
  EXPECT_NE(Sandboxed("cp -c '" + key + "' '" + ws + "/k' && cat '" + ws + "/k'"), 0);
  EXPECT_FALSE(fs::exists(root_ / "ws/k"));
  // Twin: a plain copy of an ordinary file lands.
  EXPECT_EQ(Sandboxed("cp /etc/hosts '" + ws + "/hosts'"), 0);
}

TEST_F(SeatbeltSandbox, TheWorkspaceCannotBeRenamedAwayAndBack) {
  ASSERT_EQ(RunBare({"/bin/mkdir", "-p", (root_ / "ws/.git/hooks").string()}), 0);
  fs::create_directories(root_ / "scratch");
  fs::create_directories(root_ / "ws/sub");
  policy_.writable = {root_ / "ws", root_ / "scratch"};
  policy_.read_only = {root_ / "ws/.git"};
  const std::string ws = root_ / "ws";
  const std::string moved = root_ / "scratch/w";
  EXPECT_NE(Sandboxed("mv '" + ws + "' '" + moved + "' && echo x > '" + moved +
                      "/.git/hooks/pre-commit' && mv '" + moved + "' '" + ws + "'"),
            0);
  EXPECT_FALSE(fs::exists(root_ / "ws/.git/hooks/pre-commit"));
  EXPECT_TRUE(fs::exists(root_ / "ws/.git"));
  // Twin: what the workspace holds (no protected path below it) moves freely.
  EXPECT_EQ(Sandboxed("mv '" + ws + "/sub' '" + (root_ / "scratch/sub").string() + "'"), 0);
}

TEST_F(SeatbeltSandbox, ACredentialCreatedAfterTheProfileIsHiddenAndNotLinkedOut) {
  policy_.hidden_absent = {root_ / "home/.aws"};
  const SeatbeltProfile profile = RenderSeatbelt(policy_);  // while ~/.aws does not exist
  fs::create_directories(root_ / "home/.aws");
  std::ofstream(root_ / "home/.aws/credentials") << "secret";
  std::ofstream(root_ / "home/notes") << "plain";
  auto run = [&](const std::string& shell) {
    return RunBare(SandboxExecArgv(profile, {"/bin/sh", "-c", shell}));
  };
  EXPECT_NE(run("cat '" + (root_ / "home/.aws/credentials").string() + "'"), 0);
  EXPECT_NE(run("cat '" + (root_ / "home/.AWS/credentials").string() + "'"), 0);
  EXPECT_EQ(run("cat '" + (root_ / "home/notes").string() + "'"), 0);  // twin
  // A hard link of a hidden file into the workspace is not made.
  EXPECT_NE(run("ln '" + (root_ / "home/.ssh/id").string() + "' '" + (root_ / "ws/k").string() +
                "' && cat '" + (root_ / "ws/k").string() + "'"),
            0);
  EXPECT_FALSE(fs::exists(root_ / "ws/k"));
}

TEST_F(SeatbeltSandbox, TheHiddenHomeShowsOnlyItsGrants) {
  const fs::path home = root_ / "home";
  fs::create_directories(home / ".tool/bin");
  std::ofstream(home / ".tool/bin/t") << "tool";
  std::ofstream(home / ".pgpass") << "secret";
  fs::create_directories(home / "other-project");
  std::ofstream(home / "other-project/.env") << "secret";
  policy_.hidden_homes = {home};
  policy_.home_grants = {home / ".tool/bin"};
  const SeatbeltProfile profile = RenderSeatbelt(policy_);
  std::ofstream(home / ".vault-token") << "made after the profile";
  auto run = [&](const std::string& shell) {
    return RunBare(SandboxExecArgv(profile, {"/bin/sh", "-c", shell}));
  };
  const std::string h = home;
  for (const char* secret : {"/.pgpass", "/other-project/.env", "/.vault-token"}) {
    EXPECT_NE(run("cat '" + h + secret + "'"), 0) << secret;
  }
  EXPECT_NE(run("ls '" + h + "'"), 0) << "the home is not listable";
  EXPECT_EQ(run("cat '" + h + "/.tool/bin/t'"), 0);           // twin: the grant
  EXPECT_EQ(run("cd '" + h + "/.tool/bin' && /bin/pwd"), 0);  // the way to it can be stat'ed
  // The Data volume's path of the same files (macOS's firmlinks) is denied as well.
  const fs::path data = fs::path("/System/Volumes/Data") / home.relative_path();
  if (fs::exists(data)) {
    EXPECT_NE(run("cat '" + (data / ".pgpass").string() + "'"), 0);
  }
}

// The whole backend: seatbelt::Launch + the supervisor, as a session runs a command.
class SeatbeltBackend : public SeatbeltSandbox {
 protected:
  void SetUp() override {
    SeatbeltSandbox::SetUp();
    plan_.sandboxed = true;
    plan_.env = {"PATH=/usr/bin:/bin", "HOME=/tmp/.cordon-home", "TMPDIR=/tmp"};
    plan_.workspace = root_ / "ws";
    plan_.cwd = root_ / "ws";
    plan_.mounts = {{plan::MountOpKind::kBindWritable, root_ / "ws"},
                    {plan::MountOpKind::kMaskDirectory, root_ / "home/.ssh"}};
    plan_.enforcement.network = true;
    plan_.seccomp.sockets = plan::SocketPolicy::kUnixAndNetlink;
  }
  RunResult Launched(const std::string& shell) {
    plan_.argv = {"/bin/sh", "-c", shell};
    Result<exec::CommandPipes> pipes = exec::CreateCommandPipes();
    Result<core::UniqueFd> dev_null = exec::OpenDevNull();
    EXPECT_TRUE(pipes && dev_null);
    Result<exec::LaunchedProcess> launched =
        Launch(plan_, exec::MakeStdio(*pipes, dev_null->get()));
    pipes->CloseWriteEnds();
    EXPECT_TRUE(launched.has_value()) << launched.error().message;
    if (!launched) return {};
    exec::SuperviseOptions options;
    options.timeout = std::chrono::seconds(20);
    return exec::Supervise(
        std::move(*launched),
        exec::OutputReaders{std::move(pipes->stdout_read), std::move(pipes->stderr_read)}, options);
  }
  plan::LaunchPlan plan_;
};

TEST_F(SeatbeltBackend, AWriteInTheWorkspaceLandsAndOneOutsideDoesNot) {
  EXPECT_EQ(Launched("echo x > in").exit_code, 0);
  EXPECT_TRUE(fs::exists(root_ / "ws/in"));
  EXPECT_NE(Launched("echo x > '" + (root_ / "out").string() + "'").exit_code, 0);
  EXPECT_FALSE(fs::exists(root_ / "out"));
}

TEST_F(SeatbeltBackend, HomeAndTmpdirArePrivateWritableAndGoneAfterTheRun) {
  RunResult result = Launched("echo x > \"$HOME/f\" && echo y > \"$TMPDIR/g\" && echo \"$HOME\"");
  ASSERT_EQ(result.exit_code, 0) << result.stderr_data.data;
  const fs::path home = result.stdout_data.data.substr(0, result.stdout_data.data.size() - 1);
  EXPECT_EQ(home.filename(), "home");
  EXPECT_FALSE(fs::exists(home.parent_path()));
  // Twin: the real /tmp is not writable to the command.
  EXPECT_NE(Launched("echo x > /tmp/cordon-sb-escape-$$").exit_code, 0);
}

TEST_F(SeatbeltBackend, CredentialsAreUnreadableThroughTheLauncher) {
  EXPECT_NE(Launched("cat '" + (root_ / "home/.ssh/id").string() + "'").exit_code, 0);
  EXPECT_EQ(Launched("cat /etc/hosts > /dev/null").exit_code, 0);  // twin: the host is readable
}

TEST_F(SeatbeltBackend, NetworkIsDeniedThroughTheLauncherUnlessThePlanAllowsIt) {
  EXPECT_NE(Launched("/usr/bin/nc -z -G 2 1.1.1.1 53").exit_code, 0);
  plan_.enforcement.network = false;
  plan_.seccomp.sockets = plan::SocketPolicy::kAny;
  EXPECT_EQ(Launched("/usr/bin/nc -z -G 2 1.1.1.1 53").exit_code, 0);
}

}  // namespace
}  // namespace cordon::seatbelt
