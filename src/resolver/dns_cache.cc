#include "resolver/dns_cache.h"

#include <algorithm>

namespace cordon::resolver {

std::optional<DnsCache::Hit> DnsCache::Find(const std::string& name, std::uint16_t type) {
  const auto it = entries_.find(Key{name, type});
  if (it == entries_.end()) return std::nullopt;
  const auto now = now_();
  if (now >= it->second.expires) {
    bytes_ -= it->second.reply.size();
    entries_.erase(it);
    return std::nullopt;
  }
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(now - it->second.stored);
  return Hit{it->second.reply, it->second.upstream_id, static_cast<std::uint32_t>(age.count())};
}

void DnsCache::MakeRoom(std::size_t size, std::chrono::steady_clock::time_point now) {
  const auto full = [&] { return entries_.size() + 1 > kMaxEntries || bytes_ + size > kMaxBytes; };
  if (!full()) return;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (now < it->second.expires) {
      ++it;
      continue;
    }
    bytes_ -= it->second.reply.size();
    it = entries_.erase(it);
  }
  while (!entries_.empty() && full()) {
    const auto first = std::min_element(
        entries_.begin(), entries_.end(),
        [](const auto& a, const auto& b) { return a.second.expires < b.second.expires; });
    bytes_ -= first->second.reply.size();
    entries_.erase(first);
  }
}

void DnsCache::Store(const std::string& name, std::uint16_t type,
                     std::span<const std::uint8_t> reply, std::uint16_t upstream_id,
                     std::uint32_t ttl) {
  if (ttl == 0 || reply.size() > kMaxBytes) return;
  const auto now = now_();
  Key key{name, type};
  if (const auto old = entries_.find(key); old != entries_.end()) {
    bytes_ -= old->second.reply.size();
    entries_.erase(old);
  }
  MakeRoom(reply.size(), now);
  Entry& entry = entries_[std::move(key)];
  entry.reply.assign(reply.begin(), reply.end());
  entry.upstream_id = upstream_id;
  entry.stored = now;
  entry.expires = now + std::chrono::seconds(std::min(ttl, kMaxTtl));
  bytes_ += reply.size();
}

}  // namespace cordon::resolver
