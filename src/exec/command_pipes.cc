#include "exec/command_pipes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/syscall_error.h"

namespace cordon::exec {
namespace {

// 1 MiB: the default /proc/sys/fs/pipe-max-size, so unprivileged callers get it too. A larger
// pipe lets a command that floods its output run ahead of the supervisor instead of blocking
// on every 64 KiB.
[[maybe_unused]] constexpr int kPipeSize = 1 << 20;  // Linux: F_SETPIPE_SZ

struct Pipe {
  core::UniqueFd read;
  core::UniqueFd write;
};

Result<Pipe> MakePipe(const char* name) {
  int fds[2];
#if defined(__linux__)
  if (::pipe2(fds, O_CLOEXEC) != 0) return core::FailSyscall("pipe2", name);
  Pipe pipe{core::UniqueFd(fds[0]), core::UniqueFd(fds[1])};
#else
  // No pipe2 on macOS: close-on-exec right after (the spawn closes stray descriptors anyway).
  if (::pipe(fds) != 0) return core::FailSyscall("pipe", name);
  Pipe pipe{core::UniqueFd(fds[0]), core::UniqueFd(fds[1])};
  (void)::fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  (void)::fcntl(fds[1], F_SETFD, FD_CLOEXEC);
#endif
  // Only the read end is non-blocking: the command sees an ordinary blocking pipe.
  const int flags = ::fcntl(pipe.read.get(), F_GETFL);
  if (flags < 0 || ::fcntl(pipe.read.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return core::FailSyscall("fcntl", "O_NONBLOCK");
  }
#if defined(__linux__)
  (void)::fcntl(pipe.write.get(), F_SETPIPE_SZ, kPipeSize);  // best effort; EPERM keeps 64 KiB
#endif
  return pipe;
}

}  // namespace

Result<CommandPipes> CreateCommandPipes() {
  CORDON_TRY(Pipe out, MakePipe("stdout"));
  CORDON_TRY(Pipe err, MakePipe("stderr"));
  CommandPipes pipes;
  pipes.stdout_read = std::move(out.read);
  pipes.stdout_write = std::move(out.write);
  pipes.stderr_read = std::move(err.read);
  pipes.stderr_write = std::move(err.write);
  return pipes;
}

Result<core::UniqueFd> OpenDevNull() {
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return core::FailSyscall("open", "/dev/null, O_RDONLY");
  return core::UniqueFd(fd);
}

StdioFds MakeStdio(const CommandPipes& pipes, int stdin_fd) {
  return StdioFds{stdin_fd, pipes.stdout_write.get(), pipes.stderr_write.get()};
}

bool GivenDirectly(int sink) {
  struct stat st {};
  return sink >= 0 && ::fstat(sink, &st) == 0 && S_ISFIFO(st.st_mode);
}

}  // namespace cordon::exec
