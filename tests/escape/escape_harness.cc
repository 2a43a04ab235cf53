// The run and the verdict of one attack (see escape_harness.h).
#include "escape_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <sstream>

#include "escape_mcp.h"
#include "escape_server.h"

namespace cordon::escape_test {
namespace {

constexpr const char* kStarted = "CORDON-ESCAPE-STARTED";
constexpr std::chrono::seconds kRunDeadline{60};

std::filesystem::path SelfDirectory() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
}

// The binaries come from the environment (a staged copy), else next to this test binary
// (scripts copy them together), else from the build tree.
std::string Locate(const char* env_name, const char* file, const char* built) {
  if (const char* value = ::getenv(env_name); value != nullptr && value[0] != '\0') return value;
  const auto beside = SelfDirectory() / file;
  if (Exists(beside)) return beside.string();
  return built;
}

std::string CordonBinary() {
#ifdef CORDON_BIN_PATH
  return Locate("CORDON_BIN", "cordon", CORDON_BIN_PATH);
#else
  return Locate("CORDON_BIN", "cordon", "");
#endif
}

// One directory per test process under the base; removed by RemoveSessionDirectory().
const std::filesystem::path& SessionDirectory() {
  static const std::filesystem::path dir = [] {
    std::string why;
    const auto base = BaseDirectory(&why);
    if (base.empty()) return std::filesystem::path();
    std::string templ = (base / "escape-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) return std::filesystem::path();
    ::chmod(templ.c_str(), 0755);
    return std::filesystem::path(templ);
  }();
  return dir;
}

std::string NewToken() {
  static std::mt19937_64 random{std::random_device{}()};
  std::ostringstream out;
  out << "esc" << std::hex << (random() & 0xffffffffffULL);
  return out.str();
}

std::string Fill(std::string text, const Fixture& f) {
  std::map<std::string, std::string> values = f.vars;
  values["ROOT"] = f.root.string();
  values["WS"] = f.ws.string();
  values["OUT"] = f.out.string();
  values["HOME"] = f.home.string();
  values["BIN"] = AttackBinary();
  values["TOKEN"] = f.token;
  values["CANARY"] = "CANARY-" + f.token;
  for (const auto& [key, value] : values) {
    const std::string placeholder = "@" + key + "@";
    for (std::size_t at = text.find(placeholder); at != std::string::npos;
         at = text.find(placeholder, at + value.size())) {
      text.replace(at, placeholder.size(), value);
    }
  }
  return text;
}

// Unmounts whatever a baseline attack (or a setup) left mounted inside the run's tree, deepest
// first, so removing the tree never walks into a mount.
void UnmountBelow(const std::filesystem::path& root) {
  for (int round = 0; round < 8; ++round) {
    std::istringstream mounts(ReadFile("/proc/self/mountinfo"));
    std::vector<std::string> targets;
    for (std::string line; std::getline(mounts, line);) {
      std::istringstream fields(line);
      std::string id, parent, dev, base, target;
      fields >> id >> parent >> dev >> base >> target;
      if (target.rfind(root.string(), 0) == 0) targets.push_back(target);
    }
    if (targets.empty()) return;
    for (auto it = targets.rbegin(); it != targets.rend(); ++it) ::umount2(it->c_str(), MNT_DETACH);
  }
}

Fixture MakeFixture(bool sandboxed) {
  Fixture f;
  f.sandboxed = sandboxed;
  f.token = NewToken();
  std::string templ = (SessionDirectory() / "r-XXXXXX").string();
  if (SessionDirectory().empty() || ::mkdtemp(templ.data()) == nullptr) return f;
  ::chmod(templ.c_str(), 0755);
  f.root = templ;
  f.ws = f.root / "ws";
  f.out = f.root / "out";
  f.home = f.root / "home";
  for (const auto& dir : {f.ws, f.out, f.home}) std::filesystem::create_directory(dir);
  // CORDON_TEST_BACKEND=bwrap: the same attacks against the bubblewrap backend.
  const char* backend = ::getenv("CORDON_TEST_BACKEND");
  const bool bwrap = backend != nullptr && std::string(backend) == "bwrap";
  WriteFile(f.root / "config.json",
            std::string("{\"command_policy\": {\"default_deny\": false}, ") +
                (bwrap ? "\"sandbox\": {\"backend\": \"bwrap\"}, " : "") +
                "\"limits\": {\"timeout_seconds\": 30}}\n");
  ::chmod((f.root / "config.json").c_str(), 0600);
  return f;
}

std::vector<std::string> Arguments(const Case& c, const Fixture& f) {
  const std::string script = (f.root / "attack.sh").string();
  if (!f.sandboxed && c.baseline == Baseline::kBare) return {"/bin/sh", script};
  return {CordonBinary(),
          "--config",
          (f.root / "config.json").string(),
          "run",
          "--mode",
          f.sandboxed ? SandboxModeName(c.mode) : "off",
          "--network",
          NetworkPolicyName(c.network),
          "--workspace",
          f.ws.string(),
          "--",
          "/bin/sh",
          script};
}

void Run(const Case& c, Fixture& f) {
  WriteFile(f.root / "attack.sh", std::string("echo ") + kStarted + "\n" + Fill(c.script, f));
  std::vector<std::string> args = Arguments(c, f);
  // No run server (the directory does not exist): each attack runs in this cordon; with
  // CORDON_ESCAPE_SERVED=1 a sandboxed run goes to this process's run server instead.
  std::string runtime = (f.root / "no-run-server").string();
  int served_before = -1;
  if (f.sandboxed && ServedRuns()) {
    std::string why;
    const std::filesystem::path server = RunServerRuntime(SessionDirectory(), CordonBinary(), &why);
    if (server.empty()) {
      f.output += "[escape harness: no run server: " + why + "]\n";
      return;
    }
    runtime = server.string();
    served_before = ServedCount();
  }
  std::vector<std::string> env = {
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "HOME=" + f.home.string(), "LANG=C.UTF-8", "CORDON_ESCAPE_CANARY=CANARY-" + f.token,
      "XDG_RUNTIME_DIR=" + runtime};
  // With CORDON_ESCAPE_MCP=1 a sandboxed run is a run_command call to `cordon mcp` instead.
  if (f.sandboxed && McpRuns()) {
    RunThroughMcp(CordonBinary(),
                  {"--mode", SandboxModeName(c.mode), "--network", NetworkPolicyName(c.network),
                   "--workspace", f.ws.string()},
                  env, "/bin/sh '" + (f.root / "attack.sh").string() + "'", f);
    return;
  }
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string pid_file = (f.root / "cordon.pid").string();

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fds[1], 1);
    ::dup2(pipe_fds[1], 2);
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    if (f.inherited_fd >= 0) ::dup2(f.inherited_fd, 9);  // dup2 clears close-on-exec
    const int pid_fd = ::open(pid_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const std::string self = std::to_string(::getpid());
    if (pid_fd < 0 || ::write(pid_fd, self.data(), self.size()) < 0) ::_exit(127);
    if (::chdir(f.ws.c_str()) != 0) ::_exit(127);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + kRunDeadline;
  char buffer[4096];
  for (;;) {
    pollfd p{pipe_fds[0], POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      ::kill(pid, SIGKILL);
      f.output +=
          "\n[escape harness: run killed after " + std::to_string(kRunDeadline.count()) + "s]\n";
      break;
    }
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    f.output.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  f.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  f.not_served = served_before >= 0 && ServedCount() == served_before;
}

void Finish(Fixture& f) {
  for (auto it = f.teardown.rbegin(); it != f.teardown.rend(); ++it) (*it)();
  for (const int fd : f.sockets) ::close(fd);
  if (f.inherited_fd >= 0) ::close(f.inherited_fd);
  if (f.root.empty()) return;
  UnmountBelow(f.root);
  std::error_code ec;
  std::filesystem::remove_all(f.root, ec);
}

std::string Describe(const char* which, const Fixture& f) {
  return std::string(which) + " run (exit " + std::to_string(f.exit_status) + ") said:\n" +
         f.output;
}

}  // namespace

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kContained:
      return "contained";
    case Verdict::kEscaped:
      return "ESCAPED";
    case Verdict::kBroken:
      return "attack broken";
    case Verdict::kNotApplicable:
      return "not applicable";
    case Verdict::kDidNotRun:
      return "sandboxed run did not start";
  }
  return "?";
}

