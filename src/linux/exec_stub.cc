#include "linux/exec_stub.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "linux/exec_wire.h"

namespace cordon::linux_native {
namespace {

[[noreturn]] void Fail(int fd, ExecFailureStep step, int err) {
  ExecFailure failure;
  failure.step = static_cast<std::uint32_t>(step);
  failure.err = err;
  const ssize_t n = ::send(fd, &failure, sizeof failure, MSG_NOSIGNAL);
  ::_exit(n == static_cast<ssize_t>(sizeof failure) ? 127 : 126);
}

// Reads exactly `size` bytes; false on EOF or error (errno set, EPROTO for EOF).
bool ReadFully(int fd, char* out, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, out + done, size - done);
    if (n == 0) {
      errno = EPROTO;
      return false;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// The header and its descriptors (at most three, close-on-exec). Returns the number of
// descriptors received, -1 on error (errno set).
int ReceiveHeader(int fd, ExecRequestHeader& header, int (&fds)[3]) {
  alignas(cmsghdr) char control[CMSG_SPACE(3 * sizeof(int))];
  iovec iov{&header, sizeof header};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {
    if (n == 0) errno = EPROTO;
    return -1;
  }
  int count = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t bytes = c->cmsg_len - CMSG_LEN(0);
    for (std::size_t i = 0; i < bytes / sizeof(int) && count < 3; ++i) {
      std::memcpy(&fds[count++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
    }
  }
  if ((msg.msg_flags & MSG_CTRUNC) != 0) {
    errno = EPROTO;
    return -1;
  }
  // The rest of the header, if the stream split it.
  if (static_cast<std::size_t>(n) < sizeof header &&
      !ReadFully(fd, reinterpret_cast<char*>(&header) + n, sizeof header - n)) {
    return -1;
  }
  return count;
}

// Splits `count` NUL-terminated strings off the front of [*at, end) into `out`, followed by a
// null pointer; false when the body holds fewer.
bool TakeStrings(char*& at, const char* end, std::uint32_t count, char** out) {
  for (std::uint32_t i = 0; i < count; ++i) {
    const void* nul = std::memchr(at, '\0', static_cast<std::size_t>(end - at));
    if (nul == nullptr) return false;
    out[i] = at;
    at = static_cast<char*>(const_cast<void*>(nul)) + 1;
  }
  out[count] = nullptr;
  return true;
}

int PopCount3(std::uint32_t mask) { return (mask & 1) + ((mask >> 1) & 1) + ((mask >> 2) & 1); }

}  // namespace

void RunExecStub(int request_fd) {
  // The request socket must not reach the command: its close at execve is what tells the
  // supervisor the command started.
  if (::fcntl(request_fd, F_SETFD, FD_CLOEXEC) != 0) ::_exit(126);
  ExecRequestHeader header{};
  header.magic = 0;
  int fds[3] = {-1, -1, -1};
  const int received = ReceiveHeader(request_fd, header, fds);
  if (received < 0) Fail(request_fd, ExecFailureStep::kRequest, errno);
  const std::uint64_t strings =
      std::uint64_t{header.argc} + header.envc + header.pathc;  // no overflow in 64 bits
  if (header.magic != kExecRequestMagic || (header.stdio_mask & ~7u) != 0 ||
      PopCount3(header.stdio_mask) != received || header.argc == 0 || header.pathc == 0) {
    Fail(request_fd, ExecFailureStep::kRequest, EPROTO);
  }
  if (header.body_bytes > kExecRequestMaxBody || strings > kExecRequestMaxStrings) {
    Fail(request_fd, ExecFailureStep::kRequest, EMSGSIZE);
  }
  // One mapping for the strings, one for the three pointer arrays (each null-terminated).
  const std::size_t body_size = header.body_bytes == 0 ? 1 : header.body_bytes;
  void* body =
      ::mmap(nullptr, body_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void* table = ::mmap(nullptr, (strings + 3) * sizeof(char*), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (body == MAP_FAILED || table == MAP_FAILED) Fail(request_fd, ExecFailureStep::kRequest, errno);
  char* at = static_cast<char*>(body);
  if (!ReadFully(request_fd, at, header.body_bytes)) {
    Fail(request_fd, ExecFailureStep::kRequest, errno);
  }
  const char* end = at + header.body_bytes;
  char** argv = static_cast<char**>(table);
  char** envp = argv + header.argc + 1;
  char** paths = envp + header.envc + 1;
  const char* cwd = at;
  const void* cwd_end = std::memchr(at, '\0', header.body_bytes);
  if (cwd_end == nullptr) Fail(request_fd, ExecFailureStep::kRequest, EPROTO);
  at = static_cast<char*>(const_cast<void*>(cwd_end)) + 1;
  if (!TakeStrings(at, end, header.argc, argv) || !TakeStrings(at, end, header.envc, envp) ||
      !TakeStrings(at, end, header.pathc, paths) || at != end) {
    Fail(request_fd, ExecFailureStep::kRequest, EPROTO);
  }
  // The caller's descriptors on 0..2 (each received one is above 2: 0..2 were open).
  int next = 0;
  for (int i = 0; i < 3; ++i) {
    if ((header.stdio_mask & (1u << i)) == 0) continue;
    const int fd = fds[next++];
    if (::dup2(fd, i) != i) Fail(request_fd, ExecFailureStep::kStdio, errno);
    ::close(fd);
  }
  if (::chdir(cwd) != 0) Fail(request_fd, ExecFailureStep::kChdir, errno);
  // execvp's search over candidates resolved by the supervisor: EACCES on one is remembered
  // but the search goes on; any other error than "not there" ends it.
  int saved = ENOENT;
  for (std::uint32_t i = 0; i < header.pathc; ++i) {
    ::execve(paths[i], argv, envp);
    if (errno == EACCES) {
      saved = EACCES;
    } else if (errno != ENOENT && errno != ENOTDIR) {
      saved = errno;
      break;
    }
  }
  Fail(request_fd, ExecFailureStep::kExecve, saved);
}

}  // namespace cordon::linux_native
