// The denials a run's own steps decide (docs/denials.md): the command policy's refusal before
// it, the limits it ran into during it. The connect broker adds what it refused
// (exec/connect_broker.h); together they are RunResult::denials.
#pragma once

#include "cordon/run.h"

namespace cordon::session {

// Puts the policy's refusal first and the limits the run reached after what is there.
void AddRunDenials(RunResult& result);

}  // namespace cordon::session
