// The host's resolver as a network-by-domain run's connect broker asks it on behalf of
// cordon-resolver (decision 0051). The resolver holds no socket beyond the sandbox: it asks
// the broker (net::UpstreamQuery), which checks the name against the run's rules, sends a
// query of its own making (the question alone, a random id) from the host's network namespace,
// and passes the reply back with the resolver's tag in place of the id. So a subverted resolver
// can make the host's resolver look up only names the rules allow, as the command can.
//
// Not thread-safe; owned by the run's ResolverProcess, whose broker's epoll set holds fd().
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/unique_fd.h"

namespace cordon::exec {

// A standard query (recursion desired, one question) for `name` (canonical: lower case, no final
// dot); empty when `name` is not a host name (labels of 1-63 letters, digits, '-' or '_', at most
// 253 bytes in all).
std::vector<std::uint8_t> EncodeQuery(std::string_view name, std::uint16_t type,
                                      std::uint16_t qclass, std::uint16_t id);

class UpstreamDns {
 public:
  // Queries in flight at once; past it the one with the lowest id is forgotten (its client
  // retries).
  static constexpr std::size_t kMaxPending = 256;

  // The host's resolver: the first `nameserver` of /etc/resolv.conf (the one glibc asks
  // first), else 127.0.0.1:53 as glibc does without one.
  static sockaddr_storage HostResolver();

  // A UDP socket connected to `upstream` (only its replies are read). One that cannot be
  // connected (no route) is not an error: fd() is then -1 and problem() says why.
  explicit UpstreamDns(const sockaddr_storage& upstream);

  int fd() const { return socket_.get(); }
  const std::string& problem() const { return problem_; }

  // Sends the query for resolver tag `tag`; false when it was not sent (no upstream, a name
  // that is no host name, a send that failed).
  bool Ask(std::uint16_t tag, std::string_view name, std::uint16_t type, std::uint16_t qclass);
  // Reads every queued reply; each to a query in flight goes to `on_reply` with its tag.
  void OnReadable(
      const std::function<void(std::uint16_t tag, std::span<const std::uint8_t>)>& on_reply);

 private:
  core::UniqueFd socket_;
  std::string problem_;
  std::mt19937 random_{std::random_device{}()};
  std::map<std::uint16_t, std::uint16_t> pending_;  // upstream id -> resolver tag
};

}  // namespace cordon::exec
