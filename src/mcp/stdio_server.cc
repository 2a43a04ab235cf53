#include "mcp/stdio_server.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "mcp/message_sink.h"

namespace cordon::mcp {

StdioResult ServeStdio(CommandRunner& runner, const ServerOptions& options, int in_fd, int out_fd,
                       std::size_t max_line_bytes) {
  ::signal(SIGPIPE, SIG_IGN);
  // Heap-allocated so that, when a command outlives the grace period, both can be left alive
  // for the worker still using them while the process exits (see StdioResult).
  auto sink = std::make_unique<FdSink>(out_fd);
  auto server = std::make_unique<Server>(options, runner, *sink);
  LineFramer framer(max_line_bytes,
                    {.on_line = [&](std::string_view line) { server->HandleLine(line); },
                     .on_oversized = [&] { server->HandleOversizedLine(max_line_bytes); }});
  std::array<char, 64 * 1024> buffer{};
  while (true) {
    const ssize_t n = ::read(in_fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      fmt::print(stderr, "cordon mcp: read(stdin): {}\n", std::strerror(errno));
      break;
    }
    if (n == 0) break;
    framer.Feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
  }
  framer.Finish();
  StdioResult outcome;
  outcome.clean = server->Shutdown();
  if (!outcome.clean) {
    fmt::print(stderr, "cordon mcp: {} command(s) still running after the grace period\n",
               server->calls_in_flight());
    (void)server.release();
    (void)sink.release();
  }
  return outcome;
}

}  // namespace cordon::mcp
