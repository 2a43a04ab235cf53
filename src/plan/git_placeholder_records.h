// Where the `.git` placeholders a process holds (git_placeholder.h) are recorded, so that
// those of a process that was killed — a one-shot `cordon run`, a run server with its
// sessions — are removed at the next start instead of staying on the host
// (docs/decisions/0033-one-sandbox-shape-and-identity.md).
//
// One file per placeholder in $XDG_RUNTIME_DIR/cordon-placeholders (0700, made at the first
// record; apart from the run server's $XDG_RUNTIME_DIR/cordon), named by the
// placeholder's device and inode and holding its path. A placeholder is removed only while it
// is still the directory recorded (same device and inode, named `.git`), still empty (rmdir
// refuses otherwise: a `git init` on the host keeps its repository), and held by no live run
// (each holder keeps a shared flock on it). Without a runtime directory of this user nothing
// is recorded; a placeholder left behind is then adopted and removed by the next run in its
// root, as before.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/unique_fd.h"

namespace cordon::plan {

class GitPlaceholderRecords {
 public:
  // The records under `runtime_dir` ($XDG_RUNTIME_DIR); nullptr when there is none, or it is
  // not this user's alone (owned by another user, or writable by others).
  static std::shared_ptr<const GitPlaceholderRecords> Open(
      const std::optional<std::string>& runtime_dir);

  void Record(dev_t dev, ino_t ino, const std::filesystem::path& git) const;
  void Forget(dev_t dev, ino_t ino) const;
  // Removes every recorded placeholder nobody holds (see above) and forgets it; keeps the
  // records of those still held. How many placeholders it removed.
  int CleanUp() const;

  explicit GitPlaceholderRecords(core::UniqueFd runtime) : runtime_(std::move(runtime)) {}

 private:
  // The records' directory: made (0700) when `create`; invalid when missing, or not this
  // user's alone.
  core::UniqueFd Directory(bool create) const;

  core::UniqueFd runtime_;  // O_DIRECTORY
};

}  // namespace cordon::plan