std::string AttackBinary() {
  static const std::string staged = []() -> std::string {
#ifdef ESCAPE_ATTACK_PATH
    const std::string source = Locate("CORDON_ESCAPE_ATTACK", "escape_attack", ESCAPE_ATTACK_PATH);
#else
    const std::string source = Locate("CORDON_ESCAPE_ATTACK", "escape_attack", "");
#endif
    if (SessionDirectory().empty() || source.empty()) return {};
    // Staged under the base: the build tree may lie below /tmp, which the sandbox replaces.
    const auto target = SessionDirectory() / "escape_attack";
    std::error_code ec;
    std::filesystem::copy_file(source, target, std::filesystem::copy_options::overwrite_existing,
                               ec);
    ::chmod(target.c_str(), 0755);
    return ec ? std::string() : target.string();
  }();
  return staged;
}

// Whether the sandbox replaces `path` by a private directory (then a host-side check of what
// the sandboxed attack did there would look at the wrong tree).
bool HiddenInSandbox(const std::string& text, std::string* prefix_out) {
  for (const char* hidden : {"/tmp", "/var/tmp", "/dev/shm", "/run"}) {
    const std::string prefix = hidden;
    if (text == prefix || text.rfind(prefix + "/", 0) == 0) {
      *prefix_out = prefix;
      return true;
    }
  }
  return false;
}

