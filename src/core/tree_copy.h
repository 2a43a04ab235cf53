// Copies what a host directory tree has and a tool cache lacks (`cordon cache seed`, decision
// 0049). The destination is a directory sandboxed commands write, so it is walked as file_tree.h
// walks it: never following a link, each directory opened relative to its parent's descriptor,
// nothing that is there replaced. The source is only read, and only its directories and
// regular files are copied: a link or a special file in it is left out, so the copy never
// reaches beyond the tree it names.
#pragma once

#include <cstdint>
#include <filesystem>

#include "cordon/error.h"

namespace cordon::core {

struct CopyCounts {
  std::uint64_t files = 0;    // regular files copied
  std::uint64_t bytes = 0;    // their size
  std::uint64_t kept = 0;     // names the destination had already (never replaced)
  std::uint64_t skipped = 0;  // links and special files in the source; destination places
                              // that are not a directory where one is needed, or not writable
};

// Copies the tree below the directory `source` into `destination_root`/`destination` (a
// relative path; its missing directories are made, 0700), only the names missing there. The
// source's own path is followed through no symbolic link either (its caller resolves the links
// it trusts, such as those above the home): a source with one fails with ELOOP or ENOTDIR. Files
// are written under a temporary name and linked into place, so a name made meanwhile is kept
// and a half-written file never shows; each keeps its owner's permission bits. A source that
// does not exist copies nothing.
[[nodiscard]] Result<CopyCounts> CopyMissing(const std::filesystem::path& source,
                                             const std::filesystem::path& destination_root,
                                             const std::filesystem::path& destination);

}  // namespace cordon::core
