#include "linux/exec_request.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "core/fd_passing.h"
#include "core/syscall_error.h"

namespace cordon::linux_native {
namespace {

void Append(std::string& body, const std::string& text) {
  body += text;
  body.push_back('\0');
}

// Writes all of `data` (the stub reads while we write): 0 or the errno.
int SendAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace

Result<void> SendExecRequest(int socket, const ExecRequest& request) {
  if (request.argv.empty() || request.candidates.empty()) {
    return Fail(ErrorCode::kInvalidArgument, "empty command");
  }
  std::string body;
  Append(body, request.cwd);
  for (const std::string& arg : request.argv) Append(body, arg);
  for (const std::string& entry : request.env) Append(body, entry);
  for (const std::string& path : request.candidates) Append(body, path);
  const std::size_t strings = request.argv.size() + request.env.size() + request.candidates.size();
  if (body.size() > kExecRequestMaxBody || strings > kExecRequestMaxStrings) {
    return Fail(ErrorCode::kInvalidArgument, "command line and environment are too large");
  }
  ExecRequestHeader header;
  header.body_bytes = static_cast<std::uint32_t>(body.size());
  header.argc = static_cast<std::uint32_t>(request.argv.size());
  header.envc = static_cast<std::uint32_t>(request.env.size());
  header.pathc = static_cast<std::uint32_t>(request.candidates.size());
  int fds[3];
  int count = 0;
  const int wanted[3] = {request.stdio.stdin_fd, request.stdio.stdout_fd, request.stdio.stderr_fd};
  for (int i = 0; i < 3; ++i) {
    if (wanted[i] < 0) continue;
    header.stdio_mask |= 1u << i;
    fds[count++] = wanted[i];
  }
  if (const int err = core::SendWithFds(socket, &header, sizeof header, fds, count); err != 0) {
    if (err == EPIPE || err == ECONNRESET) {
      return Fail(ErrorCode::kUnavailable, "prepared command: its process is gone", err);
    }
    return core::FailSyscall("sendmsg", "the prepared command's request socket", err);
  }
  if (const int err = SendAll(socket, body.data(), body.size()); err != 0) {
    // Gone before it read the whole request: it cannot have run anything.
    if (err == EPIPE || err == ECONNRESET) {
      return Fail(ErrorCode::kUnavailable, "prepared command: its process is gone", err);
    }
    return core::FailSyscall("send", "the prepared command's request socket", err);
  }
  return {};
}

Result<std::optional<ExecFailure>> ReadExecOutcome(int socket) {
  ExecFailure failure;
  std::size_t got = 0;
  while (got < sizeof failure) {
    const ssize_t n = ::read(socket, reinterpret_cast<char*>(&failure) + got, sizeof failure - got);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      // Closed with part of the request unread: it died before it could exec anything.
      if (errno == ECONNRESET) {
        return Fail(ErrorCode::kUnavailable, "prepared command: its process is gone", errno);
      }
      return core::FailSyscall("read", "the prepared command's request socket");
    }
    got += static_cast<std::size_t>(n);
  }
  if (got == 0) return std::nullopt;
  if (got != sizeof failure) {
    return Fail(ErrorCode::kSystem, "prepared command: truncated start report");
  }
  return failure;
}

}  // namespace cordon::linux_native
