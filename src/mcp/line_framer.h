// Newline-delimited framing of the MCP stdio transport: bytes in, complete lines out.
//
// Memory is bounded by the line cap: a line longer than `max_line_bytes` is reported once as
// oversized and the rest of it is discarded up to its newline without being stored, so a
// client that sends 100 MB without a newline costs at most the cap plus one read chunk.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace cordon::mcp {

inline constexpr std::size_t kDefaultMaxLineBytes = 4 * 1024 * 1024;

class LineFramer {
 public:
  struct Handlers {
    // A complete line without its "\n" (and without a trailing "\r"). Blank lines are skipped.
    std::function<void(std::string_view line)> on_line;
    // Called once per line that exceeded the cap, as soon as the cap is crossed.
    std::function<void()> on_oversized;
  };

  LineFramer(std::size_t max_line_bytes, Handlers handlers);

  // Feeds the next bytes read from the stream; calls the handlers for every line completed.
  void Feed(std::string_view bytes);
  // End of stream: a final line without "\n" is still delivered (if within the cap).
  void Finish();

  // For tests of the memory bound.
  std::size_t buffered_capacity() const { return pending_.capacity(); }
  bool discarding() const { return discarding_; }

 private:
  void Deliver(std::string_view line);

  std::size_t max_line_bytes_;
  Handlers handlers_;
  std::string pending_;      // the start of the current line (never more than the cap)
  bool discarding_ = false;  // inside an oversized line, waiting for its newline
};

}  // namespace cordon::mcp
