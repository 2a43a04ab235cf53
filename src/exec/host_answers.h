// What the host's DNS said of each name the broker asked it in a run (exec/upstream_dns.h), as
// the broker itself read the replies — not the resolver's word. A parent proxy may be asked for
// a name by name only when the host has no answer for it (decision 0053): both kinds asked (A
// and AAAA), and each replied to without a record, or never replied to by an upstream that has
// replied nothing at all in this run. A question that was lost (forgotten past the broker's
// bound, a failed TCP retry, a truncated reply) says nothing; one still waiting keeps the name
// "unknown".
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

namespace cordon::exec {

class HostAnswers {
 public:
  using Clock = std::chrono::steady_clock;
  // Names kept at once; past it a new name is not recorded (so never "without an answer").
  static constexpr std::size_t kMaxNames = 4096;
  // How long an upstream that has replied nothing in this run may leave a question waiting
  // before it counts as answered without a record (glibc's resolver gives up after 5 s).
  static constexpr std::chrono::seconds kNoReplyWait{5};

  // A question for `name` (a canonical host name) of `type` was sent at `now`.
  void Asked(std::string_view name, std::uint16_t type, Clock::time_point now);
  // The reply to it: its header decides (records: an answer; NXDOMAIN, or NOERROR without a
  // record: none; truncated, SERVFAIL, REFUSED — which a loaded or rate-limiting server also
  // says — or anything else: nothing learnt).
  void Replied(std::string_view name, std::uint16_t type, std::span<const std::uint8_t> reply);
  // A reply to it that is not the last word (truncated, asked again over TCP): the upstream is
  // not silent, and any record in it is an answer; the question keeps waiting.
  void Heard(std::string_view name, std::span<const std::uint8_t> reply);
  // It will get no reply (forgotten, a failed retry): nothing learnt.
  void Lost(std::string_view name, std::uint16_t type);
  // No upstream at all (no route to the host's resolver): every question has no answer.
  // Never for a send that failed for another reason (a full buffer, an ICMP error left by an
  // earlier query): that is Lost.
  void Unanswerable(std::string_view name, std::uint16_t type);

  bool NoAnswer(std::string_view name, Clock::time_point now) const;

 private:
  struct Kind {
    bool none = false;     // replied to without a record
    unsigned waiting = 0;  // questions in flight
  };
  struct Name {
    bool records = false;  // some reply held a record
    Kind a;
    Kind aaaa;
    Clock::time_point last_asked{};
  };
  // The record for `name`'s `type` (A or AAAA), or null (another type, or not recorded).
  Kind* KindOf(std::string_view name, std::uint16_t type);
  void Settle(std::string_view name, std::uint16_t type);

  std::map<std::string, Name, std::less<>> names_;
  bool any_reply_ = false;  // the upstream replied to something in this run
};

}  // namespace cordon::exec
