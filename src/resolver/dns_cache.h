// The sandbox resolver's cache of the host resolver's replies (decision 0057): a question
// asked again while its answer's TTL lasts is answered from here, without the trip through
// the supervisor to the host's resolver. What is kept is the upstream's reply as it came,
// before filtering: each answer from the cache is filtered again (DnsService::Keep) and its
// addresses reported handed out again, so a cached answer gives the command nothing a fresh
// one would not, and the TTLs it carries are what is left of them (FilterReply's `age`).
//
// Kept only: NOERROR replies with answer records (addresses, a CNAME, any type), not
// truncated, with a TTL above 0
// (FilteredReply::cache_ttl), for at most kMaxTtl; at most kMaxEntries questions and kMaxBytes,
// the one that expires first making room. One cache per cordon-resolver, which lives for one run.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace cordon::resolver {

class DnsCache {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  static constexpr std::size_t kMaxEntries = 512;
  // The replies' bytes together (one may be up to 64 KiB, over TCP): a command that asks for
  // many names with large answers keeps the resolver small all the same.
  static constexpr std::size_t kMaxBytes = 4 * 1024 * 1024;
  static constexpr std::uint32_t kMaxTtl = 3600;  // seconds

  explicit DnsCache(Clock now = &std::chrono::steady_clock::now) : now_(std::move(now)) {}

  struct Hit {
    // Valid until the next Store, or a Find that meets a reply whose time is up.
    std::span<const std::uint8_t> reply;
    std::uint16_t upstream_id = 0;  // the id the reply was asked with
    std::uint32_t age = 0;          // seconds since it came
  };
  // The reply kept for (`name`, `type`), unless there is none or its time is up.
  std::optional<Hit> Find(const std::string& name, std::uint16_t type);
  // Keeps `reply` (asked with `upstream_id`) for `ttl` seconds (at most kMaxTtl; 0: not kept).
  void Store(const std::string& name, std::uint16_t type, std::span<const std::uint8_t> reply,
             std::uint16_t upstream_id, std::uint32_t ttl);
  std::size_t size() const { return entries_.size(); }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Entry {
    std::vector<std::uint8_t> reply;
    std::uint16_t upstream_id = 0;
    std::chrono::steady_clock::time_point stored;
    std::chrono::steady_clock::time_point expires;
  };
  using Key = std::pair<std::string, std::uint16_t>;

  // Drops the entries whose time is up, then the ones that expire first, until one more of
  // `size` bytes fits.
  void MakeRoom(std::size_t size, std::chrono::steady_clock::time_point now);

  Clock now_;
  std::map<Key, Entry> entries_;
  std::size_t bytes_ = 0;
};

}  // namespace cordon::resolver
