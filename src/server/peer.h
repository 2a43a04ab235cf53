// Who is at the other end of the run server's socket, and whether to trust it.
//
// The run server runs commands in sandboxes on behalf of `cordon run`; a process that is itself
// inside a cordon sandbox must never reach it (it would ask for a command outside its own
// sandbox, or, posing as the server, receive a client's environment). Both ends therefore check
// each other: the same user, and no more confined than the checking side itself — every cordon
// sandbox sets no_new_privs and adds a seccomp filter on top of whatever its creator had, and
// the native one adds a PID namespace, so a sandboxed process always has more of one of these
// than an unconfined process of the same context. Everything is read from /proc/PID/status
// (readable without ptrace rights), through a pidfd taken from the socket (SO_PEERPIDFD) so
// that a recycled PID cannot stand in for the peer (docs/decisions/0026-run-server.md).
//
// The process that connected is not always the one that speaks: a sandboxed command's
// connect() is performed by its supervisor (decision 0019), which is unconfined. The server
// therefore also checks the process that sent the request (SCM_PIDFD, wire.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "cordon/error.h"
#include "core/unique_fd.h"
#include "server/context.h"
#include "server/trust_rule.h"

namespace cordon::server {

struct Confinement {
  uid_t uid = 0;                // effective uid (the second field of "Uid:")
  bool no_new_privs = false;    // "NoNewPrivs:"
  int seccomp_filters = 0;      // "Seccomp_filters:" (0 without a filter)
  int pid_namespace_depth = 0;  // fields of "NSpid:" (1 in the namespace /proc belongs to)
  // The executable's file (stat of /proc/PID/exe): always for OwnConfinement, for another
  // process only when asked; unknown when /proc would not say.
  bool exe_known = false;
  std::uint64_t exe_dev = 0;
  std::uint64_t exe_ino = 0;
  // What a command run for the process would inherit (context.h): always for OwnConfinement,
  // for another process only when asked.
  Context context;
  int pid = 0;  // in this process's PID namespace (ConfinementOf only)
};

// Parses the text of /proc/PID/status. kInvalidArgument naming the missing field when a line
// this needs is absent (a kernel older than 5.9 has no Seccomp_filters).
[[nodiscard]] Result<Confinement> ParseStatus(std::string_view status);

// This process's confinement.
[[nodiscard]] Result<Confinement> OwnConfinement();

// Empty when the trust rule (trust_rule.h) lets `own` trust `peer`; else why not, in words.
std::string Mismatch(const Confinement& own, const Confinement& peer);
// The facts of `c` the trust rule (trust_rule.h) judges.
TrustFacts FactsOf(const Confinement& c);

// The confinement of the process behind `pidfd` (its /proc entry, confirmed through the pidfd
// to still be that process).
// With `executable`, also its exe_* fields (one more stat; only the client's check needs it);
// with `context`, its context.
[[nodiscard]] Result<Confinement> ConfinementOf(int pidfd, bool executable = false,
                                                bool context = false);

// The confinement of the process that connected `socket` (client side: that called listen()),
// through SO_PEERPIDFD.
[[nodiscard]] Result<Confinement> PeerConfinement(int socket, bool executable = false);

// The process that connected `socket` (SO_PEERPIDFD) and its confinement, read from its
// /proc/PID/status; its context (the slower part, ~0.2 ms of /proc reads) is read by AddContext,
// which the run server does beside other work (decision 0032).
struct Peer {
  core::UniqueFd pidfd;
  core::UniqueFd proc_dir;  // /proc/PID, opened while the pidfd's process was alive
  std::string status;       // /proc/PID/status as it was read
  Confinement confinement;  // its context empty (not known) until AddContext
};
[[nodiscard]] Result<Peer> PeerOf(int socket);
// The same for the process behind `pidfd` (borrowed: the Peer's pidfd stays invalid).
[[nodiscard]] Result<Peer> ProcessOf(int pidfd);
void AddContext(Peer& peer);
// PeerOf, then AddContext.
[[nodiscard]] Result<Peer> PeerWithContext(int socket);

// True when both pidfds name one live process: the same pid, both alive now (two live
// processes never share a pid).
bool SameLiveProcess(const Peer& peer, int other_pidfd);

// ConfinementOf + Mismatch against `own` (OwnConfinement(), read once by the caller).
[[nodiscard]] Result<void> CheckProcess(const Confinement& own, int pidfd);

// PeerConfinement + Mismatch against `own`: kUnavailable with the reason when the
// peer must not be trusted or when the kernel cannot say (no SO_PEERPIDFD).
[[nodiscard]] Result<void> CheckPeer(const Confinement& own, int socket);

// Whether this kernel names a unix socket's peer by pidfd (SO_PEERPIDFD, Linux 6.5): without
// it a server can trust no client. kUnavailable saying so when not.
[[nodiscard]] Result<void> CheckKernelNamesPeers();

// CheckPeer for a client looking at its server, which must also run this very executable: a
// server of another cordon (one still running after an upgrade, another install) may speak
// another protocol. kNotFound when the server exited as this process connected (it named no
// executable, and was gone within kExitingServerWaitMs): none is running.
[[nodiscard]] Result<void> CheckServer(const Confinement& own, int socket);
inline constexpr int kExitingServerWaitMs = 500;

}  // namespace cordon::server
