// The placeholders of one command's absent host-run files (decision 0034), on the host: made
// before the command starts, removed when it is done, so that nothing of them is there between
// commands. A directory entry gets an empty directory (mode kPlaceholderDirectoryMode), a file
// entry a dangling link to kPlaceholderLinkTarget: what tools on the host read as absent. The
// links of one run are hard links of the first it makes (decision 0036): a name costs the file
// system far less than a new inode. The backend covers each inside the sandbox
// (linux/placeholder_cover.h).
//
// Several runs in one root (of one session, of several, of other users) share them: each run
// holds a shared flock on every root it makes placeholders in, for as long as its command
// runs, and adopts what another run made there; the run that ends last (its lock upgrades to
// exclusive without waiting) removes them all. What a run holds is recorded
// (placeholder_records.h): what a killed cordon left behind goes at the next start, or
// with the next run in that root, which adopts it.
//
//   Result<HostPlaceholders> held = HostPlaceholders::Hold(plan.placeholders, records);
//   plan.placeholders = held->covered();   // what the backend covers: some may be skipped
//   ... launch, supervise ...              // then destroyed: removed if this run is the last
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "core/unique_fd.h"
#include "plan/launch_plan.h"
#include "plan/placeholder_records.h"

namespace cordon::plan {

class HostPlaceholders {
 public:
  // Holds every root of `wanted` (LOCK_SH, waiting about a second for a run that removes its
  // placeholders), then makes each placeholder, with the directories on the way to it, without
  // following a symbolic link; one already there is adopted (another run's, or a leftover), and
  // so is one of the other kind (a bubblewrap run makes directories where the native backend
  // makes links). Skipped: an entry cordon may not create (EACCES, EPERM, EROFS: the command,
  // never more privileged, cannot either). Fails when something else appeared at the entry
  // since the plan (the host made it meanwhile: run again), or a call fails (with its path).
  [[nodiscard]] static Result<HostPlaceholders> Hold(
      const std::vector<Placeholder>& wanted,
      std::shared_ptr<const PlaceholderRecords> records = nullptr);

  HostPlaceholders() = default;
  HostPlaceholders(HostPlaceholders&& other) noexcept { *this = std::move(other); }
  HostPlaceholders& operator=(HostPlaceholders&& other) noexcept;
  ~HostPlaceholders() { Release(); }

  // What the backend must cover, each with the kind that is there.
  const std::vector<Placeholder>& covered() const { return covered_; }

 private:
  void Release();

  struct Root {
    std::filesystem::path path;
    core::UniqueFd fd;  // O_RDONLY | O_DIRECTORY, LOCK_SH while held
  };
  // A placeholder (or a directory on the way to one) this run made or adopted.
  struct Made {
    std::size_t root;
    std::string relative;
    bool directory;
    dev_t dev;
    ino_t ino;
  };
  std::vector<Root> roots_;
  std::vector<Made> made_;  // parents before their children
  std::vector<Placeholder> covered_;
  std::shared_ptr<const PlaceholderRecords> records_;
  std::string record_;    // the record's name: forgotten once this run removed them all
  bool adopted_ = false;  // another run's placeholders were held too: its record is settled
};

// The clean-up of one recorded placeholder (placeholder_records.h): removed when its root is
// held by no run (LOCK_EX without waiting) and it is still the one recorded (device and inode).
// True when it is settled: gone, or no longer the placeholder recorded.
bool RemoveRecordedHostPlaceholder(const RecordedPlaceholder& recorded);

}  // namespace cordon::plan
