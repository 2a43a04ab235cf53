// The run server protocol's fixed part (wire.h): magics, limits and the two headers. C++ with
// <cstdint> only, so that the `cordon` front, which has no C library (decision 0028), builds
// its messages from these very definitions.
#pragma once

#include <cstdint>

namespace cordon::server {

inline constexpr std::uint32_t kMagic = 0x31444e43;            // "CND1" little-endian: version 1
inline constexpr std::uint32_t kInvocationMagic = 0x31494e43;  // "CNI1": a front's invocation
inline constexpr std::uint32_t kMaxBodyBytes = 8u << 20;

struct RequestHeader {
  std::uint32_t magic = kMagic;
  std::uint32_t body_bytes = 0;
};

enum class ReplyKind : std::uint32_t {
  kRan = 0,      // the request was handled: print the texts, exit with exit_code
  kRefused = 1,  // the server will not serve this client (stderr_bytes say why): run it yourself
  kHello = 2,    // first message of a connection the server checked: it takes a request now
  kRunYourself = 3,  // to an invocation: not served here; the front execs the full cordon
  kAccepted = 4,     // to an invocation: it runs; the result follows within wait_seconds
};

struct ReplyHeader {
  std::uint32_t magic = kMagic;
  ReplyKind kind = ReplyKind::kRan;
  std::int32_t exit_code = 0;
  // kAccepted: the run's timeout in seconds, rounded up (the front waits that long plus
  // kReplyGrace for the result). 0 otherwise.
  std::uint32_t wait_seconds = 0;
  std::uint64_t stdout_bytes = 0;
  std::uint64_t stderr_bytes = 0;
};

}  // namespace cordon::server
