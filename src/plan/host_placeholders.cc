#include "plan/host_placeholders.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "core/syscall_error.h"

namespace cordon::plan {
namespace {

// LOCK_SH on `fd`, waiting at most about a second for a run that removes its placeholders.
bool LockShared(int fd) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (::flock(fd, LOCK_SH | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    ::usleep(10'000);
  }
  errno = EWOULDBLOCK;
  return false;
}

bool Creatable(int err) { return err != EACCES && err != EPERM && err != EROFS; }

// A placeholder refused by a directory's mode where the command could change the mode (the
// caller owns the directory): skipping it would leave the name free for the next command,
// after a chmod, to create.
Result<void> RefusedByOwnMode(int err, int parent, const std::filesystem::path& where) {
  struct stat st {};
  if (err != EACCES || ::fstat(parent, &st) != 0 || st.st_uid != ::geteuid()) return {};
  return Fail(ErrorCode::kUnavailable,
              fmt::format("cannot hold {} against creation: permission denied by the mode of a "
                          "directory of yours, which a command could change back. Restore it "
                          "(chmod u+rwx on the directories on the way) and run again",
                          where.string()),
              err);
}

core::UniqueFd OpenDirectory(int parent, const char* name) {
#if defined(__linux__)
  constexpr int kFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#else
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#endif
  return core::UniqueFd(::openat(parent, name, kFlags));
}

bool EmptyDirectoryAt(int parent, const char* name) {
  core::UniqueFd fd(::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return false;
  DIR* dir = ::fdopendir(fd.Release());
  if (dir == nullptr) return false;
  bool empty = true;
  while (const dirent* entry = ::readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) {
      empty = false;
      break;
    }
  }
  ::closedir(dir);
  return empty;
}

// What is at `name` in `parent`: a placeholder directory (`empty` tells whether it must be
// empty to count), a placeholder link, or something else (nullopt); `st` its lstat.
enum class Kind { kDirectory, kLink, kOther };
Kind Examine(int parent, const char* name, bool empty, struct stat& st) {
  if (::fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return Kind::kOther;
  if (S_ISDIR(st.st_mode)) {
    const bool ours = (st.st_mode & 07777) == kPlaceholderDirectoryMode &&
                      (!empty || EmptyDirectoryAt(parent, name));
    return ours ? Kind::kDirectory : Kind::kOther;
  }
  if (!S_ISLNK(st.st_mode)) return Kind::kOther;
  char target[128];
  const ssize_t n = ::readlinkat(parent, name, target, sizeof target);
  const std::size_t expected = std::strlen(kPlaceholderLinkTarget);
  const bool ours = n == static_cast<ssize_t>(expected) &&
                    std::memcmp(target, kPlaceholderLinkTarget, expected) == 0;
  return ours ? Kind::kLink : Kind::kOther;
}

// The directory holding `relative`'s last component, below `root` (no link followed).
core::UniqueFd OpenParent(int root, const std::filesystem::path& relative) {
  core::UniqueFd dir = OpenDirectory(root, ".");
  for (const auto& part : relative.parent_path()) {
    if (!dir) break;
    dir = OpenDirectory(dir.get(), part.c_str());
  }
  return dir;
}

// Removes `name` in `parent` if it is still the placeholder (dev, ino); true when it is gone.
bool RemoveIfSame(int parent, const char* name, bool directory, dev_t dev, ino_t ino) {
  struct stat st {};
  if (::fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT;
  if (st.st_dev != dev || st.st_ino != ino) return true;  // not ours any more
  if (!directory) return ::unlinkat(parent, name, 0) == 0;
  if (::unlinkat(parent, name, AT_REMOVEDIR) == 0) return true;
  // Not empty: something the host (or the command, in a directory on the way) put there is
  // the user's, and so is the directory now.
  if (errno == ENOTEMPTY || errno == EEXIST) {
    core::UniqueFd fd(::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd) (void)::fchmod(fd.get(), 0755);
    return true;
  }
  return false;
}

// The first placeholder link a run made: the others are hard links of it. A new name costs the
// file system a directory entry; a new link an inode too, which on ext4 is most of the time a
// placeholder takes (decision 0036).
struct LinkModel {
  core::UniqueFd parent;  // O_PATH | O_DIRECTORY
  std::string name;
  dev_t dev = 0;
  ino_t ino = 0;
};

// Makes `name` in `parent` a placeholder link, `st` its lstat: a hard link of `model` where
// that works (the same mount), otherwise a new link, which becomes the model. -1 with errno as
// symlinkat(2) sets it when neither could be made.
int MakeLink(int parent, const char* name, LinkModel& model, struct stat& st) {
  if (model.parent) {
    if (::linkat(model.parent.get(), model.name.c_str(), parent, name, 0) == 0) {
      if (::fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == model.dev &&
          st.st_ino == model.ino) {
        return 0;
      }
      // The model's name holds something else by now (the host replaced it): the name just
      // made is taken back, and the model given up.
      (void)::unlinkat(parent, name, 0);
    } else if (errno == EEXIST) {
      return -1;
    }
    model = LinkModel{};  // another mount (EXDEV), no hard links there (EPERM, EMLINK)...
  }
  if (::symlinkat(kPlaceholderLinkTarget, parent, name) != 0) return -1;
  if (::fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode)) {
    errno = EEXIST;  // replaced at once: Hold examines what is there
    return -1;
  }
  model.parent = core::UniqueFd(::fcntl(parent, F_DUPFD_CLOEXEC, 0));
  model.name = name;
  model.dev = st.st_dev;
  model.ino = st.st_ino;
  return 0;
}

}  // namespace

bool RemoveRecordedHostPlaceholder(const RecordedPlaceholder& recorded) {
  const std::filesystem::path relative = recorded.relative;
  core::UniqueFd root(
      ::open(recorded.root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root) return true;
  if (::flock(root.get(), LOCK_EX | LOCK_NB) != 0) return false;  // a run holds it
  core::UniqueFd parent = OpenParent(root.get(), relative);
  if (!parent) return true;
  struct stat st {};
  const std::string last = relative.filename().string();
  const Kind kind = Examine(parent.get(), last.c_str(), /*empty=*/false, st);
  if (kind == Kind::kOther || st.st_dev != recorded.dev || st.st_ino != recorded.ino) return true;
  return RemoveIfSame(parent.get(), last.c_str(), kind == Kind::kDirectory, st.st_dev, st.st_ino);
}

Result<HostPlaceholders> HostPlaceholders::Hold(const std::vector<Placeholder>& wanted,
                                                std::shared_ptr<const PlaceholderRecords> records) {
  HostPlaceholders held;
  held.records_ = std::move(records);
  LinkModel model;
  for (const Placeholder& p : wanted) {
    const std::string shown = p.path().string();
    // The root, held shared for the command's lifetime.
    auto root = std::find_if(held.roots_.begin(), held.roots_.end(),
                             [&](const Root& r) { return r.path == p.root; });
    if (root == held.roots_.end()) {
      core::UniqueFd fd(::open(p.root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!fd) return core::FailSyscall("open", p.root.string());
      if (!LockShared(fd.get())) return core::FailSyscall("flock(LOCK_SH)", p.root.string());
      held.roots_.push_back({p.root, std::move(fd)});
      root = std::prev(held.roots_.end());
    }
    const std::size_t root_index = static_cast<std::size_t>(root - held.roots_.begin());
    auto made = [&](const std::filesystem::path& relative, bool directory, const struct stat& st) {
      // A directory on the way to two entries (".config" for ".config/mise.toml" and
      // ".config/mise/") is held once.
      const bool known = std::any_of(held.made_.begin(), held.made_.end(), [&](const Made& m) {
        return m.root == root_index && m.relative == relative.native();
      });
      if (!known) {
        held.made_.push_back({root_index, relative.string(), directory, st.st_dev, st.st_ino});
      }
    };
    // The directories on the way, made as placeholders when missing.
    const std::filesystem::path relative = p.relative;
    core::UniqueFd parent = OpenDirectory(root->fd.get(), ".");
    std::filesystem::path walked;
    bool skipped = false;
    for (const auto& part : relative.parent_path()) {
      walked /= part;
      core::UniqueFd next = OpenDirectory(parent.get(), part.c_str());
      struct stat st {};
      if (!next && errno == ENOENT) {
        if (::mkdirat(parent.get(), part.c_str(), kPlaceholderDirectoryMode) == 0 &&
            ::fstatat(parent.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
          made(walked, true, st);
        } else if (errno != EEXIST && !Creatable(errno)) {
          CORDON_TRY_VOID(RefusedByOwnMode(errno, parent.get(), p.root / walked));
          skipped = true;
          break;
        } else if (errno != EEXIST) {
          return core::FailSyscall("mkdirat", (p.root / walked).string());
        }
        next = OpenDirectory(parent.get(), part.c_str());
      } else if (next && Examine(parent.get(), part.c_str(), false, st) == Kind::kDirectory) {
        made(walked, true, st);  // another run's: whoever is last removes it once empty
        held.adopted_ = true;
      }
      if (!next) {
        return core::FailSyscall(
            "openat", fmt::format("{} (changed while the command was starting: run it again)",
                                  (p.root / walked).string()));
      }
      parent = std::move(next);
    }
    if (skipped) continue;
    const std::string last = relative.filename().string();
    struct stat st {};
    const int rc = p.directory ? ::mkdirat(parent.get(), last.c_str(), kPlaceholderDirectoryMode)
                               : MakeLink(parent.get(), last.c_str(), model, st);
    if (rc != 0 && errno != EEXIST) {
      if (!Creatable(errno)) {
        CORDON_TRY_VOID(RefusedByOwnMode(errno, parent.get(), p.path()));
        continue;
      }
      return core::FailSyscall(p.directory ? "mkdirat" : "symlinkat",
                               fmt::format("{} (placeholder keeping it from being created in the "
                                           "sandbox)",
                                           shown));
    }
    // A link just made is known; anything else is examined: another run's placeholder (of
    // either kind: bubblewrap runs make directories) is adopted.
    Kind kind = Kind::kLink;
    if (rc != 0 || p.directory) kind = Examine(parent.get(), last.c_str(), /*empty=*/rc != 0, st);
    if (kind == Kind::kOther) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("{} appeared while the command was starting (run it again)", shown));
    }
    if (rc != 0) held.adopted_ = true;
    made(relative, kind == Kind::kDirectory, st);
    held.covered_.push_back({p.root, p.relative, kind == Kind::kDirectory});
  }
  if (held.records_ && !held.made_.empty()) {
    std::vector<RecordedPlaceholder> recorded;
    recorded.reserve(held.made_.size());
    for (const Made& m : held.made_) {
      recorded.push_back({held.roots_[m.root].path, m.relative, m.dev, m.ino});
    }
    held.record_ = held.records_->Record(recorded);
  }
  return held;
}

HostPlaceholders& HostPlaceholders::operator=(HostPlaceholders&& other) noexcept {
  if (this != &other) {
    Release();
    roots_ = std::move(other.roots_);
    made_ = std::move(other.made_);
    covered_ = std::move(other.covered_);
    records_ = std::move(other.records_);
    record_ = std::move(other.record_);
    adopted_ = other.adopted_;
    other.roots_.clear();
    other.made_.clear();
    other.covered_.clear();
    other.record_.clear();
    other.adopted_ = false;
  }
  return *this;
}

void HostPlaceholders::Release() {
  std::vector<bool> last(roots_.size(), false);
  for (std::size_t i = 0; i < roots_.size(); ++i) {
    // Upgraded without waiting only when no other run holds the root: that one removes them.
    last[i] = ::flock(roots_[i].fd.get(), LOCK_EX | LOCK_NB) == 0;
  }
  bool all_gone = true;
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) {
    if (!last[it->root]) {
      all_gone = false;
      continue;
    }
    const std::filesystem::path relative = it->relative;
    core::UniqueFd parent = OpenParent(roots_[it->root].fd.get(), relative);
    const std::string name = relative.filename().string();
    if (!parent || !RemoveIfSame(parent.get(), name.c_str(), it->directory, it->dev, it->ino)) {
      all_gone = false;
    }
  }
  made_.clear();
  covered_.clear();
  roots_.clear();  // closed: unlocked
  if (records_) {
    // A run that was not the last keeps its record: the last one, which adopted its
    // placeholders, settles it once they are gone.
    if (all_gone) records_->Forget(record_);
    if (adopted_) (void)records_->CleanUp();
  }
  record_.clear();
  adopted_ = false;
}

}  // namespace cordon::plan
