// The run server protocol's fixed part (wire.h): magics, limits and the two headers. C++ with
// <cstdint> only, so that the `cordon` front, which has no C library (decision 0028), builds
// its messages from these very definitions.
#pragma once

#include <cstdint>

namespace cordon::server {

// "CND1" little-endian: the replies' magic. (A request with it, the JSON form cordon sent
// before its clients all sent invocations, is refused.)
inline constexpr std::uint32_t kMagic = 0x31444e43;
inline constexpr std::uint32_t kInvocationMagic = 0x31494e43;  // "CNI1": a client's invocation
inline constexpr std::uint32_t kMaxBodyBytes = 8u << 20;

// How long a client waits (milliseconds), the same for the front and the full client: for the
// greeting (kHello; a server that does not greet is not used, nothing was sent to it), for
// the answer to its invocation (kAccepted or kRunYourself: the server resolves the command
// line, loads the configuration and plans meanwhile), and beyond the run's own timeout for
// the result (the server enforces that timeout itself: no result by then means it is stopped
// or hung, and the client gives up, which cancels the command).
inline constexpr std::uint32_t kHelloWaitMs = 2000;
inline constexpr std::uint32_t kAcceptWaitMs = 30000;
inline constexpr std::uint32_t kReplyGraceMs = 5000;

struct RequestHeader {
  std::uint32_t magic = kInvocationMagic;
  std::uint32_t body_bytes = 0;
};

enum class ReplyKind : std::uint32_t {
  kRan = 0,      // the request was handled: print the texts, exit with exit_code
  kRefused = 1,  // the server will not serve this client (stderr_bytes say why): run it yourself
  kHello = 2,    // first message of a connection the server checked: it takes a request now
  kRunYourself = 3,  // not served here; the client runs it itself (the front: the full cordon)
  kAccepted = 4,     // it runs; the result follows within wait_seconds
};

struct ReplyHeader {
  std::uint32_t magic = kMagic;
  ReplyKind kind = ReplyKind::kRan;
  std::int32_t exit_code = 0;
  // kAccepted: the run's timeout in seconds, rounded up (the front waits that long plus
  // kReplyGraceMs for the result). 0 otherwise.
  std::uint32_t wait_seconds = 0;
  std::uint64_t stdout_bytes = 0;
  std::uint64_t stderr_bytes = 0;
};

}  // namespace cordon::server
