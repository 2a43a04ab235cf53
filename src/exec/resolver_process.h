// The run's cordon-resolver (src/resolver/, decision 0051) as its connect broker holds it:
// started with the sandbox's resolver socket and the run's domain rules, read for its reports
// (net/resolver_report.h), its questions asked of the host's resolver (exec/upstream_dns.h),
// and killed and reaped with the broker.
//
// The resolver parses what the sandboxed command sends, so its reports are checked as claims
// of a process that could be subverted: a question is asked only for a name the rules allow
// (class IN), an address is kept only for such a name (at most kMaxNamesPerAddress names for
// each of at most kMaxAddresses addresses, which bounds the supervisor's memory against a zone
// that answers every name), and a refusal or a withheld address is recorded only where the
// rules agree, in the broker's words (exec/dns_denials.h). An internal address
// (net::IsInternal) is handed out by the resolver only when listed, and the broker connects
// there by that address's own rule alone (outside_connect.cc), never because of a name.
//
// It also carries the proxy's requests (proxy_service.h in src/resolver/): a connection it asks
// for is decided and made by the broker like the command's own (outside_connect.cc), and its
// refusals are recorded in the broker's words (ProxyRefusal).
//
// Not thread-safe; owned by the run's ConnectBroker, whose epoll set holds channel_fd() and
// upstream_fd().
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/run.h"
#include "core/unique_fd.h"
#include "exec/launched_process.h"
#include "exec/upstream_dns.h"
#include "net/address_class.h"
#include "net/domain_rules.h"
#include "net/resolver_report.h"

namespace cordon::exec {

class ResolverProcess {
 public:
  static constexpr std::size_t kMaxNamesPerAddress = 16;
  static constexpr std::size_t kMaxAddresses = 4096;
  // Reports Drain takes in one call.
  static constexpr std::size_t kMaxReportsPerDrain = 16384;

  // Starts `handover.program` (linux/resolver_program.h) with the sockets bound to the sandbox's
  // 127.0.0.1:53 and `rules`, in a session of its own, with an empty environment and nothing
  // else of this process. Its questions go to `upstream` (UpstreamDns::HostResolver(); an
  // unreachable one is no error: they are answered SERVFAIL, and recorded).
  [[nodiscard]] static Result<std::unique_ptr<ResolverProcess>> Start(
      ResolverHandover handover, const net::DomainRules& rules, const sockaddr_storage& upstream);
  ~ResolverProcess();
  ResolverProcess(const ResolverProcess&) = delete;
  ResolverProcess& operator=(const ResolverProcess&) = delete;

  // -1 once the resolver is gone.
  int channel_fd() const { return channel_.get(); }
  // -1 when the host's resolver could not be reached.
  int upstream_fd() const { return upstream_.fd(); }
  // The resolver's process id (-1 once reaped): for diagnostics and tests.
  pid_t pid() const { return pid_; }
  // Takes every report queued on the channel; denials go to `record`. The broker calls it when
  // the channel is readable and before it decides a connect beyond the loopback: the resolver
  // queues an address's report before the answer that holds it, so every address the command
  // could have read is known by then. A resolver that stopped is reaped and recorded once.
  // The proxy's connect requests go to `connect` (the broker decides and answers each with
  // SendConnectResult).
  void Drain(const std::function<void(Denial)>& record,
             const std::function<void(const net::ConnectRequest&)>& connect);
  // The outcome of the proxy's connect `tag`: `socket` connected (err 0), passed on; or err.
  void SendConnectResult(std::uint32_t tag, int err, int socket = -1);
  // Passes the host resolver's queued replies on to the resolver.
  void OnUpstreamReadable();

  // The allowed names `address` was handed out for in this run (empty: none).
  const std::vector<std::string>& HandedOut(const net::IpAddress& address) const;
  // Internal or one of the host's own addresses (net::IsInternal).
  bool Internal(const net::IpAddress& address) const;
  // Whether the host's DNS has no answer for `name` in this run (HostAnswers::NoAnswer: the
  // broker's own reading of the replies, not the resolver's word): only such a name may be
  // connected by name through a parent proxy (decision 0053). False for a name never asked.
  bool HostHadNoAnswer(const std::string& name) const;
  // The run has a parent proxy, which reaches names the host cannot resolve: a host without a
  // reachable DNS server is then expected (a network where only the proxy resolves), and its
  // lookups are not recorded as refusals.
  void set_parent_proxy(bool parent) { parent_proxy_ = parent; }

 private:
  ResolverProcess(pid_t pid, core::UniqueFd pidfd, core::UniqueFd channel,
                  const net::DomainRules& rules, const sockaddr_storage& upstream);
  void Keep(const net::IpAddress& address, std::string name);
  void Ask(const net::UpstreamQuery& query, const std::function<void(Denial)>& record);
  // Sends query `tag`'s reply (empty: none) to the resolver; dropped when its queue is full.
  void Reply(std::uint16_t tag, std::span<const std::uint8_t> reply);
  // Kills (a subverted resolver may close its end and live on) and reaps; the wait status.
  int Stop();

  pid_t pid_;
  core::UniqueFd pidfd_;
  core::UniqueFd channel_;
  const net::DomainRules& rules_;
  UpstreamDns upstream_;
  std::vector<net::IpAddress> host_addresses_;
  std::map<net::IpAddress, std::vector<std::string>> handed_out_;
  bool parent_proxy_ = false;
};

}  // namespace cordon::exec
