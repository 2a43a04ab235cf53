// `cordon`: the front of the cordon executable (decision 0028). When the command line is a
// `cordon run ...` and a trusted run server of this user is listening (decision 0026), it hands
// the server its command line, working directory, environment, stdin, stdout and stderr, and
// prints the result; anything else — another subcommand, no server, a server it cannot trust,
// one that leaves the command line to it — it execs the full cordon with the same arguments and
// environment, which then does exactly what it always does. No C library: the front's own
// start-up is the execve of a few pages, not glibc's initialisation and a 4 MB executable.
#include <asm/ioctls.h>

#include "front/text.h"
#include "front/trust.h"
#include "nolibc/sys.h"
#include "server/wire_header.h"

namespace cordon::front {
using namespace nolibc;  // NOLINT: the system calls
namespace {

using server::kAcceptWaitMs;
using server::kHelloWaitMs;
using server::kInvocationMagic;
using server::kMagic;
using server::kMaxBodyBytes;
using server::kReplyGraceMs;
using server::ReplyHeader;
using server::ReplyKind;
using server::RequestHeader;
// Most arguments plus environment entries sent (256 KiB of stack); more: the full cordon.
constexpr size_t kMaxParts = 16384;

void Say(const char* text) { (void)Write(2, text, Length(text)); }

// The caller's terminal settings (the first of stdin, stdout, stderr that is a terminal), as
// they were before the command: a command that changed them (stty -echo, a crashed editor)
// leaves the terminal as it found it, as a one-shot run does (cli/terminal_state.h).
struct TerminalState {
  // The kernel's struct termios (TCGETS), with room to spare on every architecture.
  alignas(8) unsigned char saved[128] = {};
  int fd = -1;

