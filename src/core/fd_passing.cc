#include "core/fd_passing.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include "core/syscall_error.h"

namespace cordon::core {
namespace {

// The one-byte payload and the control buffer for receiving one descriptor.
struct FdMessage {
  char byte = 'F';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};

  FdMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;
};

}  // namespace

int SendFd(int socket, int fd) noexcept {
  const char byte = 'F';
  return SendWithFds(socket, &byte, 1, &fd, 1);
}

int SendWithFds(int socket, const void* data, std::size_t size, const int* fds,
                int count) noexcept {
  if (count < 0 || count > kMaxPassedFds || size == 0) return EINVAL;
  iovec iov{const_cast<void*>(data), size};
  alignas(cmsghdr) char control[CMSG_SPACE(kMaxPassedFds * sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (count > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(count * sizeof(int));
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(count * sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), fds, count * sizeof(int));
  }
  ssize_t sent;
  do {
    sent = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) return errno;
  return static_cast<std::size_t>(sent) == size ? 0 : EIO;
}

Result<UniqueFd> ReceiveFd(int socket, int flags) {
  FdMessage m;
  ssize_t got;
  do {
    got = ::recvmsg(socket, &m.msg, flags | MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  const std::string args = fmt::format("fd {}, one descriptor (SCM_RIGHTS)", socket);
  if (got < 0) return FailSyscall("recvmsg", args);
  // Whatever arrived is closed unless it is the one descriptor asked for.
  UniqueFd received;
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&m.msg); cmsg != nullptr; cmsg = CMSG_NXTHDR(&m.msg, cmsg)) {
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS &&
        cmsg->cmsg_len == CMSG_LEN(sizeof(int))) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
      received.Reset(fd);
    }
  }
  if (got == 0) return FailSyscall("recvmsg", args + ": the sender closed its end", EPIPE);
  if (!received) {
    return FailSyscall("recvmsg", args + ": the message carried no descriptor", EBADMSG);
  }
  return received;
}

}  // namespace cordon::core
