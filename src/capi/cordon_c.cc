// The extern "C" functions of cordon.h. Each one validates its pointers, calls the C++ API and
// converts: results to JSON text, Errors to status codes, and any exception (bad_alloc from a
// std::string, a bug) to CORDON_ERR_NO_MEMORY / CORDON_ERR_INTERNAL. Nothing may unwind into C.
#include <chrono>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "capi/session_handle.h"
#include "cordon/cordon.h"
#include "report/json_report.h"

namespace cordon::capi {
namespace {

template <typename Body>
int Guarded(Body&& body) noexcept {
  ClearLastError();
  try {
    return std::forward<Body>(body)();
  } catch (const std::bad_alloc&) {
    return SetLastError(CORDON_ERR_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return SetLastError(CORDON_ERR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return SetLastError(CORDON_ERR_INTERNAL, "internal error: unknown exception");
  }
}

int Invalid(std::string_view what) { return SetLastError(CORDON_ERR_INVALID_ARGUMENT, what); }

// Hands a JSON text to the caller through `out`.
int Emit(const std::string& text, char** out) {
  *out = DupString(text);
  if (*out == nullptr) return SetLastError(CORDON_ERR_NO_MEMORY, "out of memory");
  return CORDON_OK;
}

int RunRequest(const cordon_session* session, CommandRequest request,
               const cordon_run_options* options, char** result_json_out) {
  OutputCallback on_output;
  if (options != nullptr) {
    if (options->timeout_ms > 0) request.timeout = std::chrono::milliseconds(options->timeout_ms);
    if (options->timeout_ms < 0) return Invalid("options.timeout_ms must be >= 0");
    if (options->cwd != nullptr) request.cwd = options->cwd;
    if (options->cancel_fd > 0) request.cancel_fd = options->cancel_fd;
    if (options->on_output != nullptr) {
      on_output = [fn = options->on_output, user = options->user_data](OutputStream stream,
                                                                       std::string_view data) {
        fn(user, stream == OutputStream::kStdout ? CORDON_STDOUT : CORDON_STDERR, data.data(),
           data.size());
      };
    }
  }
  const RunResult result = session->session.Run(request, on_output);
  return Emit(report::Dump(report::RunResultToJson(result)), result_json_out);
}

}  // namespace
}  // namespace cordon::capi

using namespace cordon::capi;  // NOLINT: the C entry points below are thin wrappers

extern "C" {

const char* cordon_version(void) { return CORDON_VERSION; }

const char* cordon_status_name(int status) {
  switch (status) {
    case CORDON_OK:
      return "ok";
    case CORDON_ERR_INVALID_ARGUMENT:
      return "invalid_argument";
    case CORDON_ERR_CONFIG:
      return "config";
    case CORDON_ERR_NOT_FOUND:
      return "not_found";
    case CORDON_ERR_UNAVAILABLE:
      return "unavailable";
    case CORDON_ERR_SYSTEM:
      return "system";
    case CORDON_ERR_INTERNAL:
      return "internal";
    case CORDON_ERR_NO_MEMORY:
      return "no_memory";
    default:
      return "unknown";
  }
}

const char* cordon_last_error(void) { return LastError(); }

cordon_session* cordon_session_new(const char* config_json, const char* workspace, char* err,
                                   size_t err_len) {
  cordon_session* created = nullptr;
  Guarded([&] {
    cordon::Result<cordon::Session> session = OpenSession(config_json, workspace);
    if (!session) return SetLastError(StatusFor(session.error().code), session.error().message);
    created = new cordon_session{*std::move(session)};
    return static_cast<int>(CORDON_OK);
  });
  if (created == nullptr) CopyMessage(LastError(), err, err_len);
  return created;
}

void cordon_session_free(cordon_session* session) { delete session; }

int cordon_check(const cordon_session* session, const char* command, int* allowed_out,
                 char** decision_json_out) {
  return Guarded([&] {
    if (session == nullptr) return Invalid("session is NULL");
    if (command == nullptr) return Invalid("command is NULL");
    if (decision_json_out != nullptr) *decision_json_out = nullptr;
    const cordon::Decision decision = session->session.Check(command);
    if (allowed_out != nullptr) *allowed_out = decision.allowed() ? 1 : 0;
    if (decision_json_out == nullptr) return static_cast<int>(CORDON_OK);
    return Emit(cordon::report::Dump(cordon::report::DecisionToJson(decision)), decision_json_out);
  });
}

int cordon_run(const cordon_session* session, const char* shell_text,
               const cordon_run_options* options, char** result_json_out) {
  return Guarded([&] {
    if (session == nullptr) return Invalid("session is NULL");
    if (shell_text == nullptr) return Invalid("shell_text is NULL");
    if (result_json_out == nullptr) return Invalid("result_json_out is NULL");
    *result_json_out = nullptr;
    cordon::CommandRequest request;
    request.shell_text = shell_text;
    return RunRequest(session, std::move(request), options, result_json_out);
  });
}

int cordon_run_argv(const cordon_session* session, const char* const* argv,
                    const cordon_run_options* options, char** result_json_out) {
  return Guarded([&] {
    if (session == nullptr) return Invalid("session is NULL");
    if (argv == nullptr || argv[0] == nullptr) return Invalid("argv is NULL or empty");
    if (result_json_out == nullptr) return Invalid("result_json_out is NULL");
    *result_json_out = nullptr;
    cordon::CommandRequest request;
    for (const char* const* arg = argv; *arg != nullptr; ++arg) request.argv.emplace_back(*arg);
    return RunRequest(session, std::move(request), options, result_json_out);
  });
}

int cordon_capabilities_json(const cordon_session* session, char** json_out) {
  return Guarded([&] {
    if (session == nullptr) return Invalid("session is NULL");
    if (json_out == nullptr) return Invalid("json_out is NULL");
    *json_out = nullptr;
    return Emit(cordon::report::Dump(
                    cordon::report::CapabilitiesToJson(session->session.GetCapabilities())),
                json_out);
  });
}

void cordon_string_free(char* text) { std::free(text); }

}  // extern "C"
