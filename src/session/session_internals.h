// What cordon's own layers (the run server) read of a Session beyond its public interface.
#pragma once

#include "cordon/session.h"
#include "session/session_state.h"

namespace cordon {

struct SessionInternals {
  static const Session::State& StateOf(const Session& session) { return *session.state_; }
};

}  // namespace cordon
