// Shared fixture of the kernel tests: real sandboxes through the library (Session::Run), with
// every verdict checked from outside the sandbox (the host filesystem, a host listener, the
// host's /proc).
//
// Each test gets a fresh directory tree from mkdtemp under /tmp (reachable by any user, so the
// suite runs as root and as an unprivileged user):
//   root/            the workspace's parent (must stay unwritten)
//   root/ws/         the workspace
//   root/home/       a fake $HOME of the caller (must stay unwritten)
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cordon/config.h"
#include "cordon/run.h"
#include "cordon/session.h"
#include "kernel_path.h"
#include "support/host_files.h"
#include "support/host_listener.h"
#include "support/host_processes.h"

namespace cordon::kernel_test {

// Host-side helpers shared with the escape and fault suites (tests/support).
using test_support::Exists;
using test_support::HostListener;
using test_support::MustWork;
using test_support::NoneWithMarker;
using test_support::PidsWithMarker;
using test_support::ReadFile;

// The probe binary (tests/probe): $CORDON_PROBE when set, else the one built with the tests;
// empty when neither exists.
std::string ProbePath();

// The cordon-init every kernel test's sandbox execs (SetUp names it): $CORDON_INIT when staged
// elsewhere (scripts/run_unprivileged.sh), else the one built with the suite; "" when none.
std::string SuiteInitReaper();

// The backend the suite runs over: CORDON_TEST_BACKEND=bwrap selects bubblewrap (with the
// trampoline from $CORDON_BWRAP_EXEC when set); anything else or unset keeps the default, auto,
// which is the native backend wherever its namespaces work.
// The same cases and expectations run over both; where bwrap cannot give a guarantee the
// expectation is the assessment's refusal.
BackendChoice TestBackend();
bool UnderBwrap();

// Skips the current test when the suite runs over bwrap (e.g. the zygote serves only native).
// True when Shell() runs commands in this process (CORDON_KERNEL_PATH unset or "library").
inline bool InLibrary() { return TestKernelPath() == KernelPath::kLibrary; }

// Skips the current test when its commands do not run in the library (CORDON_KERNEL_PATH): it
// judges state of the test process's own session (its zygote, its prepared commands).
#define CORDON_SKIP_UNLESS_LIBRARY(why)                                                            \
  if (::cordon::kernel_test::TestKernelPath() == ::cordon::kernel_test::KernelPath::kLibrary) {    \
  } else                                                                                           \
    GTEST_SKIP() << ::cordon::kernel_test::KernelPathName(::cordon::kernel_test::TestKernelPath()) \
                 << " path: " << why

#define CORDON_SKIP_UNDER_BWRAP(why)          \
  if (!::cordon::kernel_test::UnderBwrap()) { \
  } else                                      \
    GTEST_SKIP() << "bwrap backend: " << why

class KernelTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A config for `mode` and `network` with the test-friendly limits, on TestBackend().
  Config MakeConfig(SandboxMode mode = SandboxMode::kWorkspaceWrite,
                    NetworkPolicy network = NetworkPolicy::kDeny) const;

  // Creates a session on the workspace (or on `workspace` when given). When the machine cannot
  // enforce `config`, skips the test with the reason (fails under CORDON_TEST_MUST_WORK=1) and
  // returns nullopt.
  std::optional<Session> SessionOrSkip(const Config& config,
                                       const std::filesystem::path& workspace = {});

  // Copies the probe into the workspace and returns its path there: the sandbox sees the host
  // read-only but has a private /tmp, so a probe staged under the host's /tmp (as
  // scripts/run_unprivileged.sh does) would be invisible inside. Fails the test without one.
  std::string StageProbe();

  // Runs shell text in `session` (in the workspace), by the path CORDON_KERNEL_PATH names
  // (kernel_path.h).
  RunResult Shell(const Session& session, const std::string& text,
                  std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  std::filesystem::path root_;
  std::filesystem::path workspace_;
  std::filesystem::path home_;
  std::string unique_;              // a per-test token for paths outside the tree (/etc, /tmp)
  SessionOptions session_options_;  // what SessionOrSkip creates sessions with
  std::vector<std::filesystem::path> cleanup_;  // outside paths to remove if a test made them

 private:
  std::optional<std::string> saved_home_;
  std::unique_ptr<PathRunner> path_;  // the server or MCP path; null for the library
};

// A KernelTest whose cases run the probe (tests/probe) inside the sandbox: staged into the
// workspace by SetUp (the test fails without one).
class ProbeTest : public KernelTest {
 protected:
  void SetUp() override;

  // Runs `probe_ args` (shell text) in `session`.
  RunResult Probe(const Session& session, const std::string& args);

  // The probe's one-line answer, without the newline.
  static std::string Line(const RunResult& result);

  std::string probe_;
};

// Describes a RunResult for assertion messages.
std::string Describe(const RunResult& result);

// True when `file` does not change for `quiet` (a stopped heartbeat).
bool FileStopsChanging(const std::filesystem::path& file, std::chrono::milliseconds quiet);

// Shell text that starts a daemon (double fork + setsid) appending to `heartbeat` every 50 ms
// and waits until the first beat landed, so the daemon really runs before the command goes on.
std::string StartDaemonShell(const std::filesystem::path& heartbeat);

}  // namespace cordon::kernel_test
