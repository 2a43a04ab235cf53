#include "plan/placeholder_records.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <ctime>
#include <string_view>
#include <vector>

#include "plan/host_placeholders.h"

namespace cordon::plan {
namespace {

constexpr const char* kDirectoryName = "cordon-placeholders";
constexpr std::string_view kHeader = "cordon placeholders 1\n";
constexpr std::size_t kMaxRecord = 1 << 20;

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
  std::string text;
  char buffer[4096];
  while (text.size() < kMaxRecord) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

template <typename T>
bool ParseNumber(std::string_view field, T& out) {
  unsigned long long value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size()) return false;
  out = static_cast<T>(value);
  return static_cast<unsigned long long>(out) == value;
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

std::string PlaceholderRecords::Record(const std::vector<RecordedPlaceholder>& held) const {
  if (held.empty()) return {};
  const core::UniqueFd dir = Directory(/*create=*/true);
  if (!dir) return {};
  // Written whole under a name of its own, then renamed: a clean-up never reads half of it.
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const std::string name = fmt::format("{}-{}.{:09}", ::getpid(), now.tv_sec, now.tv_nsec);
  const std::string partial = "." + name;
  core::UniqueFd fd(::openat(dir.get(), partial.c_str(),
                             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return {};
  const std::string text = RecordText(held);
  const bool written =
      ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (!written || ::renameat(dir.get(), partial.c_str(), dir.get(), name.c_str()) != 0) {
    (void)::unlinkat(dir.get(), partial.c_str(), 0);
    return {};
  }
  return name;
}

void PlaceholderRecords::Forget(const std::string& name) const {
  if (name.empty() || name.find('/') != std::string::npos) return;
  const core::UniqueFd dir = Directory(/*create=*/false);
  if (dir) (void)::unlinkat(dir.get(), name.c_str(), 0);
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
  struct Entry {
    RecordedPlaceholder placeholder;
    std::size_t record;
  };
  std::vector<Entry> entries;
  std::vector<std::size_t> unsettled(names.size(), 0);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::optional<std::vector<RecordedPlaceholder>> record =
        ParseRecord(ReadText(dir.get(), names[i].c_str()));
    if (!record) continue;  // another form (an older cordon's): forgotten
    for (const RecordedPlaceholder& p : *record) entries.push_back({p, i});
    unsettled[i] = record->size();
  }
  // The deepest first: a directory made on the way to a placeholder is empty only once that
  // one is gone.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.placeholder.relative.size() > b.placeholder.relative.size();
  });
  int removed = 0;
  for (const Entry& entry : entries) {
    if (!RemoveRecordedHostPlaceholder(entry.placeholder)) continue;
    ++removed;
    --unsettled[entry.record];
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (unsettled[i] == 0) (void)::unlinkat(dir.get(), names[i].c_str(), 0);
  }
  return removed;
}

std::string RecordText(const std::vector<RecordedPlaceholder>& placeholders) {
  std::string text(kHeader);
  for (const RecordedPlaceholder& p : placeholders) {
    text += p.root.native();
    text += '\0';
    text += p.relative;
    text += '\0';
    text += fmt::format("{}", static_cast<unsigned long long>(p.dev));
    text += '\0';
    text += fmt::format("{}", static_cast<unsigned long long>(p.ino));
    text += '\0';
  }
  return text;
}

std::optional<std::vector<RecordedPlaceholder>> ParseRecord(std::string_view text) {
  if (!text.starts_with(kHeader)) return std::nullopt;
  text.remove_prefix(kHeader.size());
  std::vector<RecordedPlaceholder> placeholders;
  std::string_view fields[4];
  std::size_t field = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\0');
    if (end == std::string_view::npos) return std::nullopt;  // cut short
    fields[field++] = text.substr(0, end);
    text.remove_prefix(end + 1);
    if (field < 4) continue;
    field = 0;
    RecordedPlaceholder p;
    p.root = std::string(fields[0]);
    p.relative = std::string(fields[1]);
    if (!p.root.is_absolute() || p.relative.empty() || p.relative.front() == '/' ||
        !ParseNumber(fields[2], p.dev) || !ParseNumber(fields[3], p.ino)) {
      return std::nullopt;
    }
    placeholders.push_back(std::move(p));
  }
  if (field != 0) return std::nullopt;
  return placeholders;
}

}  // namespace cordon::plan
