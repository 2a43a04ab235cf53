// `cordon mcp` round trips: one long-lived server, then tools/call run_command `true` measured
// against a bare fork-exec of /bin/true in the same run, and a sustained commands-per-second
// figure with 4 calls in flight. Per-command overhead = mcp_round_trip - bare_fork_exec
// (docs/mcp.md, "Performance"; target < 2 ms).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "pause.h"
#include "spawn.h"

namespace cordon::bench {
namespace {

using nlohmann::json;

const std::vector<std::string> kEnv = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
                                       "HOME=/root"};

const std::string& Workspace() {
  static const std::string path = [] {
    std::string pattern = "/tmp/cordon-mcp-bench.XXXXXX";
    return std::string(mkdtemp(pattern.data()));
  }();
  return path;
}

// One `cordon mcp` process and a newline-delimited JSON-RPC client for it.
class McpServer {
 public:
  McpServer() {
    int in[2];
    int out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) std::abort();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    std::vector<std::string> argv = {CORDON_BINARY, "mcp", "--structured-output", "--workspace",
                                     Workspace()};
    std::vector<char*> a;
    std::vector<char*> e;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    std::vector<std::string> env = kEnv;
    for (auto& s : env) e.push_back(s.data());
    e.push_back(nullptr);
    if (posix_spawn(&pid_, a[0], &actions, nullptr, a.data(), e.data()) != 0) std::abort();
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    to_server_ = in[1];
    from_server_ = out[0];
    Send(json{{"jsonrpc", "2.0"},
              {"id", 0},
              {"method", "initialize"},
              {"params",
               {{"protocolVersion", "2025-06-18"},
                {"capabilities", json::object()},
                {"clientInfo", {{"name", "mcp_bench"}, {"version", "1"}}}}}});
    ReadResponse();
    Send(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  }
  ~McpServer() {
    close(to_server_);  // EOF: the server shuts down
    int status = 0;
    waitpid(pid_, &status, 0);
    close(from_server_);
  }

  void SendCall(long id, const std::string& command) {
    Send(json{{"jsonrpc", "2.0"},
              {"id", id},
              {"method", "tools/call"},
              {"params", {{"name", "run_command"}, {"arguments", {{"command", command}}}}}});
  }

  // The next response (notifications skipped). isError false expected.
  json ReadResponse() {
    for (;;) {
      const std::string line = ReadLine();
      json message = json::parse(line, nullptr, false);
      if (message.is_discarded()) std::abort();
      if (message.contains("id") && (message.contains("result") || message.contains("error"))) {
        return message;
      }
    }
  }

 private:
  void Send(const json& message) {
    std::string line = message.dump();
    line.push_back('\n');
    std::size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = write(to_server_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
  }
  std::string ReadLine() {
    for (;;) {
      const auto newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      char chunk[65536];
      const ssize_t n = read(from_server_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) std::abort();  // the server died
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  pid_t pid_ = -1;
  int to_server_ = -1;
  int from_server_ = -1;
  std::string buffer_;
};

McpServer& Server() {
  static McpServer server;
  return server;
}

bool Succeeded(const json& response) {
  return response.contains("result") && !response["result"].value("isError", true);
}

// Arg: the same untimed pause as McpRoundTrip's (an idle machine wakes up more slowly).
void BareForkExec(benchmark::State& state) {
  const std::vector<std::string> argv = {"/bin/true"};
  const auto pause = std::chrono::milliseconds(state.range(0));
  for (auto _ : state) {
    PauseUntimed(state, pause);
    if (SpawnAndWait(argv, kEnv).exit_code != 0) {
      state.SkipWithError("/bin/true failed");
      break;
    }
  }
}

// Also splits the round trip: run_ms is the run's own duration as cordon reports it
// (structuredContent.duration_ms: launching the sandbox, the command, reaping); the rest is
// the protocol (JSON, the worker thread, pipes).
// Arg: an untimed pause in milliseconds before each call. 0 is back-to-back calls, faster than
// the server prepares sandboxes (ADR 0023), so most calls join the zygote themselves; an
// agent waits for its model between commands (seconds), which a 50 ms pause stands in for:
// every call then finds a prepared sandbox, which is the per-command overhead an agent sees.
void McpRoundTrip(benchmark::State& state) {
  McpServer& server = Server();
  // Ids unique across Google Benchmark's repeated calls of this function (the server refuses
  // an id whose earlier call it has not finished book-keeping for).
  static long id = 1;
  const auto pause = std::chrono::milliseconds(state.range(0));
  double run_ms = 0;
  for (auto _ : state) {
    PauseUntimed(state, pause);
    server.SendCall(id++, "true");
    const json response = server.ReadResponse();
    if (!Succeeded(response)) {
      state.SkipWithError(("run_command true did not succeed: " + response.dump()).c_str());
      break;
    }
    run_ms += response["result"]["structuredContent"].value("duration_ms", 0.0);
  }
  if (state.iterations() > 0) {
    state.counters["run_ms"] = run_ms / static_cast<double>(state.iterations());
  }
}

// A sliding window of `in_flight` calls: each iteration is one completed call, replaced at
// once by a new one, so items_per_second is the sustained commands per second.
void McpSustained(benchmark::State& state) {
  McpServer& server = Server();
  const long in_flight = state.range(0);
  static long id = 1000000;
  for (long i = 0; i < in_flight; ++i) server.SendCall(id++, "true");
  for (auto _ : state) {
    if (const json response = server.ReadResponse(); !Succeeded(response)) {
      state.SkipWithError(("run_command true did not succeed: " + response.dump()).c_str());
      break;
    }
    server.SendCall(id++, "true");
  }
  // Outside the timed loop: collect the calls still in flight.
  for (long i = 0; i < in_flight; ++i) server.ReadResponse();
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BareForkExec)->Arg(0)->Arg(50)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(McpRoundTrip)->Arg(0)->Arg(50)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(McpSustained)->Arg(1)->Arg(4)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace cordon::bench

BENCHMARK_MAIN();
