#include "exec/output_capture.h"

#include <fmt/format.h>

#include <algorithm>

namespace cordon::exec {
namespace {

// Longest marker: "\n[cordon: " + 20 digits + " bytes omitted]\n".
constexpr std::size_t kMarkerRoom = 48;

}  // namespace

HeadTailBuffer::HeadTailBuffer(std::uint64_t cap) : head_cap_(cap - cap / 2), tail_cap_(cap / 2) {}

HeadTailBuffer HeadTailBuffer::CountOnly() {
  HeadTailBuffer buffer(0);
  buffer.keep_ = false;
  return buffer;
}

void HeadTailBuffer::Append(std::string_view data) {
  total_ += data.size();
  if (!keep_) return;

  if (head_.size() < head_cap_) {
    const std::size_t take =
        static_cast<std::size_t>(std::min<std::uint64_t>(head_cap_ - head_.size(), data.size()));
    // Grow by doubling as usual, but never past the head's size (plain doubling could
    // overshoot the cap; reserving the whole head up front would cost a huge cap at once).
    if (head_.size() + take > head_.capacity()) {
      const std::size_t wanted = std::max(head_.capacity() * 2, head_.size() + take);
      head_.reserve(std::min<std::size_t>(wanted, static_cast<std::size_t>(head_cap_)));
    }
    head_.append(data.substr(0, take));
    data.remove_prefix(take);
  }
  if (data.empty() || tail_cap_ == 0) return;

  const auto tail_cap = static_cast<std::size_t>(tail_cap_);
  if (tail_.capacity() < tail_cap) {
    // Exactly once, when the head is full: the ring, and room behind the head for the marker
    // and the tail, so that Finish() builds the result in place (reserved pages stay
    // untouched, and cost no memory, until then).
    tail_.reserve(tail_cap);
    head_.reserve(head_.size() + kMarkerRoom + tail_cap);
  }

  // A chunk at least as long as the ring replaces it entirely.
  if (data.size() >= tail_cap) {
    tail_.assign(data.substr(data.size() - tail_cap));
    tail_start_ = 0;
    return;
  }
  // Fill the ring before wrapping.
  if (tail_.size() < tail_cap) {
    const std::size_t take = std::min(tail_cap - tail_.size(), data.size());
    tail_.append(data.substr(0, take));
    data.remove_prefix(take);
  }
  // Overwrite the oldest bytes, wrapping at most once (data is shorter than the ring).
  while (!data.empty()) {
    const std::size_t take = std::min(tail_cap - tail_start_, data.size());
    tail_.replace(tail_start_, take, data.substr(0, take));
    tail_start_ = (tail_start_ + take) % tail_cap;
    data.remove_prefix(take);
  }
}

std::uint64_t HeadTailBuffer::truncated_bytes() const {
  if (!keep_) return 0;  // not kept by choice, not cut
  return total_ - head_.size() - tail_.size();
}

CapturedOutput HeadTailBuffer::Finish() {
  CapturedOutput out;
  out.total_bytes = total_;
  out.truncated_bytes = truncated_bytes();
  out.data = std::move(head_);
  if (out.truncated_bytes > 0) out.data += OmittedMarker(out.truncated_bytes);
  // The ring in order: oldest byte first.
  out.data.append(tail_, tail_start_, std::string::npos);
  out.data.append(tail_, 0, tail_start_);
  head_.clear();
  tail_.clear();
  tail_start_ = 0;
  total_ = 0;
  return out;
}

std::string OmittedMarker(std::uint64_t omitted_bytes) {
  return fmt::format("\n[cordon: {} bytes omitted]\n", omitted_bytes);
}

}  // namespace cordon::exec
