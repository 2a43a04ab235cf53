#include "server/client_check.h"

#include <utility>

namespace cordon::server {
namespace {

std::optional<Error> Untrusted(const Confinement& own, const Confinement& other) {
  std::string why = Mismatch(own, other);
  if (why.empty()) return std::nullopt;
  return Error{ErrorCode::kUnavailable, 0, "the other end is not trusted: " + why};
}

}  // namespace

ClientCheck::ClientCheck(const Confinement& own, int socket, HelperThread& helper)
    : own_(own), helper_(helper), peer_(PeerOf(socket)) {
  if (!peer_) {
    connector_refused_ = peer_.error();
    return;
  }
  connector_refused_ = Untrusted(own_, peer_->confinement);
  if (connector_refused_) return;
  helper_.Post([this] { AddContext(*peer_); });
}

ClientCheck::~ClientCheck() { helper_.Drop(); }

std::optional<Error> ClientCheck::SenderRefused(int sender) {
  if (SameLiveProcess(*peer_, sender)) return std::nullopt;
  // A process that confined itself since it connected gains nothing it did not have then; one
  // that sends on another's connection is checked itself.
  // Its status first: nothing more is read for a sender that is not trusted.
  Result<Peer> other = ProcessOf(sender);
  if (!other) return other.error();
  if (std::optional<Error> untrusted = Untrusted(own_, other->confinement)) return untrusted;
  AddContext(*other);
  other_sender_ = std::move(other->confinement);
  return std::nullopt;
}

const std::string& ClientCheck::ContextMismatch() {
  if (!context_mismatch_) {
    helper_.Wait();
    const Confinement& sender = other_sender_ ? *other_sender_ : peer_->confinement;
    context_mismatch_ = server::ContextMismatch(own_.context, sender.context);
  }
  return *context_mismatch_;
}

}  // namespace cordon::server
