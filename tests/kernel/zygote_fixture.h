// The fixture of the zygote suites (src/zygote, ADR 0010): a long-lived session whose
// commands join namespaces prepared once, run twice — joining the zygote themselves (Direct)
// and starting in a sandbox the session prepared ahead (Prepared, ADR 0023). Shared by
// zygote_test.cc and zygote_host_change_test.cc (one parameterised suite, ZygoteTest).
#pragma once

#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "kernel_support.h"
#include "zygote/zygote_slot.h"

namespace cordon::kernel_test {

using namespace std::chrono_literals;

class ZygoteTest : public KernelTest, public ::testing::WithParamInterface<bool> {
 protected:
  bool prepared() const { return GetParam(); }

  void SetUp() override {
    KernelTest::SetUp();
    session_options_ = {.long_lived = true, .prepared_commands = prepared() ? 2 : 0};
    // The caller's home from the password database, not the test's home under /tmp: the plan's
    // Landlock read rules list the entries of each ancestor of a credential path, and /tmp's
    // change with every test running beside this one, which would change the plan's shape
    // (and discard the prepared sandboxes) between any two commands.
    ::unsetenv("HOME");
    // Served or through `cordon mcp`, the server's own zygote and prepared sandboxes run the
    // commands, with its settings: one variant runs there, without this process's counters.
    if (!prepared()) {
      CORDON_SKIP_UNLESS_LIBRARY("the Prepared variant runs these cases");
    }
    // Except the case below that pins exactly this.
    if (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) !=
        "ALongLivedSessionOnBwrapLaunchesEveryCommandThroughBwrap") {
      CORDON_SKIP_UNDER_BWRAP("the zygote serves only the native backend");
    }
  }
  void TearDown() override {
    ExpectSomePreparedStarts();
    KernelTest::TearDown();
  }

  // Runs `text` and checks it went through the zygote; in the Prepared variant, a session's
  // commands after its first must have started in a prepared sandbox.
  RunResult Joined(const Session& session, const std::string& text,
                   std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    const bool expect_prepared = prepared() && !first_of_.insert(&session).second;
    if (!InLibrary()) {
      if (expect_prepared) std::this_thread::sleep_for(300ms);  // the server prepares
      return Shell(session, text, timeout);
    }
    if (expect_prepared) {
      for (int i = 0; i < 500 && zygote::PreparedReady() == 0; ++i) {
        std::this_thread::sleep_for(10ms);
      }
    }
    const std::uint64_t before = zygote::ZygoteLaunches();
    const std::uint64_t before_prepared = zygote::PreparedLaunches();
    const std::uint64_t before_changes = zygote::PreparedShapeChanges();
    const std::uint64_t before_lost = zygote::PreparedViewsLost();
    RunResult result = Shell(session, text, timeout);
    EXPECT_EQ(zygote::ZygoteLaunches(), before + 1)
        << "not launched through the zygote: " << Describe(result);
    const bool started_prepared = zygote::PreparedLaunches() == before_prepared + 1;
    if (!expect_prepared) {
      EXPECT_FALSE(started_prepared) << "started in a prepared sandbox: " << Describe(result);
      return result;
    }
    if (started_prepared) {
      ++prepared_starts_;
      ++expected_starts_;
      return result;
    }
    // Only the host changing under the session may explain it: the plan's shape changed, or a
    // mask of the prepared view was detached (/etc's root-only files are masked in every
    // sandbox of a root caller, so a test beside this one renaming its own file there does it).
    const bool shape_changed = zygote::PreparedShapeChanges() > before_changes;
    const bool view_lost = zygote::PreparedViewsLost() > before_lost;
    EXPECT_TRUE(shape_changed || view_lost)
        << "not started in a prepared sandbox: " << Describe(result);
    if (!shape_changed && !view_lost) ++expected_starts_;
    return result;
  }

  // Prepared variant: waits until the session has a prepared sandbox ready (after its first
  // command), so that the next command can start in it.
  void WaitForPrepared() {
    if (!prepared()) return;
    if (!InLibrary()) {  // the server's prepared sandboxes: time to prepare one
      std::this_thread::sleep_for(300ms);
      return;
    }
    for (int i = 0; i < 500 && zygote::PreparedReady() == 0; ++i) {
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_GT(zygote::PreparedReady(), 0u) << "no sandbox was prepared";
  }

  void ExpectSomePreparedStarts() {
    if (expected_starts_ > 0) {
      EXPECT_GT(prepared_starts_, 0)
          << "none of " << expected_starts_ << " commands started in a prepared sandbox";
    }
  }

  // `config` with the workspace file `name` (written with `text`) in sandbox.hidden_paths; its
  // canonical path.
  std::filesystem::path HideInWorkspace(Config& config, const std::string& name,
                                        const std::string& text) {
    const std::filesystem::path secret = std::filesystem::canonical(workspace_) / name;
    { std::ofstream(secret) << text; }
    config.sandbox.hidden_paths.push_back(secret);
    return secret;
  }

  std::set<const Session*> first_of_;  // sessions that ran a command through Joined
  int expected_starts_ = 0;
  int prepared_starts_ = 0;
};

}  // namespace cordon::kernel_test
