#include "linux/init_reaper.h"

#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/paths.h"
#include "core/syscall_error.h"
#include "core/trusted_path.h"
#include "core/unique_fd.h"

namespace cordon::linux_native {
namespace {

namespace fs = std::filesystem;

struct Reaper {
  core::UniqueFd fd;  // O_PATH of the trusted binary; invalid: none usable
  fs::path path;      // canonical
  std::string problem;
};

// Lookups are rare (once per process, again after SetInitReaperPath); launches read the result
// concurrently. Replaced results are kept, not closed: a launch may still be using the old fd.
std::mutex g_mutex;
fs::path g_preferred;
Reaper* g_current = nullptr;
std::vector<std::unique_ptr<Reaper>>& AllReapers() {
  static auto* all = new std::vector<std::unique_ptr<Reaper>>();  // never destroyed
  return *all;
}

// The ELF machine cordon-init must be built for; 0: not checked on this architecture.
#if defined(__x86_64__)
constexpr std::uint16_t kElfMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr std::uint16_t kElfMachine = EM_AARCH64;
#else
constexpr std::uint16_t kElfMachine = 0;
#endif

// init may share the supervisor's memory until it execs the reaper, and then must not survive
// a failed exec (decision 0025): a file the kernel would refuse to run (a script, a truncated
// copy, another architecture's binary) is not used at all.
Result<void> CheckRunnableElf(const fs::path& path, const struct stat& held) {
  core::UniqueFd file(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!file.valid()) return core::FailSyscall("open", path.string());
  struct stat opened {};
  if (::fstat(file.get(), &opened) != 0 || opened.st_dev != held.st_dev ||
      opened.st_ino != held.st_ino) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("{} changed while it was checked", path.string()));
  }
  Elf64_Ehdr header{};
  const ssize_t n = ::pread(file.get(), &header, sizeof header, 0);
  const bool elf = n == static_cast<ssize_t>(sizeof header) &&
                   std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 &&
                   header.e_ident[EI_CLASS] == ELFCLASS64 &&
                   (header.e_type == ET_EXEC || header.e_type == ET_DYN) &&
                   (kElfMachine == 0 || header.e_machine == kElfMachine);
  if (!elf) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("{} is not an ELF executable for this machine", path.string()));
  }
  return {};
}

// Opens `candidate` if it is a trusted, executable regular file with a single link (a second
// name elsewhere, say in a workspace, would let a sandboxed command rewrite it).
Result<Reaper> Open(const fs::path& candidate) {
  CORDON_TRY(fs::path canonical, core::Canonical(candidate));
  Reaper r;
  r.fd.Reset(::open(canonical.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!r.fd.valid()) return core::FailSyscall("open", canonical.string());
  CORDON_TRY_VOID(core::CheckTrustedPath(canonical, ::getuid(), {}));
  struct stat held {};
  struct stat named {};
  if (::fstat(r.fd.get(), &held) != 0 || ::lstat(canonical.c_str(), &named) != 0 ||
      held.st_dev != named.st_dev || held.st_ino != named.st_ino) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("{} changed while it was checked", canonical.string()));
  }
  if (!S_ISREG(held.st_mode) || (held.st_mode & S_IXUSR) == 0 || held.st_nlink != 1) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("{} is not a single-link executable file", canonical.string()));
  }
  CORDON_TRY_VOID(CheckRunnableElf(canonical, held));
  r.path = std::move(canonical);
  return r;
}

Reaper Locate(const fs::path& preferred) {
  std::vector<fs::path> candidates;
  if (!preferred.empty()) {
    candidates.push_back(preferred);
  } else if (Result<fs::path> self = core::Canonical("/proc/self/exe")) {
    const fs::path dir = self->parent_path();
    candidates = {dir / kInitReaperName, dir.parent_path() / "libexec/cordon" / kInitReaperName,
                  dir.parent_path() / "linux" / kInitReaperName};
  }
  std::string problem;
  for (const fs::path& candidate : candidates) {
    Result<Reaper> r = Open(candidate);
    if (r) return *std::move(r);
    problem += (problem.empty() ? "" : "; ") + r.error().message;
  }
  Reaper none;
  none.problem = problem.empty() ? std::string(kInitReaperName) + " not found" : problem;
  return none;
}

// Both name the same trusted file by the same path.
bool SameFile(const Reaper& a, const Reaper& b) {
  struct stat sa {};
  struct stat sb {};
  return a.fd.valid() && b.fd.valid() && a.path == b.path && ::fstat(a.fd.get(), &sa) == 0 &&
         ::fstat(b.fd.get(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

const Reaper& Current() {
  std::lock_guard lock(g_mutex);
  if (g_current == nullptr) {
    Reaper found = Locate(g_preferred);
    // A lookup that found the file already held (the path named again) reuses that descriptor:
    // each kept one would otherwise be a descriptor for the life of the process.
    std::vector<std::unique_ptr<Reaper>>& all = AllReapers();
    if (all.empty() || !SameFile(*all.back(), found)) {
      all.push_back(std::make_unique<Reaper>(std::move(found)));
    }
    g_current = all.back().get();
  }
  return *g_current;
}

}  // namespace

void SetInitReaperPath(fs::path path) {
  std::lock_guard lock(g_mutex);
  g_preferred = std::move(path);
  g_current = nullptr;  // looked up again by the next launch
}

int InitReaperFdFor(const plan::LaunchPlan& plan) {
  // Only where init has nothing left to do on the host: with its own PID namespace (the kernel
  // kills the rest when it exits) and mount namespace (the private tmpfs vanish by themselves).
  // The Landlock-only fallback's init kills orphans and removes its private directory itself.
  if (!plan.namespaces.user || !plan.namespaces.mount || !plan.namespaces.pid) return -1;
  const Reaper& r = Current();
  if (!r.fd.valid()) return -1;
  // In a mount namespace the host paths the command can write are exactly the writable binds
  // (Landlock's /tmp and HOME are private tmpfs there, over the host's).
  for (const plan::MountOp& op : plan.mounts) {
    if (op.kind == plan::MountOpKind::kBindWritable && core::IsWithin(r.path, op.path)) return -1;
  }
  return r.fd.get();
}

std::string InitReaperProblem() { return Current().problem; }

fs::path InitReaperPath() {
  const Reaper& r = Current();
  return r.fd.valid() ? r.path : fs::path();
}

}  // namespace cordon::linux_native
