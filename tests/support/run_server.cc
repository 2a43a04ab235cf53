#include "support/run_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "support/host_files.h"

namespace cordon::test_support {

std::unique_ptr<RunServer> RunServer::Start(const std::string& cordon,
                                            const std::filesystem::path& dir,
                                            std::vector<std::string> env, std::string* why_not,
                                            const std::vector<std::string>& prefix) {
  std::unique_ptr<RunServer> server(new RunServer());
  server->runtime_ = dir / "rt";
  server->log_ = dir / "run-server.log";
  std::error_code ec;
  std::filesystem::create_directories(server->runtime_, ec);
  ::chmod(server->runtime_.c_str(), 0700);
  env.push_back("XDG_RUNTIME_DIR=" + server->runtime_.string());
  std::vector<std::string> args = prefix;
  for (const char* word : {"serve", "--idle-timeout", "1800"}) {
    if (args.size() == prefix.size()) args.push_back(cordon);
    args.push_back(word);
  }
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string log = server->log_.string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || null < 0 || ::chdir(dir.c_str()) != 0) ::_exit(127);
    ::dup2(null, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execvpe(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  if (pid < 0) {
    *why_not = "fork failed";
    return nullptr;
  }
  server->pid_ = pid;
  for (int i = 0; i < 200; ++i) {
    if (ReadFile(server->log_).find("listening on") != std::string::npos) return server;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *why_not = "the run server did not listen within 10 s: " + ReadFile(server->log_);
  return nullptr;
}

RunServer::~RunServer() {
  if (pid_ <= 0) return;
  // Asked to stop, it lets its running commands end and its sessions release what they hold;
  // one that has not within 5 s is killed.
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 250; ++i) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

int RunServer::Served() const {
  const std::string text = ReadFile(log_);
  int count = 0;
  for (std::size_t at = text.find("ran a command"); at != std::string::npos;
       at = text.find("ran a command", at + 1)) {
    ++count;
  }
  return count;
}

}  // namespace cordon::test_support
