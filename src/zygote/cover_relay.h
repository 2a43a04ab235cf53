// Covering a command's placeholders (linux/placeholder_cover.h) in a sandbox prepared before
// the command came (prepared_command.h): its view was built while the placeholders did not
// exist yet (nothing of them is on the host between commands), so they are covered now, from a
// short-lived child that joins the prepared sandbox's mount namespace and the user namespace
// owning it (NS_GET_USERNS: the session's, which outlives a zygote holder that was replaced),
// before the command is released.
#pragma once

#include <vector>

#include "cordon/error.h"
#include "plan/launch_plan.h"

namespace cordon::zygote {

// `mount_ns`: the prepared sandbox's mount namespace; `home`: the command's private HOME, where
// git's ignore file for the placeholders goes. kUnavailable when the namespaces cannot be
// joined (the sandbox is gone: nothing ran, launch another way); otherwise fails with the
// placeholder and the call's error when one cannot be covered (replaced on the host since it
// was made): the command must not start there.
[[nodiscard]] Result<void> CoverInPreparedView(int mount_ns,
                                               const std::vector<plan::Placeholder>& placeholders,
                                               const std::filesystem::path& home);

}  // namespace cordon::zygote
