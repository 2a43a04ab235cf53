// The host's resolver as a network-by-domain run's connect broker asks it on behalf of
// cordon-resolver (decision 0051). The resolver holds no socket beyond the sandbox: it asks
// the broker (net::UpstreamQuery), which checks the name against the run's rules, sends a
// query of its own making (the question alone, a random id, an EDNS buffer of 1232 bytes) from
// the host's network namespace, and passes the reply back with the resolver's tag in place of
// the id. So a subverted resolver can make the host's resolver look up only names the rules
// allow, as the command can. A reply truncated over UDP is asked again over TCP (RFC 7766).
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
#include "exec/host_answers.h"

namespace cordon::exec {

// The EDNS buffer size the broker's queries offer (the size DNS flag day 2020 settled on).
inline constexpr std::uint16_t kEdnsBufferSize = 1232;

// A standard query (recursion desired, one question, an EDNS record offering kEdnsBufferSize)
// for `name` (canonical: lower case, no final dot); empty when `name` is not a host name (labels
// of 1-63 letters, digits, '-' or '_', at most 253 bytes in all).
std::vector<std::uint8_t> EncodeQuery(std::string_view name, std::uint16_t type,
                                      std::uint16_t qclass, std::uint16_t id);

class UpstreamDns {
 public:
  // Queries in flight at once; past it the one with the lowest id is forgotten (its client
  // retries).
  static constexpr std::size_t kMaxPending = 256;
  // Lookups over TCP at once; past it a truncated reply is passed on as it is.
  static constexpr std::size_t kMaxStreams = 16;

  // The host's resolver: the first `nameserver` of /etc/resolv.conf (the one glibc asks
  // first), else 127.0.0.1:53 as glibc does without one.
  static sockaddr_storage HostResolver();

  // A UDP socket connected to `upstream` (only its replies are read). One that cannot be
  // connected (no route) is not an error: fd() is then -1 and problem() says why.
  explicit UpstreamDns(const sockaddr_storage& upstream);

  // Readable when a reply may be read (an epoll set of the UDP socket and the TCP lookups);
  // -1 without an upstream.
  int fd() const { return socket_ ? epoll_.get() : -1; }
  const std::string& problem() const { return problem_; }

  // Sends the query for resolver tag `tag`; false when it was not sent (no upstream, a name
  // that is no host name, a send that failed). Recorded in answers() when sent, and as
  // unanswerable when there is no upstream or no route to it.
  bool Ask(std::uint16_t tag, std::string_view name, std::uint16_t type, std::uint16_t qclass);
  // Reads what is ready; each reply to a query in flight goes to `on_reply` with its tag (an
  // empty reply: a TCP lookup failed).
  using OnReply = std::function<void(std::uint16_t tag, std::span<const std::uint8_t>)>;
  void OnReadable(const OnReply& on_reply);

  // What the host's DNS said of the names asked so far (exec/host_answers.h).
  const HostAnswers& answers() const { return answers_; }

 private:
  struct Pending {
    std::uint16_t tag = 0;
    std::vector<std::uint8_t> query;
    std::string name;  // the question, for answers_
    std::uint16_t type = 0;
  };
  // One lookup over TCP: the query with its length sent, the reply with its length read.
  struct Stream {
    core::UniqueFd socket;
    std::uint16_t id = 0;
    std::uint16_t tag = 0;
    std::string name;
    std::uint16_t type = 0;
    std::vector<std::uint8_t> out;
    std::size_t sent = 0;
    std::vector<std::uint8_t> in;
  };
  void ReadDatagrams(const OnReply& on_reply);
  // Asks `pending` again over TCP; false when no stream could be opened.
  bool Retry(std::uint16_t id, const Pending& pending);
  // Advances the stream on `fd`; true when it is done (then it is closed).
  bool Advance(Stream& stream, std::uint32_t events, const OnReply& on_reply);

  sockaddr_storage upstream_{};
  core::UniqueFd epoll_;
  core::UniqueFd socket_;
  std::string problem_;
  std::mt19937 random_{std::random_device{}()};
  std::map<std::uint16_t, Pending> pending_;  // by upstream id
  std::map<int, Stream> streams_;             // by socket
  HostAnswers answers_;
};

}  // namespace cordon::exec
