// The hand-over between a backend (which starts the sandboxed process tree) and the supervisor
// (which feeds it, reads it, times it out and kills it). Contract shared by src/linux and
// src/exec; see docs/architecture notes in those directories.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/unique_fd.h"
#include "net/domain_rules.h"
#include "net/parent_proxy.h"

namespace cordon::exec {

// Descriptors the child will see as 0, 1, 2. Owned by the caller; the backend dup2()s them in
// the child and never closes the caller's copies.
struct StdioFds {
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
};

// What the write observer (exec/write_observer.h) needs to tell Landlock's refusals.
struct WriteRules {
  // Whether the command's write-intent calls are observed at all (sandbox.explain_file_denials).
  bool observe = false;
  // Landlock's ABI for the command's domain (0: none) and the paths beneath which it lets the
  // command write, as the command sees them.
  int landlock_abi = 0;
  std::vector<std::string> landlock_writable;
  // The names placeholders hold for this command (an absent `.mcp.json`, `.envrc`), as the
  // command sees them: a create there is refused by the name's protection, whatever error the
  // kernel gives (ENOENT through a placeholder link, EISDIR where bubblewrap covered it).
  std::vector<std::string> held;
};

// What the supervisor lets the command's connect() calls reach (docs/decisions/0019).
struct ConnectRules {
  // Pathname unix sockets: only beneath these directories, as the command sees them.
  std::vector<std::string> unix_beneath;
  // The command has its own network namespace, so abstract socket names are its own.
  bool private_network = false;
  // Landlock scopes abstract sockets to the sandbox, which a connect made by the supervisor
  // would bypass: without a private network namespace they are refused.
  bool abstract_scoped = false;
  // Landlock refuses TCP connects (no port rules): so does the supervisor.
  bool refuse_tcp = false;
  // The write-intent calls the same filter sends (exec/write_observer.h).
  WriteRules writes;
  // Where the sandbox's view hides or covers the host's (its private /tmp and /run, the hidden
  // home, masks), as the command sees them: a socket path missing there is looked up on the
  // host, and only there (a lookup elsewhere could trigger an automount the command chose).
  std::vector<std::string> hidden_areas;
  // Network by domain (docs/network-domains.md): the allow and deny rules, by which TCP
  // connects beyond the sandbox's loopback are made outside or refused. Unset: not that mode.
  std::optional<net::DomainRules> domains;
  // With `domains`: the HTTP proxy the connects made outside are tunnelled through
  // (plan.parent_proxy; exec/parent_tunnel.cc). Unset: they are made directly.
  std::optional<net::ParentProxy> parent;
};

// Something a backend holds for one command until the run is over (the Seatbelt backend's
// private HOME/TMPDIR directory, the zygote's hold on the command's mount namespace): released
// when the LaunchedProcess is destroyed, which the supervisor does only after the command was
// reaped and its tree killed.
class RunResource {
 public:
  virtual ~RunResource() = default;
  // Called once the command exited with `exit_code`, before the resource is released: a
  // non-empty reason when that status was the backend's own failure before the command ran
  // (sandbox-exec's), which the run then reports as a setup failure, not as the command's.
  virtual std::string SetupFailure(int /*exit_code*/) { return {}; }
};

// Network by domain: the UDP socket and the listening TCP socket bound to the sandbox's
// 127.0.0.1:53, and the proxy's listening socket on its 127.0.0.1:1023, which the command's
// process made before dropping its capabilities, and cordon-resolver held open
// (linux/resolver_program.h; not owned), which the broker starts to answer there
// (exec/resolver_process.h).
struct ResolverHandover {
  core::UniqueFd datagram;
  core::UniqueFd stream;
  core::UniqueFd proxy;
  int program = -1;
};

struct LaunchedProcess {
  // The process the supervisor waits for and kills. For the native backend this is PID 1 of the
  // sandbox's PID namespace: SIGKILL to it kills every process in the sandbox.
  pid_t pid = -1;
  core::UniqueFd pidfd;  // pidfd_open(pid): pollable, immune to pid reuse
  // When valid, the sandbox's init writes the command's wait status (one int, as from waitpid)
  // here when the command exits, then exits itself. Invalid when `pid` is the command itself.
  core::UniqueFd status_fd;
  // When valid: a pidfd of the sandbox's PID-namespace init where that is not `pid` (bubblewrap's
  // init, a child of bwrap's monitor, which exits as soon as the command did). Killed with the
  // tree and awaited after `pid` exits, so nothing of the sandbox outlives the run.
  core::UniqueFd sandbox_init_pidfd;
  // Unsandboxed (mode off): the command leads its own process group; kill(-pid) reaches it.
  bool kill_process_group = false;
  // The command's seccomp listener for connect() (SCMP_ACT_NOTIFY), when the plan brokers
  // connects; the command never holds it. The supervisor answers it following `connect_rules`.
  core::UniqueFd connect_listener;
  // With connect_rules.domains: what cordon-resolver answers the sandbox's lookups with.
  ResolverHandover resolver;
  ConnectRules connect_rules;
  // Released after the run (see RunResource); null for the one-shot Linux launches.
  std::unique_ptr<RunResource> resource;
};

}  // namespace cordon::exec
