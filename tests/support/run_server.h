// A `cordon serve` started by a suite that runs its commands through the run server (the
// escape, kernel and fault suites' served passes): its socket directory and log in a directory
// of the suite's, stopped when the object dies.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace cordon::test_support {

class RunServer {
 public:
  // Starts `cordon serve` (`cordon` is the binary) with `env` plus XDG_RUNTIME_DIR=dir/rt, in
  // `dir`, and waits until it listens; null with *why_not when it does not within 10 s.
  // `prefix`: a command that runs it (strace, to hold it at a system call).
  static std::unique_ptr<RunServer> Start(const std::string& cordon,
                                          const std::filesystem::path& dir,
                                          std::vector<std::string> env, std::string* why_not,
                                          const std::vector<std::string>& prefix = {});
  ~RunServer();  // SIGTERM (SIGKILL after 5 s), then reaped
  RunServer(const RunServer&) = delete;
  RunServer& operator=(const RunServer&) = delete;

  // The XDG_RUNTIME_DIR under which its clients find it.
  const std::filesystem::path& runtime() const { return runtime_; }
  // How many commands it has answered ("ran a command" lines of its log).
  int Served() const;
  // The process started: the server, or the prefix command that runs it.
  pid_t pid() const { return pid_; }

 private:
  RunServer() = default;
  pid_t pid_ = -1;
  std::filesystem::path runtime_;
  std::filesystem::path log_;
};

}  // namespace cordon::test_support
