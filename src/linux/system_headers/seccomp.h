// Seccomp user-notification constants newer than Debian 12's <linux/seccomp.h>. Values from
// the kernel's include/uapi/linux/seccomp.h.
#pragma once

#include <linux/seccomp.h>
#include <sys/ioctl.h>

#include <cstdint>

namespace cordon::linux_native::sys {

// SECCOMP_IOCTL_NOTIF_SET_FLAGS (Linux 6.6): SECCOMP_IOW(4, __u64), SECCOMP_IOC_MAGIC '!'.
inline constexpr unsigned long kSeccompIoctlNotifSetFlags = _IOW('!', 4, std::uint64_t);
// SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: a notification wakes the supervisor on the notifying
// task's CPU and switches to it, instead of a wake-up on another CPU.
inline constexpr std::uint64_t kSeccompUserNotifFdSyncWakeUp = 1;

}  // namespace cordon::linux_native::sys
