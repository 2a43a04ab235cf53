#include "server/admission.h"

namespace cordon::server {

bool AdmitsNewSession(std::size_t kept, std::size_t limit,
                      const std::optional<LeastRecent>& least_recent,
                      std::chrono::steady_clock::time_point now) {
  if (kept < limit || !least_recent) return true;
  if (least_recent->running > 0) return false;
  return least_recent->running_in_all == 0 || now - least_recent->last_end >= kIdleBeforeEviction;
}

}  // namespace cordon::server
