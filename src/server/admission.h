// Whether the run server makes a session for a workspace it keeps none for (decision 0054).
// A new session costs more than a one-shot run (the kernel probed, a zygote started, a sandbox
// prepared), and past kMaxSessions it drops the least recently used one — which, when every
// kept session is busy, is a session another agent needs again at once: each command then
// pays for a session and the machine does less than without the server. So a new session is
// made only while there is room, or when the least recently used one is idle (no command
// running, none for kIdleBeforeEviction while others run); otherwise the client runs the command
// itself, one-shot, sandboxed the same way, for nothing more than a one-shot run costs.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

namespace cordon::server {

inline constexpr std::chrono::milliseconds kIdleBeforeEviction{500};

// The least recently used session: commands it runs now, and when its last one ended; and the
// commands all kept sessions run now.
struct LeastRecent {
  int running = 0;
  std::chrono::steady_clock::time_point last_end;
  int running_in_all = 0;
};

// `kept`: sessions kept now; `least_recent`: the least recently used of them (nullopt: none
// kept). True: room, or that session is idle — nothing running in it, and either nothing
// running in any session (one client at a time: a new session costs only it) or its last
// command ended kIdleBeforeEviction ago or longer (an agent sends its next command sooner).
bool AdmitsNewSession(std::size_t kept, std::size_t limit,
                      const std::optional<LeastRecent>& least_recent,
                      std::chrono::steady_clock::time_point now);

}  // namespace cordon::server
