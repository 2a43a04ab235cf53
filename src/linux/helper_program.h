// A program of cordon's own that it runs by descriptor: cordon-init, which the sandbox's init
// execs (init_reaper.h), and cordon-resolver, which a network-by-domain run's supervisor starts
// (resolver_program.h).
//
//   HelperProgram& program = ...;  // one per program, for the life of the process
//   int fd = program.Fd();         // -1: none usable (program.Problem() says why)
//
// The file is looked up once per process — next to the running executable, in
// ../libexec/cordon, or in the build tree's src/<folder> — trust-checked like bubblewrap
// (core/trusted_path.h: no one but root or the caller can replace it), and must be a
// single-link ELF executable for this machine (a second name elsewhere, say in a workspace,
// would let a sandboxed command rewrite it). It is held open (O_PATH) and run through that
// descriptor, never a path that could change between the check and the exec.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cordon::linux_native {

class HelperProgram {
 public:
  // `name`: the file's name; `build_folder`: where the build tree puts it below src/.
  HelperProgram(std::string name, std::string build_folder);
  ~HelperProgram();
  HelperProgram(const HelperProgram&) = delete;
  HelperProgram& operator=(const HelperProgram&) = delete;

  // Later lookups use the program at `path` only (still trust-checked); empty restores the
  // default search. For test binaries and embedders whose executable does not sit beside it;
  // never settable from any config or environment.
  void SetPath(std::filesystem::path path);

  // What the lookup found, taken together (a SetPath between two calls cannot pair one
  // file's descriptor with another's path).
  struct Snapshot {
    // The trusted program's O_PATH descriptor (close-on-exec, valid for the process's life),
    // or -1 when none was found or it is untrusted.
    int fd = -1;
    std::filesystem::path path;  // canonical; empty when there is none
    std::string problem;         // why there is none ("" when there is one)
  };
  [[nodiscard]] Snapshot Get();

  struct Found;

 private:
  const Found& Current();  // with mutex_ held

  const std::string name_;
  const std::string build_folder_;
  // Lookups are rare (once per process, again after SetPath); launches read the result
  // concurrently. Replaced results are kept, not closed: a launch may still use the old fd.
  std::mutex mutex_;
  std::filesystem::path preferred_;
  const Found* current_ = nullptr;
  std::vector<std::unique_ptr<Found>> all_;
};

}  // namespace cordon::linux_native
