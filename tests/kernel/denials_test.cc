// What the sandbox refused, reported by the layer that refused it (docs/denials.md): each case
// a real refusal checked for its kind, target, layer and rule, with its twin — the same call
// failing for the command's own reasons reports no denial. On every path (library, run
// server, MCP) and both backends where the layer is on the path.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

using DenialsTest = ProbeTest;

const Denial* Find(const RunResult& result, const std::string& kind, const std::string& target) {
  const auto it = std::find_if(result.denials.begin(), result.denials.end(), [&](const Denial& d) {
    return d.kind == kind && d.target == target;
  });
  return it == result.denials.end() ? nullptr : &*it;
}

std::string Listed(const RunResult& result) {
  std::string text;
  for (const Denial& d : result.denials) {
    text += fmt::format("[{} {} {} {}] ", d.kind, d.target, d.layer, d.rule);
  }
  return text;
}

// A connect beyond the sandbox's loopback (a documentation address: nothing is sent, the
// sandbox's network namespace has no route) is the network setting's refusal.
TEST_F(DenialsTest, AConnectBeyondTheLoopbackIsReportedAsTheNetworkSetting) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  const RunResult result = Probe(*session, "connect-tcp 192.0.2.1 443");
  EXPECT_NE(result.stdout_data.data, "ok\n") << Describe(result);
  const Denial* d = Find(result, "connect", "192.0.2.1:443");
  ASSERT_NE(d, nullptr) << Listed(result) << Describe(result);
  EXPECT_EQ(d->rule, "sandbox.network: deny");
  EXPECT_TRUE(d->layer == "network" || d->layer == "landlock") << d->layer;
  EXPECT_NE(d->fix.find("--network allow"), std::string::npos) << d->fix;
}

// The twin: a closed port on the sandbox's own loopback, with nothing listening on the host
// either, is the command's own failure.
TEST_F(DenialsTest, AClosedPortOfTheSandboxsOwnLoopbackIsNoDenial) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  int port = 0;
  {
    HostListener probe_port = HostListener::Tcp();  // a free port, closed again at once
    port = probe_port.port();
  }
  const RunResult result = Probe(*session, fmt::format("connect-tcp 127.0.0.1 {}", port));
  EXPECT_NE(result.stdout_data.data, "ok\n") << Describe(result);
  EXPECT_TRUE(result.denials.empty()) << Listed(result);
}

// A service the host has on its loopback (a database, a dev server) is not the sandbox's: the
// command's connect finds nothing there, and cordon says why.
TEST_F(DenialsTest, TheHostsLoopbackServiceIsReportedAsOutOfReach) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  HostListener listener = HostListener::Tcp();
  const std::string target = "127.0.0.1:" + listener.address();
  const RunResult result = Probe(*session, "connect-tcp 127.0.0.1 " + listener.address());
  EXPECT_FALSE(listener.Reached());
  const Denial* d = Find(result, "connect", target);
  ASSERT_NE(d, nullptr) << Listed(result) << Describe(result);
  EXPECT_EQ(d->layer, "network");
  // The same made as curl and ssh -o ConnectTimeout make it (non-blocking, the outcome read
  // with poll and SO_ERROR): reported too, and the command still gets its own error.
  const RunResult nonblocking =
      Probe(*session, "connect-tcp-nonblock 127.0.0.1 " + listener.address());
  EXPECT_EQ(nonblocking.stdout_data.data, "ECONNREFUSED\n") << Describe(nonblocking);
  EXPECT_FALSE(listener.Reached());
  EXPECT_NE(Find(nonblocking, "connect", target), nullptr)
      << Listed(nonblocking) << Describe(nonblocking);
  // Twin: the same to a port nothing listens on, here or on the host.
  int closed = 0;
  {
    HostListener probe_port = HostListener::Tcp();
    closed = probe_port.port();
  }
  const RunResult own = Probe(*session, fmt::format("connect-tcp-nonblock 127.0.0.1 {}", closed));
  EXPECT_EQ(own.stdout_data.data, "ECONNREFUSED\n") << Describe(own);
  EXPECT_TRUE(own.denials.empty()) << Listed(own);
}

