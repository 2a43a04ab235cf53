// The run server's protocol: one invocation and one reply per connection, over a unix stream
// socket (docs/decisions/0026-run-server.md). One form for every client: the `cordon` front
// (src/front, decision 0028) and the full `cordon run` send the same bytes.
//
//   server → client  kHello once it has checked the connecting process.
//   client → server  RequestHeader with magic kInvocationMagic and four descriptors attached
//                    (SCM_RIGHTS): the caller's stdin, stdout, stderr and its working directory
//                    (O_PATH), then a body of NUL-terminated strings — its working directory,
//                    its argument count in decimal, its arguments, its environment.
//   server → client  kRunYourself (not served here: the client runs it itself, nothing ran) or
//                    kAccepted (it runs; the result follows within wait_seconds), then kRan
//                    with `stdout_bytes` and `stderr_bytes` of text for the client to print on
//                    its own stdout and stderr (the --json report, cordon's own messages), or
//                    kRefused (it could not run it: nothing ran). Then the connection closes.
//
// The server resolves the command line itself (the configuration, the workspace, the command),
// the way the full cordon would, from the caller's environment and the directory it sent.
//
// The client's end of the socket stays open while the command runs: when the client dies its
// socket reads EOF and the server kills the command's whole tree (CommandRequest::cancel_fd).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"
#include "core/unique_fd.h"
#include "server/wire_header.h"

namespace cordon::server {

// What a client sends: its command line, working directory and environment, as they are.
struct Invocation {
  std::string cwd;
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // "NAME=value"
  // Not on the wire: the directory the client sent as a descriptor (set by the server, which
  // also replaces `cwd` with that directory's path). A workspace resolved to the caller's
  // directory must be this one.
  std::uint64_t cwd_dev = 0;
  std::uint64_t cwd_ino = 0;
};

// The body of an invocation (the front builds the same bytes itself); kInvalidArgument naming
// the problem when it is not one.
std::string EncodeInvocation(const Invocation& invocation);
[[nodiscard]] Result<Invocation> DecodeInvocation(std::string_view body);

// Sends the header with `fds` (stdin, stdout, stderr, working directory) attached, then the
// body. kInvalidArgument when the body is over kMaxBodyBytes; other errors name the call.
[[nodiscard]] Result<void> SendInvocation(int socket, const Invocation& invocation,
                                          const std::array<int, 4>& fds);

struct ReceivedRequest {
  Invocation invocation;
  std::vector<core::UniqueFd> fds;  // stdin, stdout, stderr, working directory
  // A pidfd of the process that sent the request header (SCM_PIDFD): not necessarily the one
  // that connected.
  core::UniqueFd sender;
};
// Turns on SO_PASSPIDFD for `socket` (Linux 6.5): every message read from it then names its
// sender. kUnavailable when the kernel cannot.
[[nodiscard]] Result<void> PassSenderPidfd(int socket);
// Reads one invocation (after PassSenderPidfd); kInvalidArgument for a malformed one (bad
// magic, a body over the limit or cut short, not exactly its four descriptors, no sender).
// The body must have arrived within `body_time` of the header (plus one SO_RCVTIMEO period):
// a client sending a byte now and then is cut off.
[[nodiscard]] Result<ReceivedRequest> ReceiveRequest(
    int socket, std::chrono::milliseconds body_time = std::chrono::seconds(10));

[[nodiscard]] Result<void> SendReply(int socket, ReplyKind kind, int exit_code,
                                     std::string_view stdout_text, std::string_view stderr_text,
                                     std::uint32_t wait_seconds = 0);

struct Reply {
  ReplyKind kind = ReplyKind::kRan;
  int exit_code = 0;
  std::uint32_t wait_seconds = 0;
  std::string stdout_text;
  std::string stderr_text;
};
// kInvalidArgument when the reply is malformed or the connection closed before a whole one.
[[nodiscard]] Result<Reply> ReceiveReply(int socket);

}  // namespace cordon::server
