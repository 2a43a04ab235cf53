// `cordon run` (native backend, and `--backend bwrap`) next to the same command bare and under
// bubblewrap with flags that give the same policy (workspace writable, host read-only, private
// /tmp, new namespaces incl. network, no capabilities, clean environment), in one run.
// bench/run_benchmarks.sh turns the JSON output into the ratios recorded in docs/performance.md.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "pause.h"
#include "spawn.h"

namespace cordon::bench {
namespace {

// CORDON_RUN_SERVER=off: a one-shot `cordon run` neither uses a server the machine may have
// running nor starts one (decision 0030); BenchServer's runs say `use`.
const std::vector<std::string> kEnv = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
                                       "HOME=/root", "CORDON_RUN_SERVER=off"};

const std::string& Workspace() {
  static const std::string path = [] {
    std::string pattern = "/tmp/cordon-bench.XXXXXX";
    return std::string(mkdtemp(pattern.data()));
  }();
  return path;
}

std::vector<std::string> Bare(std::vector<std::string> cmd) { return cmd; }

std::vector<std::string> Cordon(std::vector<std::string> cmd) {
  std::vector<std::string> argv = {CORDON_BINARY, "run", "--workspace", Workspace(), "--"};
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  return argv;
}

// cordon's bubblewrap backend: the same plan rendered for bwrap, Landlock and seccomp applied
// by the trampoline inside (docs/backends.md).
std::vector<std::string> CordonBwrap(std::vector<std::string> cmd) {
  std::vector<std::string> argv = {CORDON_BINARY, "run",       "--backend", "bwrap",
                                   "--workspace", Workspace(), "--"};
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  return argv;
}

std::vector<std::string> Bwrap(std::vector<std::string> cmd) {
  const std::string& ws = Workspace();
  // The private /tmp comes before the workspace bind: the workspace may lie under /tmp.
  std::vector<std::string> argv = {"/usr/bin/bwrap",
                                   "--unshare-all",
                                   "--die-with-parent",
                                   "--new-session",
                                   "--ro-bind",
                                   "/",
                                   "/",
                                   "--tmpfs",
                                   "/tmp",
                                   "--bind",
                                   ws,
                                   ws,
                                   "--proc",
                                   "/proc",
                                   "--dev",
                                   "/dev",
                                   "--chdir",
                                   ws,
                                   "--clearenv",
                                   "--setenv",
                                   "PATH",
                                   "/usr/bin:/bin",
                                   "--setenv",
                                   "HOME",
                                   "/tmp",
                                   "--cap-drop",
                                   "ALL",
                                   "--"};
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  return argv;
}

const std::vector<std::string> kTrue = {"/bin/true"};
const std::vector<std::string> kShort = {"/bin/sh", "-c", "seq 1 20000 | sort -rn | head -n 1"};
const std::vector<std::string> kFlood = {"/usr/bin/head", "-c", "200000000", "/dev/zero"};

// `pause`: untimed, before each command (bench/pause.h): the "spaced" cases, 50 ms apart as an
// agent's commands are (seconds, in fact), which is when a run server has a sandbox prepared.
template <class Wrap>
void Run(benchmark::State& state, Wrap wrap, const std::vector<std::string>& cmd,
         std::chrono::milliseconds pause = std::chrono::milliseconds(0)) {
  const std::vector<std::string> argv = wrap(cmd);
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    PauseUntimed(state, pause);
    SpawnStats s = SpawnAndWait(argv, kEnv);
    if (s.exit_code != 0) {
      state.SkipWithError(("exit code " + std::to_string(s.exit_code)).c_str());
      break;
    }
    bytes += s.stdout_bytes;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

// Peak resident set only (its time is not a figure): through cordon_peak_rss, because the
// peak the kernel reports for a child of this benchmark starts at the benchmark's own size
// (bench/peak_rss.cc). PeakRss/true_bare shows the floor of the measurement.
template <class Wrap>
void PeakRss(benchmark::State& state, Wrap wrap, const std::vector<std::string>& cmd) {
  const std::string out = Workspace() + "/.peak-rss";
  std::vector<std::string> argv = {PEAK_RSS_BINARY, out};
  for (const std::string& arg : wrap(cmd)) argv.push_back(arg);
  long peak_rss = 0;
  for (auto _ : state) {
    SpawnStats s = SpawnAndWait(argv, kEnv);
    std::ifstream in(out);
    long kib = 0;
    if (s.exit_code != 0 || !(in >> kib)) {
      state.SkipWithError(("exit code " + std::to_string(s.exit_code)).c_str());
      break;
    }
    peak_rss = std::max(peak_rss, kib);
  }
  state.counters["peak_rss_kib"] = static_cast<double>(peak_rss);
}

// Lines of `path` that contain `text`.
int CountLines(const std::string& path, const std::string& text) {
  std::ifstream in(path);
  int count = 0;
  for (std::string line; std::getline(in, line);) count += line.find(text) != std::string::npos;
  return count;
}

// `cordon run` handing its command to a run server (`cordon serve`, decision 0026) started for
// this benchmark, its socket in a private runtime directory. A client that finds no server runs
// its command itself, silently: the server's log must show every command as served (the
// figures of 2026-12-01 12:14-12:30 were one-shot runs that a server, not yet listening, never
// saw), and the first command is not timed until the server listens.
// A `cordon serve` of this benchmark, its socket in a private runtime directory; `env` is the
// environment that reaches it (with XDG_RUNTIME_DIR). Waits until it listens.
class BenchServer {
 public:
  BenchServer() : runtime_(Workspace() + "/rt"), log_(Workspace() + "/serve.log"), env_(kEnv) {
    std::filesystem::create_directories(runtime_);
    std::filesystem::permissions(runtime_, std::filesystem::perms::owner_all);
    env_.push_back("XDG_RUNTIME_DIR=" + runtime_);
    std::replace(env_.begin(), env_.end(), std::string("CORDON_RUN_SERVER=off"),
                 std::string("CORDON_RUN_SERVER=use"));
    std::filesystem::remove(log_);  // the previous server's "listening" is not this one's
    pid_ = ::fork();
    if (pid_ == 0) {
      const int null = ::open("/dev/null", O_RDWR);
      const int out = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(null, 0);
      ::dup2(null, 1);
      ::dup2(out, 2);
      std::vector<char*> argv = {const_cast<char*>(CORDON_BINARY), const_cast<char*>("serve"),
                                 nullptr};
      std::vector<char*> envp;
      for (const std::string& e : env_) envp.push_back(const_cast<char*>(e.c_str()));
      envp.push_back(nullptr);
      ::execve(CORDON_BINARY, argv.data(), envp.data());
      _exit(127);
    }
    for (int i = 0; i < 500 && CountLines(log_, "listening on") == 0; ++i) ::usleep(10000);
  }
  BenchServer(const BenchServer&) = delete;
  BenchServer& operator=(const BenchServer&) = delete;
  ~BenchServer() { Stop(); }

  const std::vector<std::string>& env() const { return env_; }

  // Stops the server; an error when it did not run exactly `runs` commands (a client that finds
  // no server runs its command itself, silently: the figures of 2026-12-01 12:14-12:30 were
  // one-shot runs that a server, not yet listening, never saw).
  // The server's peak resident set so far (VmHWM), in KiB; 0 once stopped.
  long PeakRssKib() const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; pid_ > 0 && std::getline(status, line);) {
      if (line.starts_with("VmHWM:")) return std::stol(line.substr(6));
    }
    return 0;
  }

