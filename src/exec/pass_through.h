// Moving a command's output to a descriptor of the caller (its own stdout, say) as it arrives.
//
// Where the kernel allows it the bytes go with splice(2), from the command's pipe straight into
// the caller's descriptor: no copy through cordon's memory, one system call per pipe-full. A
// pipe, a regular file or a socket accepts that; a descriptor that does not (a terminal, a file
// opened with O_APPEND) gets the bytes the ordinary way, read into a buffer and written.
#pragma once

#include <cstddef>
#include <string_view>

namespace cordon::exec {

class PassThrough {
 public:
  // `sink` stays owned by the caller and must stay open for the run.
  explicit PassThrough(int sink) : sink_(sink) {}

  enum class Status {
    kMoved,        // `bytes` went from the source to the sink
    kEmpty,        // nothing to move right now (EAGAIN, EINTR); poll again
    kEof,          // every writer of the source is gone and it is drained
    kUnsupported,  // this sink cannot take spliced bytes: read and Write() from now on
    kSinkBroken,   // the sink failed (its reader is gone): nothing was moved
  };
  struct Outcome {
    Status status;
    std::size_t bytes = 0;
  };

  // One splice of what the non-blocking pipe `source` holds now. Linux only; elsewhere it always
  // answers kUnsupported.
  Outcome Splice(int source);

  // Writes all of `data` to the sink, waiting for it to drain when it is non-blocking and full.
  // false: the sink failed, and the rest of `data` is lost.
  bool Write(std::string_view data);

 private:
  bool AwaitWritable();
  // A pipe sink grows to the command pipe's 1 MiB (best effort), once: the caller's reader then
  // gets a pipe-full per splice instead of 64 KiB, and the supervisor wakes a sixteenth as often.
  void GrowPipeSink();
  bool grown_ = false;

  int sink_;
};

}  // namespace cordon::exec
