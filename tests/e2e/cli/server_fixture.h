// Shared by the run server e2e tests (server_e2e_test.cc, server_autostart_e2e_test.cc): a
// background process, waits on /proc, and the ServerTest fixture with its own server.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli_fixture.h"

namespace cordon::e2e {

using namespace std::chrono_literals;
// A process started in the background with stdout and stderr into a file.
class Background {
 public:
  Background(const Invocation& inv, const std::filesystem::path& log) {
    std::vector<char*> argv, envp;
    for (const auto& a : inv.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : inv.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0 || null < 0) _exit(127);
      ::dup2(null, 0);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      if (!inv.cwd.empty() && ::chdir(inv.cwd.c_str()) != 0) _exit(127);
      ::execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
  }
  ~Background() { Stop(SIGKILL); }
  // Already reaped by the test: nothing to stop.
  void Forget() { pid_ = -1; }
  pid_t pid() const { return pid_; }
  // Signals it and reaps it; its exit code (128+N for signal N).
  int Stop(int signal) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
};

inline bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit = 10s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return done();
}

// Processes of the machine whose command line is exactly `argv0 argv1` (a unique marker).
inline int CountProcesses(const std::string& argv0, const std::string& argv1) {
  const std::string wanted = argv0 + '\0' + argv1 + '\0';
  int count = 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return -1;
  while (dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream in(std::string("/proc/") + entry->d_name + "/cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(in)), {});
    if (cmdline == wanted) ++count;
  }
  ::closedir(proc);
  return count;
}

// A prlimit flag that gives a command another soft limit of open files than this process's.
inline std::string OtherFileLimit() {
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  return "--nofile=" + std::to_string(files.rlim_cur - 1) + ":" + std::to_string(files.rlim_max);
}

// Whether every thread of `pid` is stopped (state T): SIGSTOP takes effect after kill()
// returns, and a worker thread that runs on for a moment could still accept a connection.
inline bool AllThreadsStopped(pid_t pid) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  int threads = 0;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    const std::string stat = ReadFile(task.path() / "stat");
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'T') {
      return false;
    }
    ++threads;
  }
  return !ec && threads > 0;
}

class ServerTest : public CliTest {
 protected:
  ServerTest() : runtime_(workspace_ / "rt") {
    std::filesystem::create_directories(runtime_);
    std::filesystem::permissions(runtime_, std::filesystem::perms::owner_all);
  }

  // The cordon binary where a sandboxed command can run it: the build tree may lie below
  // /tmp, which the sandbox replaces (its executables are static: copies are enough).
  std::string CordonInWorkspace() const {
    const std::filesystem::path copy = workspace_ / "staged/bin/cordon";
    if (!std::filesystem::exists(copy)) return StageCordon(workspace_ / "staged").string();
    return copy.string();
  }

  std::filesystem::path Socket() const { return runtime_ / "cordon/run.sock"; }
  std::filesystem::path Log() const { return tmp_.path() / "server.log"; }
  std::string ServerLog() const { return ReadFile(Log()); }
  std::string RuntimeEnv() const { return "XDG_RUNTIME_DIR=" + runtime_.string(); }

  void StartServer(const std::string& idle_timeout = "60") {
    // The previous server's "listening on" is not this one's (the new one truncates the log
    // only once it runs).
    std::filesystem::remove(Log());
    server_.emplace(CordonInvocation({"serve", "--idle-timeout", idle_timeout}, {RuntimeEnv()}),
                    Log());
    // Not the socket file: a dead server's may still be there.
    ASSERT_TRUE(WaitFor([&] { return ServerLog().find("listening on") != std::string::npos; }))
        << "not listening; log: " << ServerLog();
  }

  Outcome Run(std::initializer_list<std::string> args, std::vector<std::string> env = {}) {
    env.push_back(RuntimeEnv());
    return Cordon(args, std::move(env));
  }

  std::filesystem::path runtime_;
  std::optional<Background> server_;
};

inline int CountOf(const std::string& text, const std::string& part) {
  int count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

}  // namespace cordon::e2e
