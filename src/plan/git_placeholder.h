// A `.git` that does not exist at the root of a writable root must not be creatable inside the
// sandbox (a planted hooks/ or config with core.fsmonitor would run on the host's next git
// command there). A mount needs a mount point, so cordon creates an empty `.git` directory on
// the host for the duration of the run, which the plan then binds read-only like any .git
// directory, and removes it afterwards if it is still empty and no other run holds it.
//
// An empty `.git` directory is invisible to git: discovery skips a .git that is not a valid
// git dir and goes on to the parent, so the host's git behaves as before, during the run too.
// Each placeholder held is recorded (git_placeholder_records.h): if cordon is killed, the empty
// directory left behind is removed at the next start of a session of this user; without a
// record, by the next run in that root, which adopts it.
//
//   Result<GitPlaceholders> held = GitPlaceholders::Create(writable_roots);  // before Plan()
//   ... plan, launch, supervise ...                                         // then destroyed
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "cordon/error.h"
#include "core/unique_fd.h"
#include "plan/git_placeholder_records.h"

namespace cordon::plan {

class GitPlaceholders {
 public:
  // For each root with no `.git` entry: mkdir `.git` (0755) without following symlinks, and
  // hold a shared lock on it. Roots with a `.git` of any kind are left alone (the planner
  // protects what is there), and so are roots where cordon may not create it (EACCES, EPERM,
  // EROFS: the command, never more privileged, cannot either). Any other failure is returned
  // with the path and the call: the run must not go ahead without the placeholder.
  // Each one held is recorded in `records`, if given, and forgotten once removed.
  [[nodiscard]] static Result<GitPlaceholders> Create(
      const std::vector<std::filesystem::path>& writable_roots,
      std::shared_ptr<const GitPlaceholderRecords> records = nullptr);

  GitPlaceholders() = default;
  GitPlaceholders(GitPlaceholders&& other) noexcept { *this = std::move(other); }
  GitPlaceholders& operator=(GitPlaceholders&& other) noexcept;
  ~GitPlaceholders() { Release(); }

  const std::vector<std::filesystem::path>& paths() const { return paths_; }

 private:
  void Release();  // removes each placeholder nobody else holds, if still empty

  struct Held {
    core::UniqueFd root;  // the writable root, O_PATH|O_DIRECTORY
    core::UniqueFd dir;   // the placeholder, O_DIRECTORY|O_NOFOLLOW, LOCK_SH
    dev_t dev = 0;        // its identity, as recorded
    ino_t ino = 0;
  };
  std::vector<Held> held_;
  std::vector<std::filesystem::path> paths_;
  std::shared_ptr<const GitPlaceholderRecords> records_;
};

}  // namespace cordon::plan
