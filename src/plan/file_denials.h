// What refused a write the write observer reported (exec/write_observer.h), and what would
// allow it, read from the plan that made the view: the mount over the target (a `.git` or
// host-run file bound read-only, a hidden path's mask, the hidden home, the read-only
// workspace of read_only mode), or no mount of the plan at all (the read-only tree outside the
// writable areas; Landlock's refusal in the fallback). Pure.
#pragma once

#include <filesystem>
#include <vector>

#include "cordon/run.h"
#include "plan/launch_plan.h"

namespace cordon::plan {

// Fills `rule` and `fix` of each file-system denial (layer "mount view" or "landlock") that has
// none. A fix never widens to a secret store, a home, `/`, a system directory or a protected
// path: those say "by design" and the alternative. `caller_home`: the real home, which a
// read-only (not hidden) home view shows at its own path.
void ExplainFileDenials(const LaunchPlan& plan, const std::filesystem::path& caller_home,
                        std::vector<Denial>& denials);

}  // namespace cordon::plan