// A raw socket (ping, traceroute) needs CAP_NET_RAW, which no sandboxed command holds: cordon's
// doing where the caller has it (root), reported with the capability; not reported for a
// caller who could not have made one either (an unprivileged user, a program without file
// capabilities). Twin: an ordinary socket.
TEST_F(DenialsTest, ARawSocketIsReportedWhereTheCallerCouldHaveMadeOne) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult raw = Probe(*session, "socket raw");
  EXPECT_EQ(raw.stdout_data.data, "EPERM\n") << Describe(raw);
  const Denial* d = Find(raw, "socket", "raw AF_INET socket (protocol 1)");
  if (::geteuid() == 0) {
    ASSERT_NE(d, nullptr) << Listed(raw) << Describe(raw);
    EXPECT_EQ(d->layer, "capabilities");
    EXPECT_NE(d->rule.find("CAP_NET_RAW"), std::string::npos) << d->rule;
    EXPECT_TRUE(d->fix.starts_with("by design")) << d->fix;
  } else {
    EXPECT_EQ(d, nullptr) << Listed(raw);
  }
  const RunResult ordinary = Probe(*session, "socket inet");
  EXPECT_EQ(ordinary.stdout_data.data, "ok\n") << Describe(ordinary);
  EXPECT_TRUE(ordinary.denials.empty()) << Listed(ordinary);
}

// A host service's socket the sandbox's view leaves out (here: beside the workspace, in the
// host's /tmp the sandbox shows empty; the same holds for a masked /run, the hidden home or a
// hidden path) is reported, not left as "No such file or directory". Twins: a socket in the
// workspace is reached; a path with no socket on the host either is the command's own failure.
TEST_F(DenialsTest, AHostSocketTheViewLeavesOutIsReported) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::string hidden = (std::filesystem::canonical(root_) / "service.sock").string();
  HostListener host = HostListener::Pathname(hidden);
  const RunResult result = Probe(*session, "connect-unix " + hidden);
  EXPECT_EQ(result.stdout_data.data, "ENOENT\n") << Describe(result);
  EXPECT_FALSE(host.Reached());
  const Denial* d = Find(result, "unix_socket", hidden);
  ASSERT_NE(d, nullptr) << Listed(result) << Describe(result);
  EXPECT_EQ(d->layer, "mount view");
  EXPECT_TRUE(d->fix.starts_with("by design")) << d->fix;

  const std::string inside = (std::filesystem::canonical(workspace_) / "own.sock").string();
  HostListener own = HostListener::Pathname(inside);
  const RunResult reached = Probe(*session, "connect-unix " + inside);
  EXPECT_EQ(reached.stdout_data.data, "ok\n") << Describe(reached);
  EXPECT_TRUE(reached.denials.empty()) << Listed(reached);
  const RunResult missing =
      Probe(*session, "connect-unix " + (std::filesystem::canonical(root_) / "none.sock").string());
  EXPECT_EQ(missing.stdout_data.data, "ENOENT\n") << Describe(missing);
  EXPECT_TRUE(missing.denials.empty()) << Listed(missing);
}

// A resolver's query goes nowhere with network deny: reported at once as DNS, so an agent does
// not read a resolver timeout as a flaky network. Twin: UDP to another loopback port.
TEST_F(DenialsTest, ADnsQueryIsReportedAndOtherLoopbackUdpIsNot) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  const RunResult dns = Probe(*session, "connect-udp 127.0.0.53 53");
  const Denial* d = Find(dns, "dns", "127.0.0.53:53");
  ASSERT_NE(d, nullptr) << Listed(dns) << Describe(dns);
  EXPECT_EQ(d->layer, "network");
  // Most lookups are a package install: the fix names the offline way too.
  EXPECT_NE(d->fix.find("--network allow"), std::string::npos) << d->fix;
  EXPECT_NE(d->fix.find("cordon cache seed"), std::string::npos) << d->fix;
  const RunResult other = Probe(*session, "connect-udp 127.0.0.1 5353");
  EXPECT_EQ(other.stdout_data.data, "ok\n") << Describe(other);
  EXPECT_TRUE(other.denials.empty()) << Listed(other);
}

