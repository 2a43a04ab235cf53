#include "resolver/confinement.h"

#include <fcntl.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <initializer_list>
#include <memory>
#include <string_view>

#include "core/syscall_error.h"
#include "linux/seccomp_context.h"

namespace cordon::resolver {
namespace {

using linux_native::SeccompContext;
constexpr auto Check = linux_native::CheckSeccomp;

Result<void> Allow(void* ctx, int nr, std::string_view what) {
  return Check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0), what);
}

// `nr` allowed only on descriptor `fd` (its first argument).
Result<void> AllowOn(void* ctx, int nr, int fd, std::string_view what) {
  return Check(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
                                SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(fd))),
               what);
}

// A memory call whose protection argument (`arg`) holds no PROT_EXEC.
Result<void> AllowWithoutExec(void* ctx, int nr, unsigned arg, std::string_view what) {
  const scmp_arg_cmp no_exec{arg, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0};
  return Check(seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &no_exec), what);
}

// AddressSanitizer's runtime (the sanitizer build of the tests) probes memory through a pipe
// it makes and writes to, and resets its signal stack on exit: allowed there, never in a
// build that ships.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitizerRuntime = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitizerRuntime = true;
#else
constexpr bool kSanitizerRuntime = false;
#endif
#else
constexpr bool kSanitizerRuntime = false;
#endif

}  // namespace

Result<void> ConfineToSockets(const ResolverSockets& sockets) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return core::FailSyscall("prctl", "PR_SET_NO_NEW_PRIVS");
  }
  SeccompContext ctx(seccomp_init(SCMP_ACT_KILL_PROCESS));
  if (!ctx) return core::FailSyscall("seccomp_init", "cordon-resolver", ENOMEM);
  void* c = ctx.get();
  CORDON_TRY_VOID(Allow(c, SCMP_SYS(recvfrom), "recvfrom"));
  // Never a TCP fast open (MSG_FASTOPEN with an address): a descriptor number is not a socket's
  // kind, and a reset TCP socket the broker made could be connected anew elsewhere by one.
  CORDON_TRY_VOID(
      Check(seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(sendto), 2,
                             SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(sockets.datagram)),
                             SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, 0)),
            "sendto (the sandbox's clients)"));
  CORDON_TRY_VOID(
      Check(seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(sendto), 2, SCMP_A4(SCMP_CMP_EQ, 0),
                             SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, 0)),
            "send (reports, TCP clients)"));
  CORDON_TRY_VOID(
      AllowOn(c, SCMP_SYS(accept4), sockets.stream, "accept4 (the sandbox's TCP clients)"));
  CORDON_TRY_VOID(AllowOn(c, SCMP_SYS(accept4), sockets.proxy, "accept4 (the proxy's clients)"));
  CORDON_TRY_VOID(
      AllowOn(c, SCMP_SYS(recvmsg), sockets.channel, "recvmsg (the broker's connected sockets)"));
  CORDON_TRY_VOID(AllowOn(c, SCMP_SYS(write), STDERR_FILENO, "write (stderr)"));
  // A pipe's size, and nothing else fcntl does.
  CORDON_TRY_VOID(Check(
      seccomp_rule_add(c, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1, SCMP_A1(SCMP_CMP_EQ, F_SETPIPE_SZ)),
      "fcntl (F_SETPIPE_SZ)"));
  CORDON_TRY_VOID(AllowWithoutExec(c, SCMP_SYS(mmap), 2, "mmap"));
  CORDON_TRY_VOID(AllowWithoutExec(c, SCMP_SYS(mprotect), 2, "mprotect"));
  for (const auto& [nr, name] : std::initializer_list<std::pair<int, std::string_view>>{
           {SCMP_SYS(poll), "poll"},
           {SCMP_SYS(ppoll), "ppoll"},
           // A poll interrupted by a stop (SIGSTOP, a freezer, a debugger) goes on through it.
           {SCMP_SYS(restart_syscall), "restart_syscall"},
           {SCMP_SYS(close), "close"},
           {SCMP_SYS(shutdown), "shutdown"},
           // The proxy's relay: a pipe per connection, spliced through.
           {SCMP_SYS(pipe2), "pipe2"},
           {SCMP_SYS(splice), "splice"},
           // OpenSSL's random generator checks for a fork.
           {SCMP_SYS(getpid), "getpid"},
           {SCMP_SYS(brk), "brk"},
           {SCMP_SYS(munmap), "munmap"},
           {SCMP_SYS(mremap), "mremap"},
           {SCMP_SYS(madvise), "madvise"},
           {SCMP_SYS(futex), "futex"},
           {SCMP_SYS(getrandom), "getrandom"},
           {SCMP_SYS(clock_gettime), "clock_gettime"},
           {SCMP_SYS(gettimeofday), "gettimeofday"},
           {SCMP_SYS(rt_sigreturn), "rt_sigreturn"},
           {SCMP_SYS(exit), "exit"},
           {SCMP_SYS(exit_group), "exit_group"},
       }) {
    CORDON_TRY_VOID(Allow(c, nr, name));
  }
  if (kSanitizerRuntime) {
    for (const int nr : {SCMP_SYS(write), SCMP_SYS(sigaltstack)}) {
      CORDON_TRY_VOID(Allow(c, nr, "the sanitizer runtime's calls"));
    }
  }
  return Check(seccomp_load(c), "seccomp_load (cordon-resolver)");
}

}  // namespace cordon::resolver
