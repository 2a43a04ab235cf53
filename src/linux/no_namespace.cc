#include "linux/no_namespace.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/syscall_error.h"

namespace cordon::linux_native {
namespace {

struct Dirent64 {
  unsigned long long d_ino;
  long long d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

constexpr int kMaxDepth = 128;

bool IsDot(const char* name) {
  return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

void RemoveAt(int dirfd, const char* name, int depth) {
  if (::unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) return;
  if (depth > kMaxDepth) return;
  (void)::fchmodat(dirfd, name, 0700, 0);
  int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  // Entries are removed while the directory is read; passes repeat until one removes nothing.
  bool removed_any = true;
  while (removed_any) {
    removed_any = false;
    ::lseek(fd, 0, SEEK_SET);
    alignas(8) char buffer[2048];
    long n;
    while ((n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer)) > 0) {
      for (long offset = 0; offset < n;) {
        auto* entry = reinterpret_cast<Dirent64*>(buffer + offset);
        offset += entry->d_reclen;
        if (IsDot(entry->d_name)) continue;
        RemoveAt(fd, entry->d_name, depth + 1);
        removed_any = true;
      }
    }
  }
  ::close(fd);
  (void)::unlinkat(dirfd, name, AT_REMOVEDIR);
}

}  // namespace

Result<std::string> CreatePrivateDir() {
  // Inside another sandbox /tmp may be a read-only view whose scratch is elsewhere (cordon's
  // own, decision 0046): the caller's TMPDIR when it names an absolute directory.
  std::string base = "/tmp";
  struct stat st {};
  if (const char* tmpdir = std::getenv("TMPDIR");
      tmpdir != nullptr && tmpdir[0] == '/' && ::stat(tmpdir, &st) == 0 && S_ISDIR(st.st_mode)) {
    base = tmpdir;
  }
  std::string dir = base + "/cordon-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) return core::FailSyscall("mkdtemp", dir);
  for (const char* sub : {"/home", "/tmp"}) {
    if (::mkdir((dir + sub).c_str(), 0700) != 0) {
      Error error = core::SyscallError("mkdir", dir + sub);
      RemoveTree(dir.c_str());
      return std::unexpected(std::move(error));
    }
  }
  return dir;
}

void KillRemainingChildren() {
  for (;;) {
    int fd = ::open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
    bool killed = false;
    if (fd >= 0) {
      char buffer[4096];
      ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
      ::close(fd);
      buffer[n > 0 ? n : 0] = '\0';
      for (char* p = buffer; *p != '\0';) {
        char* end = nullptr;
        long pid = std::strtol(p, &end, 10);  // no allocation, no locale state beyond "C"
        if (end == p) break;
        if (pid > 0 && ::kill(static_cast<pid_t>(pid), SIGKILL) == 0) killed = true;
        p = end;
      }
    }
    // Reap what died; block only when something was just killed (it will die promptly).
    pid_t reaped = ::waitpid(-1, nullptr, killed ? 0 : WNOHANG);
    while (reaped > 0) reaped = ::waitpid(-1, nullptr, WNOHANG);
    if (reaped < 0 && errno == ECHILD) return;
    if (!killed && fd < 0) return;  // no children list: cannot find the rest
  }
}

void RemoveTree(const char* path) { RemoveAt(AT_FDCWD, path, 0); }

}  // namespace cordon::linux_native
