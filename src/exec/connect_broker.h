// The supervisor's answer to the command's connect() calls (docs/decisions/0019). The command's
// seccomp filter sends every connect() here (SCMP_ACT_NOTIFY); the broker performs it itself,
// on the command's own socket (pidfd_getfd: the same open file description) with the address
// copied once from the command's memory, so nothing the command changes afterwards (the
// address, the descriptor number, a path component) changes what was checked:
//
//   - a pathname unix address is resolved in the command's view (/proc/TID/root, its cwd),
//     and connected through /proc/self/fd/N of that resolved socket only when the socket lies
//     beneath ConnectRules::unix_beneath, on a mount that is not read-only; otherwise EACCES,
//     like Landlock ABI 9 would say;
//   - an abstract unix address is connected when the command has its own network namespace;
//     in the host's, where Landlock scopes abstract sockets, only when a process of the
//     command's PID namespace holds the socket bound to it (abstract_owner.h; the supervisor
//     holds that socket too until its connect is done, so the name cannot change hands), else
//     EACCES;
//   - anything else (inet, netlink, AF_UNSPEC) is connected as asked, except TCP when Landlock
//     refuses TCP connects (EACCES);
//   - with network by domain (ConnectRules::domains, docs/network-domains.md), a TCP connect
//     beyond the sandbox's loopback goes out only to an address the sandbox's resolver handed
//     out for an allowed name (cordon-resolver, exec/resolver_process.h), or one listed itself: the
//     supervisor connects a socket of its own, in the host's network namespace, and puts it in
//     place of the command's (SECCOMP_IOCTL_NOTIF_ADDFD, same descriptor number). Anything else is
//     EACCES, and a socket put in place is never connected again (EISCONN), so it cannot be turned
//     into an unconnected host socket.
//
// What it refuses by cordon's rules, and what the sandbox's own network namespace refuses (a
// connect beyond its loopback, a DNS query to a resolver it cannot reach), it records as the
// run's denials (TakeDenials; docs/denials.md): never a failure the command meets for its own
// reasons (a closed port on its loopback, a socket path that does not exist, permissions).
//
// A blocking connect that is in progress (TCP) is parked until the socket is writable and then
// answered with SO_ERROR; a blocking unix connect to a listener whose backlog is full gets
// EAGAIN (what SO_SNDTIMEO's expiry gives) instead of waiting.
//
// The same filter sends the write-intent calls (exec/write_calls.h) when the plan observes
// them, and sendto() with an address in the sandbox's own network namespace: the broker lets
// each continue and records what the sandbox refuses (WriteObserver; ObserveDatagram).
//
// Ownership: the broker owns the listener, an epoll instance, and a descriptor for each parked
// connect. Not thread-safe; one broker per supervised run.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "cordon/error.h"
#include "cordon/run.h"
#include "core/unique_fd.h"
#include "exec/launched_process.h"
#include "exec/outside_socket.h"
#include "exec/resolver_process.h"
#include "exec/write_observer.h"

namespace cordon::exec {

// The parent proxy's address: a literal as it is, a name as the host resolves it (getaddrinfo).
// kUnavailable naming it when it has none (exec/parent_tunnel.cc).
[[nodiscard]] Result<sockaddr_storage> ResolveParentProxy(const net::ParentProxy& parent);

class ConnectBroker {
 public:
  // With rules.domains: `resolver`, the sockets bound to the sandbox's 127.0.0.1:53 that the
  // command's process handed over and cordon-resolver held open, which is started to answer
  // there (exec/resolver_process.h). Domains without them is an error: nothing would answer the
  // sandbox's lookups.
  [[nodiscard]] static Result<std::unique_ptr<ConnectBroker>> Create(
      core::UniqueFd listener, ConnectRules rules, ResolverHandover resolver = {});

  // /proc belongs to another PID namespace (see blind_).
  bool blind() const { return blind_; }

  // Poll both for POLLIN and call Service() when either is ready. fd(): readable when a parked
  // connect finished. listener_fd(): the seccomp listener itself while a process uses the
  // filter (-1 after), polled directly so that a notification's synchronous wake-up reaches
  // the supervisor on the caller's CPU (through epoll it would not).
  int fd() const { return epoll_.get(); }
  int listener_fd() const { return listener_open_ ? listener_.get() : -1; }
  // Answers one waiting notification and every finished parked connect, and fails the
  // tunnels whose parent proxy has not answered in time; never blocks.
  void Service();
  // When Service() must run next although nothing is ready (a tunnel's reply deadline), or
  // time_point::max().
  std::chrono::steady_clock::time_point NextDeadline() const;
  // How long a tunnel through the parent proxy may take, from the connect to the parent to the
  // last byte of its answer to the CONNECT request (a silent parent, or one whose SYNs are
  // dropped, would hold the command's connect until the run's timeout, past the sandbox
  // proxy's 60 s wait): then ETIMEDOUT, recorded.
  static constexpr std::chrono::seconds kParentReplyTimeout{30};

