// The sandbox's init execs cordon-init once the command has started (docs/decisions/0021):
// checked from outside (the host's view of the command's parent) and through the command's
// exit status, with the twins where the reaper must not be used.
#include "linux/init_reaper.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

using namespace std::chrono_literals;

// Each test starts with the suite's reaper (kernel_support.cc sets it in SetUp).
class InitReaperTest : public KernelTest {
 protected:
  // The parent, on the host, of the process whose command line holds `marker`.
  static pid_t HostParentOf(const std::string& marker) {
    for (int i = 0; i < 500; ++i, std::this_thread::sleep_for(10ms)) {
      for (pid_t pid : PidsWithMarker(marker)) {
        const std::string status = ReadFile("/proc/" + std::to_string(pid) + "/status");
        const std::size_t at = status.find("\nPPid:\t");
        if (at != std::string::npos) return static_cast<pid_t>(std::stol(status.substr(at + 7)));
      }
    }
    return -1;
  }

  // Copies the suite's cordon-init to `to` with `mode`; names it as the reaper.
  void UseCopyOfReaper(const std::filesystem::path& to, mode_t mode) {
    const std::string source = SuiteInitReaper();
    ASSERT_FALSE(source.empty()) << "no cordon-init configured for the suite";
    std::filesystem::copy_file(source, to, std::filesystem::copy_options::overwrite_existing);
    ASSERT_EQ(::chmod(to.c_str(), mode), 0);
    linux_native::SetInitReaperPath(to);
  }

  // root_/libexec, as a trusted place for a reaper: it and root_ only owner-writable.
  std::filesystem::path TrustedLibexec() {
    const std::filesystem::path dir = root_ / "libexec";
    std::filesystem::create_directory(dir);
    EXPECT_EQ(::chmod(root_.c_str(), 0755), 0);
    EXPECT_EQ(::chmod(dir.c_str(), 0755), 0);
    return dir;
  }

  // Init execs cordon-init right after it started the command (decision 0025): the command can
  // look before that exec is done, so it looks for a while (half a second at most).
  std::string InitComm(const Session& session) {
    const RunResult r = Shell(session,
                              "for i in $(seq 50); do c=$(cat /proc/1/comm); "
                              "[ \"$c\" = cordon-init ] && break; sleep 0.01; done; echo \"$c\"");
    EXPECT_EQ(r.status, RunStatus::kExited) << Describe(r);
    return r.stdout_data.data;
  }
};

TEST_F(InitReaperTest, TheSandboxInitBecomesTheReaperOnceTheCommandRuns) {
  CORDON_SKIP_UNDER_BWRAP("bubblewrap has its own init");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  EXPECT_EQ(InitComm(*session), "cordon-init\n") << linux_native::InitReaperProblem();
}

TEST_F(InitReaperTest, TheInitSeenFromTheHostHoldsNoneOfTheCallersEnvironment) {
  CORDON_SKIP_UNDER_BWRAP("bubblewrap has its own init");
  CORDON_SKIP_UNLESS_LIBRARY("the marker is also in the command line of `cordon` itself");
  if (::geteuid() != 0) GTEST_SKIP() << "reading a non-dumpable process's environ needs root";
  ::setenv("CORDON_REAPER_TEST_SECRET", "s3cr3t-of-the-caller", 1);
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::string marker = "reaper-marker-" + unique_;
  RunResult result;
  std::thread run([&] { result = Shell(*session, "sleep 2; : " + marker); });
  const pid_t init = HostParentOf(marker);
  std::string environ_text;
  std::string comm;
  if (init > 0) {
    // Init execs cordon-init right after the command started (decision 0025): until then it
    // is still the fork of the supervisor, so the host waits for the exec before it looks.
    const std::string proc = "/proc/" + std::to_string(init);
    for (int i = 0; i < 150 && comm != "cordon-init\n"; ++i) {
      if (i > 0) std::this_thread::sleep_for(10ms);
      comm = ReadFile(proc + "/comm");
    }
    environ_text = ReadFile(proc + "/environ");
  }
  run.join();
  ::unsetenv("CORDON_REAPER_TEST_SECRET");
  ASSERT_GT(init, 0) << "the command never showed up on the host";
  EXPECT_EQ(comm, "cordon-init\n");
  EXPECT_EQ(environ_text.find("s3cr3t-of-the-caller"), std::string::npos) << environ_text;
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
}

