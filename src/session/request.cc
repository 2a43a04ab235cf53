#include "session/request.h"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include "core/paths.h"
#include "policy/shell_quote.h"

extern char** environ;

namespace cordon::session {

Result<std::string> PolicyText(const CommandRequest& request) {
  const bool has_argv = !request.argv.empty();
  const bool has_text = request.shell_text.has_value();
  if (has_argv == has_text) {
    return Fail(ErrorCode::kInvalidArgument,
                has_argv ? "the request sets both argv and shell_text; set exactly one"
                         : "the request sets neither argv nor shell_text; set exactly one");
  }
  if (has_text) {
    if (request.shell_text->find_first_not_of(" \t\r\n") == std::string::npos) {
      return Fail(ErrorCode::kInvalidArgument, "the shell text is empty");
    }
    return *request.shell_text;
  }
  if (request.argv.front().empty()) {
    return Fail(ErrorCode::kInvalidArgument, "argv[0] (the program) is empty");
  }
  return policy::ShellQuote(request.argv);
}

std::vector<std::string> CommandArgv(const CommandRequest& request) {
  if (request.shell_text) return {"/bin/sh", "-c", *request.shell_text};
  return request.argv;
}

Result<std::filesystem::path> ResolveCwd(const std::filesystem::path& cwd,
                                         const std::filesystem::path& workspace) {
  if (cwd.empty()) return workspace;
  const std::filesystem::path joined = cwd.is_absolute() ? cwd : workspace / cwd;
  Result<std::filesystem::path> canonical = core::Canonical(joined);
  if (!canonical) {
    return Fail(canonical.error().code,
                fmt::format("working directory {}: {}", joined.string(), canonical.error().message),
                canonical.error().errno_value);
  }
  // Checked after symlinks are resolved: a link inside the workspace may point anywhere.
  if (!core::IsWithin(*canonical, workspace)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("working directory {} (resolved: {}) is outside the workspace {}",
                            joined.string(), canonical->string(), workspace.string()));
  }
  return canonical;
}

Result<std::chrono::milliseconds> EffectiveTimeout(const CommandRequest& request,
                                                   std::chrono::milliseconds session_timeout) {
  if (!request.timeout) return session_timeout;
  if (request.timeout->count() <= 0) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("timeout must be positive, got {} ms", request.timeout->count()));
  }
  return *request.timeout;
}

std::vector<std::string> CallerEnvironment() {
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    env.emplace_back(*entry);
  }
  return env;
}

std::filesystem::path CallerHome() {
  if (const char* home = ::getenv("HOME"); home != nullptr && home[0] == '/') return home;
  return PasswdHome();
}

std::filesystem::path PasswdHome() {
  passwd entry{};
  passwd* found = nullptr;
  std::string buffer(16384, '\0');
  if (::getpwuid_r(::getuid(), &entry, buffer.data(), buffer.size(), &found) == 0 &&
      found != nullptr && found->pw_dir != nullptr) {
    return found->pw_dir;
  }
  return {};
}

}  // namespace cordon::session
