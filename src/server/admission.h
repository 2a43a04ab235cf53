// Whether the run server makes a session for a workspace it keeps none for (decision 0054).
// A new session costs more than a one-shot run (the kernel probed, a zygote started, a sandbox
// prepared), and past kMaxSessions it drops the least recently used one — which, when every
// kept session is busy, is a session another agent needs again at once: each command then
// pays for a session and the machine does less than without the server. So a new session is
// made only while there is room, or when a kept session is idle (no command running in it, none
// for kIdleBeforeEviction while others run), which it replaces; otherwise the client runs the
// command itself, one-shot, sandboxed the same way, for nothing more than a one-shot run costs.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

namespace cordon::server {

inline constexpr std::chrono::milliseconds kIdleBeforeEviction{500};

// `kept`: sessions kept now; `oldest_idle_end`: when the least recently used session that runs
// no command ended its last one (nullopt: every kept session runs one); `running`: the commands
// all kept sessions run now. True: room, or an idle session to drop — at once when nothing runs
// anywhere (one client at a time: a new session costs only it), else once it has been idle for
// kIdleBeforeEviction (an agent sends its next command sooner).
bool AdmitsNewSession(std::size_t kept, std::size_t limit,
                      std::optional<std::chrono::steady_clock::time_point> oldest_idle_end,
                      int running, std::chrono::steady_clock::time_point now);

}  // namespace cordon::server
