// Where one `cordon run` spends its in-process time, phase by phase (docs/performance.md):
// compiling the default command policy, creating a session (policy + kernel and limits probes +
// backend choice), planning one command, and the planner's host scans on their own. Each phase
// is what every one-shot `cordon run` pays once; the zygote (session_bench) removes none of it.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cordon/config.h"
#include "cordon/policy.h"
#include "cordon/session.h"
#include "linux/kernel_features.h"
#include "plan/hidden_paths.h"
#include "plan/hidden_watch.h"
#include "plan/host_ipc.h"
#include "plan/launch_plan.h"
#include "plan/plan_caches.h"
#include "plan/root_only_watch.h"

namespace cordon::bench {
namespace {

const std::string& Workspace() {
  static const std::string path = [] {
    std::string pattern = "/tmp/cordon-phases-bench.XXXXXX";
    return std::string(mkdtemp(pattern.data()));
  }();
  return path;
}

void PolicyCreateDefault(benchmark::State& state) {
  const Config config;
  for (auto _ : state) benchmark::DoNotOptimize(Policy::Create(config.command_policy));
}

void SessionCreate(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Session::Create(Config{}, Workspace()));
}

// Arg 1: with the root-only scan and the hidden paths watched, as a long-lived session plans
// (decision 0022, plan/hidden_watch.h).
void PlanTrue(benchmark::State& state) {
  plan::PlanCaches caches;
  const Config config;
  const linux_native::KernelFeatures features = linux_native::ProbeKernel();
  plan::PlanRequest request;
  request.argv = {"/bin/true"};
  request.workspace = Workspace();
  request.cwd = Workspace();
  if (const char* home = ::getenv("HOME")) request.caller_home = home;
  if (state.range(0) != 0) request.caches = &caches;
  for (auto _ : state) {
    auto plan = plan::Plan(config, features, request);
    if (!plan) {
      state.SkipWithError(plan.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(plan);
  }
}

// Root callers only: the walk of /etc for files "others" cannot read (decision 0006).
void RootOnlyMasks(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(plan::BuildRootOnlyMasks());
}

// The same through the watch a long-lived process keeps (decision 0022): nothing changed, so
// no walk; what remains is draining the inotify queue and polling the mount table.
void RootOnlyMasksWatched(benchmark::State& state) {
  plan::RootOnlyCache cache;
  for (auto _ : state) benchmark::DoNotOptimize(cache.Masks());
}

void HiddenTargets(benchmark::State& state) {
  const Config config;
  std::vector<std::filesystem::path> homes;
  if (const char* home = ::getenv("HOME")) homes.emplace_back(home);
  for (auto _ : state) {
    plan::HiddenScan scan = plan::ScanHiddenPaths(config.sandbox, homes);
    std::vector<plan::HiddenTarget> all = std::move(scan.present);
    for (plan::HiddenTarget& absent : scan.absent) all.push_back(std::move(absent));
    benchmark::DoNotOptimize(plan::ReadAllowList(all));
  }
}

// The scan alone (one lstat per component of each candidate), without the read allow-list.
void HiddenScanOnly(benchmark::State& state) {
  const Config config;
  std::vector<std::filesystem::path> homes;
  if (const char* home = ::getenv("HOME")) homes.emplace_back(home);
  for (auto _ : state) benchmark::DoNotOptimize(plan::ScanHiddenPaths(config.sandbox, homes));
}

BENCHMARK(PolicyCreateDefault)->Unit(benchmark::kMicrosecond);
BENCHMARK(SessionCreate)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(PlanTrue)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(RootOnlyMasks)->Unit(benchmark::kMicrosecond);
BENCHMARK(RootOnlyMasksWatched)->Unit(benchmark::kMicrosecond);
BENCHMARK(HiddenTargets)->Unit(benchmark::kMicrosecond);
BENCHMARK(HiddenScanOnly)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace cordon::bench

BENCHMARK_MAIN();
