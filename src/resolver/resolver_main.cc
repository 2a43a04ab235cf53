// cordon-resolver: the resolver of one network-by-domain run (docs/network-domains.md,
// docs/decisions/0051-resolver-process.md), started by the run's supervisor
// (exec/resolver_process.h) as
//
//   cordon-resolver allow=PATTERN... deny=PATTERN...
//
// with fd 3 the sandbox's UDP socket and fd 5 its listening TCP socket (bound to its
// 127.0.0.1:53 by the command's process before it dropped its capabilities), fd 6 the
// listening socket of the sandbox's proxy (its 127.0.0.1:1023, proxy_service.h), and fd 4 a
// SOCK_SEQPACKET channel to the supervisor's connect broker, which takes its reports, asks the
// host's resolver for it and makes the proxy's connections (net/resolver_report.h; fd 7 is its
// own program, closed at once). It runs in a process of its own because it parses bytes the
// sandboxed command sends: it holds nothing else — not the supervisor's memory, not its
// descriptors, no socket beyond the sandbox but the connected ones the broker gives it — and
// confines itself (confinement.h) before it reads one. It exits when the channel closes.
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/unique_fd.h"
#include "net/domain_rules.h"
#include "net/resolver_report.h"
#include "resolver/confinement.h"
#include "resolver/dns_service.h"
#include "resolver/proxy_service.h"
#include "resolver/tls_server_name.h"

namespace {

using cordon::net::ResolverReport;

constexpr int kSandboxFd = cordon::net::kResolverDatagramFd;
constexpr int kChannelFd = cordon::net::kResolverChannelFd;
constexpr int kStreamFd = cordon::net::kResolverStreamFd;
constexpr int kProxyFd = cordon::net::kResolverProxyFd;
constexpr int kProgramFd = cordon::net::kResolverProgramFd;
constexpr int kUsage = 2;

void Complain(std::string_view what) {
  const std::string line = "cordon-resolver: " + std::string(what) + "\n";
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

// Blocking: the broker reads every report before it decides a connect, so the answer that
// follows may go only once the report is queued there. A closed channel ends the process.
void Send(const ResolverReport& report) {
  const std::string bytes = cordon::net::EncodeReport(report);
  if (bytes.size() > cordon::net::kMaxResolverReport) return;
  while (::send(kChannelFd, bytes.data(), bytes.size(), MSG_NOSIGNAL) < 0) {
    if (errno != EINTR) ::_exit(0);
  }
}

// One message from the broker: an upstream reply, or a connect's outcome with its socket.
void Receive(std::vector<std::uint8_t>& message, cordon::resolver::DnsService& dns,
             cordon::resolver::ProxyService& proxy) {
  iovec io{message.data(), message.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr header{};
  header.msg_iov = &io;
  header.msg_iovlen = 1;
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(kChannelFd, &header, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  // End of file (or an error): the broker is gone.
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) ::_exit(0);
  if (n < 0) return;
  cordon::core::UniqueFd socket;
  for (cmsghdr* c = CMSG_FIRSTHDR(&header); c != nullptr; c = CMSG_NXTHDR(&header, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int))) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
      socket = cordon::core::UniqueFd(fd);
    }
  }
  const std::span<const std::uint8_t> bytes(message.data(), static_cast<std::size_t>(n));
  if (const std::optional<cordon::net::UpstreamReply> reply =
          cordon::net::DecodeUpstreamReply(bytes)) {
    dns.OnReply(reply->tag, reply->wire);
  } else if (const std::optional<cordon::net::ConnectResult> result =
                 cordon::net::DecodeConnectResult(bytes)) {
    proxy.OnConnected(result->tag, result->err, std::move(socket));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> allow;
  std::vector<std::string> deny;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("allow=")) {
      allow.emplace_back(arg.substr(6));
    } else if (arg.starts_with("deny=")) {
      deny.emplace_back(arg.substr(5));
    } else {
      Complain("unknown argument \"" + std::string(arg) + "\" (it is started by cordon only)");
      return kUsage;
    }
  }
  cordon::Result<cordon::net::DomainRules> rules = cordon::net::DomainRules::Parse(allow, deny);
  if (!rules) {
    Complain(rules.error().message);
    return kUsage;
  }
  using cordon::net::IpAddress;
  using cordon::resolver::DnsQuestion;
  cordon::resolver::DnsService::Reports reports{
      .query =
          [](std::uint16_t tag, const DnsQuestion& q) {
            Send(cordon::net::UpstreamQuery{tag, q.name, q.type, q.qclass});
          },
      .handed_out =
          [](const IpAddress& address, const std::string& name) {
            Send(cordon::net::HandedOut{address, name});
          },
      .refused = [](const std::string& name) { Send(cordon::net::Refused{name}); },
      .withheld =
          [](const std::string& name, const IpAddress& address) {
            Send(cordon::net::Withheld{name, address});
          },
  };
  auto service = cordon::resolver::DnsService::Create(cordon::core::UniqueFd(kSandboxFd),
                                                      cordon::core::UniqueFd(kStreamFd), &*rules,
                                                      std::move(reports));
  if (!service) {
    Complain(service.error().message);
    return 1;
  }
  cordon::resolver::DnsService& dns = **service;
  // OpenSSL is set up before the filter: afterwards it only computes.
  auto server_names = cordon::resolver::TlsServerNames::Create();
  if (!server_names) {
    Complain(server_names.error().message);
    return 1;
  }
  cordon::resolver::ProxyService proxy(
      cordon::core::UniqueFd(kProxyFd), &*rules, &dns, server_names->get(),
      {.connect = [](const cordon::net::ConnectRequest& request) { Send(request); },
       .refused = [](const cordon::net::ProxyRefused& refusal) { Send(refusal); }});
  ::close(kProgramFd);  // its own program, by which it was started
  if (auto confined = cordon::resolver::ConfineToSockets({.datagram = dns.sandbox_fd(),
                                                          .stream = kStreamFd,
                                                          .proxy = kProxyFd,
                                                          .channel = kChannelFd});
      !confined) {
    Complain(confined.error().message);
    return 1;
  }
  // An upstream reply with its kind and tag.
  std::vector<std::uint8_t> message(cordon::net::kMaxUpstreamReply + 3);
  std::vector<pollfd> fds;
  for (;;) {
    dns.AnswerLookups();
    fds.assign({{kChannelFd, POLLIN, 0}, {dns.sandbox_fd(), POLLIN, 0}});
    dns.AppendStreamPollSet(fds);
    const std::size_t streams_end = fds.size();
    proxy.AppendPollSet(fds);
    // A client waiting for a lookup or a connect is answered in time (ProxyService::Expire).
    if (::poll(fds.data(), fds.size(), proxy.waiting() ? 1000 : -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    proxy.Expire(std::chrono::steady_clock::now());
    if (fds[0].revents != 0) Receive(message, dns, proxy);
    if (fds[1].revents != 0) dns.OnSandboxReadable();
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (i < streams_end) {
        dns.OnStreamReady(fds[i].fd, fds[i].revents);
      } else {
        proxy.OnReady(fds[i].fd, fds[i].revents);
      }
    }
  }
}
