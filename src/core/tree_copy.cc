#include "core/tree_copy.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "core/file_tree.h"
#include "core/syscall_error.h"
#include "core/unique_fd.h"

namespace cordon::core {
namespace {

constexpr int kMaxDepth = 256;  // as file_tree.cc: deeper than any tool's cache
constexpr int kDirectoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// A place in the destination that cannot take the copy without replacing what is there or
// widening a permission: a link or a file where a directory is needed, a directory its owner
// keeps read-only (go's module cache). Left as it is, and counted.
bool Unsuitable(int err) {
  return err == ENOTDIR || err == ELOOP || err == EEXIST || err == EACCES || err == EPERM ||
         err == EROFS;
}

// Opens the directory `name` below `parent`, making it (0700) when it is missing; never
// through a link.
int OpenOrMakeDirectory(int parent, const std::string& name) {
  const int fd = ::openat(parent, name.c_str(), kDirectoryFlags);
  if (fd >= 0 || errno != ENOENT) return fd;
  if (::mkdirat(parent, name.c_str(), 0700) != 0 && errno != EEXIST) return -1;
  return ::openat(parent, name.c_str(), kDirectoryFlags);
}

Result<std::uint64_t> CopyContents(int in, int out, const std::filesystem::path& shown) {
  std::uint64_t total = 0;
#if defined(__linux__)
  // In the kernel (a reflink where the file system shares extents); a file system that cannot
  // falls back to the copy below.
  for (;;) {
    const ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, std::size_t{1} << 30, 0);
    if (n > 0) {
      total += static_cast<std::uint64_t>(n);
      continue;
    }
    if (n == 0) return total;
    if (total == 0 &&
        (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
      break;
    }
    return FailSyscall("copy_file_range", shown.string());
  }
#endif
  std::vector<char> buffer(std::size_t{1} << 16);
  for (;;) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return FailSyscall("read", shown.string());
    if (n == 0) return total;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(out, buffer.data() + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return FailSyscall("write", shown.string());
      done += w;
    }
    total += static_cast<std::uint64_t>(n);
  }
}

// The source directory, reached from "/" one component at a time without following a link:
// a tool's variable may name a directory inside a project, where a sandboxed command could
// have put a link to a secret (`ln -s ~/.ssh .npm/_cacache`). ELOOP or ENOTDIR for a link.
UniqueFd OpenSource(const std::filesystem::path& source) {
  if (!source.is_absolute()) {
    errno = EINVAL;
    return {};
  }
  UniqueFd at(::open("/", kDirectoryFlags));
  for (const std::filesystem::path& part : source.relative_path()) {
    if (!at) return {};
    if (part.empty()) continue;  // a trailing "/"
    if (part == "." || part == "..") {
      errno = EINVAL;
      return {};
    }
    at = UniqueFd(::openat(at.get(), part.c_str(), kDirectoryFlags));
  }
  return at;
}

class Copier {
 public:
  Result<void> Directory(int source, int destination, const std::filesystem::path& shown,
                         int depth) {
    if (depth > kMaxDepth) return FailSyscall("openat", shown.string(), ELOOP);
    CORDON_TRY(const std::vector<std::string> names, DirectoryNames(source, shown));
    for (const std::string& name : names) {
      const std::filesystem::path path = shown / name;
      struct stat st {};
      if (::fstatat(source, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;  // gone meanwhile
        return FailSyscall("fstatat", path.string());
      }
      if (S_ISREG(st.st_mode)) {
        CORDON_TRY_VOID(File(source, destination, name, path));
        continue;
      }
      if (!S_ISDIR(st.st_mode)) {
        ++counts_.skipped;  // a link or a special file: not copied
        continue;
      }
      const UniqueFd from(::openat(source, name.c_str(), kDirectoryFlags));
      if (!from) {
        if (errno == ENOENT || errno == EACCES) {
          counts_.skipped += errno == EACCES ? 1 : 0;
          continue;
        }
        return FailSyscall("openat", path.string());
      }
      const UniqueFd to(OpenOrMakeDirectory(destination, name));
      if (!to) {
        if (!Unsuitable(errno)) return FailSyscall("openat", path.string());
        ++counts_.skipped;
        continue;
      }
      CORDON_TRY_VOID(Directory(from.get(), to.get(), path, depth + 1));
    }
    return {};
  }

  const CopyCounts& counts() const { return counts_; }

 private:
  Result<void> File(int source, int destination, const std::string& name,
                    const std::filesystem::path& shown) {
    struct stat there {};
    if (::fstatat(destination, name.c_str(), &there, AT_SYMLINK_NOFOLLOW) == 0) {
      ++counts_.kept;
      return {};
    }
    const UniqueFd in(
        ::openat(source, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (!in || ::fstat(in.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      if (!in && errno != ENOENT && errno != EACCES && errno != ELOOP) {
        return FailSyscall("open", shown.string());
      }
      counts_.skipped += (!in && errno == ENOENT) ? 0 : 1;
      return {};
    }
    const std::string temporary = fmt::format(".cordon-seed-{}-{}", ::getpid(), ++serial_);
    const UniqueFd out(::openat(destination, temporary.c_str(),
                                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out) {
      if (!Unsuitable(errno))
        return FailSyscall("openat", (shown.parent_path() / temporary).string());
      ++counts_.skipped;
      return {};
    }
    Result<std::uint64_t> copied = CopyContents(in.get(), out.get(), shown);
    if (copied && ::fchmod(out.get(), (st.st_mode & S_IRWXU) | S_IRUSR) != 0) {
      copied = FailSyscall("fchmod", shown.string());
    }
    // Linked into place, never renamed over: a name a command made meanwhile stays its.
    int err = 0;
    if (copied && ::linkat(destination, temporary.c_str(), destination, name.c_str(), 0) != 0) {
      err = errno;
    }
    ::unlinkat(destination, temporary.c_str(), 0);
    if (!copied) return std::unexpected(copied.error());
    if (err == EEXIST) {
      ++counts_.kept;
    } else if (err != 0) {
      return FailSyscall("linkat", shown.string(), err);
    } else {
      ++counts_.files;
      counts_.bytes += *copied;
    }
    return {};
  }

  CopyCounts counts_;
  unsigned serial_ = 0;
};

}  // namespace

Result<CopyCounts> CopyMissing(const std::filesystem::path& source,
                               const std::filesystem::path& destination_root,
                               const std::filesystem::path& destination) {
  UniqueFd from = OpenSource(source);
  if (!from) {
    if (errno == ENOENT) return CopyCounts{};
    return FailSyscall("open", source.string());
  }
  UniqueFd to(::open(destination_root.c_str(), kDirectoryFlags));
  if (!to) return FailSyscall("open", destination_root.string());
  std::filesystem::path at = destination_root;
  for (const std::filesystem::path& part : destination.relative_path()) {
    at /= part;
    if (part == "." || part == "..") return FailSyscall("openat", at.string(), EINVAL);
    UniqueFd next(OpenOrMakeDirectory(to.get(), part.string()));
    if (!next) return FailSyscall("openat", at.string());
    to = std::move(next);
  }
  Copier copier;
  CORDON_TRY_VOID(copier.Directory(from.get(), to.get(), source, 0));
  return copier.counts();
}

}  // namespace cordon::core
