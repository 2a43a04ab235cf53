#include "fault_support.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

namespace cordon::fault_test {

std::string McpRunBinary() {
  if (const char* bin = ::getenv("CORDON_FAULT_MCP_RUN"); bin != nullptr && bin[0] != '\0') {
    return bin;
  }
  std::error_code ec;
  const auto beside =
      std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "fault_mcp_run";
  if (Exists(beside)) return beside.string();
  return CORDON_FAULT_MCP_RUN;
}

std::string CordonBinary() {
  if (const char* bin = ::getenv("CORDON_BIN"); bin != nullptr && bin[0] != '\0') return bin;
  std::error_code ec;
  const auto beside = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "cordon";
  if (Exists(beside)) return beside.string();
#ifdef CORDON_BIN_PATH
  return CORDON_BIN_PATH;
#else
  return "cordon";
#endif
}

void Child::Pump() {
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(output_fd, buffer, sizeof buffer);
    if (n <= 0) return;
    // Keep the start and the last part: a flood must not fill the test's memory.
    if (output.size() < (1 << 20)) output.append(buffer, static_cast<std::size_t>(n));
  }
}

bool Child::Wait(std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!Exited()) {
    Pump();
    int s = 0;
    if (::waitpid(pid, &s, WNOHANG) == pid) {
      status = s;
      Pump();
      break;
    }
    if (std::chrono::steady_clock::now() >= until) return false;
    pollfd p{output_fd, POLLIN, 0};
    ::poll(&p, 1, 10);
  }
  return true;
}

int Child::ExitCode() const {
  if (!Exited()) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Child Start(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            const std::filesystem::path& cwd) {
  std::vector<std::string> strings = argv;
  std::vector<std::string> env_strings = {
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"};
  env_strings.insert(env_strings.end(), env.begin(), env.end());
  // The MCP helper gets the command line in its environment: in its argv, the marker would
  // make the helper itself one of the command's processes.
  if (!strings.empty() && strings.front() == McpRunBinary()) {
    env_strings.push_back(
        "CORDON_FAULT_MCP_ARGV=" +
        nlohmann::json(std::vector<std::string>(strings.begin() + 1, strings.end())).dump());
    strings.resize(1);
  }
  std::vector<char*> args, envp;
  for (auto& s : strings) args.push_back(s.data());
  args.push_back(nullptr);
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  int fds[2];
  Child child;
  if (::pipe2(fds, O_CLOEXEC) != 0) return child;
  child.pid = ::fork();
  if (child.pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    if (::chdir(cwd.c_str()) != 0) ::_exit(127);
    ::execvpe(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  child.output_fd = fds[0];
  return child;
}

namespace {

void ScanCgroups(const std::filesystem::path& dir, int depth, std::set<std::string>* found) {
  if (depth > 5) return;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    const std::string name = entry.path().filename().string();
    if (name.rfind("cordon-run-", 0) == 0 || name.rfind("cordon-probe-", 0) == 0) {
      found->insert(entry.path().string());
    }
    ScanCgroups(entry.path(), depth + 1, found);
  }
}

HostTraces Difference(const HostTraces& before, const HostTraces& after) {
  HostTraces added;
  for (const auto& m : after.mounts) {
    if (before.mounts.count(m) == 0) added.mounts.insert(m);
  }
  for (const auto& d : after.private_dirs) {
    if (before.private_dirs.count(d) == 0) added.private_dirs.insert(d);
  }
  for (const auto& c : after.cgroups) {
    if (before.cgroups.count(c) == 0) added.cgroups.insert(c);
  }
  return added;
}

}  // namespace

HostTraces SnapshotTraces() {
  HostTraces traces;
  std::istringstream mounts(ReadFile("/proc/self/mountinfo"));
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream fields(line);
    std::string id, parent, dev, base, target;
    fields >> id >> parent >> dev >> base >> target;
    // The escape suite's unsandboxed baselines mount inside their own trees on purpose (and
    // may run at the same time as this one): not a trace of ours.
    if (target.find("/escape-") != std::string::npos) continue;
    traces.mounts.insert(target + " (" + base + ")");
  }
  static const std::regex kPrivateDir("cordon-[A-Za-z0-9]{6}");
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/tmp", ec)) {
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, kPrivateDir)) traces.private_dirs.insert(entry.path().string());
  }
  ScanCgroups("/sys/fs/cgroup", 0, &traces.cgroups);
  return traces;
}

