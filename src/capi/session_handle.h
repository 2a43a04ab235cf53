// Internals of the C API: the handle behind cordon_session*, the per-thread last error and the
// string helpers. Everything here is called only from inside the try blocks of cordon_c.cc.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "cordon/cordon.h"
#include "cordon/error.h"
#include "cordon/session.h"

// The opaque handle of cordon.h (global namespace: the C header declares it there).
struct cordon_session {
  cordon::Session session;
};

namespace cordon::capi {

// cordon_status for an Error: ErrorCode + 1 (the header promises these values).
int StatusFor(ErrorCode code);

// Records `message` as this thread's last error and returns `status`.
int SetLastError(int status, std::string_view message);
void ClearLastError();
const char* LastError();

// Copies `message` into a caller buffer, truncating and always NUL-terminating (when len > 0).
void CopyMessage(std::string_view message, char* buffer, std::size_t len);

// A malloc'd NUL-terminated copy, released by cordon_string_free. nullptr when out of memory.
char* DupString(std::string_view text);

// Loads the configuration (the user's file when config_json is null, else the JSON text) and
// creates the session. Reads HOME/XDG_CONFIG_HOME: the C API is an edge like the CLI's main.
[[nodiscard]] Result<Session> OpenSession(const char* config_json, const char* workspace);

}  // namespace cordon::capi
