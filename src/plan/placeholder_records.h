// Where the placeholders a run holds (host_placeholders.h) are recorded, so that those of a
// process that was killed — a one-shot `cordon run`, a run server with its sessions — are
// removed at the next start instead of staying on the host (docs/decisions/0033, 0034, 0036).
//
// One file per run in $XDG_RUNTIME_DIR/cordon-placeholders (0700, made at the first record;
// apart from the run server's $XDG_RUNTIME_DIR/cordon), written whole once the run holds its
// placeholders and removed when it has removed them. It lists each placeholder's root, its
// path below it, and its device and inode. A placeholder is removed only while no live run
// holds its root (each holds a shared flock on it), and only while it still is the one recorded
// (same device and inode, still a placeholder; a directory only while empty: what the host put
// in it since stays). Without a runtime directory of this user nothing is recorded; a
// placeholder left behind is then adopted and removed by the next run in its root.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/unique_fd.h"

namespace cordon::plan {

struct RecordedPlaceholder {
  std::filesystem::path root;
  std::string relative;
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const RecordedPlaceholder&) const = default;
};

// A record's text and back: a header line, then root, relative path, device and inode of each
// placeholder, every field ended by a NUL (no path holds one). nullopt: not a record of this
// form (an older cordon's, a partial one), which a clean-up forgets.
std::string RecordText(const std::vector<RecordedPlaceholder>& placeholders);
std::optional<std::vector<RecordedPlaceholder>> ParseRecord(std::string_view text);

class PlaceholderRecords {
 public:
  // The records under `runtime_dir` ($XDG_RUNTIME_DIR); nullptr when there is none, or it is
  // not this user's alone (owned by another user, or writable by others).
  static std::shared_ptr<const PlaceholderRecords> Open(
      const std::optional<std::string>& runtime_dir);

  // Records what one run holds, in a file of its own; the file's name, empty when nothing could
  // be recorded (the next run in those roots adopts what is left).
  std::string Record(const std::vector<RecordedPlaceholder>& held) const;
  void Forget(const std::string& name) const;
  // Removes every recorded placeholder nobody holds (see above); a record goes once all its
  // placeholders are settled. How many placeholders it settled (removed, or gone already).
  int CleanUp() const;

  explicit PlaceholderRecords(core::UniqueFd runtime) : runtime_(std::move(runtime)) {}

 private:
  // The records' directory: made (0700) when `create`; invalid when missing, or not this
  // user's alone.
  core::UniqueFd Directory(bool create) const;

  core::UniqueFd runtime_;  // O_DIRECTORY
};

}  // namespace cordon::plan
