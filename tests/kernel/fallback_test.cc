// The Landlock-only fallback, for real: a forked child refuses itself user namespaces with a
// seccomp filter (as Docker's default profile or Ubuntu's AppArmor restriction does), creates
// a Session there (which probes the kernel itself) and runs commands; the test checks on the
// host what landed, what was read and what was refused. Also cordon inside cordon.
#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>

#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

// Runs `body` in a forked child that cannot create user namespaces and returns what the body
// returned (through a pipe). The child never returns into the test framework.
std::string WithoutUserNamespaces(const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return "pipe2 failed";
  const pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::close(fds[0]);
    std::string out;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    const scmp_datum_t user = CLONE_NEWUSER;
    const bool filtered = ctx != nullptr && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
                          seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
                                           SCMP_A0(SCMP_CMP_MASKED_EQ, user, user)) == 0 &&
                          seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                           SCMP_A0(SCMP_CMP_MASKED_EQ, user, user)) == 0 &&
                          seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) == 0 &&
                          seccomp_load(ctx) == 0;
    out = filtered ? body() : "seccomp setup failed";
    (void)!::write(fds[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buffer, sizeof buffer)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  ::waitpid(pid, nullptr, 0);
  return out;
}

class FallbackTest : public ProbeTest {
 protected:
  void SetUp() override {
    ProbeTest::SetUp();
    std::filesystem::create_directories(home_ / ".ssh");
    std::ofstream(home_ / ".ssh" / "id_ed25519") << "canary-private-key";
    std::ofstream(home_ / "notes.txt") << "hello";
  }
  // A config the fallback can enforce: it cannot keep .git or the host-run files read-only.
  Config FallbackConfig() const {
    Config config = MakeConfig();
    config.sandbox.protect_git_metadata = false;
    config.sandbox.protect_host_run_files = false;
    return config;
  }
  // What one command printed, for the report the child sends back.
  static std::string Line(const Session& session, const std::string& text) {
    CommandRequest request;
    request.shell_text = text;
    const RunResult r = session.Run(request);
    if (r.status == RunStatus::kSetupFailed) return "setup_failed: " + r.error + "\n";
    return r.stdout_data.data;
  }
};

// Landlock's refusal of a write outside the writable areas is reported as Landlock's, with
// the directory that would allow it; a write in the workspace reports nothing.
TEST_F(FallbackTest, LandlocksWriteRefusalIsReported) {
  CORDON_SKIP_UNDER_BWRAP("bubblewrap cannot run without user namespaces");
  // Beside the workspace, and not the fake home's parent (a home is never offered).
  const std::filesystem::path parent = std::filesystem::canonical(root_) / "other";
  std::filesystem::create_directory(parent);
  const std::string report = WithoutUserNamespaces([&]() -> std::string {
    Result<Session> session = Session::Create(FallbackConfig(), workspace_);
    if (!session) return "create: " + session.error().message;
    if (!session->GetCapabilities().can_run()) return "cannot run";
    std::string out;
    for (const char* text : {"echo x > ../other/parent-file", "echo x > made"}) {
      CommandRequest request;
      request.shell_text = text;
      const RunResult r = session->Run(request);
      out += fmt::format("{}: {} denials\n", text, r.denials.size());
      for (const Denial& d : r.denials) {
        out += fmt::format("{}|{}|{}|{}|{}\n", d.kind, d.target, d.layer, d.rule, d.fix);
      }
    }
    return out;
  });
  if (report == "cannot run") GTEST_SKIP() << "the fallback cannot run here";
  EXPECT_FALSE(Exists(parent / "parent-file")) << report;
  EXPECT_NE(report.find(fmt::format("create|{}|landlock|sandbox.writable_roots",
                                    (parent / "parent-file").string())),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("--writable-root " + parent.string()), std::string::npos) << report;
  EXPECT_NE(report.find("echo x > made: 0 denials"), std::string::npos) << report;
}

