// An untimed pause before a measured command: an agent's tool calls are seconds apart (its
// model thinks in between), and a machine that was idle wakes up more slowly, so the figures
// a long-lived session is compared with take the same pause.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <thread>

namespace cordon::bench {

inline void PauseUntimed(benchmark::State& state, std::chrono::milliseconds pause) {
  if (pause.count() <= 0) return;
  state.PauseTiming();
  std::this_thread::sleep_for(pause);
  state.ResumeTiming();
}

}  // namespace cordon::bench
