// A socket of the test on the host that a sandboxed command should (or should not) reach, and
// the evidence from outside whether it did: a connection in the backlog or a datagram queued.
#pragma once

#include <sys/socket.h>

#include <string>

#include "core/unique_fd.h"

namespace cordon::test_support {

class HostListener {
 public:
  // A listening TCP socket on 127.0.0.1 at a free port.
  static HostListener Tcp();
  // A listening stream socket bound to the abstract `name` (no leading NUL) in this network
  // namespace.
  static HostListener Abstract(const std::string& name);
  // A socket of `type` (SOCK_STREAM: listening, SOCK_DGRAM: bound) at `path`, mode 0777 so that
  // a command of any user could reach it were it not for the sandbox; the destructor removes it.
  static HostListener Pathname(const std::string& path, int type = SOCK_STREAM);

  HostListener(HostListener&& other) noexcept;
  HostListener& operator=(HostListener&& other) noexcept;
  ~HostListener();

  // The port (TCP), the name (abstract) or the path, as text for a command line.
  const std::string& address() const { return address_; }
  int port() const { return port_; }

  // True when a command reached it: a connection waits (stream; accepted and closed here) or a
  // datagram is queued (read here). Never blocks.
  bool Reached() const;

 private:
  HostListener(int fd, int type);
  core::UniqueFd fd_;
  int type_ = SOCK_STREAM;
  int port_ = 0;
  std::string address_;
  std::string unlink_;  // the pathname to remove, if any
};

}  // namespace cordon::test_support
