#include "server/wire.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <optional>

#include "core/fd_passing.h"
#include "core/syscall_error.h"

namespace cordon::server {
namespace {

// <asm-generic/socket.h> of Linux 6.5; Debian 12's headers predate them.
constexpr int kSoPassPidfd = 76;
constexpr int kScmPidfd = 0x04;

// Replies beyond this are refused by the client: two streams of the largest output cap
// (limits.output_bytes) escaped into a JSON report stay far below it.
constexpr std::uint64_t kMaxReplyText = 1ull << 30;

Result<void> WriteAll(int socket, const void* data, std::size_t size, const char* what) {
  const char* at = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(socket, at, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return core::FailSyscall("send", what);
    }
    at += n;
    size -= static_cast<std::size_t>(n);
  }
  return {};
}

// kInvalidArgument when the peer closed before `size` bytes came, or when `deadline` passed
// before they did (a peer sending a byte now and then must not hold the reader for ever; each
// recv itself is bounded by the socket's SO_RCVTIMEO, if any).
Result<void> ReadAll(int socket, void* data, std::size_t size, const char* what,
                     std::optional<std::chrono::steady_clock::time_point> deadline = {}) {
  char* at = static_cast<char*>(data);
  while (size > 0) {
    if (deadline && std::chrono::steady_clock::now() >= *deadline) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("run server protocol: the {} came too slowly", what));
    }
    const ssize_t n = ::recv(socket, at, size, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return core::FailSyscall("recv", what);
    }
    if (n == 0) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("run server protocol: the connection closed inside the {}", what));
    }
    at += n;
    size -= static_cast<std::size_t>(n);
  }
  return {};
}

}  // namespace

std::string EncodeInvocation(const Invocation& invocation) {
  std::string body;
  auto add = [&body](std::string_view text) {
    body.append(text);
    body.push_back('\0');
  };
  add(invocation.cwd);
  add(std::to_string(invocation.argv.size()));
  for (const std::string& arg : invocation.argv) add(arg);
  for (const std::string& entry : invocation.env) add(entry);
  return body;
}

Result<Invocation> DecodeInvocation(std::string_view body) {
  if (body.empty() || body.back() != '\0') {
    return Fail(ErrorCode::kInvalidArgument,
                "run invocation: the body does not end with a NUL byte");
  }
  std::vector<std::string_view> parts;
  for (std::size_t at = 0; at < body.size();) {
    const std::size_t end = body.find('\0', at);
    parts.push_back(body.substr(at, end - at));
    at = end + 1;
  }
  if (parts.size() < 3) {
    return Fail(ErrorCode::kInvalidArgument,
                "run invocation: no working directory, argument count and arguments");
  }
  std::size_t argc = 0;
  const std::string_view count = parts[1];
  auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), argc);
  if (ec != std::errc() || end != count.data() + count.size() || argc == 0 ||
      argc > parts.size() - 2) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("run invocation: an argument count of \"{}\" with {} strings after it",
                            count, parts.size() - 2));
  }
  Invocation invocation;
  invocation.cwd = parts[0];
  if (!invocation.cwd.starts_with('/')) {
    return Fail(ErrorCode::kInvalidArgument,
                "run invocation: the working directory is not an absolute path");
  }
  invocation.argv.assign(parts.begin() + 2, parts.begin() + 2 + static_cast<long>(argc));
  invocation.env.assign(parts.begin() + 2 + static_cast<long>(argc), parts.end());
  return invocation;
}

Result<void> SendInvocation(int socket, const Invocation& invocation,
                            const std::array<int, 4>& fds) {
  const std::string body = EncodeInvocation(invocation);
  if (body.size() > kMaxBodyBytes) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("run invocation: {} bytes, more than the {} a server accepts",
                            body.size(), kMaxBodyBytes));
  }
  RequestHeader header;
  header.body_bytes = static_cast<std::uint32_t>(body.size());
  if (const int err = core::SendWithFds(socket, &header, sizeof header, fds.data(),
                                        static_cast<int>(fds.size()));
      err != 0) {
    return core::FailSyscall("sendmsg", "run invocation header", err);
  }
  return WriteAll(socket, body.data(), body.size(), "run invocation body");
}

