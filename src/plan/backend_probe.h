// What a session found out, once at Create, about the backends other than the native one
// (src/session/backend_choice.cc probes them), handed to the pure assessment so that the
// backend choice, `cordon status` and every run agree (docs/decisions/0018).
#pragma once

#include <string>

namespace cordon::plan {

struct BwrapProbe {
  bool probed = false;  // false: not looked for (not needed by this config on this machine)
  bool usable = false;  // bwrap and the trampoline found and trusted, bwrap new enough, and it
                        // built user/PID/network namespaces here
  bool setuid = false;  // bwrap is setuid root: it builds namespaces even where unprivileged
                        // user namespaces are refused
  std::string detail;   // usable: "bubblewrap 0.8.0 at /usr/bin/bwrap"; else what is
                        // missing and the fix
};

struct SeatbeltProbe {
  bool platform = false;  // Seatbelt exists here (macOS; or a test's fake sandbox-exec)
  bool probed = false;    // false: not looked for (not needed by this config)
  bool usable = false;    // sandbox-exec ran a test profile and really denied its denied write
  std::string detail;     // usable: "sandbox-exec at /usr/bin/sandbox-exec enforces a test
                          // profile"; else what is missing and the fix
};

struct BackendProbes {
  BwrapProbe bwrap;
  SeatbeltProbe seatbelt;
};

}  // namespace cordon::plan
