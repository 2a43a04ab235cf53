#include "plan/git_placeholder_records.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <vector>

namespace cordon::plan {
namespace {

constexpr const char* kDirectoryName = "cordon-placeholders";

std::string Name(dev_t dev, ino_t ino) {
  return fmt::format("{}-{}", static_cast<unsigned long long>(dev),
                     static_cast<unsigned long long>(ino));
}

// A directory of this user's alone beneath `parent`: opened, or made (0700) and opened.
core::UniqueFd OwnDirectory(int parent, const char* name) {
  if (::mkdirat(parent, name, 0700) != 0 && errno != EEXIST) return {};
  core::UniqueFd dir(::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!dir || ::fstat(dir.get(), &st) != 0 || st.st_uid != ::geteuid() ||
      (st.st_mode & 0077) != 0) {
    return {};
  }
  return dir;
}

std::string ReadText(int dir, const char* name) {
  core::UniqueFd fd(::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return {};
  char buffer[4096];
  const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

enum class Outcome { kRemoved, kGone, kHeld };

// The placeholder `git` recorded as `name`: removed when it is still that empty directory and
// nobody holds it.
Outcome RemoveIfUnheld(const std::string& name, const std::filesystem::path& git) {
  if (git.filename() != ".git" || !git.is_absolute()) return Outcome::kGone;
  const std::filesystem::path root = git.parent_path();
#if defined(__linux__)
  core::UniqueFd root_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
#else
  core::UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
#endif
  if (!root_fd) return Outcome::kGone;
  core::UniqueFd dir(
      ::openat(root_fd.get(), ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!dir || ::fstat(dir.get(), &st) != 0 || Name(st.st_dev, st.st_ino) != name) {
    return Outcome::kGone;  // removed, replaced, or another directory by now: not ours
  }
  // A live holder keeps LOCK_SH: then it removes it itself when it is done.
  if (::flock(dir.get(), LOCK_EX | LOCK_NB) != 0) return Outcome::kHeld;
  // Only an empty directory goes; a repository made meanwhile stays (and is forgotten).
  if (::unlinkat(root_fd.get(), ".git", AT_REMOVEDIR) != 0) return Outcome::kGone;
  return Outcome::kRemoved;
}

}  // namespace

std::shared_ptr<const GitPlaceholderRecords> GitPlaceholderRecords::Open(
    const std::optional<std::string>& runtime_dir) {
  if (!runtime_dir || !runtime_dir->starts_with('/')) return nullptr;
  core::UniqueFd runtime(
      ::open(runtime_dir->c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!runtime || ::fstat(runtime.get(), &st) != 0 || st.st_uid != ::geteuid() ||
      (st.st_mode & 0022) != 0) {
    return nullptr;
  }
  return std::make_shared<const GitPlaceholderRecords>(std::move(runtime));
}

core::UniqueFd GitPlaceholderRecords::Directory(bool create) const {
  if (create) return OwnDirectory(runtime_.get(), kDirectoryName);
  core::UniqueFd dir(
      ::openat(runtime_.get(), kDirectoryName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!dir || ::fstat(dir.get(), &st) != 0 || st.st_uid != ::geteuid() ||
      (st.st_mode & 0077) != 0) {
    return {};
  }
  return dir;
}

void GitPlaceholderRecords::Record(dev_t dev, ino_t ino, const std::filesystem::path& git) const {
  const core::UniqueFd dir = Directory(/*create=*/true);
  if (!dir) return;  // unrecorded: the next run in that root adopts it
  // Written whole under a name of its own, then renamed: a clean-up never reads half of it.
  const std::string name = Name(dev, ino);
  const std::string partial = fmt::format(".{}.{}", name, ::getpid());
  core::UniqueFd fd(::openat(dir.get(), partial.c_str(),
                             O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return;  // unrecorded: the next run in that root adopts it
  const std::string& text = git.native();
  const bool written =
      ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (!written || ::renameat(dir.get(), partial.c_str(), dir.get(), name.c_str()) != 0) {
    (void)::unlinkat(dir.get(), partial.c_str(), 0);
  }
}

void GitPlaceholderRecords::Forget(dev_t dev, ino_t ino) const {
  const core::UniqueFd dir = Directory(/*create=*/false);
  if (dir) (void)::unlinkat(dir.get(), Name(dev, ino).c_str(), 0);
}

int GitPlaceholderRecords::CleanUp() const {
  const core::UniqueFd dir = Directory(/*create=*/false);
  if (!dir) return 0;  // nothing was ever recorded here
  core::UniqueFd listing(::openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!listing) return 0;
  DIR* d = ::fdopendir(listing.Release());
  if (d == nullptr) return 0;
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(d)) {
    const std::string_view name = entry->d_name;
    if (!name.starts_with('.')) names.emplace_back(name);  // not ".", "..", a partial one
  }
  ::closedir(d);
  int removed = 0;
  for (const std::string& name : names) {
    const std::string git = ReadText(dir.get(), name.c_str());
    if (git.empty()) continue;  // unreadable now: left for a later start
    switch (RemoveIfUnheld(name, git)) {
      case Outcome::kRemoved:
        ++removed;
        [[fallthrough]];
      case Outcome::kGone:
        (void)::unlinkat(dir.get(), name.c_str(), 0);
        break;
      case Outcome::kHeld:
        break;
    }
  }
  return removed;
}

}  // namespace cordon::plan
