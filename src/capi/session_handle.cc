#include "capi/session_handle.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include "config/env.h"
#include "config/load.h"

namespace cordon::capi {
namespace {

// Per thread so that concurrent calls on one session never see each other's messages.
thread_local std::string last_error;

}  // namespace

int StatusFor(ErrorCode code) {
  // Values after kInternal have no status of their own (cordon.h's never change).
  if (code == ErrorCode::kCommandNotFound) return CORDON_ERR_NOT_FOUND;
  return static_cast<int>(code) + 1;
}

int SetLastError(int status, std::string_view message) {
  try {
    last_error.assign(message);
  } catch (...) {
    last_error.clear();  // out of memory: the status still says what happened
  }
  return status;
}

void ClearLastError() { last_error.clear(); }

const char* LastError() { return last_error.c_str(); }

void CopyMessage(std::string_view message, char* buffer, std::size_t len) {
  if (buffer == nullptr || len == 0) return;
  const std::size_t n = message.size() < len - 1 ? message.size() : len - 1;
  std::memcpy(buffer, message.data(), n);
  buffer[n] = '\0';
}

char* DupString(std::string_view text) {
  auto* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) return nullptr;
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return out;
}

Result<Session> OpenSession(const char* config_json, const char* workspace) {
  const config::Env env = config::FromProcessEnvironment();
  Result<Config> config = config_json == nullptr
                              ? config::LoadUserConfig(std::nullopt, env)
                              : config::ParseConfigText(config_json, "config_json", env);
  if (!config) return std::unexpected(std::move(config).error());

  std::filesystem::path root;
  if (workspace != nullptr) {
    if (*workspace == '\0') return Fail(ErrorCode::kInvalidArgument, "workspace is empty");
    root = workspace;
  } else {
    std::error_code ec;
    root = std::filesystem::current_path(ec);
    if (ec) {
      return Fail(ErrorCode::kSystem, fmt::format("getcwd: {}", ec.message()), ec.value());
    }
  }
  return Session::Create(*std::move(config), std::move(root));
}

}  // namespace cordon::capi
