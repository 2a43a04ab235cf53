// The contract between LaunchBwrap (parent) and cordon-bwrap-exec (the trampoline bwrap runs
// inside the sandbox): descriptor numbers, the report pipe's bytes, the in-sandbox path.
#pragma once

namespace cordon::bwrap {

// Where the trampoline is bound read-only inside the sandbox: in bwrap's private /dev, which no
// plan mount (private /tmp, masks) can cover, so a build tree under /tmp still works.
inline constexpr const char* kTrampolineInSandbox = "/dev/.cordon-bwrap-exec";

// Descriptors bwrap passes through to the trampoline (bwrap's own stderr is 2: a memfd the
// parent reads when bwrap fails before the trampoline ran).
inline constexpr int kCommandStderrFd = 3;  // becomes the command's 2
inline constexpr int kReportFd = 4;         // close-on-exec: EOF after 'S' = execve succeeded
inline constexpr int kSeccompFd = 5;        // memfd holding the BPF program (sock_filter[])
// bwrap's --info-fd: its JSON names the host pid of the sandbox's init ("child-pid"), written
// before the sandbox may run. Closed by the trampoline should bwrap pass it on.
inline constexpr int kInfoFd = 6;
// The command's wait status (one int, as from waitpid), written by the trampoline, which runs
// the command as its child: bwrap itself would report a death by signal N as exit 128+N.
inline constexpr int kStatusFd = 7;
// The connect broker's channel (ADR 0019), with --broker: the trampoline loads the filter with
// a listener and sends it here (SCM_RIGHTS) before the command starts; the command never holds
// either. Closed by the trampoline in any case.
inline constexpr int kBrokerFd = 8;
inline constexpr int kFirstFreeFd = 9;

// First byte on the report pipe: the trampoline is running (bwrap's setup succeeded). A failed
// step follows as one linux_native::StepReport.
inline constexpr char kStartedByte = 'S';

}  // namespace cordon::bwrap