// UDP without a connect: a datagram sent with sendto() to an address beyond the loopback, or
// to a resolver's port, is reported like the connect it stands for. Twin: a datagram to
// another port of the sandbox's own loopback.
TEST_F(DenialsTest, ADatagramSentWithoutAConnectIsReported) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  const RunResult beyond = Probe(*session, "sendto-udp 192.0.2.1 443");
  EXPECT_EQ(beyond.stdout_data.data, "ENETUNREACH\n") << Describe(beyond);
  const Denial* d = Find(beyond, "connect", "192.0.2.1:443");
  ASSERT_NE(d, nullptr) << Listed(beyond) << Describe(beyond);
  EXPECT_EQ(d->rule, "sandbox.network: deny");
  const RunResult dns = Probe(*session, "sendto-udp 127.0.0.53 53");
  EXPECT_NE(Find(dns, "dns", "127.0.0.53:53"), nullptr) << Listed(dns) << Describe(dns);
  const RunResult own = Probe(*session, "sendto-udp 127.0.0.1 5353");
  EXPECT_EQ(own.stdout_data.data, "ok\n") << Describe(own);
  EXPECT_TRUE(own.denials.empty()) << Listed(own);
  // The unspecified address is the sandbox's own host too, as the kernel takes it.
  const RunResult any = Probe(*session, "sendto-udp 0.0.0.0 5353");
  EXPECT_EQ(any.stdout_data.data, "ok\n") << Describe(any);
  EXPECT_TRUE(any.denials.empty()) << Listed(any);
}

// A UDP connect to port 0 sends nothing: it is how glibc's getaddrinfo orders a name's
// addresses, not traffic, and no denial. The twin: the same to a real port is the network
// setting's refusal.
TEST_F(DenialsTest, AUdpConnectToPortZeroIsNoDenial) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  const RunResult ordering = Probe(*session, "connect-udp 192.0.2.1 0");
  EXPECT_TRUE(ordering.denials.empty()) << Listed(ordering) << Describe(ordering);
  const RunResult traffic = Probe(*session, "connect-udp 192.0.2.1 443");
  EXPECT_NE(Find(traffic, "connect", "192.0.2.1:443"), nullptr)
      << Listed(traffic) << Describe(traffic);
}

// A connect to the unspecified address (0.0.0.0) reaches the sandbox's own loopback, as the
// kernel takes it: the host's service on that port is out of reach and reported as such, not
// as a connect beyond the loopback.
TEST_F(DenialsTest, TheUnspecifiedAddressIsTheSandboxsOwnHost) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  HostListener listener = HostListener::Tcp();
  const RunResult result = Probe(*session, "connect-tcp 0.0.0.0 " + listener.address());
  EXPECT_FALSE(listener.Reached());
  const Denial* d = Find(result, "connect", "0.0.0.0:" + listener.address());
  ASSERT_NE(d, nullptr) << Listed(result) << Describe(result);
  EXPECT_NE(d->rule.find("loopback is its own"), std::string::npos) << d->rule;
}

// Network allow: nothing of the above is cordon's doing (only loopback is tried here).
TEST_F(DenialsTest, NetworkAllowReportsNoNetworkDenial) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kAllow));
  if (!session) return;
  int port = 0;
  {
    HostListener probe_port = HostListener::Tcp();
    port = probe_port.port();
  }
  const RunResult result = Probe(*session, fmt::format("connect-tcp 127.0.0.1 {}", port));
  EXPECT_TRUE(result.denials.empty()) << Listed(result);
}

// The policy's refusal is a denial too, first; a limit the command met is one (its own line
// says it, the list carries it for --json and MCP).
TEST_F(DenialsTest, ThePolicyAndATimeoutAreListed) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult denied = Shell(*session, "sudo id");
  ASSERT_EQ(denied.status, RunStatus::kDenied) << Describe(denied);
  ASSERT_FALSE(denied.denials.empty());
  EXPECT_EQ(denied.denials.front().layer, "policy");
  EXPECT_EQ(denied.denials.front().rule, denied.decision.rule_id);
  const RunResult slow = Shell(*session, "sleep 5", std::chrono::milliseconds(300));
  EXPECT_NE(Find(slow, "limit", "timeout"), nullptr) << Listed(slow) << Describe(slow);
  // Twin: a command that fails by itself reports nothing.
  const RunResult failed = Shell(*session, "cat does-not-exist");
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_TRUE(failed.denials.empty()) << Listed(failed);
}

// The file-system denials (exec/write_observer.h): a write the mount view refuses, found by
// watching the command's write-intent calls, named with the rule of the plan that refused it.

