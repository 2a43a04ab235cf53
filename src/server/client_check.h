// The run server's check of a client (peer.h), in two parts (decision 0032). Whether the client
// is trusted — the same user, no more confined than the server — is read from the status of
// the processes that connected and that sent the request, before anything is done for it.
// Whether a command run here would inherit what it would under the client — the same
// namespaces, cgroup, limits, security label (its context: decision 0030) — takes longer to
// read (~0.2 ms of /proc), and is read on a helper thread while the worker resolves the
// client's command line and plans its sandbox; those only read. Nothing is sent to the client,
// created or started for it until ContextMismatch has found none.
#pragma once

#include <optional>
#include <string>

#include "cordon/error.h"
#include "server/helper_thread.h"
#include "server/peer.h"

namespace cordon::server {

class ClientCheck {
 public:
  // Checks the process that connected `socket` now and, when it is trusted, starts reading its
  // context on `helper`. `own` and `helper` must outlive this object.
  ClientCheck(const Confinement& own, int socket, HelperThread& helper);
  // Waits for the helper (its task refers to this object).
  ~ClientCheck();
  ClientCheck(const ClientCheck&) = delete;
  ClientCheck& operator=(const ClientCheck&) = delete;

  // Why the process that connected is not trusted (or could not be checked); nullopt: trusted.
  const std::optional<Error>& connector_refused() const { return connector_refused_; }

  // The same for the process that sent the request (`sender`, a pidfd; SCM_PIDFD), checked now
  // when it is another than the one that connected (a sandboxed command's supervisor connects
  // for it: peer.h). Only after connector_refused() found none.
  [[nodiscard]] std::optional<Error> SenderRefused(int sender);

  // Why a command run here would not inherit the sender's context (empty: it would); waits for
  // the helper, judged once. Only after SenderRefused found none.
  const std::string& ContextMismatch();

 private:
  const Confinement& own_;
  HelperThread& helper_;
  Result<Peer> peer_;
  std::optional<Error> connector_refused_;
  std::optional<Confinement> other_sender_;  // the sender, when not the connecting process
  std::optional<std::string> context_mismatch_;
};

}  // namespace cordon::server
