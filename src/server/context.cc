#include "server/context.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "core/unique_fd.h"

namespace cordon::server {
namespace {

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

// The text of a small /proc file; nullopt with `error` set when it cannot be read.
std::optional<std::string> ReadSmall(int proc_dir, const char* name, int& error) {
  core::UniqueFd fd(::openat(proc_dir, name, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    error = errno;
    return std::nullopt;
  }
  std::string text(kFileMax, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno;
      return std::nullopt;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
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

Context ReadContext(int proc_dir, std::string_view status) {
  Context c;
  c.credentials =
      Lines(status, {"Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"});
  c.umask = Lines(status, {"Umask"});
  c.affinity = Lines(status, {"Cpus_allowed_list", "Mems_allowed_list"});
  std::optional<FileId> root = Stat(proc_dir, "root");
  if (!root) return c;
  c.root = *root;
  for (std::size_t i = 0; i < kContextNamespaces.size(); ++i) {
    const std::string name = fmt::format("ns/{}", kContextNamespaces[i]);
    std::optional<FileId> ns = Stat(proc_dir, name.c_str());
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
  if (own.cgroup != other.cgroup) return "it runs in another cgroup";
  if (own.limits != other.limits) return "it runs with other resource limits";
  if (own.lsm != other.lsm) return "it runs under another security label";
  if (own.umask != other.umask) return "it runs with another umask";
  if (own.affinity != other.affinity) return "it runs with another CPU or memory-node affinity";
  return {};
}

}  // namespace cordon::server
