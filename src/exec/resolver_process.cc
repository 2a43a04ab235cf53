#include "exec/resolver_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "core/fd_passing.h"
#include "core/syscall_error.h"
#include "exec/dns_denials.h"
#include "net/resolver_report.h"

namespace cordon::exec {
namespace {

using core::UniqueFd;

constexpr int kSandboxFd = net::kResolverDatagramFd;
constexpr int kChannelFd = net::kResolverChannelFd;
constexpr int kStreamFd = net::kResolverStreamFd;
constexpr int kProxyFd = net::kResolverProxyFd;
constexpr int kProgramFd = net::kResolverProgramFd;
// Copies made above every descriptor the child is given, so that no dup2 of the spawn
// overwrites a source a later one still needs.
constexpr int kAbove = 10;

// The spawn's file actions and attributes, released however Start returns.
struct Spawn {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attributes{};
  Spawn() {
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawnattr_init(&attributes);
  }
  ~Spawn() {
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attributes);
  }
  Spawn(const Spawn&) = delete;
  Spawn& operator=(const Spawn&) = delete;

  // Nothing of this process but stderr: stdin and stdout may be the command's or a client's
  // pipes (cordon mcp speaks on stdout), which a lingering holder would keep open. Default
  // signal dispositions and an empty mask (the supervisor's are its own), and a session of its
  // own: a terminal's ^C goes to the command, not to its resolver.
  Result<void> Prepare(int sandbox, int channel, int stream, int proxy, int program) {
    sigset_t all;
    sigset_t none;
    ::sigfillset(&all);
    ::sigemptyset(&none);
    const int results[] = {
        ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0),
        ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0),
        ::posix_spawn_file_actions_adddup2(&actions, sandbox, kSandboxFd),
        ::posix_spawn_file_actions_adddup2(&actions, channel, kChannelFd),
        ::posix_spawn_file_actions_adddup2(&actions, stream, kStreamFd),
        ::posix_spawn_file_actions_adddup2(&actions, proxy, kProxyFd),
        ::posix_spawn_file_actions_adddup2(&actions, program, kProgramFd),
        ::posix_spawn_file_actions_addclosefrom_np(&actions, kProgramFd + 1),
        ::posix_spawnattr_setsigdefault(&attributes, &all),
        ::posix_spawnattr_setsigmask(&attributes, &none),
        ::posix_spawnattr_setflags(
            &attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSID),
    };
    for (const int rc : results) {
      if (rc != 0) return core::FailSyscall("posix_spawn_file_actions", "cordon-resolver", rc);
    }
    return {};
  }
};

constexpr std::uint16_t kClassIn = 1;

std::string DescribeStatus(int status) {
  if (WIFSIGNALED(status)) {
    return WTERMSIG(status) == SIGSYS
               ? "killed by its seccomp filter (SIGSYS): it made a call it must not"
               : fmt::format("killed by signal {}", WTERMSIG(status));
  }
  return fmt::format("exit status {}", WEXITSTATUS(status));
}

}  // namespace

Result<std::unique_ptr<ResolverProcess>> ResolverProcess::Start(ResolverHandover handover,
                                                                const net::DomainRules& rules,
                                                                const sockaddr_storage& upstream) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    return core::FailSyscall("socketpair", "cordon-resolver's channel");
  }
  UniqueFd ours(pair[0]);
  UniqueFd theirs(pair[1]);
  UniqueFd sandbox(::fcntl(handover.datagram.get(), F_DUPFD_CLOEXEC, kAbove));
  UniqueFd channel(::fcntl(theirs.get(), F_DUPFD_CLOEXEC, kAbove));
  UniqueFd stream(::fcntl(handover.stream.get(), F_DUPFD_CLOEXEC, kAbove));
  UniqueFd proxy(::fcntl(handover.proxy.get(), F_DUPFD_CLOEXEC, kAbove));
  UniqueFd program(::fcntl(handover.program, F_DUPFD_CLOEXEC, kAbove));
  if (!sandbox || !channel || !stream || !proxy || !program) {
    return core::FailSyscall("fcntl", "F_DUPFD_CLOEXEC, cordon-resolver's descriptors");
  }
  const int flags = ::fcntl(ours.get(), F_GETFL);
  if (flags < 0 || ::fcntl(ours.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return core::FailSyscall("fcntl", "cordon-resolver's channel, O_NONBLOCK");
  }

  std::vector<std::string> args{"cordon-resolver"};
  for (const net::DomainPattern& p : rules.allow()) args.push_back("allow=" + p.ToString());
  for (const net::DomainPattern& p : rules.deny()) args.push_back("deny=" + p.ToString());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  char* envp[] = {nullptr};

  Spawn spawn;
  CORDON_TRY_VOID(
      spawn.Prepare(sandbox.get(), channel.get(), stream.get(), proxy.get(), program.get()));
  const std::string path = fmt::format("/proc/self/fd/{}", kProgramFd);
  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, path.c_str(), &spawn.actions, &spawn.attributes, argv.data(), envp);
  if (rc != 0) return core::FailSyscall("posix_spawn", "cordon-resolver", rc);
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) {
    Error error = core::SyscallError("pidfd_open", "cordon-resolver");
    (void)::kill(pid, SIGKILL);
    (void)::waitpid(pid, nullptr, 0);
    return std::unexpected(std::move(error));
  }
  return std::unique_ptr<ResolverProcess>(
      new ResolverProcess(pid, std::move(pidfd), std::move(ours), rules, upstream));
}

