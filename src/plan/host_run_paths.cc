#include "plan/host_run_paths.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <iterator>
#include <string_view>

namespace cordon::plan {
namespace {

enum class Found { kPresent, kAbsent, kLink };

// lstat of each component of `relative` below `root`, stopping at the first that is missing,
// a link, or (before the last) not a directory. `at` is set to the path examined last.
Found Walk(const std::filesystem::path& root, const std::filesystem::path& relative,
           std::filesystem::path& at) {
  at = root;
  const auto end = relative.end();
  for (auto it = relative.begin(); it != end; ++it) {
    at /= *it;
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0) return Found::kAbsent;  // ENOENT, ENOTDIR, EACCES
    if (S_ISLNK(st.st_mode)) return Found::kLink;
    if (std::next(it) == end) return Found::kPresent;
    if (!S_ISDIR(st.st_mode)) return Found::kAbsent;  // ".clinerules" a file: no hooks/ in it
  }
  return Found::kAbsent;
}

}  // namespace

Result<HostRunPaths> FindHostRunPaths(const std::vector<std::string>& entries,
                                      const std::vector<std::filesystem::path>& roots) {
  HostRunPaths paths;
  for (const std::filesystem::path& root : roots) {
    for (const std::string& spelled : entries) {
      std::string_view entry = spelled;
      while (entry.size() > 1 && entry.back() == '/') entry.remove_suffix(1);
      std::filesystem::path at;
      switch (Walk(root, entry, at)) {
        case Found::kPresent:
          paths.present.push_back(at);
          break;
        case Found::kAbsent:
          paths.absent.push_back(root / entry);
          break;
        case Found::kLink:
          return Fail(ErrorCode::kUnavailable,
                      fmt::format("cannot keep {} read-only: {} is a symbolic link, which the "
                                  "command could replace (protect_host_run_files keeps the files a "
                                  "host program runs read-only in every writable root). Replace "
                                  "the link with what it points to, or leave the entry writable: "
                                  "\"host_run_files\": {{\"remove\": [\"{}\"]}} in the sandbox "
                                  "section of your config",
                                  (root / entry).string(), at.string(), entry));
      }
    }
  }
  return paths;
}

}  // namespace cordon::plan
