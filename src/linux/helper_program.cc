#include "linux/helper_program.h"

#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "core/paths.h"
#include "core/syscall_error.h"
#include "core/trusted_path.h"
#include "core/unique_fd.h"

namespace cordon::linux_native {

namespace fs = std::filesystem;

struct HelperProgram::Found {
  core::UniqueFd fd;  // O_PATH of the trusted binary; invalid: none usable
  fs::path path;      // canonical
  std::string problem;
};

namespace {

using Found = HelperProgram::Found;

// The ELF machine a helper program must be built for; 0: not checked on this architecture.
#if defined(__x86_64__)
constexpr std::uint16_t kElfMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr std::uint16_t kElfMachine = EM_AARCH64;
#else
constexpr std::uint16_t kElfMachine = 0;
#endif

// init may share the supervisor's memory until it execs the reaper, and then must not survive
// a failed exec (decision 0025): a file the kernel would refuse to run (a script, a truncated
// copy, another architecture's binary) is not used at all. The same holds for every helper.
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
Result<Found> Open(const fs::path& candidate) {
  CORDON_TRY(fs::path canonical, core::Canonical(candidate));
  Found r;
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

Found Locate(const fs::path& preferred, const std::string& name, const std::string& folder) {
  std::vector<fs::path> candidates;
  if (!preferred.empty()) {
    candidates.push_back(preferred);
  } else if (Result<fs::path> self = core::Canonical("/proc/self/exe")) {
    const fs::path dir = self->parent_path();
    candidates = {dir / name, dir.parent_path() / "libexec/cordon" / name,
                  dir.parent_path() / folder / name};
  }
  std::string problem;
  for (const fs::path& candidate : candidates) {
    Result<Found> r = Open(candidate);
    if (r) return *std::move(r);
    problem += (problem.empty() ? "" : "; ") + r.error().message;
  }
  Found none;
  none.problem = problem.empty() ? name + " not found" : problem;
  return none;
}

// Both name the same trusted file by the same path.
bool SameFile(const Found& a, const Found& b) {
  struct stat sa {};
  struct stat sb {};
  return a.fd.valid() && b.fd.valid() && a.path == b.path && ::fstat(a.fd.get(), &sa) == 0 &&
         ::fstat(b.fd.get(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

HelperProgram::HelperProgram(std::string name, std::string build_folder)
    : name_(std::move(name)), build_folder_(std::move(build_folder)) {}

HelperProgram::~HelperProgram() = default;

const HelperProgram::Found& HelperProgram::Current() {
  if (current_ == nullptr) {
    Found found = Locate(preferred_, name_, build_folder_);
    // A lookup that found the file already held (the path named again) reuses that descriptor:
    // each kept one would otherwise be a descriptor for the life of the process.
    if (all_.empty() || !SameFile(*all_.back(), found)) {
      all_.push_back(std::make_unique<Found>(std::move(found)));
    }
    current_ = all_.back().get();
  }
  return *current_;
}

void HelperProgram::SetPath(fs::path path) {
  std::lock_guard lock(mutex_);
  preferred_ = std::move(path);
  current_ = nullptr;  // looked up again by the next launch
}

HelperProgram::Snapshot HelperProgram::Get() {
  std::lock_guard lock(mutex_);
  const Found& found = Current();
  if (!found.fd.valid()) return Snapshot{-1, {}, found.problem};
  return Snapshot{found.fd.get(), found.path, {}};
}

}  // namespace cordon::linux_native
