// The escape harness: runs one attack twice through the real `cordon run` binary — once
// unsandboxed (`--mode off`, or bare when cordon itself would get in the way of the baseline)
// and once sandboxed — each time in a fresh directory tree, and judges both runs from outside
// (the host filesystem, host listeners, host processes, the output the caller receives).
//
// An attack that does not land unsandboxed is "broken": the test cannot show anything and
// fails. An attack that lands sandboxed is an escape.
//
// Directory tree of one run (under the base directory, see BaseDirectory()):
//   run/            root of the run; cordon.pid (the cordon process's pid), config.json,
//                   attack.sh (the case's shell text with its placeholders filled in)
//   run/ws/         the workspace
//   run/out/        a host directory outside the workspace, visible read-only in the sandbox
//   run/home/       the caller's HOME, with fake credentials (see secrets in cases_secret.cc)
//
// The base must be visible inside the sandbox (not below /tmp, /var/tmp, /dev/shm or /run,
// which the sandbox replaces by private directories): otherwise a write "outside" would only
// hit the sandbox's private tmpfs, and the tests would be weaker than they look.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cordon/config.h"
#include "support/host_files.h"

namespace cordon::escape_test {

enum class Baseline {
  kModeOff,  // `cordon run --mode off`: the same path through cordon, unconfined
  kBare,     // /bin/sh run directly by the harness (attacks on what cordon itself passes on)
};

// Everything the setup, the shell text and the outside check of one run can refer to.
struct Fixture {
  std::filesystem::path root, ws, out, home;
  std::string token;  // unique per run; part of every canary, file name and socket name
  bool sandboxed = false;
  // Placeholders of the shell text besides @ROOT@ @WS@ @OUT@ @HOME@ @BIN@ @TOKEN@ @CANARY@.
  std::map<std::string, std::string> vars;
  pid_t victim = -1;           // a host process started by StartVictim (killed at the end)
  int inherited_fd = -1;       // when >= 0, handed to the run as descriptor 9 (not close-on-exec)
  std::string not_applicable;  // set by a setup that cannot apply on this machine/caller
  std::vector<std::function<void()>> teardown;  // run after the check, in reverse order
  std::vector<int> sockets;                     // host listeners (closed at the end)
  // Filled in by the run.
  std::string output;  // stdout and stderr of cordon (what the caller sees)
  int exit_status = -1;
  bool not_served = false;  // CORDON_ESCAPE_SERVED=1 and the run server did not run it
};

struct Case {
  std::string category;
  std::string name;
  std::string script;                          // shell text, run as `/bin/sh attack.sh` in ws
  std::function<void(Fixture&)> setup;         // may be empty
  std::function<bool(const Fixture&)> landed;  // the attack's effect, seen from outside
  bool needs_root = false;                     // the baseline needs uid 0 (else n/a)
  SandboxMode mode = SandboxMode::kWorkspaceWrite;
  NetworkPolicy network = NetworkPolicy::kDeny;
  Baseline baseline = Baseline::kModeOff;
  std::string Id() const { return category + "/" + name; }
};

enum class Verdict { kContained, kEscaped, kBroken, kNotApplicable, kDidNotRun };
const char* VerdictName(Verdict verdict);

struct CaseResult {
  Verdict verdict = Verdict::kDidNotRun;
  std::string detail;  // why, with the output of the run that decided
};

// Runs the baseline, then the sandboxed run, and judges them.
CaseResult RunCase(const Case& c);

// Where the runs go: $CORDON_ESCAPE_BASE, else the current directory; empty with a reason in
// *why_not when that is a place the sandbox replaces (the tests would be weak).
std::filesystem::path BaseDirectory(std::string* why_not);

// Removes the per-process directory (call once, at the end of the test program).
void RemoveSessionDirectory();

// --- helpers for setups and checks ---

using test_support::Exists;    // tests/support, shared with the kernel and fault suites
using test_support::ReadFile;  // (WriteFile below also creates the parent directories)
void WriteFile(const std::filesystem::path& path, const std::string& content);
bool IsRoot();
// A non-loopback IPv4 address of this host, or "" when it has none.
std::string HostAddress();

// Host listeners; return the port (or 0 on failure). Connections wait in the backlog, datagrams
// in the receive queue, so Received() can look after the run without a thread.
int ListenTcp(Fixture& f, const std::string& address, const std::string& name);
int ListenUdp(Fixture& f, const std::string& address, const std::string& name);
bool ListenUnix(Fixture& f, const std::string& path, bool abstract, const std::string& name);
// True when the listener `name` got a connection or a datagram.
bool Received(const Fixture& f, const std::string& name);

// Starts `escape_attack victim` on the host with `env` added, cwd `cwd`; sets vars["VICTIM"].
void StartVictim(Fixture& f, const std::vector<std::string>& env, const std::filesystem::path& cwd);
// Starts `escape_attack ARGS...` on the host, or ARGS itself when ARGS[0] is /bin/sh (killed
// at the end of the run).
void StartHostHelper(Fixture& f, const std::vector<std::string>& args);
// True when the victim was killed (reaps it).
bool VictimDied(const Fixture& f);

// The staged escape_attack binary (visible inside the sandbox).
std::string AttackBinary();

}  // namespace cordon::escape_test
