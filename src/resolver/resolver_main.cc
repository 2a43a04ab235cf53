// cordon-resolver: the resolver of one network-by-domain run (docs/network-domains.md,
// docs/decisions/0051-resolver-process.md), started by the run's supervisor
// (exec/resolver_process.h) as
//
//   cordon-resolver allow=PATTERN... deny=PATTERN...
//
// with fd 3 the sandbox's UDP socket and fd 5 its listening TCP socket (bound to its
// 127.0.0.1:53 by the command's process before it dropped its capabilities) and fd 4 a
// SOCK_SEQPACKET channel to the supervisor's connect broker, which takes its reports and asks
// the host's resolver for it (net/resolver_report.h; fd 6 is its own program, closed at once). It
// runs in a process of its own because it parses bytes the sandboxed command sends: it holds
// nothing else — not the supervisor's memory, not its descriptors, no socket beyond the sandbox —
// and confines itself (confinement.h) before it reads one. It exits when the channel closes.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
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

namespace {

using cordon::net::ResolverReport;

constexpr int kSandboxFd = cordon::net::kResolverDatagramFd;
constexpr int kChannelFd = cordon::net::kResolverChannelFd;
constexpr int kStreamFd = cordon::net::kResolverStreamFd;
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
  ::close(kProgramFd);  // its own program, by which it was started
  if (auto confined = cordon::resolver::ConfineToSockets(dns.sandbox_fd(), kStreamFd); !confined) {
    Complain(confined.error().message);
    return 1;
  }
  std::vector<std::uint8_t> message(cordon::net::kMaxUpstreamReply + 2);  // with the tag
  std::vector<pollfd> fds;
  for (;;) {
    fds.assign({{kChannelFd, POLLIN, 0}, {dns.sandbox_fd(), POLLIN, 0}});
    dns.AppendStreamPollSet(fds);
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (fds[0].revents != 0) {
      // An upstream reply; end of file (or an error): the broker is gone.
      const ssize_t n = ::recv(kChannelFd, message.data(), message.size(), MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return 0;
      if (n > 0) {
        if (const std::optional<cordon::net::UpstreamReply> reply =
                cordon::net::DecodeUpstreamReply(
                    std::span<const std::uint8_t>(message.data(), static_cast<std::size_t>(n)))) {
          dns.OnReply(reply->tag, reply->wire);
        }
      }
    }
    if (fds[1].revents != 0) dns.OnSandboxReadable();
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents != 0) dns.OnStreamReady(fds[i].fd, fds[i].revents);
    }
  }
}
