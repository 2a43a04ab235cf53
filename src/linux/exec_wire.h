// The hand-over of a command to a prepared sandbox (docs/decisions/0023-prepared-commands.md):
// the wire format between the supervisor (linux/exec_request.h, which encodes) and
// cordon-init's exec mode (linux/exec_stub.cc, which decodes). Libc only: the stub includes it.
//
// Over a SOCK_STREAM socketpair, supervisor → command process:
//   ExecRequestHeader, sent with SCM_RIGHTS carrying one descriptor per bit of `stdio_mask`
//   (bit i: the command's descriptor i; a missing bit keeps the prepared /dev/null), then
//   `body_bytes` of NUL-terminated strings: cwd, argc argv strings, envc "NAME=value"
//   strings, pathc exec candidates (argv[0] resolved against the sandbox's PATH, in order).
// Command process → supervisor: nothing when execve succeeded (the socket is close-on-exec:
// the supervisor reads EOF), or one ExecFailure before it exits 127.
#pragma once

#include <cstdint>

namespace cordon::linux_native {

inline constexpr std::uint32_t kExecRequestMagic = 0x63647278;  // "cdrx"
// Bounds the stub checks before it maps anything: the kernel's own limit on argv + envp is
// far lower (a quarter of the stack limit, 2 MiB by default; 32 pages per string).
inline constexpr std::uint32_t kExecRequestMaxBody = 64u << 20;
inline constexpr std::uint32_t kExecRequestMaxStrings = 1u << 20;

struct ExecRequestHeader {
  std::uint32_t magic = kExecRequestMagic;
  std::uint32_t body_bytes = 0;
  std::uint32_t argc = 0;
  std::uint32_t envc = 0;
  std::uint32_t pathc = 0;
  std::uint32_t stdio_mask = 0;
};

enum class ExecFailureStep : std::uint32_t {
  kRequest = 1,  // malformed or truncated request (err: EPROTO, EMSGSIZE, or the read's)
  kStdio = 2,    // dup2 of a received descriptor
  kChdir = 3,
  kExecve = 4,
  // The sandbox's view lacks a mount it had when the stub began to wait: the host replaced or
  // removed a file a mask covered (err: ESTALE). Nothing ran; the supervisor
  // starts the command another way, in a view masked over what is there now.
  kMounts = 5,
};

struct ExecFailure {
  std::uint32_t step = 0;  // ExecFailureStep
  std::int32_t err = 0;
};

}  // namespace cordon::linux_native
