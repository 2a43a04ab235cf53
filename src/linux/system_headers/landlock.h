// Landlock user-space ABI, up to ABI 9, for building against headers older than the kernel
// (Debian 12's linux-libc-dev is 6.1: it stops at ABI 2). Values are from the kernel's
// include/uapi/linux/landlock.h and Documentation/userspace-api/landlock.rst; names carry a
// `k` prefix and live in a namespace so they never collide with <linux/landlock.h>.
//
// This is the only place in cordon that spells these numbers.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace cordon::linux_native::sys {

// Syscall numbers are identical on every architecture that has Landlock (unified table).
inline constexpr long kNrLandlockCreateRuleset = 444;
inline constexpr long kNrLandlockAddRule = 445;
inline constexpr long kNrLandlockRestrictSelf = 446;

// landlock_create_ruleset() flags.
inline constexpr std::uint32_t kLandlockCreateRulesetVersion = 1U << 0;
inline constexpr std::uint32_t kLandlockCreateRulesetErrata = 1U << 1;

// Rule types for landlock_add_rule().
inline constexpr int kLandlockRulePathBeneath = 1;
inline constexpr int kLandlockRuleNetPort = 2;  // ABI 4

// Filesystem access rights (handled_access_fs / allowed_access).
inline constexpr std::uint64_t kAccessFsExecute = 1ULL << 0;
inline constexpr std::uint64_t kAccessFsWriteFile = 1ULL << 1;
inline constexpr std::uint64_t kAccessFsReadFile = 1ULL << 2;
inline constexpr std::uint64_t kAccessFsReadDir = 1ULL << 3;
inline constexpr std::uint64_t kAccessFsRemoveDir = 1ULL << 4;
inline constexpr std::uint64_t kAccessFsRemoveFile = 1ULL << 5;
inline constexpr std::uint64_t kAccessFsMakeChar = 1ULL << 6;
inline constexpr std::uint64_t kAccessFsMakeDir = 1ULL << 7;
inline constexpr std::uint64_t kAccessFsMakeReg = 1ULL << 8;
inline constexpr std::uint64_t kAccessFsMakeSock = 1ULL << 9;
inline constexpr std::uint64_t kAccessFsMakeFifo = 1ULL << 10;
inline constexpr std::uint64_t kAccessFsMakeBlock = 1ULL << 11;
inline constexpr std::uint64_t kAccessFsMakeSym = 1ULL << 12;
inline constexpr std::uint64_t kAccessFsRefer = 1ULL << 13;     // ABI 2
inline constexpr std::uint64_t kAccessFsTruncate = 1ULL << 14;  // ABI 3
inline constexpr std::uint64_t kAccessFsIoctlDev = 1ULL << 15;  // ABI 5
// connect()/sendmsg() to a pathname unix socket: allowed beneath a rule, or to a socket made in
// the same domain (ABI 9; uapi LANDLOCK_ACCESS_FS_RESOLVE_UNIX).
inline constexpr std::uint64_t kAccessFsResolveUnix = 1ULL << 16;  // ABI 9

// Network access rights (handled_access_net), ABI 4.
inline constexpr std::uint64_t kAccessNetBindTcp = 1ULL << 0;
inline constexpr std::uint64_t kAccessNetConnectTcp = 1ULL << 1;

// IPC scopes (scoped), ABI 6.
inline constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
inline constexpr std::uint64_t kScopeSignal = 1ULL << 1;

// landlock_restrict_self() flags, ABI 7 (audit logging). cordon passes none of them: the
// defaults log denials of the sandboxed command, which is what an operator wants to see.
inline constexpr std::uint32_t kRestrictSelfLogSameExecOff = 1U << 0;
inline constexpr std::uint32_t kRestrictSelfLogNewExecOn = 1U << 1;
inline constexpr std::uint32_t kRestrictSelfLogSubdomainsOff = 1U << 2;

// The kernel accepts any prefix of this struct that ends on a field boundary; the size passed
// says which fields the caller knows. Passing a field an older kernel lacks fails with E2BIG
// unless it is zero, so callers pass the size matching the probed ABI (RulesetAttrSize).
struct LandlockRulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;  // ABI 4
  std::uint64_t scoped;              // ABI 6
};

struct LandlockPathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
} __attribute__((packed));

struct LandlockNetPortAttr {
  std::uint64_t allowed_access;
  std::uint64_t port;
};

// Bytes of LandlockRulesetAttr that a kernel with `abi` understands.
constexpr unsigned long RulesetAttrSize(int abi) {
  if (abi >= 6) return sizeof(LandlockRulesetAttr);
  if (abi >= 4) return 2 * sizeof(std::uint64_t);
  return sizeof(std::uint64_t);
}

// Every filesystem right the kernel with `abi` knows (0 when abi < 1).
constexpr std::uint64_t AllFsAccess(int abi) {
  if (abi < 1) return 0;
  std::uint64_t all = (1ULL << 13) - 1;  // ABI 1: bits 0..12
  if (abi >= 2) all |= kAccessFsRefer;
  if (abi >= 3) all |= kAccessFsTruncate;
  if (abi >= 5) all |= kAccessFsIoctlDev;
  if (abi >= 9) all |= kAccessFsResolveUnix;
  return all;
}

// The rights that modify the file system (or a device through ioctl), and from ABI 9 the
// connection to a pathname socket, for a given ABI: what cordon handles, so reads and
// execution stay unrestricted while writes (and reaching host sockets) need a rule.
constexpr std::uint64_t WriteFsAccess(int abi) {
  return AllFsAccess(abi) & ~(kAccessFsExecute | kAccessFsReadFile | kAccessFsReadDir);
}

inline long LandlockCreateRuleset(const LandlockRulesetAttr* attr, unsigned long size,
                                  std::uint32_t flags) {
  return ::syscall(kNrLandlockCreateRuleset, attr, size, flags);
}
inline long LandlockAddRule(int ruleset_fd, int rule_type, const void* rule_attr,
                            std::uint32_t flags) {
  return ::syscall(kNrLandlockAddRule, ruleset_fd, rule_type, rule_attr, flags);
}
inline long LandlockRestrictSelf(int ruleset_fd, std::uint32_t flags) {
  return ::syscall(kNrLandlockRestrictSelf, ruleset_fd, flags);
}

}  // namespace cordon::linux_native::sys