ResolverProcess::ResolverProcess(pid_t pid, UniqueFd pidfd, UniqueFd channel,
                                 const net::DomainRules& rules, const sockaddr_storage& upstream)
    : pid_(pid),
      pidfd_(std::move(pidfd)),
      channel_(std::move(channel)),
      rules_(rules),
      upstream_(upstream),
      host_addresses_(net::HostAddresses()) {}

ResolverProcess::~ResolverProcess() {
  channel_.Reset();
  if (pid_ > 0) (void)Stop();
}

int ResolverProcess::Stop() {
  (void)::syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return status;
}

void ResolverProcess::Drain(const std::function<void(Denial)>& record,
                            const std::function<void(const net::ConnectRequest&)>& connect) {
  char buffer[net::kMaxResolverReport];
  // At most so many at a time: a resolver that reports without end must not hold the
  // supervisor here. Every report a decision needs is among them: what was queued when the
  // command's connect came is at most the channel's buffer, far fewer messages than this.
  for (std::size_t taken = 0; channel_ && taken < kMaxReportsPerDrain; ++taken) {
    const ssize_t n = ::recv(channel_.get(), buffer, sizeof buffer, MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      // The resolver is gone (it exits only when the channel closes): the sandbox's lookups
      // now fail at once, and the run says why.
      channel_.Reset();
      const int status = Stop();
      record({"resolver", "cordon-resolver", "network",
              "cordon's resolver stopped: " + DescribeStatus(status),
              "this is cordon's fault, not the command's: report it, with the command"});
      return;
    }
    if (static_cast<std::size_t>(n) > sizeof buffer) continue;  // longer than any report
    std::optional<net::ResolverReport> report =
        net::DecodeReport(std::string_view(buffer, static_cast<std::size_t>(n)));
    if (!report) continue;
    if (const auto* query = std::get_if<net::UpstreamQuery>(&*report)) {
      Ask(*query, record);
    } else if (auto* handed = std::get_if<net::HandedOut>(&*report)) {
      if (rules_.ForName(handed->name).allowed) Keep(handed->address, std::move(handed->name));
    } else if (const auto* refused = std::get_if<net::Refused>(&*report)) {
      if (std::optional<Denial> denial = RefusedLookup(rules_, refused->name)) record(*denial);
    } else if (const auto* request = std::get_if<net::ConnectRequest>(&*report)) {
      connect(*request);
    } else if (const auto* proxy = std::get_if<net::ProxyRefused>(&*report)) {
      if (std::optional<Denial> denial = ProxyRefusal(rules_, *proxy)) record(*denial);
    } else {
      const auto& withheld = std::get<net::Withheld>(*report);
      if (rules_.ForName(withheld.name).allowed && Internal(withheld.address)) {
        record(
            WithheldAddress(withheld.name, withheld.address, net::InternalKind(withheld.address)));
      }
    }
  }
}

void ResolverProcess::Ask(const net::UpstreamQuery& query,
                          const std::function<void(Denial)>& record) {
  // Only what the command could have asked through an honest resolver: an allowed name.
  if (query.qclass != kClassIn || !rules_.ForName(query.name).allowed) return;
  if (upstream_.fd() < 0) {
    // Not sent, but recorded: nothing can answer it (UpstreamDns::Ask, HostAnswers).
    (void)upstream_.Ask(query.tag, query.name, query.type, query.qclass);
    if (!parent_proxy_) record(NoUpstream(query.name, upstream_.problem()));
    return Reply(query.tag, {});
  }
  if (!upstream_.Ask(query.tag, query.name, query.type, query.qclass)) Reply(query.tag, {});
}

void ResolverProcess::OnUpstreamReadable() {
  upstream_.OnReadable(
      [this](std::uint16_t tag, std::span<const std::uint8_t> reply) { Reply(tag, reply); });
}

void ResolverProcess::Reply(std::uint16_t tag, std::span<const std::uint8_t> reply) {
  if (!channel_) return;
  const std::vector<std::uint8_t> message = net::EncodeUpstreamReply(tag, reply);
  (void)::send(channel_.get(), message.data(), message.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

void ResolverProcess::SendConnectResult(std::uint32_t tag, int err, int socket) {
  if (!channel_) return;
  const std::vector<std::uint8_t> message = net::EncodeConnectResult({tag, err});
  // Blocking would stall the supervisor; the channel's queue holds many results, and a
  // resolver that does not read them only starves its own clients.
  (void)core::SendWithFds(channel_.get(), message.data(), message.size(), &socket,
                          err == 0 && socket >= 0 ? 1 : 0);
}

void ResolverProcess::Keep(const net::IpAddress& address, std::string name) {
  auto entry = handed_out_.find(address);
  if (entry == handed_out_.end()) {
    if (handed_out_.size() >= kMaxAddresses) return;
    entry = handed_out_.emplace(address, std::vector<std::string>{}).first;
  }
  std::vector<std::string>& names = entry->second;
  if (names.size() < kMaxNamesPerAddress &&
      std::find(names.begin(), names.end(), name) == names.end()) {
    names.push_back(std::move(name));
  }
}

bool ResolverProcess::HostHadNoAnswer(const std::string& name) const {
  return upstream_.answers().NoAnswer(name, HostAnswers::Clock::now());
}

const std::vector<std::string>& ResolverProcess::HandedOut(const net::IpAddress& address) const {
  static const std::vector<std::string> kNone;
  const auto it = handed_out_.find(address);
  return it == handed_out_.end() ? kNone : it->second;
}

bool ResolverProcess::Internal(const net::IpAddress& address) const {
  return net::IsInternal(address, host_addresses_);
}

}  // namespace cordon::exec
