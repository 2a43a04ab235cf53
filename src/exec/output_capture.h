// Bounded capture of one output stream (stdout or stderr) of a command.
//
// A command may print gigabytes; the supervisor keeps at most `cap` bytes of it: the first half
// of the cap as it arrives (the head) and the most recent bytes in a ring buffer (the tail). The
// memory used is fixed at construction, whatever the command writes. Pure: no system calls, so
// it is unit-tested in isolation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cordon/run.h"

namespace cordon::exec {

class HeadTailBuffer {
 public:
  // `cap` is the most bytes kept; the head gets cap/2 (rounded up), the tail the rest.
  explicit HeadTailBuffer(std::uint64_t cap);

  // Keeps nothing and counts every byte: Finish gives empty data, nothing truncated and the
  // total (for output that is only streamed, SuperviseOptions::capture_output = false).
  static HeadTailBuffer CountOnly();

  void Append(std::string_view data);
  // Bytes that went past without being seen (spliced to a pass-through sink): counted, never
  // kept. Only for a CountOnly() buffer; a keeping buffer ignores it.
  void Count(std::uint64_t bytes) {
    if (!keep_) total_ += bytes;
  }

  std::uint64_t total_bytes() const { return total_; }
  // Bytes dropped from the middle so far.
  std::uint64_t truncated_bytes() const;

  // The captured text: everything when it fit, else head + marker line + tail, where the
  // marker reads "\n[cordon: N bytes omitted]\n". Moves the capture out (built in the head's
  // buffer, without a second copy) and leaves the buffer empty.
  CapturedOutput Finish();

 private:
  std::uint64_t head_cap_;
  std::uint64_t tail_cap_;
  std::string head_;
  // Ring buffer of the latest bytes past the head; `tail_start_` is the index of the oldest
  // byte once the ring is full. Allocated lazily so small outputs cost nothing extra.
  std::string tail_;
  std::size_t tail_start_ = 0;
  std::uint64_t total_ = 0;
  bool keep_ = true;
};

// The marker placed between head and tail: "\n[cordon: N bytes omitted]\n".
std::string OmittedMarker(std::uint64_t omitted_bytes);

}  // namespace cordon::exec
