// Where the placeholders a process holds (host_placeholders.h) are recorded, so that those of
// a process that was killed — a one-shot `cordon run`, a run server with its sessions — are
// removed at the next start instead of staying on the host (docs/decisions/0033, 0034).
//
// One file per placeholder in $XDG_RUNTIME_DIR/cordon-placeholders (0700, made at the first
// record; apart from the run server's $XDG_RUNTIME_DIR/cordon), named by the placeholder's
// device and inode and holding its root and its path below it (HostPlaceholderRecord). A
// placeholder is removed only while no live run holds its root (each holds a shared flock on
// it), and only while it still is the one recorded (same device and inode, still a placeholder;
// a directory only while empty: what the host put in it since stays). Without a runtime
// directory of this user nothing is recorded; a placeholder left behind is then adopted and
// removed by the next run in its root.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/unique_fd.h"

namespace cordon::plan {

class PlaceholderRecords {
 public:
  // The records under `runtime_dir` ($XDG_RUNTIME_DIR); nullptr when there is none, or it is
  // not this user's alone (owned by another user, or writable by others).
  static std::shared_ptr<const PlaceholderRecords> Open(
      const std::optional<std::string>& runtime_dir);

  // `text`: HostPlaceholderRecord(root, relative).
  void Record(dev_t dev, ino_t ino, const std::string& text) const;
  void Forget(dev_t dev, ino_t ino) const;
  // Removes every recorded placeholder nobody holds (see above) and forgets it; keeps the
  // records of those still held. How many records it settled (removed, or gone already).
  int CleanUp() const;

  explicit PlaceholderRecords(core::UniqueFd runtime) : runtime_(std::move(runtime)) {}

 private:
  // The records' directory: made (0700) when `create`; invalid when missing, or not this
  // user's alone.
  core::UniqueFd Directory(bool create) const;

  core::UniqueFd runtime_;  // O_DIRECTORY
};

}  // namespace cordon::plan
