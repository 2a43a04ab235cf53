// The caller's terminal settings around a run: a command that changes them (stty -echo, an
// editor that crashed in raw mode) leaves the terminal as it found it, served or not. The front
// does the same without a C library (front/front.cc, TerminalState).
#pragma once

#include <termios.h>
#include <unistd.h>

#include <cstring>

namespace cordon::cli {

class TerminalState {
 public:
  // Saves the settings of the first of stdin, stdout and stderr that is a terminal.
  TerminalState() {
    for (int candidate = 0; candidate < 3 && fd_ < 0; ++candidate) {
      if (::tcgetattr(candidate, &saved_) == 0) fd_ = candidate;
    }
  }
  // Puts them back when the command changed them, and only from the terminal's foreground
  // process group (from the background the kernel would stop this process with SIGTTOU).
  ~TerminalState() {
    if (fd_ < 0) return;
    termios now{};
    if (::tcgetattr(fd_, &now) != 0 || ::tcgetpgrp(fd_) != ::getpgrp()) return;
    if (std::memcmp(&now, &saved_, sizeof now) != 0) (void)::tcsetattr(fd_, TCSADRAIN, &saved_);
  }
  TerminalState(const TerminalState&) = delete;
  TerminalState& operator=(const TerminalState&) = delete;

 private:
  termios saved_{};
  int fd_ = -1;
};

}  // namespace cordon::cli
