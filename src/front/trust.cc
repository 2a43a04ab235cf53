#include "front/trust.h"

#include "front/text.h"
#include "nolibc/sys.h"
#include "server/trust_rule.h"

namespace cordon::front {
using namespace nolibc;  // NOLINT: the system calls
namespace {

server::TrustFacts Facts(const Confinement& c) {
  return {c.uid, c.no_new_privs != 0, c.seccomp_filters, c.pid_namespace_depth};
}

// The text after "Name:" at the start of a line, or nullptr.
const char* Field(const char* status, const char* name) {
  const char* line = status;
  while (*line != '\0') {
    if (const char* rest = After(line, name); rest != nullptr && *rest == ':') return rest + 1;
    while (*line != '\0' && *line != '\n') ++line;
    if (*line == '\n') ++line;
  }
  return nullptr;
}

// Parses the numbers of a field (tab or space separated, up to the end of its line) into
// `values`; returns how many there were, or -1 when a field is not a number.
long Numbers(const char* text, long* values, long capacity) {
  long count = 0;
  for (;;) {
    while (*text == '\t' || *text == ' ') ++text;
    if (*text == '\n' || *text == '\0') return count;
    if (*text < '0' || *text > '9') return -1;
    long value = 0;
    for (int digits = 0; *text >= '0' && *text <= '9'; ++digits) {
      if (digits == 18) return -1;  // no field of /proc/PID/status is that long
      value = value * 10 + (*text++ - '0');
    }
    if (count < capacity) values[count] = value;
    ++count;
  }
}

bool Number(const char* status, const char* name, long index, long& out) {
  const char* field = Field(status, name);
  if (field == nullptr) return false;
  long values[8];
  const long count = Numbers(field, values, 8);
  if (count <= index || index >= 8) return false;
  out = values[index];
  return true;
}

// The "Pid:" of /proc/self/fdinfo/PIDFD: the pidfd's process in this /proc's PID namespace
// (-1 when it has exited, 0 outside the namespace, -2 unreadable).
long PidfdPid(int pidfd) {
  PathText path;
  path.Add("/proc/self/fdinfo/").AddNumber(static_cast<uint64_t>(pidfd));
  const long fd = path.ok ? OpenAt(AT_FDCWD, path.data, O_RDONLY | O_CLOEXEC) : -1;
  if (fd < 0) return -2;
  char text[1024];
  const long n = Read(static_cast<int>(fd), text, sizeof text - 1);
  Close(static_cast<int>(fd));
  if (n <= 0) return -2;
  text[n] = '\0';
  long pid = -2;
  const char* field = Field(text, "Pid");
  long values[1];
  if (field != nullptr && Numbers(field, values, 1) == 1) pid = values[0];
  return pid;
}

}  // namespace

Confinement ParseStatus(const char* status) {
  Confinement c;
  const char* nspid = Field(status, "NSpid");
  long values[8];
  const long depth = nspid == nullptr ? -1 : Numbers(nspid, values, 8);
  c.known = Number(status, "Uid", 1, c.uid) && Number(status, "NoNewPrivs", 0, c.no_new_privs) &&
            Number(status, "Seccomp_filters", 0, c.seccomp_filters) && depth >= 1;
  c.pid_namespace_depth = depth;
  return c;
}

Confinement ReadConfinement(int proc_dir) {
  char status[8192];
  const long fd = OpenAt(proc_dir, "status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  size_t got = 0;
  for (;;) {
    const long n = Read(static_cast<int>(fd), status + got, sizeof status - 1 - got);
    if (n == -kEintr) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
    if (got == sizeof status - 1) break;
  }
  Close(static_cast<int>(fd));
  status[got] = '\0';
  return ParseStatus(status);
}

bool ServerIsTrusted(int socket, const Confinement& own, const struct statx& executable) {
  if (!own.known) return false;
  int pidfd = -1;
  unsigned length = sizeof pidfd;
  if (GetSockOpt(socket, kSoPeerPidfd, &pidfd, &length) != 0 || pidfd < 0) return false;
  Ucred cred{};
  length = sizeof cred;
  bool trusted = false;
  if (GetSockOpt(socket, kSoPeercred, &cred, &length) == 0 && cred.pid > 0) {
    PathText proc;
    proc.Add("/proc/").AddNumber(static_cast<uint64_t>(cred.pid));
    // /proc/PID must name the pidfd's process in the PID namespace of this /proc (the peer's
    // pid as the socket gives it is in ours, which a /proc of another namespace would not
    // share): /proc/self/fdinfo says which pid the pidfd has there.
    const long dir = proc.ok && PidfdPid(pidfd) == cred.pid
                         ? OpenAt(AT_FDCWD, proc.data, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                         : -1;
    // The directory was opened while the pidfd's process lived: it is that process's.
    if (dir >= 0 && PidfdSendSignal(pidfd, 0) == 0) {
      const Confinement server = ReadConfinement(static_cast<int>(dir));
      struct statx exe {};
      trusted = server.known && own.known &&
                server::Judge(Facts(own), Facts(server)) == server::Distrust::kNone &&
                Statx(static_cast<int>(dir), "exe", 0, &exe) == 0 &&
                exe.stx_ino == executable.stx_ino &&
                exe.stx_dev_major == executable.stx_dev_major &&
                exe.stx_dev_minor == executable.stx_dev_minor;
    }
    if (dir >= 0) Close(static_cast<int>(dir));
  }
  Close(pidfd);
  return trusted;
}

}  // namespace cordon::front
