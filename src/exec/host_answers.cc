#include "exec/host_answers.h"

namespace cordon::exec {
namespace {

constexpr std::uint16_t kTypeA = 1;
constexpr std::uint16_t kTypeAaaa = 28;

// ANCOUNT, the answer records of a reply (RFC 1035, 4.1.1: bytes 6-7 of the header).
unsigned AnswerRecords(std::span<const std::uint8_t> reply) {
  return (unsigned{reply[6]} << 8) | reply[7];
}

}  // namespace

HostAnswers::Kind* HostAnswers::KindOf(std::string_view name, std::uint16_t type) {
  if (type != kTypeA && type != kTypeAaaa) return nullptr;
  const auto it = names_.find(name);
  if (it == names_.end()) return nullptr;
  return type == kTypeA ? &it->second.a : &it->second.aaaa;
}

void HostAnswers::Asked(std::string_view name, std::uint16_t type, Clock::time_point now) {
  if (type != kTypeA && type != kTypeAaaa) return;
  auto it = names_.find(name);
  if (it == names_.end()) {
    if (names_.size() >= kMaxNames) return;
    it = names_.emplace(std::string(name), Name{}).first;
  }
  it->second.last_asked = now;
  ++(type == kTypeA ? it->second.a : it->second.aaaa).waiting;
}

void HostAnswers::Settle(std::string_view name, std::uint16_t type) {
  if (Kind* kind = KindOf(name, type); kind != nullptr && kind->waiting > 0) --kind->waiting;
}

void HostAnswers::Heard(std::string_view name, std::span<const std::uint8_t> reply) {
  if (reply.size() < 12) return;
  any_reply_ = true;
  if (const auto it = names_.find(name); it != names_.end() && AnswerRecords(reply) > 0) {
    it->second.records = true;
  }
}

void HostAnswers::Replied(std::string_view name, std::uint16_t type,
                          std::span<const std::uint8_t> reply) {
  Settle(name, type);
  if (reply.size() < 12) return;
  any_reply_ = true;
  // The header (RFC 1035, 4.1.1): TC in byte 2, RCODE in the low bits of byte 3.
  const bool truncated = (reply[2] & 0x02) != 0;
  const unsigned rcode = reply[3] & 0x0f;
  const auto it = names_.find(name);
  if (it == names_.end()) return;
  if (AnswerRecords(reply) > 0) {
    it->second.records = true;
  } else if (!truncated && (rcode == 0 || rcode == 3)) {
    if (Kind* kind = KindOf(name, type)) kind->none = true;
  }
}

void HostAnswers::Lost(std::string_view name, std::uint16_t type) { Settle(name, type); }

void HostAnswers::Unanswerable(std::string_view name, std::uint16_t type) {
  Settle(name, type);
  if (Kind* kind = KindOf(name, type)) kind->none = true;
}

bool HostAnswers::NoAnswer(std::string_view name, Clock::time_point now) const {
  const auto it = names_.find(name);
  if (it == names_.end() || it->second.records) return false;
  const Name& n = it->second;
  // A question still waiting may yet bring a record, unless the upstream has replied to
  // nothing in this run and has been given its time.
  const bool silent = !any_reply_ && now - n.last_asked >= kNoReplyWait;
  const auto settled = [&](const Kind& kind) { return kind.waiting == 0 ? kind.none : silent; };
  return settled(n.a) && settled(n.aaaa);
}

}  // namespace cordon::exec
