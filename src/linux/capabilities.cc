#include "linux/capabilities.h"

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace cordon::linux_native {
namespace {

int CapGet(__user_cap_data_struct (&data)[2]) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  return static_cast<int>(::syscall(SYS_capget, &header, data));
}

int CapSetZero() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  return static_cast<int>(::syscall(SYS_capset, &header, data));
}

}  // namespace

StepResult DropCapabilities() {
  __user_cap_data_struct data[2] = {};
  if (CapGet(data) != 0) return StepFailed(Step::kCapset);
  const bool has_setpcap = (data[0].effective & (1U << CAP_SETPCAP)) != 0;
  if (has_setpcap) {
    constexpr unsigned long kBits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                    SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                    SECBIT_NO_CAP_AMBIENT_RAISE |
                                    SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if (::prctl(PR_SET_SECUREBITS, kBits, 0, 0, 0) != 0) return StepFailed(Step::kSecurebits);
    // EINVAL marks the first capability number this kernel does not know: the end.
    for (unsigned long cap = 0; cap < 64; ++cap) {
      if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
        if (errno == EINVAL) break;
        return StepFailed(Step::kBoundingSet, static_cast<int>(cap));
      }
    }
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    return StepFailed(Step::kAmbientCaps);
  }
  if (CapSetZero() != 0) return StepFailed(Step::kCapset);
  return StepOk();
}

}  // namespace cordon::linux_native
