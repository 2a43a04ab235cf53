// The run server's protocol: one request and one reply per connection, over a unix stream
// socket (docs/decisions/0026-run-server.md).
//
//   client → server  RequestHeader (with the caller's stdout, stderr and, for a terminal, stdin
//                    attached as SCM_RIGHTS when the output is streamed), then `body_bytes` of
//                    JSON: the RunRequest below.
//   server → client  ReplyHeader, then `stdout_bytes` and `stderr_bytes` of text for the client
//                    to print on its own stdout and stderr (the --json report, cordon's own
//                    messages), then the connection closes.
//
// The `cordon` front (src/front, decision 0028) sends an invocation instead of a request: a
// RequestHeader with magic kInvocationMagic and its stdin, stdout and stderr attached, then a body
// of NUL-terminated strings — its working directory, its argument count in decimal, its
// arguments, its environment. The server resolves the command line itself and answers
// kRunYourself (the front then execs the full cordon, which runs it as always) or kAccepted
// (then kRan, kRefused or nothing, as for a request).
//
// The client's end of the socket stays open while the command runs: when the client dies its
// socket reads EOF and the server kills the command's whole tree (CommandRequest::cancel_fd).
#pragma once

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

// What `cordon run` asks for: the configuration it resolved (config file + flags, as JSON), the
// workspace, the command, and the caller's context.
struct RunRequest {
  std::string config_json;
  // SandboxConfig::own_config of the client's config (what the loader read, which the JSON
  // form of a config does not carry): protected in the server's run as in the client's.
  std::vector<std::string> own_config;
  std::string workspace;
  // st_dev and st_ino of the workspace as the client sees it: a server with another view of
  // the filesystem (another mount namespace) refuses instead of running somewhere else.
  std::uint64_t workspace_dev = 0;
  std::uint64_t workspace_ino = 0;
  std::vector<std::string> argv;
  std::optional<std::string> shell_text;
  std::string cwd;
  bool json = false;       // capture and reply with the --json report; no descriptors attached
  bool has_stdin = false;  // a third descriptor, the caller's terminal, is attached
  std::vector<std::string> env;
  std::string home;
};

// What the front sends: its command line, working directory and environment, as they are.
struct Invocation {
  std::string cwd;
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // "NAME=value"
  // Not on the wire: the directory the front sent as a descriptor (set by the server, which
  // also replaces `cwd` with that directory's path). A workspace resolved to the caller's
  // directory must be this one.
  std::uint64_t cwd_dev = 0;
  std::uint64_t cwd_ino = 0;
};

std::string EncodeRequest(const RunRequest& request);
// kInvalidArgument naming the field when the body is not a valid request.
[[nodiscard]] Result<RunRequest> DecodeRequest(std::string_view body);

// Sends the header with `fds` attached, then the body. Errors name the call.
[[nodiscard]] Result<void> SendRequest(int socket, const RunRequest& request,
                                       const std::vector<int>& fds);

// The body of an invocation (the front builds the same bytes itself); kInvalidArgument naming
// the problem when it is not one.
std::string EncodeInvocation(const Invocation& invocation);
[[nodiscard]] Result<Invocation> DecodeInvocation(std::string_view body);

struct ReceivedRequest {
  RunRequest request;  // empty when `invocation` is set, until the server resolves it
  std::optional<Invocation> invocation;
  std::vector<core::UniqueFd> fds;
  // A pidfd of the process that sent the request header (SCM_PIDFD): not necessarily the one
  // that connected.
  core::UniqueFd sender;
};
// Turns on SO_PASSPIDFD for `socket` (Linux 6.5): every message read from it then names its
// sender. kUnavailable when the kernel cannot.
[[nodiscard]] Result<void> PassSenderPidfd(int socket);
// Reads one request or invocation (after PassSenderPidfd); kInvalidArgument for a malformed one
// (bad magic, a body over the limit or cut short, descriptors that do not match the request —
// an invocation has exactly four: stdin, stdout, stderr and its working directory — no
// sender).
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
