#include "fake_runner.h"

#include <csignal>
#include <cstdlib>
#include <thread>

namespace cordon::mcp::testing {

using nlohmann::json;

FakeRunner::FakeRunner() {
  char dir[] = "/tmp/cordon-mcp-test-XXXXXX";
  const char* made = ::mkdtemp(dir);
  workspace_ = std::filesystem::canonical(made != nullptr ? made : "/tmp");
  std::filesystem::create_directories(workspace_ / "sub");
}

FakeRunner::~FakeRunner() {
  std::error_code ec;
  if (workspace_ != "/tmp") std::filesystem::remove_all(workspace_, ec);
}

Capabilities FakeRunner::GetCapabilities() const {
  Capabilities c;
  c.mode = SandboxMode::kWorkspaceWrite;
  c.network = NetworkPolicy::kDeny;
  c.backend = "fake";
  c.filesystem_enforced = true;
  c.network_enforced = true;
  return c;
}

void FakeRunner::Release() {
  std::lock_guard lock(mutex_);
  released_ = true;
  changed_.notify_all();
}

std::vector<FakeRunner::Call> FakeRunner::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

bool FakeRunner::WaitForCalls(std::size_t n, std::chrono::milliseconds limit) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, limit, [&] { return calls_.size() >= n; });
}

RunResult FakeRunner::Run(const CommandRequest& request, bool outside_sandbox,
                          const CancelToken& cancel, const OutputCallback& on_output) {
  const std::string command = request.shell_text.value_or("");
  std::size_t index = 0;
  {
    std::lock_guard lock(mutex_);
    index = calls_.size();
    calls_.push_back({request, outside_sandbox, false});
    changed_.notify_all();
  }
  RunResult result;
  result.status = RunStatus::kExited;
  result.duration = std::chrono::milliseconds(5);
  if (command.starts_with("sudo")) {
    result.status = RunStatus::kDenied;
    result.decision.verdict = Verdict::kDeny;
    result.decision.rule_id = "default.sudo";
    result.decision.reason = "sudo runs commands as another user";
    return result;
  }
  if (command == "print-then-block" && on_output) {
    on_output(OutputStream::kStdout, "first\n");
    on_output(OutputStream::kStdout, "second\n");
  }
  if (command == "block" || command == "wait-cancel" || command == "print-then-block") {
    std::unique_lock lock(mutex_);
    while (!cancel.cancelled() && !(command != "wait-cancel" && released_)) {
      changed_.wait_for(lock, std::chrono::milliseconds(10));
    }
    if (cancel.cancelled()) {
      calls_[index].saw_cancel = true;
      result.status = RunStatus::kSignaled;
      result.signal = SIGKILL;
    }
    return result;
  }
  if (command.starts_with("print ")) {
    const int chunks = std::atoi(command.c_str() + 6);
    for (int i = 0; i < chunks; ++i) {
      const std::string line = "line " + std::to_string(i) + "\n";
      if (on_output) on_output(OutputStream::kStdout, line);
      result.stdout_data.data += line;
      result.stdout_data.total_bytes += line.size();
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    return result;
  }
  if (command == "fail") {
    result.exit_code = 3;
    result.stderr_data.data = "boom\n";
    result.stderr_data.total_bytes = 5;
    return result;
  }
  result.stdout_data.data = "ran: " + command + "\n";
  result.stdout_data.total_bytes = result.stdout_data.data.size();
  // As a Session does: without capture, the output only reaches the callback.
  if (!request.capture_output) {
    if (on_output) on_output(OutputStream::kStdout, result.stdout_data.data);
    result.stdout_data.data.clear();
  }
  return result;
}

void RecordingSink::Send(const json& message) {
  std::lock_guard lock(mutex_);
  messages_.push_back(message);
  changed_.notify_all();
}

void RecordingSink::Clear() {
  std::lock_guard lock(mutex_);
  messages_.clear();
}

std::vector<json> RecordingSink::messages() const {
  std::lock_guard lock(mutex_);
  return messages_;
}

json RecordingSink::WaitFor(const std::function<bool(const json&)>& match,
                            std::chrono::milliseconds limit) {
  std::unique_lock lock(mutex_);
  json found = nullptr;
  changed_.wait_for(lock, limit, [&] {
    for (const json& m : messages_) {
      if (match(m)) {
        found = m;
        return true;
      }
    }
    return false;
  });
  return found;
}

json RecordingSink::WaitForResponse(const json& id, std::chrono::milliseconds limit) {
  return WaitFor(
      [&](const json& m) {
        return m.contains("id") && m["id"] == id && (m.contains("result") || m.contains("error"));
      },
      limit);
}

}  // namespace cordon::mcp::testing