  // Whether `view_path` (a path as the command sees it) lies beneath one of `beneath`.
  static bool IsBeneath(std::string_view view_path, const std::vector<std::string>& beneath);

  // What was refused so far, each (kind, target) once, at most RunResult::kMaxDenials; the
  // list is handed over (empty afterwards).
  std::vector<Denial> TakeDenials() { return std::move(denials_); }

 private:
  struct Parked {
    std::uint64_t id;
    core::UniqueFd socket;
    sockaddr_storage address;  // an inet destination, for RecordInet once it is done
    int type;
    // A non-blocking connect, answered EINPROGRESS: the command learns its outcome itself, so
    // only the socket's state is looked at (TCP_INFO), never its pending error taken.
    bool watch = false;
    // A connect made outside for the command (ConnectOutside): once done, the socket goes in
    // place of the command's descriptor `install_fd` (close-on-exec as that one was).
    int install_fd = -1;
    bool cloexec = false;
    int their_flags = 0;  // the command's socket's file status flags (O_NONBLOCK), for HandOver
    // A connect made outside for the proxy (ProxyConnect): its socket goes to cordon-resolver
    // once done, under this tag.
    std::int64_t proxy_tag = -1;
    // Through the parent proxy (exec/parent_tunnel.cc): `socket` connects to the parent, which
    // is then asked to CONNECT to `tunnel_target` ("host:port"); empty: made directly.
    std::string tunnel_target;
    bool tunnel_sent = false;  // the CONNECT request is sent: the parent's reply is read
    std::string tunnel_reply;  // what was read of the reply's head so far
    // When the tunnel must be up, the parent's reply read (kParentReplyTimeout after the
    // connect to the parent started).
    std::chrono::steady_clock::time_point reply_deadline =
        std::chrono::steady_clock::time_point::max();
  };

  // Blocking connects in progress at once (each holds a descriptor here). Past that the answer
  // is EINTR: the connect goes on in the background, as after a signal.
  static constexpr std::size_t kMaxParked = 256;
  static constexpr std::size_t kMaxWatched = 32;  // beside them: non-blocking connects watched
  // The proxy's connects in progress at once (cordon-resolver's clients; its own bound).
  static constexpr std::size_t kMaxProxyConnects = 128;

