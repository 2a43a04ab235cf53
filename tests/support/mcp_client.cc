#include "support/mcp_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "support/host_files.h"

namespace cordon::test_support {

using nlohmann::json;

std::unique_ptr<McpClient> McpClient::Start(const Options& options, std::string* why_not) {
  // A write to a server that died is an error to report, not a SIGPIPE for the suite.
  ::signal(SIGPIPE, SIG_IGN);
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    *why_not = "pipe2 failed";
    return nullptr;
  }
  std::vector<std::string> argv = options.argv, env = options.env;
  std::vector<char*> args, vars;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  for (auto& e : env) vars.push_back(e.data());
  vars.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int err = ::open(options.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (err < 0 || ::chdir(options.cwd.c_str()) != 0) ::_exit(127);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err, 2);
    if (options.inherited_fd >= 0) ::dup2(options.inherited_fd, 9);  // not close-on-exec
    ::execve(args[0], args.data(), vars.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  std::unique_ptr<McpClient> client(new McpClient());
  client->pid_ = pid;
  client->to_ = in[1];
  client->from_ = out[0];
  client->log_ = options.log;
  client->on_notification_ = options.on_notification;
  if (pid < 0) {
    *why_not = "fork failed";
    return nullptr;
  }
  const json hello = {{"protocolVersion", "2025-06-18"},
                      {"capabilities", json::object()},
                      {"clientInfo", {{"name", "cordon-tests"}, {"version", "1"}}}};
  if (!client->Call("initialize", hello, std::chrono::seconds(20), why_not)) return nullptr;
  if (!client->Send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, why_not)) {
    return nullptr;
  }
  return client;
}

McpClient::~McpClient() {
  ::close(to_);  // end of input: the server cancels what still runs and exits
  ::close(from_);
  if (pid_ <= 0) return;
  for (int i = 0; i < 200; ++i) {  // it waits up to 10 s for cancelled calls; give it 2 s
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

bool McpClient::Send(const json& message, std::string* why_not) {
  const std::string line = message.dump() + "\n";
  if (::write(to_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    *why_not = "could not write to cordon mcp: " + ReadFile(log_);
    return false;
  }
  return true;
}

std::optional<json> McpClient::Call(const std::string& method, const json& params,
                                    std::chrono::milliseconds wait, std::string* why_not) {
  int id = 0;
  {
    std::lock_guard lock(mutex_);
    id = next_id_++;
    const json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
    if (!Send(request, why_not)) return std::nullopt;
  }
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    std::lock_guard lock(mutex_);
    for (std::size_t end = pending_.find('\n'); end != std::string::npos;
         end = pending_.find('\n')) {
      json message = json::parse(pending_.substr(0, end), nullptr, false);
      pending_.erase(0, end + 1);
      // Responses only: the server's notifications and requests carry a method.
      if (message.is_object() && message.contains("id") && message["id"].is_number_integer() &&
          !message.contains("method")) {
        const int answered = message["id"].get<int>();
        answers_[answered] = std::move(message);
      } else if (message.is_object() && !message.contains("id") && on_notification_) {
        on_notification_(message);
      }
    }
    if (auto found = answers_.find(id); found != answers_.end()) {
      const json message = std::move(found->second);
      answers_.erase(found);
      if (message.contains("result")) return message["result"];
      *why_not = "cordon mcp answered " + message.dump();
      return std::nullopt;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      *why_not = "cordon mcp did not answer in time: " + ReadFile(log_);
      return std::nullopt;
    }
    // One caller reads for all at a time, briefly, so that the others find their answers.
    pollfd fd{from_, POLLIN, 0};
    if (::poll(&fd, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 20))) <= 0) continue;
    char buffer[65536];
    const ssize_t n = ::read(from_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why_not = "cordon mcp closed its output: " + ReadFile(log_);
      return std::nullopt;
    }
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
}

std::optional<json> McpClient::RunCommand(const json& arguments, std::chrono::milliseconds wait,
                                          std::string* why_not, bool progress) {
  json params = {{"name", "run_command"}, {"arguments", arguments}};
  if (progress) params["_meta"] = {{"progressToken", "run"}};
  const std::optional<json> result = Call("tools/call", params, wait, why_not);
  if (!result) return std::nullopt;
  const auto structured = result->find("structuredContent");
  if (structured == result->end() || !structured->is_object()) {
    *why_not = "run_command answered without structuredContent: " + result->dump();
    return std::nullopt;
  }
  return *structured;
}

}  // namespace cordon::test_support