  std::string Stop(std::int64_t runs = -1) {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    const int served = CountLines(log_, "ran a command");
    if (runs < 0 || served == runs) return {};
    return "the server ran " + std::to_string(served) + " of " + std::to_string(runs) +
           " commands (log: " + log_ + ")";
  }

 private:
  std::string runtime_;
  std::string log_;
  std::vector<std::string> env_;
  pid_t pid_ = -1;
};

// `cordon run` handing its command to a run server (`cordon serve`, decision 0026) started for
// this benchmark. The server's log must show every timed command as served.
void RunThroughServer(benchmark::State& state, const std::vector<std::string>& cmd,
                      std::chrono::milliseconds pause = std::chrono::milliseconds(0)) {
  BenchServer server;
  const std::vector<std::string> argv = Cordon(cmd);
  std::uint64_t bytes = 0;
  std::int64_t runs = 0;
  for (auto _ : state) {
    PauseUntimed(state, pause);
    SpawnStats s = SpawnAndWait(argv, server.env());
    if (s.exit_code != 0) {
      state.SkipWithError(("exit code " + std::to_string(s.exit_code)).c_str());
      break;
    }
    bytes += s.stdout_bytes;
    ++runs;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  if (const std::string why = server.Stop(runs); !why.empty()) state.SkipWithError(why.c_str());
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The three side by side: each iteration runs the command bare, under bubblewrap and through
// cordon's run server, one after the other (each after `pause`), so that whatever the machine
// does meanwhile (this VM's neighbours move the separate cases above by a millisecond from one
// minute to the next) weighs on all three alike. Counters: the median wall time of each, in ms.
void Interleaved(benchmark::State& state, const std::vector<std::string>& cmd,
                 std::chrono::milliseconds pause) {
  BenchServer server;
  const std::vector<std::string> bare = Bare(cmd);
  const std::vector<std::string> bwrap = Bwrap(cmd);
  const std::vector<std::string> cordon = Cordon(cmd);
  std::vector<double> bare_ms;
  std::vector<double> bwrap_ms;
  std::vector<double> cordon_ms;
  auto timed = [&](const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   std::vector<double>& into) {
    std::this_thread::sleep_for(pause);
    const auto start = std::chrono::steady_clock::now();
    const SpawnStats s = SpawnAndWait(argv, env);
    into.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    return s.exit_code == 0;
  };
  std::int64_t runs = 0;
  for (auto _ : state) {
    if (!timed(bare, kEnv, bare_ms) || !timed(bwrap, kEnv, bwrap_ms) ||
        !timed(cordon, server.env(), cordon_ms)) {
      state.SkipWithError("a command failed");
      break;
    }
    ++runs;
  }
  state.counters["bare_ms"] = Median(bare_ms);
  state.counters["bwrap_ms"] = Median(bwrap_ms);
  state.counters["cordon_server_ms"] = Median(cordon_ms);
  state.counters["server_peak_rss_kib"] = static_cast<double>(server.PeakRssKib());
  if (const std::string why = server.Stop(runs); !why.empty()) state.SkipWithError(why.c_str());
}

BENCHMARK_CAPTURE(Run, true_bare, Bare, kTrue)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(Run, true_bwrap, Bwrap, kTrue)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(Run, true_cordon, Cordon, kTrue)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(RunThroughServer, true_cordon_server, kTrue)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
constexpr std::chrono::milliseconds kSpaced{50};
BENCHMARK_CAPTURE(Run, true_bare_spaced, Bare, kTrue, kSpaced)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Run, true_bwrap_spaced, Bwrap, kTrue, kSpaced)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(RunThroughServer, true_cordon_server_spaced, kTrue, kSpaced)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Run, true_cordon_bwrap, CordonBwrap, kTrue)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Run, short_bare, Bare, kShort)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(Run, short_bwrap, Bwrap, kShort)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(Run, short_cordon, Cordon, kShort)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(RunThroughServer, short_cordon_server, kShort)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Run, short_bare_spaced, Bare, kShort, kSpaced)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Run, short_bwrap_spaced, Bwrap, kShort, kSpaced)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(RunThroughServer, short_cordon_server_spaced, kShort, kSpaced)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Run, short_cordon_bwrap, CordonBwrap, kShort)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Run, flood200mb_bare, Bare, kFlood)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(Run, flood200mb_cordon, Cordon, kFlood)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// 200 MB of output bare, through a one-shot `cordon run --no-server` and through a run server,
// in turns: the median throughput of each.
void InterleavedFlood(benchmark::State& state) {
  BenchServer server;
  const std::vector<std::string> bare = Bare(kFlood);
  std::vector<std::string> one_shot = Cordon(kFlood);
  one_shot.insert(one_shot.begin() + 2, "--no-server");
  const std::vector<std::string> served = Cordon(kFlood);
  std::vector<double> bare_mbs;
  std::vector<double> one_shot_mbs;
  std::vector<double> served_mbs;
  auto timed = [&](const std::vector<std::string>& argv, std::vector<double>& into) {
    const auto start = std::chrono::steady_clock::now();
    const SpawnStats s = SpawnAndWait(argv, server.env());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    into.push_back(static_cast<double>(s.stdout_bytes) / 1e6 / seconds);
    return s.exit_code == 0;
  };
  std::int64_t runs = 0;
  for (auto _ : state) {
    if (!timed(bare, bare_mbs) || !timed(one_shot, one_shot_mbs) || !timed(served, served_mbs)) {
      state.SkipWithError("a command failed");
      break;
    }
    ++runs;
  }
  state.counters["bare_mb_s"] = Median(bare_mbs);
  state.counters["cordon_mb_s"] = Median(one_shot_mbs);
  state.counters["served_mb_s"] = Median(served_mbs);
  state.counters["server_peak_rss_kib"] = static_cast<double>(server.PeakRssKib());
  if (const std::string why = server.Stop(runs); !why.empty()) state.SkipWithError(why.c_str());
}

BENCHMARK(InterleavedFlood)->Iterations(30);
BENCHMARK_CAPTURE(Interleaved, true, kTrue, std::chrono::milliseconds(0))->Iterations(300);
BENCHMARK_CAPTURE(Interleaved, true_spaced, kTrue, kSpaced)->Iterations(250);
BENCHMARK_CAPTURE(Interleaved, short, kShort, std::chrono::milliseconds(0))->Iterations(250);
BENCHMARK_CAPTURE(Interleaved, short_spaced, kShort, kSpaced)->Iterations(250);
BENCHMARK_CAPTURE(PeakRss, true_bare, Bare, kTrue)->Iterations(20);
BENCHMARK_CAPTURE(PeakRss, true_bwrap, Bwrap, kTrue)->Iterations(20);
BENCHMARK_CAPTURE(PeakRss, true_cordon, Cordon, kTrue)->Iterations(20);
BENCHMARK_CAPTURE(PeakRss, flood200mb_cordon, Cordon, kFlood)->Iterations(5);

}  // namespace
}  // namespace cordon::bench

BENCHMARK_MAIN();
