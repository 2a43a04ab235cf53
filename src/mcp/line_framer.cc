#include "mcp/line_framer.h"

#include <utility>

namespace cordon::mcp {

LineFramer::LineFramer(std::size_t max_line_bytes, Handlers handlers)
    : max_line_bytes_(max_line_bytes), handlers_(std::move(handlers)) {}

void LineFramer::Deliver(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  if (handlers_.on_line) handlers_.on_line(line);
}

void LineFramer::Feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    const bool complete = newline != std::string_view::npos;
    bytes.remove_prefix(complete ? newline + 1 : bytes.size());

    if (discarding_) {
      if (complete) discarding_ = false;
      continue;
    }
    if (pending_.size() + piece.size() > max_line_bytes_) {
      // Drop what we hold and give the memory back: the line is lost either way.
      std::string().swap(pending_);
      discarding_ = !complete;
      if (handlers_.on_oversized) handlers_.on_oversized();
      continue;
    }
    if (!complete) {
      pending_.append(piece);
      continue;
    }
    if (pending_.empty()) {
      Deliver(piece);  // the common case: a whole line inside one read, no copy
    } else {
      pending_.append(piece);
      std::string line = std::move(pending_);
      pending_.clear();
      Deliver(line);
    }
  }
}

void LineFramer::Finish() {
  if (!discarding_ && !pending_.empty()) {
    std::string line = std::move(pending_);
    pending_.clear();
    Deliver(line);
  }
  discarding_ = false;
}

}  // namespace cordon::mcp
