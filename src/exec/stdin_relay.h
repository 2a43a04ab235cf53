// A caller's stdin that is not a terminal (a pipe, a file, a socket), copied into a pipe of the
// command's own instead of being handed over.
//
// Handed over, the descriptor would give the command more than its data: /proc/self/fd/0
// reopens what it refers to, for writing too — a file of the caller's outside the sandbox's
// view, or the pipe the caller's shell reads its next line from (`... | while read x; do
// cordon run ...; done`); a socket could be written to. A pipe that cordon fills is the
// command's alone. A thread copies until the source ends (the command then reads EOF), the
// command's end is closed by every process of it (it is gone, or closed its stdin), or the
// relay is destroyed; it reads no more than the pipe takes ahead of the command.
//
//   Result<StdinRelay> relay = StdinRelay::Start(caller_stdin);
//   stdio.stdin_fd = relay->command_end();
//   ... launch ...
//   relay->CloseCommandEnd();  // the command holds its copy
//   ... supervise ...          // then destroyed: stopped and joined
#pragma once

#include <thread>

#include "cordon/error.h"
#include "core/unique_fd.h"

namespace cordon::exec {

class StdinRelay {
 public:
  // `source` is borrowed: it must stay open until the relay is destroyed.
  [[nodiscard]] static Result<StdinRelay> Start(int source);

  StdinRelay() = default;
  StdinRelay(StdinRelay&& other) noexcept = default;
  StdinRelay& operator=(StdinRelay&& other) noexcept;
  StdinRelay(const StdinRelay&) = delete;
  StdinRelay& operator=(const StdinRelay&) = delete;
  ~StdinRelay() { Stop(); }

  // The pipe's read end, the command's stdin (O_CLOEXEC: the backend dup2()s it onto 0).
  int command_end() const { return command_end_.get(); }
  bool running() const { return thread_.joinable(); }
  void CloseCommandEnd() { command_end_.Reset(); }

 private:
  void Stop();

  core::UniqueFd command_end_;
  // Written to stop the copy early; both ends are the relay's, read by the copy until joined.
  core::UniqueFd stop_read_;
  core::UniqueFd stop_write_;
  std::thread thread_;
};

}  // namespace cordon::exec
