// Reading a task that waits in a seccomp notification, from the supervisor: its memory and its
// view of the file system through /proc. Shared by the connect broker and the write observer.
// What is read is only trusted after SECCOMP_IOCTL_NOTIF_ID_VALID says the task still waits.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "core/unique_fd.h"

namespace cordon::exec {

// "/proc/TID/NAME".
std::string ProcPath(pid_t tid, const char* name);

// Copies `len` bytes at `address` of the task. false when any of it cannot be read.
bool ReadMemory(pid_t tid, std::uint64_t address, void* out, std::size_t len);

// The NUL-terminated string at `address` (a path argument), at most PATH_MAX bytes with its
// NUL; read page by page, so a string that ends just before an unmapped page is read whole.
std::optional<std::string> ReadString(pid_t tid, std::uint64_t address);

// The target of the link at `path` (a /proc magic link): for a directory or file of the
// command's mount namespace, its path as the command sees it. Empty when it is not absolute.
std::string ReadLinkPath(const std::string& path);

// The task's root directory (O_PATH), for openat2(RESOLVE_IN_ROOT) in its view.
core::UniqueFd OpenRoot(pid_t tid);

}  // namespace cordon::exec
