#include "server/admission.h"

namespace cordon::server {

bool AdmitsNewSession(std::size_t kept, std::size_t limit,
                      std::optional<std::chrono::steady_clock::time_point> oldest_idle_end,
                      int running, std::chrono::steady_clock::time_point now) {
  if (kept < limit) return true;
  if (!oldest_idle_end) return false;
  return running == 0 || now - *oldest_idle_end >= kIdleBeforeEviction;
}

}  // namespace cordon::server