TEST_F(FallbackTest, WithoutUserNamespacesTheFallbackEnforcesWhatItClaims) {
  // A host TCP listener; the child inherits it but the sandbox closes every inherited fd.
  HostListener listener = HostListener::Tcp();
  const int port = listener.port();
  // A host datagram socket outside the workspace (like journald's): reachable by sendto() from
  // a datagram socketpair unless the fallback refuses those.
  const std::filesystem::path dgram_path = root_ / "host.dgram";
  HostListener host_dgram = HostListener::Pathname(dgram_path.string(), SOCK_DGRAM);
  const Config config = FallbackConfig();
  const std::string report = WithoutUserNamespaces([&]() -> std::string {
    Result<Session> session = Session::Create(config, workspace_);
    if (!session) return "create: " + session.error().message;
    const Capabilities caps = session->GetCapabilities();
    std::string out = fmt::format("can_run={} userns={} landlock={}\n", caps.can_run(),
                                  caps.enforcement.user_namespace, caps.enforcement.landlock_abi);
    if (!caps.can_run()) return out + caps.missing.front();
    auto attempt = [&](const std::string& what, const std::string& shell) {
      out +=
          what + "=" +
          Line(*session, fmt::format("if {} 2>/dev/null; then echo yes; else echo no; fi", shell));
    };
    attempt("write_ws", fmt::format("echo x > '{}'", (workspace_ / "made").string()));
    attempt("write_parent", fmt::format("echo x > '{}'", (root_ / "parent-file").string()));
    attempt("read_secret", fmt::format("cat '{}'", (home_ / ".ssh/id_ed25519").string()));
    attempt("read_notes", fmt::format("cat '{}' >/dev/null", (home_ / "notes.txt").string()));
    attempt("tcp", fmt::format("'{}' connect-tcp 127.0.0.1 {} | grep -q ^ok", probe_, port));
    attempt("unix_socket", fmt::format("'{}' socket unix | grep -q ^ok", probe_));
    attempt("dgram_sendto",
            fmt::format("'{}' sendto-unix-dgram '{}' | grep -q ^ok", probe_, dgram_path.string()));
    attempt("stream_pair", fmt::format("'{}' socketpair stream | grep -q ^ok", probe_));
    // No PID namespace: the supervisor (this child, holding the caller's environment) is
    // visible, but Landlock's ptrace scoping keeps its /proc files closed; the command's own
    // are readable (the twin).
    attempt("supervisor_environ", fmt::format("cat /proc/{}/environ >/dev/null", ::getpid()));
    attempt("own_environ", "cat /proc/self/environ >/dev/null");
    attempt("write_tmpdir", "echo x > \"$TMPDIR/f\" && test \"$HOME\" != '" + home_.string() + "'");
    // The tools' cache (decision 0041): Landlock's write rule alone makes it writable, and
    // nothing around it.
    attempt("write_cache", "mkdir -p \"$GOCACHE\" && echo x > \"$GOCACHE/obj\"");
    attempt("write_cache_parent", "echo x > \"$GOCACHE/../../planted\"");
    return out;
  });
  if (UnderBwrap()) {
    // bubblewrap (not setuid here) cannot build namespaces either: refused, nothing ran.
    EXPECT_NE(report.find("can_run=false"), std::string::npos) << report;
    EXPECT_NE(report.find("bubblewrap cannot create namespaces"), std::string::npos) << report;
    EXPECT_FALSE(Exists(workspace_ / "made")) << report;
    return;
  }
  EXPECT_NE(report.find("can_run=true userns=false"), std::string::npos) << report;
  EXPECT_NE(report.find("write_ws=yes"), std::string::npos) << report;
  EXPECT_NE(report.find("write_parent=no"), std::string::npos) << report;
  EXPECT_NE(report.find("read_secret=no"), std::string::npos) << report;
  EXPECT_NE(report.find("read_notes=yes"), std::string::npos) << report;
  EXPECT_NE(report.find("tcp=no"), std::string::npos) << report;
  EXPECT_NE(report.find("write_tmpdir=yes"), std::string::npos) << report;
  EXPECT_NE(report.find("supervisor_environ=no"), std::string::npos) << report;
  EXPECT_NE(report.find("own_environ=yes"), std::string::npos) << report;
  EXPECT_NE(report.find("write_cache=yes"), std::string::npos) << report;
  EXPECT_NE(report.find("write_cache_parent=no"), std::string::npos) << report;
  EXPECT_TRUE(Exists(home_ / ".cache/cordon/tool-caches/shared/go-build/obj")) << report;
  EXPECT_FALSE(Exists(home_ / ".cache/cordon/tool-caches/planted")) << report;
  EXPECT_FALSE(listener.Reached());
  EXPECT_TRUE(Exists(workspace_ / "made")) << report;
  EXPECT_FALSE(Exists(root_ / "parent-file")) << report;
  // Landlock ABI < 9 cannot keep host sockets away: socket(AF_UNIX) and datagram socketpairs
  // are refused instead; stream socketpairs (pipes with a socket's API) still work.
  if (report.find("landlock=9") == std::string::npos) {
    EXPECT_NE(report.find("unix_socket=no"), std::string::npos) << report;
    EXPECT_NE(report.find("dgram_sendto=no"), std::string::npos) << report;
  }
  EXPECT_NE(report.find("stream_pair=yes"), std::string::npos) << report;
  EXPECT_FALSE(host_dgram.Reached()) << "a datagram reached the host";
}