  ConnectBroker(core::UniqueFd listener, core::UniqueFd epoll, ConnectRules rules, bool blind);
  void HandleNotification();
  // Lets an observed call go on unchanged (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
  void Continue(std::uint64_t id) const;
  // A sendto() with an address (UDP without a connect), which goes on unchanged: recorded like
  // a connect to that address when the sandbox's own network namespace refuses it.
  void ObserveDatagram(const seccomp_notif& request);
  // A raw inet socket(), which goes on to the kernel's refusal (no CAP_NET_RAW): recorded
  // where the caller, or the program it runs, would have had the capability outside.
  void ObserveRawSocket(const seccomp_notif& request);
  void FinishParked(int socket_fd);
  // The errno for the command (0: connected), or -1 when the connect was parked.
  int Connect(std::uint64_t id, core::UniqueFd socket, const void* addr, unsigned len, int type);
  // Watches a non-blocking TCP connect to the sandbox's own loopback until it is done, to
  // report it as RecordInet would a blocking one (refused, where the host listens).
  void Watch(core::UniqueFd socket, const void* addr, unsigned len, int type);
  // Waits for `parked`'s socket to be done (EPOLLOUT) in the epoll set; false when it cannot.
  bool Park(Parked parked);
  void Respond(std::uint64_t id, int err) const;
  // Network by domain: a TCP connect beyond the sandbox's loopback, to `ip`:`port`. Allowed:
  // made outside (ConnectOutside); else recorded and EACCES. Answers the notification.
  void DecideOutside(std::uint64_t id, pid_t tid, int target_fd, int theirs,
                     const sockaddr_storage& address, const net::IpAddress& ip, std::uint16_t port);
  // The errno for the command (0, EINPROGRESS), or -1 when parked or nobody waits any more.
  // `tunnel_target`: through the parent proxy to that "host:port" (empty: directly).
  int ConnectOutside(std::uint64_t id, pid_t tid, int target_fd, int theirs,
                     const sockaddr_storage& address, const std::string& tunnel_target);
  // The refusal of a connect beyond the sandbox's loopback to `ip`:`port` by the domain rules
  // (the resolver drained before), or nullopt when they allow it.
  std::optional<Denial> RefuseOutside(const net::IpAddress& ip, std::uint16_t port);
  // The proxy's request (net::ConnectRequest): decided as the command's own connect is, made
  // outside, and answered with the connected socket (ResolverProcess::SendConnectResult).
  void ProxyConnect(const net::ConnectRequest& request);
  // The proxy's request by name alone (no address: the host's DNS had none).
  void ProxyConnectByName(const net::ConnectRequest& request);
  // The proxy's connect `tag`, through the parent proxy to `target` ("host:port"): parked
  // (counted in proxy_connects_), or answered with the error.
  void ProxyTunnel(std::uint32_t tag, const std::string& target);
  // Whether a connect to `ip` goes through the parent proxy: there is one, and the caller's
  // no_proxy names neither the address, nor `asked_name` (the proxy's client asked by it), nor
  // a name the resolver handed the address out for.
  bool ViaParent(const net::IpAddress& ip, std::string_view asked_name) const;
  // A socket connecting to the parent proxy, parked for a tunnel to `target`; 0, or the errno.
  // `options_from`: the command's socket whose options it takes (-1: none).
  int ParkTunnel(Parked parked, const std::string& target, int options_from);
  // The next step of `parked`'s tunnel once its socket is ready (SO_ERROR `err`): sends the
  // CONNECT, or reads the parent's reply. -1 while it goes on; else 0 (the tunnel is open, its
  // reply consumed to the last byte of the head) or the errno the connect fails with, a
  // refusal recorded with the parent's words.
  int TunnelStep(Parked& parked, int err);
  // The parked connect `it` done with `err` (0, an errno): answered, handed over or sent to
  // the proxy, and out of parked_; the iterator after it.
  std::vector<Parked>::iterator Finish(std::vector<Parked>::iterator it, int err);
  // Fails the tunnels past their reply deadline (ETIMEDOUT, recorded).
  void ExpireTunnels();
  void RecordParentFailure(const Parked& parked, const std::string& what);
  // connect() again on `socket`, a connection made (or failed) to `address`: 0 once the kernel
  // holds it as connected for good, else the errno.
  static int HoldConnected(int socket, const sockaddr_storage& address);
  // A connect made outside and done: held as connected by the kernel for good, then put in
  // place of the command's descriptor. 0, an errno, or -1 when nobody waits any more.
  int HandOver(const Parked& parked);
  // Puts `socket` at the command's descriptor `target_fd`; false when that failed.
  bool Install(std::uint64_t id, int socket, int target_fd, bool cloexec);
  void Record(Denial denial);
  // Takes the resolver's queued reports (ResolverProcess::Drain).
  void DrainResolver();
  // An inet connect that the sandbox's network setting decides: recorded when it is refused
  // (or doomed: a DNS query) because of it. `err`: what the connect gave (0, errno).
  void RecordInet(const sockaddr_storage& address, int type, int err, bool refused_tcp);

  core::UniqueFd listener_;
  core::UniqueFd epoll_;
  ConnectRules rules_;
  std::vector<Parked> parked_;
  bool listener_open_ = true;
  std::vector<Denial> denials_;
  WriteObserver observer_;
  std::unique_ptr<ResolverProcess> resolver_;  // with rules_.domains
  std::unordered_set<ino_t> outside_;    // the sockets ConnectOutside put in place (their inodes)
  std::size_t proxy_connects_ = 0;       // parked for the proxy (ProxyConnect)
  LocalPorts ports_ = ReadLocalPorts();  // the outside sockets' local ports
  // The parent proxy's address (rules_.parent), resolved when the broker is created, and
  // whether it is this host's own (never asked to connect by name: it would resolve the name
  // itself, and a name leading to its loopback would reach the host's services).
  sockaddr_storage parent_address_{};
  bool parent_own_host_ = false;
  // /proc is another PID namespace's: thread ids cannot be read there. Connects get ENOSYS;
  // write-intent calls continue unexamined.
  bool blind_ = false;
  // The caller holds CAP_NET_RAW (root): a raw socket the command is refused is cordon's doing.
  bool caller_net_raw_ = false;
};

}  // namespace cordon::exec
