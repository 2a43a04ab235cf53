#include "linux/landlock_ruleset.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "linux/open_no_symlinks.h"
#include "linux/system_headers/landlock.h"

namespace cordon::linux_native {
namespace {

// Rights that make sense on a file (not a directory); the kernel refuses others on a file rule.
constexpr std::uint64_t kFileRights = sys::kAccessFsExecute | sys::kAccessFsWriteFile |
                                      sys::kAccessFsReadFile | sys::kAccessFsTruncate |
                                      sys::kAccessFsIoctlDev;

// How a rule's path is opened.
enum class Resolve {
  kFollow,           // cordon's own directories (the fallback's private directory, "/")
  kNoFollowLast,     // the read allow-list: an entry swapped for a symlink grants nothing
  kNoSymlinksAtAll,  // the planned writable paths, canonical when planned: a component swapped
                     // for a symlink since (by a command that can write its parent) must not
                     // grant writes beneath the link's target
};

StepResult AddPathRule(int ruleset, const char* path, std::uint64_t handled, int index,
                       Resolve resolve = Resolve::kFollow) {
  int fd = -1;
  if (resolve == Resolve::kNoSymlinksAtAll) {
    fd = OpenNoSymlinks(path);
  } else {
    fd = ::open(path, O_PATH | O_CLOEXEC | (resolve == Resolve::kNoFollowLast ? O_NOFOLLOW : 0));
  }
  if (fd < 0) {
    if (errno == ENOENT) return StepOk();
    return StepFailed(Step::kLandlockRule, index);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    StepResult r = StepFailed(Step::kLandlockRule, index);
    ::close(fd);
    return r;
  }
  sys::LandlockPathBeneathAttr rule{S_ISDIR(st.st_mode) ? handled : (handled & kFileRights), fd};
  StepResult result = StepOk();
  if (sys::LandlockAddRule(ruleset, sys::kLandlockRulePathBeneath, &rule, 0) != 0) {
    result = StepFailed(Step::kLandlockRule, index);
  }
  ::close(fd);
  return result;
}

}  // namespace

StepResult ApplyLandlock(const ChildContext& c) {
  if (c.landlock_abi < 1) return StepOk();
  sys::LandlockRulesetAttr attr{c.landlock_handled_fs, c.landlock_handled_net, c.landlock_scoped};
  long ruleset = sys::LandlockCreateRuleset(&attr, sys::RulesetAttrSize(c.landlock_abi), 0);
  if (ruleset < 0) return StepFailed(Step::kLandlockRuleset);
  int fd = static_cast<int>(ruleset);
  StepResult result = StepOk();
  for (std::size_t i = 0; i < c.landlock_writable.size() && !result.failed(); ++i) {
    const bool own = c.landlock_writable[i] == c.private_dir;
    result = AddPathRule(fd, c.landlock_writable[i], c.landlock_handled_fs, static_cast<int>(i),
                         own ? Resolve::kFollow : Resolve::kNoSymlinksAtAll);
  }
  // The fallback's read allow-list: entries next to the hidden paths, opened without following
  // a symlink (one swapped in after planning must not grant its target).
  constexpr std::uint64_t kRead = sys::kAccessFsReadFile | sys::kAccessFsReadDir;
  const int offset = static_cast<int>(c.landlock_writable.size());
  for (std::size_t i = 0; i < c.landlock_readable.size() && !result.failed(); ++i) {
    result = AddPathRule(fd, c.landlock_readable[i], kRead & c.landlock_handled_fs,
                         offset + static_cast<int>(i), Resolve::kNoFollowLast);
  }
  if (!result.failed() && c.landlock_list_root) {
    result = AddPathRule(fd, "/", sys::kAccessFsReadDir & c.landlock_handled_fs, -1);
  }
  // A prepared command (decision 0023) execs cordon-init through the descriptor the parent
  // opened on the host. The file may lie outside every path above (a build tree below the
  // host's /tmp, which the sandbox replaces with its own), and exec needs read access where
  // reads are handled: this one file, no other.
  if (!result.failed() && c.request_fd >= 0 && c.init_reaper_fd >= 0) {
    const std::uint64_t rights =
        (sys::kAccessFsReadFile | sys::kAccessFsExecute) & c.landlock_handled_fs;
    sys::LandlockPathBeneathAttr rule{rights, c.init_reaper_fd};
    if (rights != 0 && sys::LandlockAddRule(fd, sys::kLandlockRulePathBeneath, &rule, 0) != 0) {
      result = StepFailed(Step::kLandlockRule, -1);
    }
  }
  // No TCP port rule: with handled_access_net set, every bind and connect is refused.
  if (!result.failed() && sys::LandlockRestrictSelf(fd, 0) != 0) {
    result = StepFailed(Step::kLandlockRestrict);
  }
  ::close(fd);
  return result;
}

}  // namespace cordon::linux_native