std::filesystem::path BaseDirectory(std::string* why_not) {
  // $CORDON_ESCAPE_BASE alone when set; otherwise the current directory, then /var/lib (root),
  // then $HOME: the first one the sandbox shows as it is and this user can write.
  std::vector<std::filesystem::path> candidates;
  const char* configured = ::getenv("CORDON_ESCAPE_BASE");
  if (configured != nullptr && configured[0] != '\0') {
    candidates.emplace_back(configured);
  } else {
    std::error_code ec;
    candidates.push_back(std::filesystem::current_path(ec));
    candidates.emplace_back("/var/lib");
    if (const char* home = ::getenv("HOME"); home != nullptr && home[0] == '/') {
      candidates.emplace_back(home);
    }
  }
  for (std::filesystem::path base : candidates) {
    std::error_code ec;
    base = std::filesystem::weakly_canonical(base, ec);
    std::string prefix;
    if (HiddenInSandbox(base.string(), &prefix)) {
      *why_not = "the base directory " + base.string() + " lies below " + prefix +
                 ", which the sandbox replaces by a private directory: set CORDON_ESCAPE_BASE "
                 "to a writable directory elsewhere (e.g. /var/lib/cordon-escape)";
      continue;
    }
    if (::access(base.c_str(), W_OK | X_OK) != 0) {
      *why_not = "the base directory " + base.string() + " is not writable by this user";
      continue;
    }
    why_not->clear();
    return base;
  }
  return {};
}

void RemoveSessionDirectory() {
  StopRunServer();
  if (SessionDirectory().empty()) return;
  UnmountBelow(SessionDirectory());
  std::error_code ec;
  std::filesystem::remove_all(SessionDirectory(), ec);
}

CaseResult RunCase(const Case& c) {
  if (c.needs_root && !IsRoot()) return {Verdict::kNotApplicable, "the baseline needs root"};
  if (AttackBinary().empty() || CordonBinary().empty()) {
    return {Verdict::kBroken,
            "escape_attack or cordon not found (CORDON_ESCAPE_ATTACK, CORDON_BIN)"};
  }
  Fixture baseline = MakeFixture(false);
  if (baseline.root.empty()) return {Verdict::kBroken, "cannot create a run directory"};
  if (c.setup) c.setup(baseline);
  if (!baseline.not_applicable.empty()) {
    Finish(baseline);
    return {Verdict::kNotApplicable, baseline.not_applicable};
  }
  Run(c, baseline);
  const bool baseline_ran = baseline.output.find(kStarted) != std::string::npos;
  const bool baseline_landed = baseline_ran && c.landed(baseline);
  const std::string baseline_text = Describe("unsandboxed", baseline);
  Finish(baseline);
  if (!baseline_landed) {
    return {Verdict::kBroken,
            "the attack did not land without the sandbox either; " + baseline_text};
  }

  Fixture sandboxed = MakeFixture(true);
  if (c.setup) c.setup(sandboxed);
  Run(c, sandboxed);
  CaseResult result;
  if (sandboxed.output.find(kStarted) == std::string::npos) {
    result = {Verdict::kDidNotRun, Describe("sandboxed", sandboxed)};
  } else if (c.landed(sandboxed)) {
    result = {Verdict::kEscaped, Describe("sandboxed", sandboxed)};
  } else if (sandboxed.not_served) {
    result = {Verdict::kDidNotRun, "CORDON_ESCAPE_SERVED=1 but the run server did not run it; " +
                                       Describe("sandboxed", sandboxed)};
  } else {
    result = {Verdict::kContained, Describe("sandboxed", sandboxed)};
  }
  Finish(sandboxed);
  return result;
}

}  // namespace cordon::escape_test
