#include "server/context.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <vector>

#include "core/unique_fd.h"

namespace cordon::server {
namespace {

// <linux/ioprio.h>: ioprio_get(IOPRIO_WHO_PROCESS, pid).
constexpr int kIoprioWhoProcess = 1;
// Largest cgroup, limits or attr/current text read; the real ones are far smaller.
constexpr std::size_t kFileMax = 8192;
// kContextNamespaces in words.
constexpr std::array<const char*, kContextNamespaces.size()> kNamespaceWords = {
    "mount", "network", "user", "IPC", "UTS", "cgroup", "PID", "time"};

std::optional<FileId> Stat(int proc_dir, const char* name) {
  struct stat st {};
  if (::fstatat(proc_dir, name, &st, 0) != 0) return std::nullopt;
  return FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

// The namespace /proc/PID/<name> ("ns/net") names, by its inode: the link reads "net:[INODE]"
// (every namespace lives on the one nsfs: the inode is enough). Reading the link is half the
// cost of stat, which opens the namespace.
std::optional<FileId> Namespace(int proc_dir, const char* name) {
  char link[64];
  const ssize_t n = ::readlinkat(proc_dir, name, link, sizeof link - 1);
  if (n <= 0) return std::nullopt;
  const std::string_view text(link, static_cast<std::size_t>(n));
  const std::size_t open = text.find(":[");
  if (open == std::string_view::npos || text.back() != ']') {
    errno = EINVAL;  // not "absent"
    return std::nullopt;
  }
  FileId id;
  const char* first = text.data() + open + 2;
  const char* last = text.data() + text.size() - 1;
  auto [end, ec] = std::from_chars(first, last, id.ino);
  if (ec != std::errc() || end != last) {
    errno = EINVAL;
    return std::nullopt;
  }
  return id;
}

// The text of a small /proc file; nullopt with `error` set when it cannot be read.
std::optional<std::string> ReadSmall(int proc_dir, const char* name, int& error) {
  core::UniqueFd fd(::openat(proc_dir, name, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    error = errno;
    return std::nullopt;
  }
  char text[kFileMax];
  std::size_t got = 0;
  while (got < sizeof text) {
    const ssize_t n = ::read(fd.get(), text + got, sizeof text - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno;
      return std::nullopt;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return std::string(text, got);
}

// Fields 19 (nice), 40 (rt_priority) and 41 (policy) of a /proc/PID/stat text, counted after
// the command name in parentheses (which may hold spaces and parentheses itself).
std::optional<std::string> Scheduling(std::string_view stat) {
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> fields;  // fields[0] is field 3 (state)
  std::size_t at = close + 1;
  while (at < stat.size()) {
    while (at < stat.size() && (stat[at] == ' ' || stat[at] == '\n')) ++at;
    const std::size_t end = stat.find_first_of(" \n", at);
    if (at < stat.size())
      fields.push_back(
          stat.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    at = end == std::string_view::npos ? stat.size() : end;
  }
  if (fields.size() < 41 - 2) return std::nullopt;
  return fmt::format("nice {} rt_priority {} policy {}", fields[19 - 3], fields[40 - 3],
                     fields[41 - 3]);
}

std::string Lines(std::string_view status, std::initializer_list<std::string_view> names) {
  std::string text;
  for (std::string_view name : names) {
    text += fmt::format("{}:{}\n", name, StatusField(status, name));
  }
  return text;
}

}  // namespace

std::string_view StatusField(std::string_view status, std::string_view name) {
  std::size_t at = 0;
  while (at < status.size()) {
    std::size_t end = status.find('\n', at);
    if (end == std::string_view::npos) end = status.size();
    std::string_view line = status.substr(at, end - at);
    if (line.size() > name.size() && line.starts_with(name) && line[name.size()] == ':') {
      line.remove_prefix(name.size() + 1);
      return line;
    }
    at = end + 1;
  }
  return {};
}

Context ReadContext(int pid, int proc_dir, std::string_view status) {
  Context c;
  c.credentials =
      Lines(status, {"Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"});
  c.restrictions = Lines(status, {"NoNewPrivs", "Seccomp", "Seccomp_filters",
                                  "Speculation_Store_Bypass", "SpeculationIndirectBranch"});
  c.umask = Lines(status, {"Umask"});
  c.affinity = Lines(status, {"Cpus_allowed_list", "Mems_allowed_list"});
  std::optional<FileId> root = Stat(proc_dir, "root");
  if (!root) return c;
  c.root = *root;
  for (std::size_t i = 0; i < kContextNamespaces.size(); ++i) {
    const std::string name = std::string("ns/") + kContextNamespaces[i];
    std::optional<FileId> ns = Namespace(proc_dir, name.c_str());
    // A kernel without time namespaces has no time_for_children: the same for both ends.
    if (!ns && errno != ENOENT) return c;
    if (ns) c.namespaces[i] = *ns;
  }
  int error = 0;
  std::optional<std::string> cgroup = ReadSmall(proc_dir, "cgroup", error);
  std::optional<std::string> limits = ReadSmall(proc_dir, "limits", error);
  if (!cgroup || !limits) return c;
  c.cgroup = std::move(*cgroup);
  c.limits = std::move(*limits);
  std::optional<std::string> stat = ReadSmall(proc_dir, "stat", error);
  std::optional<std::string> oom = ReadSmall(proc_dir, "oom_score_adj", error);
  std::optional<std::string> scheduling = stat ? Scheduling(*stat) : std::nullopt;
  errno = 0;
  const long ioprio = ::syscall(SYS_ioprio_get, kIoprioWhoProcess, pid);
  if (!scheduling || !oom || ioprio < 0) return c;
  c.scheduling = fmt::format("{} ioprio {} oom_score_adj {}", *scheduling, ioprio, *oom);
  // EINVAL without a security module that keeps a label: the same for every process.
  std::optional<std::string> lsm = ReadSmall(proc_dir, "attr/current", error);
  c.lsm = lsm ? std::move(*lsm) : fmt::format("(unreadable: {})", std::strerror(error));
  c.known = true;
  return c;
}

std::string ContextMismatch(const Context& own, const Context& other) {
  if (!own.known || !other.known) return "its namespaces, cgroup or limits are not readable here";
  for (std::size_t i = 0; i < kContextNamespaces.size(); ++i) {
    if (own.namespaces[i] != other.namespaces[i]) {
      return fmt::format("it runs in another {} namespace", kNamespaceWords[i]);
    }
  }
  if (own.root != other.root) return "it runs under another root directory (chroot)";
  if (own.credentials != other.credentials) {
    return "it runs with other user or group ids or capabilities";
  }
  if (own.restrictions != other.restrictions) {
    return "it runs under other no_new_privs, seccomp or speculation settings";
  }
  if (own.cgroup != other.cgroup) return "it runs in another cgroup";
  if (own.limits != other.limits) return "it runs with other resource limits";
  if (own.lsm != other.lsm) return "it runs under another security label";
  if (own.umask != other.umask) return "it runs with another umask";
  if (own.affinity != other.affinity) return "it runs with another CPU or memory-node affinity";
  if (own.scheduling != other.scheduling) {
    return "it runs with another scheduling or I/O priority or OOM score adjustment";
  }
  return {};
}

}  // namespace cordon::server
