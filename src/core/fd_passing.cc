#include "core/fd_passing.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include "core/syscall_error.h"

namespace cordon::core {
namespace {

// The one-byte payload and the control buffer for one descriptor, shared by both halves.
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
  FdMessage m;
  cmsghdr* cmsg = CMSG_FIRSTHDR(&m.msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
  ssize_t sent;
  do {
    sent = ::sendmsg(socket, &m.msg, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) return errno;
  return sent == 1 ? 0 : EIO;
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