// A git write inside .git, which the view keeps read-only: git's own words are "Read-only file
// system", cordon's say it is the .git protection and that the host-side tool commits.
TEST_F(DenialsTest, AGitWriteIsReportedAsTheGitProtection) {
  if (std::system("git --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "git not installed";
  const std::filesystem::path ws = std::filesystem::canonical(workspace_);
  ASSERT_EQ(std::system(
                fmt::format("git -C '{}' -c init.defaultBranch=main init -q", ws.string()).c_str()),
            0);
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult added = Shell(*session, "echo hi > f && git add f");
  EXPECT_NE(added.exit_code, 0) << Describe(added);
  EXPECT_FALSE(Exists(ws / ".git/index")) << Describe(added);
  const Denial* d = Find(added, "create", (ws / ".git/index.lock").string());
  ASSERT_NE(d, nullptr) << Listed(added) << Describe(added);
  EXPECT_EQ(d->layer, "mount view");
  EXPECT_NE(d->rule.find("protect_git_metadata"), std::string::npos) << d->rule;
  EXPECT_NE(d->fix.find("git_commit"), std::string::npos) << d->fix;
  // Removing a file of .git is the same protection.
  const RunResult removed = Shell(*session, "rm -f .git/HEAD");
  EXPECT_TRUE(Exists(ws / ".git/HEAD"));
  const Denial* r = Find(removed, "remove", (ws / ".git/HEAD").string());
  ASSERT_NE(r, nullptr) << Listed(removed) << Describe(removed);
  EXPECT_NE(r->rule.find("protect_git_metadata"), std::string::npos) << r->rule;
  // Twin: git failing for its own reasons (an unknown option) reports nothing.
  const RunResult own = Shell(*session, "git log --no-such-option");
  EXPECT_NE(own.exit_code, 0);
  EXPECT_TRUE(own.denials.empty()) << Listed(own);
}

// A system directory: the fix is "by design", never to make /etc or /usr writable.
TEST_F(DenialsTest, AWriteToASystemDirectoryIsReportedByDesign) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::filesystem::path etc_file = "/etc/" + unique_;
  const std::filesystem::path usr_dir = "/usr/lib/" + unique_;
  cleanup_.push_back(etc_file);
  cleanup_.push_back(usr_dir);
  const RunResult result = Shell(*session, fmt::format("echo x > '{}'; mkdir -p '{}'; true",
                                                       etc_file.string(), usr_dir.string()));
  EXPECT_FALSE(Exists(etc_file));
  EXPECT_FALSE(Exists(usr_dir));
  for (const std::filesystem::path& target : {etc_file, usr_dir}) {
    const Denial* d = Find(result, "create", target.string());
    ASSERT_NE(d, nullptr) << target << " " << Listed(result) << Describe(result);
    EXPECT_EQ(d->layer, "mount view");
    EXPECT_NE(d->rule.find("sandbox.writable_roots"), std::string::npos) << d->rule;
    EXPECT_TRUE(d->fix.starts_with("by design")) << d->fix;
  }
}

// read_only mode: a write in the workspace is the mode's refusal, and the fix names the mode
// that allows it (its twin: the same write in workspace_write mode works, below).
TEST_F(DenialsTest, AWriteInReadOnlyModeNamesTheMode) {
  const std::filesystem::path ws = std::filesystem::canonical(workspace_);
  {
    auto session = SessionOrSkip(MakeConfig(SandboxMode::kReadOnly));
    if (!session) return;
    const RunResult result = Shell(*session, "echo x > out.txt");
    EXPECT_NE(result.exit_code, 0) << Describe(result);
    EXPECT_FALSE(Exists(ws / "out.txt"));
    const Denial* d = Find(result, "create", (ws / "out.txt").string());
    ASSERT_NE(d, nullptr) << Listed(result) << Describe(result);
    EXPECT_EQ(d->layer, "mount view");
    EXPECT_EQ(d->rule, "sandbox.mode: read_only");
    EXPECT_NE(d->fix.find("--mode workspace_write"), std::string::npos) << d->fix;
  }
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite));
  if (!session) return;
  const RunResult written = Shell(*session, "echo x > out.txt");
  EXPECT_EQ(written.exit_code, 0) << Describe(written);
  EXPECT_TRUE(Exists(ws / "out.txt"));
  EXPECT_TRUE(written.denials.empty()) << Listed(written);
}

// Twins of the above: writes failing for the command's own reasons — a missing directory in
// the workspace, a file that exists already (O_EXCL, mkdir), a file its permissions keep
// read-only — and writes that work report no denial.
TEST_F(DenialsTest, WritesFailingForTheCommandsOwnReasonsReportNothing) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  test_support::WriteFile(workspace_ / "locked", "x\n");
  std::filesystem::permissions(workspace_ / "locked", std::filesystem::perms::owner_read);
  const RunResult result =
      Shell(*session,
            "echo x > missing/dir/f; mkdir /etc; mkdir -p /usr/lib; rm -f missing-file; "
            "mv missing-file elsewhere; echo x > locked; echo x > made; set -C; echo x > made; "
            "mkdir d; ln -s made d/link; mv made d/moved; rm -r d; true");
  EXPECT_TRUE(result.denials.empty()) << Listed(result) << Describe(result);
}

