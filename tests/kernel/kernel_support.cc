#include "kernel_support.h"

#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "linux/init_reaper.h"
#include "session/backend_choice.h"

namespace cordon::kernel_test {

namespace {

// A helper binary's path: `$variable` when scripts/run_unprivileged.sh staged it elsewhere, else
// the one built with the suite (`built`, may be null), else "".
std::string StagedOrBuilt(const char* variable, const char* built) {
  if (const char* staged = ::getenv(variable); staged != nullptr && staged[0] != '\0') {
    return staged;
  }
  return built != nullptr ? built : "";
}

#ifdef CORDON_PROBE_PATH
constexpr const char* kBuiltProbe = CORDON_PROBE_PATH;
#else
constexpr const char* kBuiltProbe = nullptr;
#endif
#ifdef CORDON_BWRAP_EXEC_PATH
constexpr const char* kBuiltTrampoline = CORDON_BWRAP_EXEC_PATH;
#else
constexpr const char* kBuiltTrampoline = nullptr;
#endif
#ifdef CORDON_INIT_PATH
constexpr const char* kBuiltInit = CORDON_INIT_PATH;
#else
constexpr const char* kBuiltInit = nullptr;
#endif

}  // namespace

std::string ProbePath() { return StagedOrBuilt("CORDON_PROBE", kBuiltProbe); }

BackendChoice TestBackend() {
  const char* value = ::getenv("CORDON_TEST_BACKEND");
  return value != nullptr && std::string(value) == "bwrap" ? BackendChoice::kBwrap
                                                           : BackendChoice::kAuto;
}

bool UnderBwrap() { return TestBackend() == BackendChoice::kBwrap; }

std::string SuiteInitReaper() { return StagedOrBuilt("CORDON_INIT", kBuiltInit); }

void KernelTest::SetUp() {
  // The test binary does not sit beside cordon-bwrap-exec: name it before any session exists.
  if (const std::string trampoline = StagedOrBuilt("CORDON_BWRAP_EXEC", kBuiltTrampoline);
      !trampoline.empty()) {
    session::SetBwrapTrampoline(trampoline);
  }
  // The same for cordon-init, which the sandbox's init execs (linux/init_reaper.h).
  if (const std::string reaper = SuiteInitReaper(); !reaper.empty()) {
    linux_native::SetInitReaperPath(reaper);
  }
  std::string templ = "/tmp/cordon-kernel-XXXXXX";
  ASSERT_NE(::mkdtemp(templ.data()), nullptr) << "mkdtemp: " << std::strerror(errno);
  root_ = templ;
  workspace_ = root_ / "ws";
  home_ = root_ / "home";
  std::filesystem::create_directory(workspace_);
  std::filesystem::create_directory(home_);
  unique_ = root_.filename().string();
  // The caller's HOME is the fake one, so "the real home" of the tests is a directory we can
  // inspect and throw away.
  if (const char* home = ::getenv("HOME")) saved_home_ = home;
  ::setenv("HOME", home_.c_str(), 1);
  if (TestKernelPath() != KernelPath::kLibrary) {
    path_ = std::make_unique<PathRunner>(TestKernelPath());
  }
}

void KernelTest::TearDown() {
  path_.reset();  // its servers end before the trees they served go
  if (saved_home_) {
    ::setenv("HOME", saved_home_->c_str(), 1);
  } else {
    ::unsetenv("HOME");
  }
  std::error_code ec;
  for (const auto& path : cleanup_) std::filesystem::remove_all(path, ec);
  if (!root_.empty()) std::filesystem::remove_all(root_, ec);
}

Config KernelTest::MakeConfig(SandboxMode mode, NetworkPolicy network) const {
  Config config;
  config.sandbox.mode = mode;
  config.sandbox.network = network;
  config.limits.timeout = std::chrono::seconds(30);
  config.sandbox.backend = TestBackend();
  return config;
}

std::optional<Session> KernelTest::SessionOrSkip(const Config& config,
                                                 const std::filesystem::path& workspace) {
  Result<Session> session =
      Session::Create(config, workspace.empty() ? workspace_ : workspace, session_options_);
  if (!session) {
    ADD_FAILURE() << "Session::Create: " << session.error().message;
    return std::nullopt;
  }
  Capabilities caps = session->GetCapabilities();
  if (!caps.can_run()) {
    std::string reason;
    for (const auto& missing : caps.missing) reason += missing + "; ";
    if (MustWork()) {
      ADD_FAILURE() << "CORDON_TEST_MUST_WORK=1 but the sandbox is unavailable: " << reason;
    } else {
      // GTEST_SKIP() returns from the function; the caller returns on nullopt instead.
      GTEST_MESSAGE_(("sandbox unavailable on this machine: " + reason).c_str(),
                     ::testing::TestPartResult::kSkip);
    }
    return std::nullopt;
  }
  return std::move(*session);
}

std::string KernelTest::StageProbe() {
  const std::string source = ProbePath();
  if (source.empty()) {
    ADD_FAILURE() << "tests/probe/cordon_probe was not built";
    return {};
  }
  const std::filesystem::path staged = workspace_ / ".cordon_probe";
  std::error_code ec;
  std::filesystem::copy_file(source, staged, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) {
    ADD_FAILURE() << "copy " << source << " to " << staged << ": " << ec.message();
    return {};
  }
  std::filesystem::permissions(staged, std::filesystem::perms::owner_all, ec);
  return staged.string();
}

RunResult KernelTest::Shell(const Session& session, const std::string& text,
                            std::optional<std::chrono::milliseconds> timeout) {
  if (path_) return path_->Run(session, text, timeout);
  CommandRequest request;
  request.shell_text = text;
  request.timeout = timeout;
  return session.Run(request);
}

void ProbeTest::SetUp() {
  KernelTest::SetUp();
  if (HasFatalFailure()) return;
  probe_ = StageProbe();
  if (probe_.empty()) GTEST_FAIL() << "no probe to run inside the sandbox";
}

RunResult ProbeTest::Probe(const Session& session, const std::string& args) {
  return Shell(session, fmt::format("'{}' {}", probe_, args));
}

std::string ProbeTest::Line(const RunResult& result) {
  std::string line = result.stdout_data.data;
  if (!line.empty() && line.back() == '\n') line.pop_back();
  return line;
}

std::string Describe(const RunResult& result) {
  return fmt::format("status={} exit={} signal={} error='{}' stdout='{}' stderr='{}'",
                     RunStatusName(result.status), result.exit_code, result.signal, result.error,
                     result.stdout_data.data, result.stderr_data.data);
}

bool FileStopsChanging(const std::filesystem::path& file, std::chrono::milliseconds quiet) {
  const std::string before = ReadFile(file);
  std::this_thread::sleep_for(quiet);
  return ReadFile(file) == before;
}

std::string StartDaemonShell(const std::filesystem::path& heartbeat) {
  // ( ... & ) forks twice: the daemon's parent exits at once, and setsid leaves the command's
  // session and process group. Only a PID namespace (or nothing) catches it.
  return fmt::format(
      "( setsid sh -c 'while :; do echo beat >> {0}; sleep 0.05; done' "
      "</dev/null >/dev/null 2>&1 & ); "
      "while [ ! -s {0} ]; do sleep 0.01; done",
      heartbeat.string());
}

}  // namespace cordon::kernel_test
