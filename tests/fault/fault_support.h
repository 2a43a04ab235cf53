// Shared fixture of the fault tests: the real `cordon` binary started as a child that the test
// can kill at any moment, and the host-side evidence of what a run left behind (processes,
// mounts, private directories, cgroups), compared before and after.
//
// Each test gets a fresh tree under the base directory ($CORDON_FAULT_BASE, else the current
// directory — ctest runs the tests in the build tree):
//   root/ws/     the workspace           root/out/   outside the workspace (must stay unwritten)
//   root/home/   the caller's HOME       root/config.json   the config passed with --config
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "support/host_files.h"
#include "support/host_processes.h"
#include "support/run_server.h"

namespace cordon::fault_test {

// Host-side helpers shared with the kernel and escape suites (tests/support).
using test_support::Exists;
using test_support::MustWork;
using test_support::NoneWithMarker;
using test_support::PidsWithMarker;
using test_support::ReadFile;
using test_support::WriteFile;

std::string CordonBinary();
// The helper that carries a run through `cordon mcp` (CORDON_FAULT_MCP_RUN, else beside the
// suite, else the build's).
std::string McpRunBinary();

// CORDON_FAULT_SERVED=1: each test starts a run server of its own (in root/server), and every
// `cordon run` of the test goes to it; the faults then hit the served path (a killed client,
// a workspace swapped under a served run).
bool ServedRuns();
// CORDON_FAULT_PATH=mcp: every run goes through `cordon mcp` as an agent's does (the
// fault_mcp_run helper starts it as its child and carries the command line over); the faults
// then hit `cordon mcp`'s long-lived session. "cordon" is the `cordon mcp` process.
bool McpRuns();
// CORDON_TEST_BACKEND=bwrap: every run's config selects the bubblewrap backend.
bool BwrapBackend();

// A started child process (cordon, or a wrapper around it) with stdout+stderr on one pipe.
struct Child {
  pid_t pid = -1;
  int output_fd = -1;  // non-blocking
  std::string output;  // what Pump() has read so far
  int status = -1;     // wait status once Wait() returned true

  void Pump();  // reads what is available
  // Waits for the exit (reading output meanwhile) up to `limit`; true when it exited.
  bool Wait(std::chrono::milliseconds limit);
  bool Exited() const { return status != -1; }
  int ExitCode() const;  // WEXITSTATUS, or 128+signal
};

// Starts argv with `env` (PATH is added) in `cwd`.
Child Start(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            const std::filesystem::path& cwd);

// What a run can leave on the host: mount points (host mount namespace), cordon's private
// directories in /tmp (/tmp/cordon-XXXXXX, the fallback backend's), and cordon's cgroups.
struct HostTraces {
  std::set<std::string> mounts;
  std::set<std::string> private_dirs;
  std::set<std::string> cgroups;
};
HostTraces SnapshotTraces();
// Entries of `after` not in `before`, as lines for a message; empty when nothing was left.
std::string NewTraces(const HostTraces& before, const HostTraces& after);

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // `cordon --config root/config.json run --workspace ws [extra...] -- /bin/sh -c TEXT`
  std::vector<std::string> RunArgs(const std::string& shell_text,
                                   const std::vector<std::string>& extra = {}) const;
  // HOME and the config location for cordon.
  std::vector<std::string> Env() const;
  // The process that is "cordon" in a run started as `started`: itself, or through `cordon
  // mcp` the helper's one child, `cordon mcp` (waited for up to 5 s; -1 when there is none).
  pid_t CordonOf(pid_t started) const;

  std::filesystem::path root_, ws_, out_, home_;
  std::string marker_;  // unique per test; put it in the command so its processes can be found
  std::vector<pid_t> to_kill_;  // children to SIGKILL in TearDown if still there
  std::unique_ptr<test_support::RunServer> server_;  // CORDON_FAULT_SERVED=1
};

}  // namespace cordon::fault_test