// The rest of git's writes (a stash, an init where the workspace has no .git: its placeholder
// holds the name) and an agent's own settings, a host-run file: each reported with its rule.
TEST_F(DenialsTest, GitStashGitInitAndAnAgentsSettingsAreReported) {
  if (std::system("git --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "git not installed";
  const std::filesystem::path ws = std::filesystem::canonical(workspace_);
  const std::filesystem::path repo = ws / "repo";
  std::filesystem::create_directories(repo);
  std::filesystem::create_directories(ws / ".claude");
  test_support::WriteFile(ws / ".claude/settings.json", "{}\n");
  const std::string git = fmt::format(
      "git -C '{}' -c user.name=t -c user.email=t@example.invalid -c init.defaultBranch=main",
      repo.string());
  ASSERT_EQ(std::system((git + " init -q && echo one > '" + (repo / "a").string() + "' && " + git +
                         " add a && " + git + " commit -qm one")
                            .c_str()),
            0);
  test_support::WriteFile(repo / "a", "two\n");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult stash = Shell(*session, "cd repo && git stash");
  EXPECT_NE(stash.exit_code, 0) << Describe(stash);
  EXPECT_EQ(ReadFile(repo / "a"), "two\n");
  const auto git_denial =
      std::find_if(stash.denials.begin(), stash.denials.end(), [&](const Denial& d) {
        return d.layer == "mount view" && d.target.starts_with((repo / ".git/").string());
      });
  ASSERT_NE(git_denial, stash.denials.end()) << Listed(stash) << Describe(stash);
  EXPECT_NE(git_denial->rule.find("protect_git_metadata"), std::string::npos);

  // The workspace has no .git: a placeholder holds the name for the command, so git init
  // finds a directory it cannot write in.
  const RunResult init = Shell(*session, "git init -q");
  EXPECT_NE(init.exit_code, 0) << Describe(init);
  EXPECT_FALSE(Exists(ws / ".git/HEAD"));
  const auto init_denial =
      std::find_if(init.denials.begin(), init.denials.end(),
                   [&](const Denial& d) { return d.target.starts_with((ws / ".git/").string()); });
  ASSERT_NE(init_denial, init.denials.end()) << Listed(init) << Describe(init);
  EXPECT_NE(init_denial->rule.find("protect_git_metadata"), std::string::npos) << init_denial->rule;

  const RunResult settings = Shell(*session, "echo '{\"hooks\": 1}' > .claude/settings.json");
  EXPECT_EQ(ReadFile(ws / ".claude/settings.json"), "{}\n");
  const Denial* d = Find(settings, "write", (ws / ".claude/settings.json").string());
  ASSERT_NE(d, nullptr) << Listed(settings) << Describe(settings);
  EXPECT_EQ(d->layer, "mount view");
  EXPECT_NE(d->rule.find("protect_host_run_files"), std::string::npos) << d->rule;
  EXPECT_TRUE(d->fix.starts_with("by design")) << d->fix;
  // An absent entry is held by a placeholder link: the kernel's words are "No such file or
  // directory", cordon's name the protection.
  const RunResult absent = Shell(*session, "echo '{}' > .mcp.json");
  EXPECT_NE(absent.exit_code, 0);
  EXPECT_FALSE(std::filesystem::is_regular_file(ws / ".mcp.json"));
  const Denial* held = Find(absent, "create", (ws / ".mcp.json").string());
  ASSERT_NE(held, nullptr) << Listed(absent) << Describe(absent);
  EXPECT_NE(held->rule.find("protect_host_run_files"), std::string::npos) << held->rule;
  EXPECT_NE(held->fix.find("host_run_files.remove"), std::string::npos) << held->fix;
  // Twin: a file beside it is the workspace's and is written.
  const RunResult beside = Shell(*session, "echo x > .claude-notes && cat .claude-notes");
  EXPECT_EQ(beside.stdout_data.data, "x\n") << Describe(beside);
  EXPECT_TRUE(beside.denials.empty()) << Listed(beside);
}

}  // namespace
}  // namespace cordon::kernel_test
