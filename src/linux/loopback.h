// Brings up "lo" in the sandbox's fresh network namespace (it starts down), so the command's
// own servers and tests can use 127.0.0.1 while nothing leaves the namespace.
#pragma once

#include "linux/error_pipe.h"

namespace cordon::linux_native {

// Needs CAP_NET_ADMIN over the namespace (init has it in its user namespace).
// Async-signal-safe.
StepResult BringUpLoopback();

}  // namespace cordon::linux_native
