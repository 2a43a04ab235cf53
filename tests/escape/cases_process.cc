// Environment leaks (a canary in the caller's environment, the sandbox's init, the supervisor)
// and other processes (a host process the test started: kill, ptrace, its environ).
#include "escape_cases.h"

namespace cordon::escape_test {
namespace {

bool CanaryLeaked(const Fixture& f) {
  return f.output.find("CANARY-" + f.token) != std::string::npos;
}

std::string VictimCanary(const Fixture& f) { return "VICTIM-CANARY-" + f.token; }

void StartVictimWithCanary(Fixture& f) {
  StartVictim(f, {"VICTIM_SECRET=" + VictimCanary(f)}, f.out);
}

}  // namespace

std::vector<Case> EnvironmentCases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::string script) {
    Case c;
    c.category = "env";
    c.name = std::move(name);
    c.script = std::move(script);
    c.landed = CanaryLeaked;
    cases.push_back(std::move(c));
    return &cases.back();
  };
  add("own-environment", "env; tr '\\0' '\\n' < /proc/self/environ");
  add("parent-and-pid-1-environ",
      "tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/1/environ");
  add("every-visible-process-environ",
      "for e in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $e 2>/dev/null; done; true");
  // The cordon process (the supervisor) on the host, by its host pid.
  add("supervisor-environ", "tr '\\0' '\\n' < /proc/$(cat @ROOT@/cordon.pid)/environ");
  add("own-environment-network-allow", "env")->network = NetworkPolicy::kAllow;
  return cases;
}

std::vector<Case> ProcessCases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::string script, std::function<bool(const Fixture&)> landed) {
    Case c;
    c.category = "process";
    c.name = std::move(name);
    c.script = std::move(script);
    c.setup = StartVictimWithCanary;
    c.landed = std::move(landed);
    cases.push_back(std::move(c));
    return &cases.back();
  };
  add("kill-host-process", "kill -KILL @VICTIM@", VictimDied);
  add("ptrace-host-process", "@BIN@ ptrace-kill @VICTIM@", VictimDied);
  add("host-process-environ", "tr '\\0' '\\n' < /proc/@VICTIM@/environ",
      [](const Fixture& f) { return f.output.find(VictimCanary(f)) != std::string::npos; });
  add("host-process-cmdline-and-status",
      "cat /proc/@VICTIM@/cmdline; echo; grep -s PPid /proc/@VICTIM@/status; "
      "ls /proc/@VICTIM@/fd",
      [](const Fixture& f) { return f.output.find("PPid") != std::string::npos; });
  add("kill-host-process-network-allow", "kill -KILL @VICTIM@", VictimDied)->network =
      NetworkPolicy::kAllow;
  return cases;
}

}  // namespace cordon::escape_test
