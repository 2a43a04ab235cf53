// The mount IDs of a /proc/PID/mountinfo text (the first field of each line), fed in pieces
// as they are read. No allocation and no C library: cordon-init's exec stub uses it
// (decision 0028) as well as the zygote (zygote/mount_ids.h).
#pragma once

namespace cordon::linux_native {

class MountIdScanner {
 public:
  // Calls `emit(id)` with the ID that starts each line of `data`, in order; stops and returns
  // false as soon as `emit` returns false. A line split between two calls is read as one.
  template <typename Emit>
  bool Feed(const char* data, long size, Emit&& emit) {
    for (long i = 0; i < size; ++i) {
      const char c = data[i];
      if (c == '\n') {
        line_start_ = true;
        id_ = 0;
      } else if (line_start_ && c >= '0' && c <= '9') {
        id_ = id_ * 10 + static_cast<unsigned long>(c - '0');
      } else if (line_start_) {
        line_start_ = false;
        if (!emit(id_)) return false;
      }
    }
    return true;
  }

 private:
  unsigned long id_ = 0;
  bool line_start_ = true;
};

}  // namespace cordon::linux_native