Result<void> PassSenderPidfd(int socket) {
  const int on = 1;
  if (::setsockopt(socket, SOL_SOCKET, kSoPassPidfd, &on, sizeof on) != 0) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("setsockopt(SO_PASSPIDFD): {} (needs Linux 6.5 or later)",
                            std::strerror(errno)));
  }
  return {};
}

Result<ReceivedRequest> ReceiveRequest(int socket, std::chrono::milliseconds body_time) {
  RequestHeader header;
  iovec iov{&header, sizeof header};
  alignas(cmsghdr) char
      control[CMSG_SPACE(core::kMaxPassedFds * sizeof(int)) + CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return core::FailSyscall("recvmsg", "run request header");
  if (n == 0) {
    // Gone before asking anything (`cordon serve --status` looking, a client that gave up).
    return std::unexpected(
        Error{ErrorCode::kSystem, ECONNRESET, "the client left before sending a request"});
  }
  ReceivedRequest received;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == kScmPidfd &&
        c->cmsg_len == CMSG_LEN(sizeof(int))) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
      received.sender = core::UniqueFd(fd);
      continue;
    }
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      received.fds.emplace_back(fd);  // owned before any check can return
    }
  }
  if ((msg.msg_flags & MSG_CTRUNC) != 0) {
    return Fail(ErrorCode::kInvalidArgument, "run request: too many descriptors attached");
  }
  if (!received.sender.valid()) {
    return Fail(ErrorCode::kInvalidArgument, "run request: the kernel did not name its sender");
  }
  if (static_cast<std::size_t>(n) != sizeof header || header.magic != kInvocationMagic) {
    return Fail(ErrorCode::kInvalidArgument,
                "run request: not a cordon invocation of this version (bad header)");
  }
  if (header.body_bytes == 0 || header.body_bytes > kMaxBodyBytes) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("run request: a body of {} bytes (1 to {} accepted)", header.body_bytes,
                            kMaxBodyBytes));
  }
  std::string body(header.body_bytes, '\0');
  CORDON_TRY_VOID(ReadAll(socket, body.data(), body.size(), "run request body",
                          std::chrono::steady_clock::now() + body_time));
  CORDON_TRY(received.invocation, DecodeInvocation(body));
  if (received.fds.size() != 4) {
    return Fail(
        ErrorCode::kInvalidArgument,
        fmt::format("run invocation: {} descriptors attached, 4 expected", received.fds.size()));
  }
  return received;
}

Result<void> SendReply(int socket, ReplyKind kind, int exit_code, std::string_view stdout_text,
                       std::string_view stderr_text, std::uint32_t wait_seconds) {
  ReplyHeader header;
  header.kind = kind;
  header.exit_code = exit_code;
  header.wait_seconds = wait_seconds;
  header.stdout_bytes = stdout_text.size();
  header.stderr_bytes = stderr_text.size();
  CORDON_TRY_VOID(WriteAll(socket, &header, sizeof header, "run reply header"));
  CORDON_TRY_VOID(WriteAll(socket, stdout_text.data(), stdout_text.size(), "run reply"));
  return WriteAll(socket, stderr_text.data(), stderr_text.size(), "run reply");
}

Result<Reply> ReceiveReply(int socket) {
  ReplyHeader header;
  CORDON_TRY_VOID(ReadAll(socket, &header, sizeof header, "run reply header"));
  if (header.magic != kMagic || header.kind > ReplyKind::kAccepted ||
      header.stdout_bytes > kMaxReplyText || header.stderr_bytes > kMaxReplyText) {
    return Fail(ErrorCode::kInvalidArgument, "run server protocol: a malformed reply header");
  }
  Reply reply;
  reply.kind = header.kind;
  reply.exit_code = header.exit_code;
  reply.wait_seconds = header.wait_seconds;
  reply.stdout_text.resize(header.stdout_bytes);
  reply.stderr_text.resize(header.stderr_bytes);
  CORDON_TRY_VOID(ReadAll(socket, reply.stdout_text.data(), reply.stdout_text.size(), "run reply"));
  CORDON_TRY_VOID(ReadAll(socket, reply.stderr_text.data(), reply.stderr_text.size(), "run reply"));
  return reply;
}

}  // namespace cordon::server
