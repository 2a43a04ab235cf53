// Session::Run for `true` in-process, without the MCP protocol: the one-shot launch (every
// command builds its namespaces and mount view) next to the zygote (ADR 0010: a long-lived
// session builds them once; each command joins them), a prepared command (ADR 0023: the
// session built the command's sandbox before the command came; an untimed 30 ms pause before
// each run, an agent's think time, lets it) and a bare fork-exec, in one run. The difference
// prepared - bare is the per-command cost a long-lived server pays for the sandbox.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cordon/session.h"
#include "linux/init_reaper.h"
#include "linux/kernel_features.h"
#include "pause.h"
#include "spawn.h"
#include "zygote/zygote_slot.h"

namespace cordon::bench {
namespace {

const std::string& Workspace() {
  static const std::string path = [] {
    std::string pattern = "/tmp/cordon-session-bench.XXXXXX";
    return std::string(mkdtemp(pattern.data()));
  }();
  return path;
}

// Arg: an untimed pause in milliseconds before each run, as the prepared variant takes (an idle
// machine wakes up more slowly than a busy one: the bare figure must pay that too).
void BareForkExec(benchmark::State& state) {
  const std::vector<std::string> argv = {"/bin/true"};
  const std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
  const auto pause = std::chrono::milliseconds(state.range(0));
  for (auto _ : state) {
    PauseUntimed(state, pause);
    if (SpawnAndWait(argv, env).exit_code != 0) {
      state.SkipWithError("/bin/true failed");
      break;
    }
  }
}

void RunTrue(benchmark::State& state, bool zygote, int prepared) {
#ifdef CORDON_INIT_PATH
  linux_native::SetInitReaperPath(CORDON_INIT_PATH);  // as `cordon` finds it (decision 0021)
#endif
  Result<Session> session = Session::Create(
      Config{}, Workspace(), SessionOptions{.long_lived = zygote, .prepared_commands = prepared});
  if (!session) {
    state.SkipWithError(session.error().message.c_str());
    return;
  }
  CommandRequest request;
  request.argv = {"/bin/true"};
  (void)session->Run(request);  // a zygote is built by the first command: not measured
  const std::uint64_t joined_before = zygote::ZygoteLaunches();
  const std::uint64_t prepared_before = zygote::PreparedLaunches();
  for (auto _ : state) {
    PauseUntimed(state, std::chrono::milliseconds(prepared > 0 ? 30 : 0));
    const RunResult result = session->Run(request);
    if (result.status != RunStatus::kExited || result.exit_code != 0) {
      state.SkipWithError(("run failed: " + result.error).c_str());
      break;
    }
  }
  state.counters["joined"] = static_cast<double>(zygote::ZygoteLaunches() - joined_before);
  state.counters["prepared"] = static_cast<double>(zygote::PreparedLaunches() - prepared_before);
}

// ADR 0009: the probe every Session::Create takes, next to the thorough one (cordon doctor).
void ProbeQuick(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(linux_native::ProbeKernel());
}
void ProbeThorough(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(linux_native::ProbeKernelThoroughly());
}

void OneShot(benchmark::State& state) { RunTrue(state, false, 0); }
void Zygote(benchmark::State& state) { RunTrue(state, true, 0); }
void Prepared(benchmark::State& state) { RunTrue(state, true, 2); }

BENCHMARK(ProbeQuick)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(ProbeThorough)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BareForkExec)->Arg(0)->Arg(30)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(OneShot)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(Zygote)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(Prepared)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace cordon::bench

BENCHMARK_MAIN();