  void Save() {
    for (int candidate = 0; candidate < 3 && fd < 0; ++candidate) {
      if (Ioctl(candidate, TCGETS, saved) == 0) fd = candidate;
    }
  }
  // Only when the command changed them, and only from the terminal's foreground process group
  // (from the background the kernel would stop this process with SIGTTOU).
  void Restore() const {
    if (fd < 0) return;
    alignas(8) unsigned char now[sizeof saved] = {};
    int foreground = -1;
    if (Ioctl(fd, TCGETS, now) != 0 || Ioctl(fd, TIOCGPGRP, &foreground) != 0 ||
        foreground != Sys(__NR_getpgid, 0)) {
      return;
    }
    bool changed = false;
    for (size_t i = 0; i < sizeof saved; ++i) changed = changed || now[i] != saved[i];
    if (changed) (void)Ioctl(fd, TCSETSW, const_cast<unsigned char*>(saved));
  }
};

// The full client's words (server/client.cc), without its detail.
constexpr const char* kVanished =
    "the run server vanished during the run (killed?); the command may have run, in part or "
    "whole, and is not run again";

[[noreturn]] void Fail(const char* message, const char* detail) {
  Say("cordon: ");
  Say(message);
  Say(detail);
  Say("\n");
  Exit(125);
}

// <dir of this executable><relative>, when that is a regular file.
bool Candidate(PathText& full, struct statx& st, const char* self, size_t dir,
               const char* relative) {
  full = PathText();
  full.Add(self, dir).Add(relative);
  return full.ok && Statx(AT_FDCWD, full.data, 0, &st) == 0 && (st.stx_mode & S_IFMT) == S_IFREG;
}

// The full cordon: <dir>/../libexec/cordon/cordon installed, <dir>/../cli/cordon in the build tree.
// (No table of the candidates: a table of pointers would need a relocation, and nothing here
// applies relocations.)
bool LocateFull(PathText& full, struct statx& st, const char* execfn) {
  char self[4096];
  long n = ReadLink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0 && execfn != nullptr) {
    // No /proc (a minimal chroot): the path this executable was started by.
    n = static_cast<long>(Length(execfn));
    if (n >= static_cast<long>(sizeof self)) return false;
    for (long i = 0; i < n; ++i) self[i] = execfn[i];
  }
  if (n <= 0) return false;
  long slash = n - 1;
  while (slash > 0 && self[slash] != '/') --slash;
  const size_t dir = static_cast<size_t>(slash);
  return Candidate(full, st, self, dir, "/../libexec/cordon/cordon") ||
         Candidate(full, st, self, dir, "/../cli/cordon");
}

// A `cordon run` the server may take: the flags it never serves are left out at once.
bool Servable(int argc, char** argv) {
  if (argc < 3 || !Equal(argv[1], "run")) return false;
  for (int i = 2; i < argc && !Equal(argv[i], "--"); ++i) {
    const char* a = argv[i];
    if (Equal(a, "--no-server") || Equal(a, "--worktree") || Equal(a, "--outside-sandbox") ||
        Equal(a, "--help") || Equal(a, "-h")) {
      return false;
    }
  }
  return true;
}

bool Closed(int socket) {
  Close(socket);
  return false;
}

const char* Env(char** envp, const char* name) {
  for (char** entry = envp; *entry != nullptr; ++entry) {
    const char* rest = After(*entry, name);
    if (rest != nullptr && *rest == '=') return rest + 1;
  }
  return nullptr;
}

// CORDON_RUN_SERVER=off: never hand a command to a run server (decision 0030). Any other value
// is the full cordon's to check.
bool ServerWanted(char** envp) {
  const char* setting = Env(envp, "CORDON_RUN_SERVER");
  return setting == nullptr || !Equal(setting, "off");
}

// server/paths.h: $XDG_RUNTIME_DIR/cordon/run.sock when that is absolute and ours (or absent),
// else /tmp/cordon-<uid>/run.sock; the directory must be ours with no access for others.
bool SocketPath(char** envp, SockaddrUn& address) {
  PathText dir;
  const char* runtime = Env(envp, "XDG_RUNTIME_DIR");
  struct statx rt {};
  const long found = runtime != nullptr ? Statx(AT_FDCWD, runtime, AT_SYMLINK_NOFOLLOW, &rt) : -1;
  // Ours (a directory of this user that no one else may write), or not there at all.
  const bool ours_or_absent =
      found == -kEnoent ||
      (found == 0 && (rt.stx_mode & S_IFMT) == S_IFDIR &&
       rt.stx_uid == static_cast<uint32_t>(GetEuid()) && (rt.stx_mode & 022) == 0);
  if (runtime != nullptr && runtime[0] == '/' && ours_or_absent) {
    dir.Add(runtime).Add("/cordon");
  } else {
    dir.Add("/tmp/cordon-").AddNumber(static_cast<uint64_t>(GetEuid()));
  }
  struct statx st {};
  if (!dir.ok || Statx(AT_FDCWD, dir.data, AT_SYMLINK_NOFOLLOW, &st) != 0 ||
      (st.stx_mode & S_IFMT) != S_IFDIR || st.stx_uid != static_cast<uint32_t>(GetEuid()) ||
      (st.stx_mode & 077) != 0) {
    return false;  // none, or not safe: the full cordon says why
  }
  dir.Add("/run.sock");
  if (!dir.ok || dir.size >= sizeof address.path) return false;
  address.family = kAfUnix;
  for (size_t i = 0; i <= dir.size; ++i) address.path[i] = dir.data[i];
  return true;
}

bool ReadAll(int fd, void* data, size_t size) {
  char* at = static_cast<char*>(data);
  while (size > 0) {
    const long n = Read(fd, at, size);
    if (n == -kEintr) continue;
    if (n <= 0) return false;
    at += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Waits for a reply header for up to `milliseconds`; false on timeout, EOF or a bad header.
bool ReadReply(int socket, long milliseconds, ReplyHeader& reply, bool& timed_out) {
  timed_out = false;
  const long deadline = MonotonicMs() + milliseconds;
  for (;;) {
    const long left = deadline - MonotonicMs();
    if (left <= 0) {
      timed_out = true;
      return false;
    }
    const long ready = PollIn(socket, left > 3600000 ? 3600000 : left);
    if (ready > 0) break;
    if (ready < 0 && ready != -kEintr) return false;
  }
  return ReadAll(socket, &reply, sizeof reply) && reply.magic == kMagic;
}

// Sends all of `iov` (adjusting it as parts go out).
bool SendAll(int socket, Iovec* iov, size_t count, void* control, size_t control_length) {
  while (count > 0) {
    MsgHdr message;
    message.iov = iov;
    message.iov_count = count > 512 ? 512 : count;
    message.control = control;
    message.control_length = control_length;
    long sent = SendMsg(socket, &message);
    if (sent == -kEintr) continue;
    if (sent < 0) return false;
    control = nullptr;  // attached to the first byte only
    control_length = 0;
    while (count > 0 && static_cast<size_t>(sent) >= iov->length) {
      sent -= static_cast<long>(iov->length);
      ++iov, --count;
    }
    if (count > 0) {
      iov->base = static_cast<const char*>(iov->base) + sent;
      iov->length -= static_cast<size_t>(sent);
    }
  }
  return true;
}

// Copies `size` bytes of the reply to `fd`.
bool Relay(int socket, int fd, uint64_t size) {
  char buffer[65536];
  while (size > 0) {
    const long n = Read(socket, buffer, size < sizeof buffer ? size : sizeof buffer);
    if (n == -kEintr) continue;
    if (n <= 0) return false;
    size -= static_cast<uint64_t>(n);
    for (long at = 0; at < n;) {
      const long w = Write(fd, buffer + at, static_cast<size_t>(n - at));
      if (w == -kEintr) continue;
      if (w <= 0) break;  // our output is gone; the result still counts
      at += w;
    }
  }
  return true;
}

// Hands the command line to the server, prints its result and exits; returns when the command
// line is better run by the full cordon (nothing ran): true when the server said so itself
// (kRunYourself: not for this caller's context, or not a command line it runs as it stands),
// so the full cordon need not ask it again.
// The full cordon is located (`full`, `st`, `located`) only once connected: the server starts
// on the connection while this process does that.
bool TryServer(int argc, char** argv, char** envp, const char* execfn, PathText& full,
               struct statx& st, bool& located) {
  for (int fd = 0; fd < 3; ++fd) {
    if (Fcntl(fd, kFGetfd, 0) < 0) return false;  // a closed stdin, stdout or stderr
  }
  SockaddrUn address{};
  if (!SocketPath(envp, address)) return false;
  char cwd[4096];
  const long cwd_size = GetCwd(cwd, sizeof cwd);  // includes the NUL
  if (cwd_size <= 1 || cwd[0] != '/') return false;
  PathText count;
  count.AddNumber(static_cast<uint64_t>(argc));
  // The body: cwd, argc, argv, environment, each with its NUL, straight from where they lie.
  size_t parts = 2 + static_cast<size_t>(argc);
  for (char** entry = envp; *entry != nullptr; ++entry) ++parts;
  if (parts > kMaxParts) return false;
  Iovec iov[1 + kMaxParts];  // the header first
  size_t body = 0;
  size_t n = 1;
  iov[n++] = {cwd, static_cast<size_t>(cwd_size)};
  iov[n++] = {count.data, count.size + 1};
  for (int i = 0; i < argc; ++i) iov[n++] = {argv[i], Length(argv[i]) + 1};
  for (char** entry = envp; *entry != nullptr; ++entry) iov[n++] = {*entry, Length(*entry) + 1};
  for (size_t i = 1; i < n; ++i) body += iov[i].length;
  if (body > kMaxBodyBytes) return false;

  const long socket = Socket(kAfUnix, kSockStream | kSockCloexec | kSockNonblock);
  if (socket < 0) return false;
  const int s = static_cast<int>(socket);
  // A full backlog answers EAGAIN at once; no server, ENOENT or ECONNREFUSED.
  if (Connect(s, &address) != 0 || Fcntl(s, kFSetfl, 0) != 0) return Closed(s);
  located = LocateFull(full, st, execfn);
  if (!located) return Closed(s);
  const long self = OpenAt(AT_FDCWD, "/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (self < 0) return Closed(s);
  const Confinement own = ReadConfinement(static_cast<int>(self));
  Close(static_cast<int>(self));
  // The sender of what follows is named to the server (SCM_PIDFD), which checks it too.
  if (!ServerIsTrusted(s, own, st) || SetSockOpt(s, kSoPassPidfd, 1) != 0) return Closed(s);
  ReplyHeader reply{};
  bool timed_out = false;
  if (!ReadReply(s, kHelloWaitMs, reply, timed_out) || reply.kind != ReplyKind::kHello ||
      reply.stdout_bytes != 0 || reply.stderr_bytes != 0) {
    return Closed(s);
  }
  RequestHeader header{kInvocationMagic, static_cast<uint32_t>(body)};
  iov[0] = {&header, sizeof header};
  // The working directory goes as a descriptor too: the server resolves the directory this
  // process is in, not whatever its name reaches by the time the server looks.
  const long here = OpenAt(AT_FDCWD, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (here < 0) return Closed(s);
  alignas(CmsgHdr) char control[sizeof(CmsgHdr) + 4 * sizeof(int)] = {};
  CmsgHdr* rights = reinterpret_cast<CmsgHdr*>(control);
  rights->length = sizeof(CmsgHdr) + 4 * sizeof(int);
  rights->level = kSolSocket;
  rights->type = kScmRights;
  int* fds = reinterpret_cast<int*>(control + sizeof(CmsgHdr));
  fds[0] = 0, fds[1] = 1, fds[2] = 2, fds[3] = static_cast<int>(here);
  // Before the command can run: whatever it does, the terminal ends as it was (restored once
  // the server answered; a command that never ran changed nothing).
  TerminalState terminal;
  terminal.Save();
  const bool sent = SendAll(s, iov, n, control, sizeof control);
  Close(static_cast<int>(here));
  if (!sent) return Closed(s);
  // Nothing has run before kAccepted: any other answer leaves it to the full cordon.
  if (!ReadReply(s, kAcceptWaitMs, reply, timed_out)) {
    if (timed_out) Fail("the run server did not take the command within 30 s (stopped?)", "");
    return Closed(s);
  }
  if (reply.kind != ReplyKind::kAccepted) {
    Close(s);
    return reply.kind == ReplyKind::kRunYourself;
  }
  const long wait = static_cast<long>(reply.wait_seconds) * 1000 + kReplyGraceMs;
  const bool answered = ReadReply(s, wait, reply, timed_out);
  terminal.Restore();
  if (!answered) {
    if (timed_out) {
      PathText message;  // the full client's words (server/client.cc)
      message.Add("the run server did not answer within ")
          .AddNumber(static_cast<uint64_t>(wait / 1000))
          .Add(" s (stopped or hung?); giving up, which cancels the command");
      Fail(message.data, "");
    }
    Fail(kVanished, "");
  }
  if (reply.kind == ReplyKind::kRefused) return Closed(s);  // it could not run it: nothing ran
  if (reply.kind != ReplyKind::kRan)
    Fail("the run server sent a second greeting instead of a result", "");
  if (!Relay(s, 1, reply.stdout_bytes) || !Relay(s, 2, reply.stderr_bytes)) {
    Fail(kVanished, "");
  }
  Exit(reply.exit_code & 0xff);
}

// Execs the full cordon as `cordon run --no-server ARGS...`: the server has just declined the
// command line, so the full cordon need not ask it again. A frame of its own, after TryServer's
// has gone (their arrays together would need 400 KiB of stack). TryServer declined only a
// command line of fewer than kMaxParts parts.
[[noreturn]] __attribute__((noinline)) void ExecWithoutServer(const char* full, int argc,
                                                              char** argv, char** envp) {
  char* args[kMaxParts + 2];
  if (argc < 2 || static_cast<size_t>(argc) > kMaxParts) Fail("too many arguments", "");
  args[0] = argv[0];
  args[1] = argv[1];
  args[2] = const_cast<char*>("--no-server");
  for (int i = 2; i <= argc; ++i) args[i + 1] = argv[i];  // with the final null
  (void)Execve(full, args, envp);
  Fail("cannot execute ", full);
}

}  // namespace

extern "C" [[noreturn]] void NolibcMain(long* stack) {
  const int argc = static_cast<int>(stack[0]);
  char** argv = reinterpret_cast<char**>(stack + 1);
  char** envp = argv + argc + 1;
  // The auxiliary vector follows the environment: AT_EXECFN (31) is the path execve was given.
  const char* execfn = nullptr;
  char** end = envp;
  while (*end != nullptr) ++end;
  for (const long* aux = reinterpret_cast<const long*>(end + 1); aux[0] != 0; aux += 2) {
    if (aux[0] == 31) execfn = reinterpret_cast<const char*>(aux[1]);
  }
  PathText full;
  struct statx st {};
  bool located = false;
  if (Servable(argc, argv) && ServerWanted(envp) &&
      TryServer(argc, argv, envp, execfn, full, st, located)) {
    ExecWithoutServer(full.data, argc, argv, envp);  // TryServer located it
  }
  if (!located && !LocateFull(full, st, execfn)) {
    Fail("cannot find the full cordon executable next to this one", "");
  }
  const long error = Execve(full.data, argv, envp);
  Fail("cannot execute ", full.data);
  (void)error;
}

}  // namespace cordon::front

CORDON_NOLIBC_START;
