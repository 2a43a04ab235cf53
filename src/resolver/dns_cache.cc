#include "resolver/dns_cache.h"

#include <algorithm>

namespace cordon::resolver {

std::optional<DnsCache::Hit> DnsCache::Find(const std::string& name, std::uint16_t type) {
  const auto it = entries_.find(Key{name, type});
  if (it == entries_.end()) return std::nullopt;
  const auto now = now_();
  if (now >= it->second.expires) {
    entries_.erase(it);
    return std::nullopt;
  }
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(now - it->second.stored);
  return Hit{it->second.reply, it->second.upstream_id, static_cast<std::uint32_t>(age.count())};
}

void DnsCache::Store(const std::string& name, std::uint16_t type,
                     std::span<const std::uint8_t> reply, std::uint16_t upstream_id,
                     std::uint32_t ttl) {
  if (ttl == 0) return;
  const auto now = now_();
  Key key{name, type};
  if (entries_.size() >= kMaxEntries && !entries_.contains(key)) {
    std::erase_if(entries_, [&](const auto& entry) { return now >= entry.second.expires; });
    if (entries_.size() >= kMaxEntries) {
      entries_.erase(std::min_element(
          entries_.begin(), entries_.end(),
          [](const auto& a, const auto& b) { return a.second.expires < b.second.expires; }));
    }
  }
  Entry& entry = entries_[std::move(key)];
  entry.reply.assign(reply.begin(), reply.end());
  entry.upstream_id = upstream_id;
  entry.stored = now;
  entry.expires = now + std::chrono::seconds(std::min(ttl, kMaxTtl));
}

}  // namespace cordon::resolver
