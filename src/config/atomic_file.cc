#include "config/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "core/paths.h"
#include "core/syscall_error.h"
#include "core/unique_fd.h"

namespace cordon::config {
namespace {

Result<void> WriteAll(int fd, std::string_view content, const std::string& name) {
  while (!content.empty()) {
    ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return core::FailSyscall("write", name);
    content.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

// The temporary file until it is renamed into place; removed if anything fails before that.
class TempFile {
 public:
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!name_.empty()) ::unlink(name_.c_str());
  }

  Result<void> Create(const std::filesystem::path& dir, const std::string& base) {
    std::string pattern = (dir / ("." + base + ".tmp-XXXXXX")).native();
    int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd < 0) return core::FailSyscall("mkostemp", pattern);
    fd_.Reset(fd);
    name_ = pattern;
    // mkostemp already uses 0600; fchmod makes it independent of the libc and umask.
    if (::fchmod(fd, 0600) != 0) return core::FailSyscall("fchmod", name_);
    return {};
  }

  int fd() const { return fd_.get(); }
  const std::string& name() const { return name_; }
  Result<void> Close() {
    if (::close(fd_.Release()) != 0) return core::FailSyscall("close", name_);
    return {};
  }
  void Committed() { name_.clear(); }

 private:
  core::UniqueFd fd_;
  std::string name_;
};

}  // namespace

Result<void> CreatePrivateDirectories(const std::filesystem::path& dir) {
  if (dir.empty()) return {};
  struct stat info {};
  if (::stat(dir.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) return {};
    return core::FailSyscall("mkdir", dir.native(), ENOTDIR);
  }
  if (errno != ENOENT) return core::FailSyscall("stat", dir.native());
  if (dir.has_parent_path() && dir.parent_path() != dir) {
    CORDON_TRY_VOID(CreatePrivateDirectories(dir.parent_path()));
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return core::FailSyscall("mkdir", dir.native());
  }
  return {};
}

Result<void> WriteFileAtomic(const std::filesystem::path& requested, std::string_view content) {
  std::filesystem::path path = requested;
  struct stat link_info {};
  if (::lstat(requested.c_str(), &link_info) == 0 && S_ISLNK(link_info.st_mode)) {
    if (auto target = core::Canonical(requested); target) path = *target;
  }
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  CORDON_TRY_VOID(CreatePrivateDirectories(dir));

  TempFile temp;
  CORDON_TRY_VOID(temp.Create(dir, path.filename().native()));
  CORDON_TRY_VOID(WriteAll(temp.fd(), content, temp.name()));
  if (::fsync(temp.fd()) != 0) return core::FailSyscall("fsync", temp.name());
  CORDON_TRY_VOID(temp.Close());
  if (::rename(temp.name().c_str(), path.c_str()) != 0) {
    return core::FailSyscall("rename", fmt::format("{}, {}", temp.name(), path.native()));
  }
  temp.Committed();

  core::UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) return core::FailSyscall("open", dir.native());
  if (::fsync(dir_fd.get()) != 0) {
    return core::FailSyscall("fsync", fmt::format("{} (the new file is in place but may not "
                                                  "survive a crash)",
                                                  dir.native()));
  }
  return {};
}

}  // namespace cordon::config
