// The supervisor's look at the command's write-intent calls (exec/write_calls.h), which the
// seccomp filter sends to it like connect() (docs/decisions/0048). It only reads: the call
// continues unchanged whatever it finds (SECCOMP_USER_NOTIF_FLAG_CONTINUE), so the kernel's
// own checks decide, as without it. What it finds is whether the sandbox will refuse the call:
//
//   - the target's mount in the command's view is read-only (a `.git` or host-run file bound
//     read-only, the read-only tree outside the writable areas, a hidden home) while the same
//     path on the host is on a writable mount: the kernel answers EROFS ("mount view");
//   - its mount is writable but the path lies outside the paths Landlock lets the command
//     write (the fallback without a mount namespace, /proc): EACCES ("landlock");
//
//   - an open that would create a name a placeholder holds for the command (an absent
//     `.mcp.json`, `.envrc`), whatever the kernel says (ENOENT through the placeholder's link,
//     EISDIR where bubblewrap covered it): the name's protection ("mount view");
//
// and only when the call would get that far: an entry to create that exists already (EEXIST),
// one to remove or write that does not (ENOENT), a missing parent, a rename across mounts
// (EXDEV), a directory opened for writing (EISDIR), a special file, and a write the file's
// permissions refuse anyway (the supervisor's own access check, made where the kernel makes it
// before the mount's) are the command's own failures and are not reported: no false blame.
// The check runs in the command's view (/proc/TID/root, its cwd or directory descriptor) while
// it waits in the call; a call whose task went away meanwhile is not reported.
//
// Not thread-safe; owned by the connect broker, which answers the notification.
#pragma once

#include <linux/seccomp.h>

#include <optional>
#include <string>
#include <vector>

#include "cordon/run.h"
#include "core/unique_fd.h"
#include "exec/launched_process.h"

namespace cordon::exec {

class WriteObserver {
 public:
  explicit WriteObserver(WriteRules rules) : rules_(std::move(rules)) {}

  // Whether `nr` is one of the observed calls (exec/write_calls.h) on this architecture.
  static bool Observes(int nr);

  // The denial {kind, target, layer} when the sandbox refuses the call waiting in `request`,
  // the rule and fix left to the plan (plan/file_denials.h); nothing otherwise. `listener`
  // confirms the call still waits after its memory and /proc were read.
  std::optional<Denial> Examine(const seccomp_notif& request, int listener);

 private:
  WriteRules rules_;
  core::UniqueFd root_;  // the command's root (/proc/TID/root), opened at the first call
};

}  // namespace cordon::exec
