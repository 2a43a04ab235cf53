// Opening a planned path without following any symlink on the way, between clone and exec
// (async-signal-safe: no allocation). Planned paths are canonical, so a symlink anywhere in one
// was swapped in after planning (by a command that can write a parent) and must not be
// followed to wherever it points.
#pragma once

namespace cordon::linux_native {

// O_PATH | O_CLOEXEC descriptor of `path` (absolute), or -1 with errno (ELOOP: a component is
// a symlink). openat2(RESOLVE_NO_SYMLINKS) where the kernel and any outer sandbox allow it;
// where openat2 is refused with ENOSYS (inside cordon's own sandbox, whose seccomp filter does
// so), a walk with openat(O_NOFOLLOW) one component at a time.
int OpenNoSymlinks(const char* path) noexcept;

}  // namespace cordon::linux_native
