// Closing a descriptor on a thread of its own, for a descriptor whose last close makes the
// kernel do slow work that the caller need not wait for: the last reference to a sandbox's
// mount namespace, whose close unmounts its whole mount tree (zygote/namespace_hold.h).
#pragma once

#include "core/unique_fd.h"

namespace cordon::core {

// Hands `fd` to the closing thread (started on first use) and returns at once. The descriptor
// is closed soon after, in the order handed over; one still queued when the process exits is
// closed by the exit.
void CloseLater(UniqueFd fd);

// Returns once every descriptor handed over before the call has been closed (for tests).
void WaitForClosed();

}  // namespace cordon::core
