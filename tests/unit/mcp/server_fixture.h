// A Server wired to a FakeRunner and a RecordingSink, with helpers to speak to it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "fake_runner.h"
#include "mcp/server.h"

namespace cordon::mcp::testing {

class ServerTest : public ::testing::Test {
 protected:
  ServerTest() { Reset(DefaultOptions()); }

  static ServerOptions DefaultOptions() {
    ServerOptions options;
    options.server_version = "9.9.9";
    options.progress_interval = std::chrono::milliseconds(20);
    options.elicitation_timeout = std::chrono::milliseconds(500);
    options.shutdown_grace = std::chrono::seconds(5);
    options.structured_output = true;  // most tests read structuredContent; Lean* tests do not
    return options;
  }
  void Reset(ServerOptions options) {
    server_.reset();
    sink_.Clear();
    server_ = std::make_unique<Server>(std::move(options), runner_, sink_);
  }

  void Send(const nlohmann::json& message) { server_->HandleLine(message.dump()); }
  nlohmann::json Request(const nlohmann::json& id, const std::string& method,
                         nlohmann::json params = nullptr) {
    nlohmann::json m = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.is_null()) m["params"] = std::move(params);
    Send(m);
    return sink_.WaitForResponse(id);
  }
  nlohmann::json Initialize(const std::string& version = "2025-06-18",
                            nlohmann::json capabilities = nlohmann::json::object()) {
    nlohmann::json response = Request("init", "initialize",
                                      {{"protocolVersion", version},
                                       {"capabilities", std::move(capabilities)},
                                       {"clientInfo", {{"name", "test"}, {"version", "1"}}}});
    Send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
    return response;
  }
  // Starts a tools/call without waiting for its response.
  void StartCall(const nlohmann::json& id, nlohmann::json arguments,
                 nlohmann::json meta = nullptr) {
    nlohmann::json params = {{"name", "run_command"}, {"arguments", std::move(arguments)}};
    if (!meta.is_null()) params["_meta"] = std::move(meta);
    Send({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", params}});
  }
  nlohmann::json Call(const nlohmann::json& id, nlohmann::json arguments) {
    StartCall(id, std::move(arguments));
    return sink_.WaitForResponse(id);
  }

  FakeRunner runner_;
  RecordingSink sink_;
  std::unique_ptr<Server> server_;  // destroyed before runner_ and sink_
};

}  // namespace cordon::mcp::testing