TEST_F(InitReaperTest, ExitCodesAndSignalsPassThroughTheReaper) {
  CORDON_SKIP_UNDER_BWRAP("bubblewrap has its own init");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  ASSERT_EQ(InitComm(*session), "cordon-init\n");
  const RunResult exited = Shell(*session, "exit 7");
  EXPECT_EQ(exited.status, RunStatus::kExited) << Describe(exited);
  EXPECT_EQ(exited.exit_code, 7);
  const RunResult killed = Shell(*session, "kill -TERM $$");
  EXPECT_EQ(killed.status, RunStatus::kSignaled) << Describe(killed);
  EXPECT_EQ(killed.signal, SIGTERM);
}

TEST_F(InitReaperTest, AReaperTheCommandCouldRewriteIsNotUsed) {
  CORDON_SKIP_UNLESS_LIBRARY("it names a reaper to this process (SetInitReaperPath)");
  CORDON_SKIP_UNDER_BWRAP("bubblewrap has its own init");
  // Inside the workspace, a writable root of this run: the command could replace it for the
  // next run's init. The run still works, with init's own loop.
  UseCopyOfReaper(workspace_ / "cordon-init", 0755);
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::string comm = InitComm(*session);
  EXPECT_NE(comm, "cordon-init\n");
  EXPECT_FALSE(comm.empty());
  // The twin: the same copy in a read-only run (nothing writable holds it) is used.
  auto read_only = SessionOrSkip(MakeConfig(SandboxMode::kReadOnly));
  if (!read_only) return;
  EXPECT_EQ(InitComm(*read_only), "cordon-init\n") << linux_native::InitReaperProblem();
}

TEST_F(InitReaperTest, OnlyAPlanWithItsOwnNamespacesGetsTheReaper) {
  // The Landlock-only fallback's init must kill orphans and remove its private directory on
  // the host itself: the reaper does neither.
  plan::LaunchPlan plan;
  plan.namespaces.user = plan.namespaces.mount = plan.namespaces.pid = true;
  EXPECT_GE(linux_native::InitReaperFdFor(plan), 0) << linux_native::InitReaperProblem();
  plan.namespaces.pid = false;
  EXPECT_EQ(linux_native::InitReaperFdFor(plan), -1);
  plan.namespaces = {};
  EXPECT_EQ(linux_native::InitReaperFdFor(plan), -1);
}

TEST_F(InitReaperTest, AReaperWritableByOthersIsNotUsed) {
  CORDON_SKIP_UNLESS_LIBRARY("it names a reaper to this process (SetInitReaperPath)");
  CORDON_SKIP_UNDER_BWRAP("bubblewrap has its own init");
  const std::filesystem::path dir = TrustedLibexec();
  UseCopyOfReaper(dir / "cordon-init", 0777);
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  EXPECT_NE(InitComm(*session), "cordon-init\n");
  EXPECT_NE(linux_native::InitReaperProblem().find("writable by group or others"),
            std::string::npos)
      << linux_native::InitReaperProblem();
  // The twin: the same file, once only its owner may write it, is used.
  ASSERT_EQ(::chmod((dir / "cordon-init").c_str(), 0755), 0);
  linux_native::SetInitReaperPath(dir / "cordon-init");
  EXPECT_EQ(InitComm(*session), "cordon-init\n") << linux_native::InitReaperProblem();
}

