// One descriptor passed over a unix socket (SCM_RIGHTS) with a one-byte payload. The sending
// half runs in a command's child between clone and execve, so it allocates nothing and reports
// only an errno; the receiving half runs in the supervisor and returns an owned descriptor.
#pragma once

#include <cstddef>

#include "cordon/error.h"
#include "core/unique_fd.h"

namespace cordon::core {

// Sends `fd` (the sender keeps its own copy open) with one byte on `socket`. Raw sendmsg with a
// stack control buffer: safe between clone and execve. 0 when sent, else the errno (EPIPE and
// not SIGPIPE when the other end is gone).
[[nodiscard]] int SendFd(int socket, int fd) noexcept;

// `size` bytes (at least one) with `count` descriptors (at most kMaxPassedFds) attached, in
// one sendmsg; the same guarantees as SendFd. EIO when the socket took only part of the bytes.
inline constexpr int kMaxPassedFds = 4;
[[nodiscard]] int SendWithFds(int socket, const void* data, std::size_t size, const int* fds,
                              int count) noexcept;

// Receives one descriptor sent by SendFd on `socket`; `flags` are added to recvmsg's
// (MSG_DONTWAIT: only what is queued now). The descriptor arrives close-on-exec. Fails naming
// recvmsg when nothing came or when the byte came without a descriptor.
[[nodiscard]] Result<UniqueFd> ReceiveFd(int socket, int flags = 0);

}  // namespace cordon::core
