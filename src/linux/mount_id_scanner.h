// The identity of each mount of a /proc/PID/mountinfo text, fed in pieces as they are read. No
// allocation and no C library: cordon-init's exec stub uses it (decision 0028) as well as the
// zygote (zygote/mount_ids.h).
//
// A mount's ID alone does not name it: the kernel hands a freed ID to the next mount made
// anywhere, so a mask detached from a view and a mount made since (another sandbox's, or a
// placeholder cover of this very command) may carry the same number. The key of a line is a
// 64-bit FNV-1a hash of its first three fields — mount ID, parent ID and device — which differ
// for the new mount: a cover is on the workspace's filesystem, a mask on a tmpfs of its own or
// on /dev (decision 0034). Not the root and mount point: they are paths, which a rename on the
// host changes for a mount that is still there.
#pragma once

namespace cordon::linux_native {

class MountIdScanner {
 public:
  // Calls `emit(key)` with the key of each line of `data`, in order, once its third field is
  // read; stops and returns false as soon as `emit` returns false. A line split between two
  // calls is read as one.
  template <typename Emit>
  bool Feed(const char* data, long size, Emit&& emit) {
    for (long i = 0; i < size; ++i) {
      const char c = data[i];
      if (c == '\n') {
        if (field_ < kKeyFields && !Emit5(emit)) return false;  // a short line: keyed as it is
        field_ = 0;
        hash_ = kOffset;
        emitted_ = false;
        continue;
      }
      if (field_ >= kKeyFields) continue;
      if (c == ' ' && ++field_ == kKeyFields) {
        if (!Emit5(emit)) return false;
        continue;
      }
      hash_ = (hash_ ^ static_cast<unsigned char>(c)) * kPrime;
    }
    return true;
  }

 private:
  static constexpr int kKeyFields = 3;
  static constexpr unsigned long long kOffset = 14695981039346656037ull;
  static constexpr unsigned long long kPrime = 1099511628211ull;

  template <typename Emit>
  bool Emit5(Emit& emit) {
    if (emitted_ || hash_ == kOffset) return true;  // an empty line has no mount
    emitted_ = true;
    return emit(static_cast<unsigned long>(hash_));
  }

  unsigned long long hash_ = kOffset;
  int field_ = 0;
  bool emitted_ = false;
};

}  // namespace cordon::linux_native
