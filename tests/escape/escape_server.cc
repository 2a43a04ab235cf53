#include "escape_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "support/host_files.h"

namespace cordon::escape_test {
namespace {

pid_t g_server = -1;  // test-only: one server per test process

std::filesystem::path Log(const std::filesystem::path& dir) { return dir / "run-server.log"; }

int Count(const std::string& text, const std::string& part) {
  int count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

}  // namespace

bool ServedRuns() {
  const char* value = std::getenv("CORDON_ESCAPE_SERVED");
  return value != nullptr && std::string(value) == "1";
}

std::filesystem::path RunServerRuntime(const std::filesystem::path& dir, const std::string& cordon,
                                       std::string* why_not) {
  const std::filesystem::path runtime = dir / "rt";
  if (g_server > 0) return runtime;
  std::error_code ec;
  std::filesystem::create_directories(runtime, ec);
  ::chmod(runtime.c_str(), 0700);
  const std::string log = Log(dir).string();
  std::vector<std::string> args = {cordon, "serve", "--idle-timeout", "1800"};
  std::vector<std::string> env = {
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + dir.string(),
      "LANG=C.UTF-8", "XDG_RUNTIME_DIR=" + runtime.string()};
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || null < 0) ::_exit(127);
    ::dup2(null, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  if (pid < 0) {
    *why_not = "fork failed";
    return {};
  }
  g_server = pid;
  for (int i = 0; i < 200; ++i) {
    if (test_support::ReadFile(log).find("listening on") != std::string::npos) return runtime;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *why_not = "the run server did not listen within 10 s: " + test_support::ReadFile(log);
  StopRunServer();
  return {};
}

int ServedCount(const std::filesystem::path& dir) {
  return Count(test_support::ReadFile(Log(dir)), "ran a command");
}

void StopRunServer() {
  if (g_server <= 0) return;
  ::kill(g_server, SIGTERM);
  ::waitpid(g_server, nullptr, 0);
  g_server = -1;
}

}  // namespace cordon::escape_test
