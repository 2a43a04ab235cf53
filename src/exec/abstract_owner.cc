#include "exec/abstract_owner.h"

#include <dirent.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/unique_fd.h"

namespace cordon::exec {
namespace {

using core::UniqueFd;

struct DirCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }
};
using Dir = std::unique_ptr<DIR, DirCloser>;

// NLMSG_OK without its mixed-sign comparison (nlmsg_len is unsigned, the length left an int
// that NLMSG_NEXT may take below zero, which ends the walk).
bool MessageFits(const nlmsghdr* h, int left) {
  return left >= static_cast<int>(sizeof(nlmsghdr)) && h->nlmsg_len >= sizeof(nlmsghdr) &&
         h->nlmsg_len <= static_cast<unsigned>(left);
}

// The inodes of the sockets bound to the abstract `name` in this network namespace
// (NETLINK_SOCK_DIAG dump of AF_UNIX with their names).
std::vector<ino_t> SocketsBoundTo(std::string_view name) {
  UniqueFd diag(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (!diag) return {};
  struct {
    nlmsghdr header;
    unix_diag_req body;
  } request{};
  request.header.nlmsg_len = sizeof request;
  request.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.body.sdiag_family = AF_UNIX;
  request.body.udiag_states = ~0U;
  request.body.udiag_show = UDIAG_SHOW_NAME;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(diag.get(), &request, sizeof request, 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof kernel) != static_cast<ssize_t>(sizeof request)) {
    return {};
  }
  std::vector<ino_t> found;
  alignas(nlmsghdr) char buffer[32768];
  for (;;) {
    int n = static_cast<int>(::recv(diag.get(), buffer, sizeof buffer, 0));
    if (n <= 0) return found;
    for (auto* h = reinterpret_cast<nlmsghdr*>(buffer); MessageFits(h, n); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) return found;
      const auto* msg = static_cast<const unix_diag_msg*>(NLMSG_DATA(h));
      int len = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof *msg));
      for (auto* attr = reinterpret_cast<rtattr*>(const_cast<unix_diag_msg*>(msg + 1));
           RTA_OK(attr, len); attr = RTA_NEXT(attr, len)) {
        if (attr->rta_type != UNIX_DIAG_NAME) continue;
        // The bound sun_path bytes; an abstract name starts with NUL.
        const auto* bound = static_cast<const char*>(RTA_DATA(attr));
        const std::size_t bound_len = RTA_PAYLOAD(attr);
        if (bound_len == name.size() + 1 && bound[0] == '\0' &&
            std::memcmp(bound + 1, name.data(), name.size()) == 0) {
          found.push_back(static_cast<ino_t>(msg->udiag_ino));
        }
      }
    }
  }
}

ino_t PidNamespaceOf(const std::string& proc_dir) {
  struct stat st {};
  return ::stat((proc_dir + "/ns/pid").c_str(), &st) == 0 ? st.st_ino : 0;
}

// The descriptor numbers by which the process at `proc_dir` holds one of `inodes`' sockets.
std::vector<std::pair<int, ino_t>> HeldSockets(const std::string& proc_dir,
                                               const std::vector<ino_t>& inodes) {
  std::vector<std::pair<int, ino_t>> held;
  Dir fds(::opendir((proc_dir + "/fd").c_str()));
  if (!fds) return held;
  char target[64];
  while (const dirent* entry = ::readdir(fds.get())) {
    if (entry->d_name[0] == '.') continue;
    const ssize_t n = ::readlinkat(::dirfd(fds.get()), entry->d_name, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    for (ino_t inode : inodes) {
      if (("socket:[" + std::to_string(inode) + "]") == target) {
        held.emplace_back(std::atoi(entry->d_name), inode);
      }
    }
  }
  return held;
}

// A descriptor of socket `inode` taken from process `pid` (pidfd_getfd: the same open file);
// invalid when the process is gone or the number now names another file.
UniqueFd TakeSocket(pid_t pid, int fd, ino_t inode) {
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) return {};
  UniqueFd socket(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
  struct stat st {};
  if (!socket || ::fstat(socket.get(), &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_ino != inode) {
    return {};
  }
  return socket;
}

}  // namespace

UniqueFd HoldSandboxAbstractSocket(pid_t tid, std::string_view name) {
  const ino_t sandbox = PidNamespaceOf("/proc/" + std::to_string(tid));
  if (sandbox == 0 || sandbox == PidNamespaceOf("/proc/self")) return {};
  const std::vector<ino_t> inodes = SocketsBoundTo(name);
  if (inodes.empty()) return {};
  Dir proc(::opendir("/proc"));
  if (!proc) return {};
  while (const dirent* entry = ::readdir(proc.get())) {
    if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) continue;
    const std::string dir = std::string("/proc/") + entry->d_name;
    if (PidNamespaceOf(dir) != sandbox) continue;
    for (const auto& [fd, inode] : HeldSockets(dir, inodes)) {
      // Alive while we hold it, so still bound: a unix socket keeps its name until released.
      if (UniqueFd socket = TakeSocket(std::atoi(entry->d_name), fd, inode)) return socket;
    }
  }
  return {};
}

}  // namespace cordon::exec
