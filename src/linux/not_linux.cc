// Built instead of the native backend where there is no Linux kernel (macOS, ADR 0020): the
// kernel probe finds nothing, so the assessment never picks the native backend there and a
// run that would need it is refused (fail closed). The rest of src/linux is Linux-only.
#include "linux/kernel_features.h"

namespace cordon::linux_native {

KernelFeatures ProbeKernel() { return KernelFeatures{}; }

KernelFeatures ProbeKernelThoroughly() { return KernelFeatures{}; }

}  // namespace cordon::linux_native
