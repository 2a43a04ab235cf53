// The workspace and temporary locations under faults: a full workspace, an unwritable or
// missing TMPDIR, a workspace deleted (and replaced by a symlink) during a run, a workspace that
// is a symlink, and a writable root or workspace that is a symlink to `/`. Each ends with a
// clear error or a safe result, never a widened sandbox: every test checks from the host that
// the write meant to go outside did not land.
#include <unistd.h>

#include <thread>

#include "fault_support.h"

namespace cordon::fault_test {
namespace {

using std::chrono::milliseconds;

class WorkspaceFault : public FaultTest {
 protected:
  // Served (CORDON_FAULT_SERVED=1), a run that got past its checks must have been the
  // server's: `servable` false for a caller the server leaves to itself (another namespace).
  Child RunToEnd(const std::vector<std::string>& args,
                 const std::vector<std::string>& extra_env = {}, bool servable = true) {
    std::vector<std::string> env = Env();
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    const int served = server_ ? server_->Served() : 0;
    Child child = Start(args, env, root_);
    to_kill_.push_back(child.pid);
    EXPECT_TRUE(child.Wait(milliseconds(60000))) << "cordon did not finish";
    if (server_ && servable && child.ExitCode() != 125) {
      EXPECT_GT(server_->Served(), served) << "not served: " << child.output;
    }
    return child;
  }
};

// The workspace on a 64 KiB tmpfs (in a user and mount namespace of the test's own, so this
// runs unprivileged too): the command fills it; the run ends normally with the command's error.
TEST_F(WorkspaceFault, FullWorkspaceEndsWithTheCommandsOwnError) {
  std::string args;
  for (const auto& a : RunArgs("yes cordon > big; echo \"yes-exit=$?\"; echo x > @OUT@/leak")) {
    args += " '" + a + "'";
  }
  const std::string out = out_.string();
  for (std::size_t at = args.find("@OUT@"); at != std::string::npos; at = args.find("@OUT@")) {
    args.replace(at, 5, out);
  }
  WriteFile(root_ / "full.sh", "mount -t tmpfs -o size=64k tmpfs '" + ws_.string() +
                                   "' || exit 99\ncd '" + ws_.string() + "' && exec" + args + "\n");
  Child child = RunToEnd({"unshare", "-Urm", "/bin/sh", (root_ / "full.sh").string()}, {},
                         /*servable=*/false);
  if (child.ExitCode() == 99 || child.output.find("unshare:") != std::string::npos) {
    if (MustWork()) FAIL() << "cannot mount a small tmpfs: " << child.output;
    GTEST_SKIP() << "cannot mount a small tmpfs in a user namespace: " << child.output;
  }
  EXPECT_FALSE(Exists(out_ / "leak"));
  if (BwrapBackend()) {
    // In the test's user namespace /usr/bin/bwrap belongs to an unmapped user: cordon does
    // not trust it, and refuses the run instead of running without it (fail closed).
    EXPECT_EQ(child.ExitCode(), 125) << child.output;
    EXPECT_NE(child.output.find("not trusted"), std::string::npos) << child.output;
    return;
  }
  EXPECT_NE(child.output.find("No space left"), std::string::npos) << child.output;
  EXPECT_NE(child.output.find("yes-exit=1"), std::string::npos) << child.output;
}

TEST_F(WorkspaceFault, UnwritableOrMissingTmpdirStillRunsOrFailsClearly) {
  std::filesystem::create_directory(root_ / "readonly-tmp");
  std::filesystem::permissions(root_ / "readonly-tmp", std::filesystem::perms::owner_read |
                                                           std::filesystem::perms::owner_exec);
  for (const std::string& tmpdir : {(root_ / "readonly-tmp").string(), std::string("/nonexistent"),
                                    (root_ / "config.json").string()}) {
    Child child = RunToEnd(RunArgs("echo ran > inside; echo x > " + (out_ / "leak").string()),
                           {"TMPDIR=" + tmpdir});
    // Either it ran (the sandbox's temp dir is private, the host's TMPDIR is not used) or it
    // refused with a reason.
    if (child.ExitCode() == 125) {
      EXPECT_FALSE(child.output.empty()) << "TMPDIR=" << tmpdir;
    } else {
      EXPECT_TRUE(Exists(ws_ / "inside")) << "TMPDIR=" << tmpdir << ": " << child.output;
    }
    EXPECT_FALSE(Exists(out_ / "leak")) << "TMPDIR=" << tmpdir;
    std::error_code ec;
    std::filesystem::remove(ws_ / "inside", ec);
  }
}

// The host deletes the workspace while the command sleeps, and puts a symlink to `out/` where it
// was. The command's later writes (relative, and by the workspace's absolute path) must not
// follow the new symlink out of the sandbox.
TEST_F(WorkspaceFault, DeletedAndReplacedBySymlinkDuringRunDoesNotRedirectWrites) {
  const std::string text = "echo started; sleep 2; echo x > relative; echo x > " +
                           (ws_ / "absolute").string() + "; echo done";
  Child child = Start(RunArgs(text), Env(), root_);
  to_kill_.push_back(child.pid);
  for (int i = 0; i < 3000 && child.output.find("started") == std::string::npos; ++i) {
    child.Pump();
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_NE(child.output.find("started"), std::string::npos) << child.output;
  std::filesystem::remove_all(ws_);
  std::filesystem::create_directory_symlink(out_, ws_);
  ASSERT_TRUE(child.Wait(milliseconds(30000)));
  EXPECT_FALSE(WIFSIGNALED(child.status)) << "cordon crashed: " << child.output;
  EXPECT_FALSE(Exists(out_ / "relative")) << child.output;
  EXPECT_FALSE(Exists(out_ / "absolute")) << child.output;
}

TEST_F(WorkspaceFault, WorkspaceGivenAsSymlinkIsItsTargetAndNothingMore) {
  const auto link = out_ / "ws-link";
  std::filesystem::create_directory_symlink(ws_, link);
  std::vector<std::string> args =
      RunArgs("echo x > inside; echo x > " + (link / "../leak-via-link").string() + "; echo x > " +
              (out_ / "leak").string() + "; true");
  for (auto& a : args) {
    if (a == ws_.string()) a = link.string();
  }
  Child child = RunToEnd(args);
  EXPECT_EQ(child.ExitCode(), 0) << child.output;
  EXPECT_TRUE(Exists(ws_ / "inside")) << child.output;
  EXPECT_FALSE(Exists(root_ / "leak-via-link"));
  EXPECT_FALSE(Exists(out_ / "leak-via-link"));
  EXPECT_FALSE(Exists(out_ / "leak"));
}

TEST_F(WorkspaceFault, WritableRootThatIsASymlinkToSlashIsRefused) {
  const auto link = out_ / "slash";
  std::filesystem::create_directory_symlink("/", link);
  Child child = RunToEnd(
      RunArgs("echo x > " + (out_ / "leak").string(), {"--writable-root=" + link.string()}));
  EXPECT_EQ(child.ExitCode(), 125) << child.output;
  EXPECT_NE(child.output.find("/"), std::string::npos) << child.output;
  EXPECT_FALSE(Exists(out_ / "leak"));
}

TEST_F(WorkspaceFault, WorkspaceThatIsASymlinkToSlashDoesNotMakeTheHostWritable) {
  const auto link = out_ / "slash";
  std::filesystem::create_directory_symlink("/", link);
  std::vector<std::string> args = RunArgs("echo x > " + (out_ / "leak").string());
  for (auto& a : args) {
    if (a == ws_.string()) a = link.string();
  }
  Child child = RunToEnd(args);
  // Refused (125), or run with the host still read-only outside a workspace of "/"... which
  // would be the whole host: only the refusal is safe.
  EXPECT_EQ(child.ExitCode(), 125) << child.output;
  EXPECT_FALSE(Exists(out_ / "leak")) << "a workspace of / made the host writable";
}

}  // namespace
}  // namespace cordon::fault_test
