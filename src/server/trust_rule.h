// The one rule by which a cordon process trusts another over the run server's socket
// (decisions 0026, 0028): the same user, and no more confined — no no_new_privs the judge lacks,
// no more seccomp filters, the same PID-namespace depth (a process in a deeper one is in a
// sandbox; one in another cannot be judged). The server applies it to every client, the full
// client and the `cordon` front to the server (which must also run their very executable).
// Header-only and without a C library: the front, which has none, uses these definitions too.
#pragma once

namespace cordon::server {

struct TrustFacts {
  long uid = -1;
  bool no_new_privs = false;
  long seccomp_filters = 0;
  long pid_namespace_depth = 0;
};

enum class Distrust {
  kNone,
  kOtherUser,
  kNoNewPrivs,          // the other has no_new_privs and the judge has not: a sandbox
  kMoreSeccompFilters,  // more filters than the judge's: a sandbox
  kOtherPidNamespace,
};

// Why `judge` does not trust `other`, or kNone.
constexpr Distrust Judge(const TrustFacts& judge, const TrustFacts& other) {
  if (other.uid != judge.uid) return Distrust::kOtherUser;
  if (other.no_new_privs && !judge.no_new_privs) return Distrust::kNoNewPrivs;
  if (other.seccomp_filters > judge.seccomp_filters) return Distrust::kMoreSeccompFilters;
  if (other.pid_namespace_depth != judge.pid_namespace_depth) return Distrust::kOtherPidNamespace;
  return Distrust::kNone;
}

}  // namespace cordon::server
