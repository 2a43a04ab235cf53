#include "linux/exec_stub.h"

#include "linux/exec_wire.h"
#include "linux/mount_id_scanner.h"
#include "nolibc/sys.h"

namespace cordon::linux_native {
namespace {

using namespace nolibc;  // NOLINT: the system calls (no C library: decision 0028)

[[noreturn]] void Fail(int fd, ExecFailureStep step, long err) {
  ExecFailure failure;
  failure.step = static_cast<std::uint32_t>(step);
  failure.err = static_cast<std::int32_t>(err);
  const long n = Send(fd, &failure, sizeof failure);
  Exit(n == static_cast<long>(sizeof failure) ? 127 : 126);
}

// Reads exactly `size` bytes: 0, or -errno (-EPROTO for EOF).
long ReadFully(int fd, char* out, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const long n = Read(fd, out + done, size - done);
    if (n == 0) return -kEproto;
    if (n == -kEintr) continue;
    if (n < 0) return n;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// The header and its descriptors (at most three, close-on-exec). Returns the number of
// descriptors received, or -errno.
long ReceiveHeader(int fd, ExecRequestHeader& header, int (&fds)[3]) {
  // One SCM_RIGHTS message of up to three descriptors: its header, then the ints.
  alignas(CmsgHdr) char control[sizeof(CmsgHdr) + 3 * sizeof(int) + 4] = {};
  Iovec iov{&header, sizeof header};
  MsgHdr msg;
  msg.iov = &iov;
  msg.iov_count = 1;
  msg.control = control;
  msg.control_length = sizeof control;
  long n;
  do {
    n = RecvMsg(fd, &msg, kMsgCmsgCloexec);
  } while (n == -kEintr);
  if (n <= 0) return n == 0 ? -kEproto : n;
  int count = 0;
  for (std::size_t at = 0; at + sizeof(CmsgHdr) <= msg.control_length;) {
    CmsgHdr c;
    __builtin_memcpy(&c, control + at, sizeof c);
    if (c.length < sizeof(CmsgHdr) || c.length > msg.control_length - at) break;
    if (c.level == kSolSocket && c.type == kScmRights) {
      const std::size_t ints = (c.length - sizeof(CmsgHdr)) / sizeof(int);
      for (std::size_t i = 0; i < ints && count < 3; ++i) {
        __builtin_memcpy(&fds[count++], control + at + sizeof(CmsgHdr) + i * sizeof(int),
                         sizeof(int));
      }
    }
    at += (c.length + 7) & ~std::size_t{7};
  }
  if ((msg.flags & kMsgCtrunc) != 0) return -kEproto;
  // The rest of the header, if the stream split it.
  if (static_cast<std::size_t>(n) < sizeof header) {
    const long rest = ReadFully(fd, reinterpret_cast<char*>(&header) + n,
                                sizeof header - static_cast<std::size_t>(n));
    if (rest < 0) return rest;
  }
  return count;
}

// Splits `count` NUL-terminated strings off the front of [*at, end) into `out`, followed by a
// null pointer; false when the body holds fewer.
bool TakeStrings(char*& at, const char* end, std::uint32_t count, char** out) {
  for (std::uint32_t i = 0; i < count; ++i) {
    char* nul = at;
    while (nul < end && *nul != '\0') ++nul;
    if (nul == end) return false;
    out[i] = at;
    at = nul + 1;
  }
  out[count] = nullptr;
  return true;
}

// The mount keys of this process's view (linux/mount_id_scanner.h: each line of
// /proc/self/mountinfo hashed by mount ID, parent and device) into `ids`:
// how many, or -errno (-E2BIG beyond `capacity`). A mask whose file the host renamed over or
// unlinked is detached from every view by the kernel, so its key is gone from the list taken
// when the sandbox was ready (zygote/mount_ids.h), even when the kernel gave its ID to a mount
// made since (a placeholder cover); mounts added since only add keys.
long ReadMountIds(unsigned long* ids, long capacity) {
  const long fd = OpenAt(AT_FDCWD, "/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fd;
  char buffer[4096];
  long count = 0;
  MountIdScanner scanner;
  for (;;) {
    const long n = Read(static_cast<int>(fd), buffer, sizeof buffer);
    if (n == -kEintr) continue;
    const bool fits = n > 0 && scanner.Feed(buffer, n, [&](unsigned long id) {
      if (count == capacity) return false;
      ids[count++] = id;
      return true;
    });
    if (n <= 0 || !fits) {
      Close(static_cast<int>(fd));
      if (n > 0) return -kE2big;
      return n < 0 ? n : count;
    }
  }
}

// Every mount of the view as it was built is still there (a bounded, allocation-free check):
// 0; -ESTALE when one is gone; -errno when a list cannot be read, -E2BIG for a view of more
// than kMaxMounts (the session then stops preparing sandboxes: zygote_slot.cc).
constexpr long kMaxMounts = 2048;
unsigned long g_built[kMaxMounts];  // this process's only thread; no heap (decision 0028)
unsigned long g_now[kMaxMounts];

long CheckMounts(long built) {
  if (built < 0) return built;
  const long now = ReadMountIds(g_now, kMaxMounts);
  if (now < 0) return now;
  for (long i = 0; i < built; ++i) {
    bool found = false;
    for (long j = 0; j < now && !found; ++j) found = g_now[j] == g_built[i];
    if (!found) return -kEstale;
  }
  return 0;
}

int PopCount3(std::uint32_t mask) {
  return static_cast<int>((mask & 1) + ((mask >> 1) & 1) + ((mask >> 2) & 1));
}

}  // namespace

void RunExecStub(int request_fd) {
  // The request socket must not reach the command: its close at execve is what tells the
  // supervisor the command started.
  if (Fcntl(request_fd, kFSetfd, kFdCloexec) != 0) Exit(126);
  // The view as the sandbox was built (its last mount came before this exec).
  const long mounts = ReadMountIds(g_built, kMaxMounts);
  ExecRequestHeader header{};
  header.magic = 0;
  int fds[3] = {-1, -1, -1};
  const long received = ReceiveHeader(request_fd, header, fds);
  if (received < 0) Fail(request_fd, ExecFailureStep::kRequest, -received);
  const std::uint64_t strings =
      std::uint64_t{header.argc} + header.envc + header.pathc;  // no overflow in 64 bits
  if (header.magic != kExecRequestMagic || (header.stdio_mask & ~7u) != 0 ||
      PopCount3(header.stdio_mask) != received || header.argc == 0 || header.pathc == 0) {
    Fail(request_fd, ExecFailureStep::kRequest, kEproto);
  }
  if (header.body_bytes > kExecRequestMaxBody || strings > kExecRequestMaxStrings) {
    Fail(request_fd, ExecFailureStep::kRequest, kEmsgsize);
  }
  // One mapping for the strings, one for the three pointer arrays (each null-terminated).
  const std::size_t body_size = header.body_bytes == 0 ? 1 : header.body_bytes;
  const long body = MapAnonymous(body_size);
  const long table = MapAnonymous((strings + 3) * sizeof(char*));
  if (body < 0) Fail(request_fd, ExecFailureStep::kRequest, -body);
  if (table < 0) Fail(request_fd, ExecFailureStep::kRequest, -table);
  char* at = reinterpret_cast<char*>(body);
  if (const long read = ReadFully(request_fd, at, header.body_bytes); read < 0) {
    Fail(request_fd, ExecFailureStep::kRequest, -read);
  }
  const char* end = at + header.body_bytes;
  char** argv = reinterpret_cast<char**>(table);
  char** envp = argv + header.argc + 1;
  char** paths = envp + header.envc + 1;
  const char* cwd = at;
  while (at < end && *at != '\0') ++at;
  if (at == end) Fail(request_fd, ExecFailureStep::kRequest, kEproto);
  ++at;
  if (!TakeStrings(at, end, header.argc, argv) || !TakeStrings(at, end, header.envc, envp) ||
      !TakeStrings(at, end, header.pathc, paths) || at != end) {
    Fail(request_fd, ExecFailureStep::kRequest, kEproto);
  }
  // The caller's descriptors on 0..2 (each received one is above 2: 0..2 were open).
  int next = 0;
  for (int i = 0; i < 3; ++i) {
    if ((header.stdio_mask & (1u << i)) == 0) continue;
    const int fd = fds[next++];
    if (const long r = Dup3(fd, i); r != i) Fail(request_fd, ExecFailureStep::kStdio, -r);
    Close(fd);
  }
  if (const long r = Chdir(cwd); r != 0) Fail(request_fd, ExecFailureStep::kChdir, -r);
  // The last check before the command: every mask still in place.
  if (const long lost = CheckMounts(mounts); lost != 0) {
    Fail(request_fd, ExecFailureStep::kMounts, -lost);
  }
  // execvp's search over candidates resolved by the supervisor: EACCES on one is remembered
  // but the search goes on; any other error than "not there" ends it.
  long saved = kEnoent;
  for (std::uint32_t i = 0; i < header.pathc; ++i) {
    const long err = -Execve(paths[i], argv, envp);
    if (err == kEacces) {
      saved = kEacces;
    } else if (err != kEnoent && err != kEnotdir) {
      saved = err;
      break;
    }
  }
  Fail(request_fd, ExecFailureStep::kExecve, saved);
}

}  // namespace cordon::linux_native