TEST_F(InitReaperTest, AReaperTheKernelWouldNotRunIsNotUsed) {
  CORDON_SKIP_UNLESS_LIBRARY("it names a reaper to this process (SetInitReaperPath)");
  CORDON_SKIP_UNDER_BWRAP("bubblewrap has its own init");
  // init may share the supervisor's memory until that exec, and then cannot survive a failed
  // one (decision 0025): a trusted file that is no executable for this machine is refused
  // up front, and the run works with init's own loop.
  const std::filesystem::path reaper = TrustedLibexec() / "cordon-init";
  {
    std::ofstream out(reaper);
    out << "not an executable at all\n";
  }
  ASSERT_EQ(::chmod(reaper.c_str(), 0755), 0);
  linux_native::SetInitReaperPath(reaper);
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult r = Shell(*session, "echo ran; exit 3");
  EXPECT_EQ(r.status, RunStatus::kExited) << Describe(r);
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_EQ(r.stdout_data.data, "ran\n");
  EXPECT_NE(InitComm(*session), "cordon-init\n");
  EXPECT_NE(linux_native::InitReaperProblem().find("not an ELF executable"), std::string::npos)
      << linux_native::InitReaperProblem();
  // The twin: the real cordon-init in the same place is used.
  UseCopyOfReaper(reaper, 0755);
  EXPECT_EQ(InitComm(*session), "cordon-init\n") << linux_native::InitReaperProblem();
}

// Until it execs cordon-init, init runs in the supervisor's address space (CLONE_VM, decision
// 0025). Several threads' inits may share it at once: one init's setup must not stop another's
// (a non-dumpable memory would refuse an unprivileged init its id maps), and the supervisor
// keeps its own settings.
// The descriptors this process holds on `file`.
int DescriptorsOn(const std::filesystem::path& file) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(entry.path(), ec) == file) ++count;
  }
  return count;
}

TEST_F(InitReaperTest, NamingTheSameReaperAgainHoldsNoNewDescriptor) {
  CORDON_SKIP_UNLESS_LIBRARY("it names a reaper to this process (SetInitReaperPath)");
  CORDON_SKIP_UNDER_BWRAP("bubblewrap has its own init");
  const std::filesystem::path dir = TrustedLibexec();
  UseCopyOfReaper(dir / "cordon-init", 0755);
  ASSERT_EQ(linux_native::InitReaperPath(), dir / "cordon-init")
      << linux_native::InitReaperProblem();
  ASSERT_EQ(DescriptorsOn(dir / "cordon-init"), 1);
  // Named again and again (every test of a suite does): still the one descriptor.
  for (int i = 0; i < 50; ++i) {
    linux_native::SetInitReaperPath(dir / "cordon-init");
    ASSERT_EQ(linux_native::InitReaperPath(), dir / "cordon-init");
  }
  EXPECT_EQ(DescriptorsOn(dir / "cordon-init"), 1);
  // Twin: a different file at the same path is a new lookup, held beside the old descriptor
  // (a launch may still be using that one).
  UseCopyOfReaper(dir / "cordon-init.new", 0755);
  std::filesystem::rename(dir / "cordon-init.new", dir / "cordon-init");
  linux_native::SetInitReaperPath(dir / "cordon-init");
  ASSERT_EQ(linux_native::InitReaperPath(), dir / "cordon-init");
  EXPECT_EQ(DescriptorsOn(dir / "cordon-init"), 1) << "the new file is not the one held";
  EXPECT_EQ(DescriptorsOn(dir / "cordon-init (deleted)"), 1) << "the old one was closed";
}

TEST_F(InitReaperTest, ConcurrentRunsOfOneSupervisorAllStartAndLeaveItDumpable) {
  CORDON_SKIP_UNDER_BWRAP("bubblewrap's init is not a clone of the supervisor");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  ASSERT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
  std::atomic<int> exited{0};
  std::vector<std::string> failures(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 4; ++i) {
        const RunResult r = Shell(*session, "exit 0");
        if (r.status == RunStatus::kExited && r.exit_code == 0) {
          ++exited;
        } else {
          failures[t] = Describe(r);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(exited.load(), 12) << failures[0] << failures[1] << failures[2];
  EXPECT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
}

}  // namespace
}  // namespace cordon::kernel_test
