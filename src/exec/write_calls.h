// The write-intent system calls the supervisor observes (exec/write_observer.h): one list for
// the seccomp filter that sends them (linux/seccomp_filter.cc) and the observer that reads them.
// Calls on a descriptor (ftruncate, fchmod) and attribute changes (chmod, chown, utimensat) are
// not in it: the write that fails first in real tools is the open, create, remove or rename.
#pragma once

#include <span>

namespace cordon::exec {

struct WriteCall {
  const char* name;  // libseccomp's name; absent on an architecture (open on aarch64): skipped
  // The argument holding open flags: the call is observed only when they ask to write, create
  // or truncate. -1: always observed.
  int flags_arg = -1;
  // The argument holding a file mode: with set-id modes refused (seccomp), the call is
  // observed only when the mode has no set-id bit, so the refusal's rule and this one never
  // match the same call. -1: none.
  int mode_arg = -1;
};

inline std::span<const WriteCall> ObservedWriteCalls() {
  static constexpr WriteCall kCalls[] = {
      {"open", 1, 2},   {"openat", 2, 3},   {"creat", -1, 1}, {"mkdir", -1, 1}, {"mkdirat", -1, 2},
      {"mknod", -1, 1}, {"mknodat", -1, 2}, {"unlink"},       {"unlinkat"},     {"rmdir"},
      {"rename"},       {"renameat"},       {"renameat2"},    {"link"},         {"linkat"},
      {"symlink"},      {"symlinkat"},      {"truncate"},
  };
  return kCalls;
}

}  // namespace cordon::exec