std::string NewTraces(const HostTraces& before, const HostTraces& after) {
  // Other test programs may run at the same time and have their own runs in flight: a trace
  // of theirs disappears when their run ends, a leak of ours stays. Look again before blaming.
  HostTraces added = Difference(before, after);
  for (int i = 0;
       i < 20 && !(added.mounts.empty() && added.private_dirs.empty() && added.cgroups.empty());
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    added = Difference(before, SnapshotTraces());
  }
  std::string text;
  for (const auto& m : added.mounts) text += "mount left behind: " + m + "\n";
  for (const auto& d : added.private_dirs) text += "private directory left behind: " + d + "\n";
  for (const auto& c : added.cgroups) text += "cgroup left behind: " + c + "\n";
  return text;
}

void FaultTest::SetUp() {
  std::filesystem::path base;
  if (const char* value = ::getenv("CORDON_FAULT_BASE"); value != nullptr && value[0] != '\0') {
    base = value;
  } else {
    base = std::filesystem::current_path();
  }
  std::string templ = (base / "fault-XXXXXX").string();
  ASSERT_NE(::mkdtemp(templ.data()), nullptr) << "mkdtemp " << templ;
  ::chmod(templ.c_str(), 0755);
  root_ = templ;
  ws_ = root_ / "ws";
  out_ = root_ / "out";
  home_ = root_ / "home";
  for (const auto& dir : {ws_, out_, home_}) std::filesystem::create_directory(dir);
  marker_ = "cordon-fault-" + root_.filename().string().substr(6);
  // CORDON_TEST_BACKEND=bwrap: the same faults over the bubblewrap backend.
  const char* backend = ::getenv("CORDON_TEST_BACKEND");
  const bool bwrap = backend != nullptr && std::string(backend) == "bwrap";
  WriteFile(root_ / "config.json", std::string("{\"command_policy\": {\"default_deny\": false}") +
                                       (bwrap ? ", \"sandbox\": {\"backend\": \"bwrap\"}" : "") +
                                       "}\n");
  ::chmod((root_ / "config.json").c_str(), 0600);
  if (ServedRuns()) {
    std::filesystem::create_directory(root_ / "server");
    std::string why;
    server_ = test_support::RunServer::Start(
        CordonBinary(), root_ / "server",
        {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
         "HOME=" + home_.string(), "LANG=C.UTF-8"},
        &why);
    ASSERT_TRUE(server_) << why;
  }
}

void FaultTest::TearDown() {
  for (const pid_t pid : to_kill_) {
    if (::waitpid(pid, nullptr, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  for (const pid_t pid : PidsWithMarker(marker_)) ::kill(pid, SIGKILL);  // none if empty
  server_.reset();
  std::error_code ec;
  if (!root_.empty()) std::filesystem::remove_all(root_, ec);
}

bool BwrapBackend() {
  const char* value = ::getenv("CORDON_TEST_BACKEND");
  return value != nullptr && std::string(value) == "bwrap";
}

bool McpRuns() {
  const char* value = ::getenv("CORDON_FAULT_PATH");
  return value != nullptr && std::string(value) == "mcp";
}

pid_t FaultTest::CordonOf(pid_t started) const {
  if (!McpRuns()) return started;
  for (int i = 0; i < 500; ++i) {
    std::istringstream children(ReadFile("/proc/" + std::to_string(started) + "/task/" +
                                         std::to_string(started) + "/children"));
    // Its only child (the front has exec'd the full cordon by then, under another name).
    if (pid_t pid = 0; children >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

bool ServedRuns() {
  const char* value = ::getenv("CORDON_FAULT_SERVED");
  return value != nullptr && std::string(value) == "1";
}

std::vector<std::string> FaultTest::RunArgs(const std::string& shell_text,
                                            const std::vector<std::string>& extra) const {
  std::vector<std::string> args = {CordonBinary(), "--config", (root_ / "config.json").string(),
                                   "run"};
  if (McpRuns()) args.insert(args.begin(), McpRunBinary());
  // The extra flags go before --workspace: after it, `--writable-root P -- CMD` loses CMD
  // (reported to the lead; see docs/decisions/0012).
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--workspace", ws_.string()});
  args.insert(args.end(), {"--", "/bin/sh", "-c", shell_text, marker_});
  return args;
}

std::vector<std::string> FaultTest::Env() const {
  // No run server (a directory that does not exist): a `cordon serve` the user left running
  // would take the runs away from the process these tests stop and kill. Served, this test's.
  return {"HOME=" + home_.string(), "XDG_CONFIG_HOME=" + (home_ / ".config").string(),
          "XDG_RUNTIME_DIR=" + (server_ ? server_->runtime() : home_ / "no-run-server").string()};
}

}  // namespace cordon::fault_test
