#include "plan/placeholder_records.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>
#include <vector>

#include "plan/host_placeholders.h"

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

}  // namespace

std::shared_ptr<const PlaceholderRecords> PlaceholderRecords::Open(
    const std::optional<std::string>& runtime_dir) {
  if (!runtime_dir || !runtime_dir->starts_with('/')) return nullptr;
  core::UniqueFd runtime(
      ::open(runtime_dir->c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!runtime || ::fstat(runtime.get(), &st) != 0 || st.st_uid != ::geteuid() ||
      (st.st_mode & 0022) != 0) {
    return nullptr;
  }
  return std::make_shared<const PlaceholderRecords>(std::move(runtime));
}

core::UniqueFd PlaceholderRecords::Directory(bool create) const {
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

void PlaceholderRecords::Record(dev_t dev, ino_t ino, const std::string& text) const {
  const core::UniqueFd dir = Directory(/*create=*/true);
  if (!dir) return;  // unrecorded: the next run in that root adopts it
  // Written whole under a name of its own, then renamed: a clean-up never reads half of it.
  const std::string name = Name(dev, ino);
  const std::string partial = fmt::format(".{}.{}", name, ::getpid());
  core::UniqueFd fd(::openat(dir.get(), partial.c_str(),
                             O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return;  // unrecorded: the next run in that root adopts it
  const bool written =
      ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (!written || ::renameat(dir.get(), partial.c_str(), dir.get(), name.c_str()) != 0) {
    (void)::unlinkat(dir.get(), partial.c_str(), 0);
  }
}

void PlaceholderRecords::Forget(dev_t dev, ino_t ino) const {
  const core::UniqueFd dir = Directory(/*create=*/false);
  if (dir) (void)::unlinkat(dir.get(), Name(dev, ino).c_str(), 0);
}

int PlaceholderRecords::CleanUp() const {
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
  // The deepest first: a directory made on the way to a placeholder is empty only once that
  // one is gone. A record of another form (an older cordon's) is forgotten.
  std::vector<std::pair<std::string, std::string>> records;
  for (const std::string& name : names) {
    std::string text = ReadText(dir.get(), name.c_str());
    if (!text.empty()) records.emplace_back(name, std::move(text));
  }
  std::sort(records.begin(), records.end(),
            [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  for (const auto& [name, text] : records) {
    if (RemoveRecordedHostPlaceholder(name, text)) {
      ++removed;
      (void)::unlinkat(dir.get(), name.c_str(), 0);
    }
  }
  return removed;
}

}  // namespace cordon::plan