TEST_F(FallbackTest, WithoutUserNamespacesGitProtectionIsRefusedNamingTheFix) {
  const std::string report = WithoutUserNamespaces([&]() -> std::string {
    Result<Session> session = Session::Create(MakeConfig(), workspace_);
    if (!session) return "create: " + session.error().message;
    const Capabilities caps = session->GetCapabilities();
    std::string out = fmt::format("can_run={}\n", caps.can_run());
    for (const auto& missing : caps.missing) out += "missing: " + missing + "\n";
    return out + Line(*session, "echo x > made");
  });
  EXPECT_NE(report.find("can_run=false"), std::string::npos) << report;
  // bwrap refuses for its own reason (no namespaces at all); native names the .git guarantee.
  EXPECT_NE(
      report.find(UnderBwrap() ? "bubblewrap cannot create namespaces" : "protect_git_metadata"),
      std::string::npos)
      << report;
  EXPECT_NE(report.find("user namespaces"), std::string::npos) << report;
  EXPECT_NE(report.find("setup_failed"), std::string::npos) << report;
  EXPECT_FALSE(Exists(workspace_ / "made"));
}

// The caller's home mounted a second time (a bind, decision 0040): the fallback has no view to
// hide it in, so Landlock's read allow-list leaves the second mount out instead of refusing the
// run. Landlock's rules belong to the files, so through it the command reads what the home
// shows at its own path (read-only in the fallback) and no more: the secret on the built-in
// list stays unreadable there — which a read rule on the directory above the second mount
// (/var/lib here) would otherwise give.
TEST_F(FallbackTest, AHomeMountedASecondTimeIsLeftOutOfTheReadList) {
  if (::geteuid() != 0) GTEST_SKIP() << "binds the home on the host, which needs root";
  CORDON_SKIP_UNDER_BWRAP("bubblewrap refuses without namespaces");
  const char* base = ::getenv("CORDON_ESCAPE_BASE");
  std::string pattern =
      fmt::format("{}/cordon-alias-XXXXXX", base != nullptr && base[0] == '/' ? base : "/var/lib");
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
  const std::filesystem::path alias = pattern;
  struct Unmount {
    std::filesystem::path alias;
    ~Unmount() {
      ::umount2(alias.c_str(), MNT_DETACH);
      std::error_code ignored;
      std::filesystem::remove(alias, ignored);
    }
  } unmount{alias};
  ASSERT_EQ(::mount(home_.c_str(), alias.c_str(), nullptr, MS_BIND, nullptr), 0)
      << std::strerror(errno);
  const Config config = FallbackConfig();
  const std::string report = WithoutUserNamespaces([&]() -> std::string {
    Result<Session> session = Session::Create(config, workspace_);
    if (!session) return "create: " + session.error().message;
    return Line(*session, fmt::format("cat {0}/notes.txt {0}/.ssh/id_ed25519 2>/dev/null; echo; "
                                      "cat {1}/notes.txt; echo",
                                      alias.string(), home_.string()));
  });
  EXPECT_EQ(report, "hello\nhello\n");
}

