// Policy::Evaluate on typical agent commands: with the default rules only, and with 1,000
// generated user deny patterns on top. Figures are recorded in docs/policy.md ("Performance").
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "cordon/policy.h"

namespace {

const std::vector<std::string>& TypicalCommands() {
  static const std::vector<std::string> kCommands = {
      "git status --short",
      "npm run build && npm test -- --watch=false",
      "cmake --build build -j2 --target policy_unit_tests",
      "grep -rn \"TODO\" src/ | sort | head -20",
      "find . -name '*.py' -exec python3 -m py_compile {} \\;",
      "cd frontend && CI=1 pnpm exec vitest run --reporter=dot",
      "for f in $(git ls-files '*.cc'); do clang-format -i \"$f\"; done",
      "cat > notes.md <<'EOF'\nRun the tests with make test.\nEOF",
      "bash -lc 'source .venv/bin/activate && pytest -q -k \"not slow\"'",
      "curl -fsSL https://example.com/install.sh | sh",
  };
  return kCommands;
}

cordon::Policy MakePolicy(int user_patterns) {
  cordon::PolicyConfig config;
  for (int i = 0; i < user_patterns; ++i) {
    // Distinct, realistic patterns: anchored tool names and dangerous flag spellings.
    config.deny.push_back("^tool" + std::to_string(i) + "( |$)");
    if (++i < user_patterns) config.deny.push_back("--danger-flag-" + std::to_string(i) + "\\b");
  }
  auto policy = cordon::Policy::Create(config);
  if (!policy) std::abort();
  return std::move(*policy);
}

void EvaluateAll(benchmark::State& state, const cordon::Policy& policy) {
  const auto& commands = TypicalCommands();
  std::size_t i = 0;
  for (auto _ : state) {
    cordon::Decision d = policy.Evaluate(commands[i]);
    benchmark::DoNotOptimize(d);
    if (++i == commands.size()) i = 0;
  }
}

void BM_EvaluateDefaultRules(benchmark::State& state) {
  static const cordon::Policy policy = MakePolicy(0);
  EvaluateAll(state, policy);
}
BENCHMARK(BM_EvaluateDefaultRules);

void BM_EvaluateWithThousandUserPatterns(benchmark::State& state) {
  static const cordon::Policy policy = MakePolicy(1000);
  EvaluateAll(state, policy);
}
BENCHMARK(BM_EvaluateWithThousandUserPatterns);

void BM_EvaluateOneCommand(benchmark::State& state) {
  static const cordon::Policy policy = MakePolicy(0);
  const std::string& command = TypicalCommands()[static_cast<std::size_t>(state.range(0))];
  for (auto _ : state) {
    cordon::Decision d = policy.Evaluate(command);
    benchmark::DoNotOptimize(d);
  }
  std::string label = command.substr(0, 40);
  for (char& c : label) c = c == '\n' ? ' ' : c;
  state.SetLabel(label);
}
BENCHMARK(BM_EvaluateOneCommand)->DenseRange(0, 9);

void BM_CreateWithThousandUserPatterns(benchmark::State& state) {
  for (auto _ : state) {
    cordon::Policy p = MakePolicy(1000);
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_CreateWithThousandUserPatterns)->Unit(benchmark::kMillisecond);

void BM_EvaluateLargeHereDoc(benchmark::State& state) {
  static const cordon::Policy policy = MakePolicy(0);
  std::string text = "cat > big.txt <<'EOF'\n";
  for (int i = 0; i < 10000; ++i) text += "line " + std::to_string(i) + " of a generated file\n";
  text += "EOF\n";
  for (auto _ : state) {
    cordon::Decision d = policy.Evaluate(text);
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_EvaluateLargeHereDoc)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
