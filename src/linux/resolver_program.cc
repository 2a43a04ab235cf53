#include "linux/resolver_program.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>

#include <cerrno>
#include <mutex>
#include <string>
#include <utility>

#include "core/paths.h"
#include "core/syscall_error.h"
#include "core/unique_fd.h"
#include "linux/helper_program.h"
#include "linux/system_headers/syscalls.h"

namespace cordon::linux_native {
namespace {

using core::UniqueFd;

HelperProgram& Resolver() {
  static auto* program = new HelperProgram(kResolverName, "resolver");  // never destroyed
  return *program;
}

std::unexpected<Error> Unavailable(const std::string& problem) {
  return Fail(ErrorCode::kUnavailable,
              fmt::format("network by domain needs {0}, which answers the sandbox's lookups, "
                          "and none is usable: {1}; install {0} beside cordon (in "
                          "libexec/cordon/, as the package does), or choose another network "
                          "mode (--network deny)",
                          kResolverName, problem));
}

// A copy of the program held at `program` (O_PATH) in a memfd sealed against every change.
Result<UniqueFd> SealedCopy(int program, const std::filesystem::path& path) {
  UniqueFd file(::open(fmt::format("/proc/self/fd/{}", program).c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) return core::FailSyscall("open", path.string());
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) return core::FailSyscall("fstat", path.string());
  const unsigned flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
  UniqueFd copy(::memfd_create(kResolverName, flags | sys::kMfdExec));
  if (!copy && errno == EINVAL) copy.Reset(::memfd_create(kResolverName, flags));  // < 6.3
  if (!copy) {
    return core::FailSyscall("memfd_create",
                             fmt::format("{} (a sealed copy to run; vm.memfd_noexec=2 forbids "
                                         "that)",
                                         kResolverName));
  }
  off_t offset = 0;
  while (offset < info.st_size) {
    const ssize_t n = ::sendfile(copy.get(), file.get(), &offset,
                                 static_cast<std::size_t>(info.st_size - offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return core::FailSyscall("sendfile", path.string() + " into its sealed copy");
  }
  if (::fcntl(copy.get(), F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) !=
      0) {
    return core::FailSyscall("fcntl", "F_ADD_SEALS, the sealed copy of " + path.string());
  }
  return copy;
}

// The copies made, one per file looked up (a launch may still start an older one); kept for
// the life of the process.
std::mutex g_copies_mutex;
int g_copied_from = -1;  // the O_PATH descriptor of the file the last copy was taken from
int g_copy = -1;

}  // namespace

void SetResolverPath(std::filesystem::path path) { Resolver().SetPath(std::move(path)); }

Result<int> ResolverProgramFor(const plan::LaunchPlan& plan) {
  const HelperProgram::Snapshot found = Resolver().Get();
  if (found.fd < 0) return Unavailable(found.problem);
  for (const plan::MountOp& op : plan.mounts) {
    if (op.kind == plan::MountOpKind::kBindWritable && core::IsWithin(found.path, op.path)) {
      return Unavailable(
          fmt::format("{} lies inside {}, which this run may write, and runs outside the sandbox",
                      found.path.string(), op.path.string()));
    }
  }
  std::lock_guard lock(g_copies_mutex);
  if (g_copied_from != found.fd) {
    Result<UniqueFd> copy = SealedCopy(found.fd, found.path);
    if (!copy) return Unavailable(copy.error().message);
    g_copy = copy->Release();  // never closed: see g_copies_mutex
    g_copied_from = found.fd;
  }
  return g_copy;
}

std::filesystem::path ResolverPath() { return Resolver().Get().path; }

std::string ResolverProblem() { return Resolver().Get().problem; }

}  // namespace cordon::linux_native