#ifdef CORDON_BINARY_PATH
// cordon inside cordon: the outer sandbox refuses new user namespaces, so the inner cordon's
// own probe finds none and it falls back to Landlock + seccomp inside the outer sandbox. Its
// protect_git_metadata and protect_host_run_files hold where its own view already keeps every
// entry read-only (the outer cordon's read-only binds and placeholders; decision 0044), read
// from its own mount table, never from a command's output; elsewhere it refuses.
TEST_F(FallbackTest, CordonInsideCordonKeepsProtectionsTheOuterViewHoldsAndAddsItsOwnLayers) {
  if (!Exists(CORDON_BINARY_PATH)) GTEST_SKIP() << "build the cordon target first";
  auto outer = SessionOrSkip(MakeConfig());
  if (!outer) return;
  const std::filesystem::path cordon = workspace_ / ".cordon";
  std::filesystem::copy_file(CORDON_BINARY_PATH, cordon);
  std::filesystem::permissions(cordon, std::filesystem::perms::owner_all);
  std::ofstream(workspace_ / "inner.json")
      << R"({"sandbox": {"protect_git_metadata": false, "protect_host_run_files": false}})";

  // The default config: the outer view keeps .git and the host-run entries read-only, so the
  // inner run goes ahead; the inner command writes the workspace but neither of those.
  const RunResult held = Shell(
      *outer,
      "./.cordon run -- sh -c 'echo x > inner-default; "
      "echo x > .git/config 2>/dev/null && echo git-wrote || echo git-refused; "
      "mkdir -p .claude 2>/dev/null; "
      "echo x > .claude/settings.json 2>/dev/null && echo claude-wrote || echo claude-refused'");
  EXPECT_EQ(held.exit_code, 0) << Describe(held);
  EXPECT_EQ(held.stdout_data.data, "git-refused\nclaude-refused\n") << Describe(held);
  EXPECT_TRUE(Exists(workspace_ / "inner-default")) << Describe(held);
  EXPECT_FALSE(Exists(workspace_ / ".git" / "config"));
  EXPECT_FALSE(Exists(workspace_ / ".claude" / "settings.json"));
  // What status says inside: held by the view, not missing.
  const RunResult status = Shell(*outer, "./.cordon status");
  EXPECT_NE(status.stdout_data.data.find("held by this view's own read-only mounts"),
            std::string::npos)
      << Describe(status);
  EXPECT_EQ(status.stdout_data.data.find("MISSING"), std::string::npos) << Describe(status);

  // Twin: an outer sandbox that leaves .git writable. The inner cordon cannot keep it, and
  // neither does its view: refused, naming the entry.
  Config open = MakeConfig();
  open.sandbox.protect_git_metadata = false;
  auto unprotected = SessionOrSkip(open);
  if (!unprotected) return;
  const RunResult refused = Shell(*unprotected, "./.cordon run -- sh -c 'echo x > refused-made'");
  EXPECT_EQ(refused.exit_code, 125) << Describe(refused);
  EXPECT_NE(refused.stderr_data.data.find("protect_git_metadata"), std::string::npos)
      << Describe(refused);
  EXPECT_NE(refused.stderr_data.data.find(".git is not kept read-only by this process's own view"),
            std::string::npos)
      << Describe(refused);
  EXPECT_FALSE(Exists(workspace_ / "refused-made"));

  // The outer sandbox lets a command write its private TMPDIR; the inner one adds Landlock and
  // allows only the workspace and its own private directory. Its config lies outside its
  // writable root: without a mount namespace a config file inside it could not be hidden, and
  // the inner cordon refuses that (decision 0033).
  const RunResult config_inside = Shell(*outer, "./.cordon --config inner.json run -- true");
  EXPECT_EQ(config_inside.exit_code, 125) << Describe(config_inside);
  EXPECT_NE(config_inside.stderr_data.data.find("cordon's own config"), std::string::npos)
      << Describe(config_inside);
  const RunResult nested =
      Shell(*outer,
            "cp inner.json \"$TMPDIR/inner.json\" && "
            "./.cordon --config \"$TMPDIR/inner.json\" run -- sh -c 'echo x > inner-made; "
            "echo x > /tmp/.cordon-tmp/inner-tmp 2>/dev/null && echo tmp-wrote || "
            "echo tmp-refused'; echo x > \"$TMPDIR/outer-tmp\" && echo outer-wrote");
  EXPECT_EQ(nested.stdout_data.data, "tmp-refused\nouter-wrote\n") << Describe(nested);
  EXPECT_TRUE(Exists(workspace_ / "inner-made")) << Describe(nested);
}
#endif

}  // namespace
}  // namespace cordon::kernel_test
