// Errors as values. Every fallible cordon call returns Result<T>; nothing in the library throws.
//
//   cordon::Result<Config> config = cordon::config::LoadFile(path);
//   if (!config) { fmt::print(stderr, "{}\n", config.error().message); return 125; }
//
// The message names the failing operation and its arguments ("open(/etc/x): ..."), so it can be
// shown to a person unchanged.
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace cordon {

enum class ErrorCode {
  kInvalidArgument,  // the caller passed something malformed (bad flag, bad request)
  kConfig,           // the configuration is invalid (file, JSON path, expected vs found)
  kNotFound,         // a named path or program does not exist
  kUnavailable,      // a guarantee was asked for that this machine cannot enforce (fail closed)
  kSystem,           // a system call failed; errno_value is set
  kInternal,         // a broken invariant inside cordon
  // The command could not be executed in the sandbox (execve: not found, not executable): a
  // run reports it as the command's exit 127 or 126, as a shell does (session/run.cc).
  kCommandNotFound,
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  int errno_value = 0;
  std::string message;
};

template <typename T>
using Result = std::expected<T, Error>;

// Builds an unexpected Error; the usual way to fail: `return Fail(ErrorCode::kConfig, msg);`
[[nodiscard]] inline std::unexpected<Error> Fail(ErrorCode code, std::string message,
                                                 int errno_value = 0) {
  return std::unexpected<Error>(Error{code, errno_value, std::move(message)});
}

const char* ErrorCodeName(ErrorCode code);

}  // namespace cordon

// CORDON_TRY(var, expr): evaluates a Result, returns its error from the enclosing function, and
// otherwise binds the value to `var`.
#define CORDON_TRY_CONCAT_INNER(a, b) a##b
#define CORDON_TRY_CONCAT(a, b) CORDON_TRY_CONCAT_INNER(a, b)
#define CORDON_TRY(var, expr)                                                            \
  auto CORDON_TRY_CONCAT(cordon_try_, __LINE__) = (expr);                                \
  if (!CORDON_TRY_CONCAT(cordon_try_, __LINE__))                                         \
    return std::unexpected(std::move(CORDON_TRY_CONCAT(cordon_try_, __LINE__)).error()); \
  var = std::move(*CORDON_TRY_CONCAT(cordon_try_, __LINE__))
// CORDON_TRY_VOID(expr): the same for Result<void>.
#define CORDON_TRY_VOID(expr)                                                           \
  do {                                                                                  \
    auto cordon_try_void_ = (expr);                                                     \
    if (!cordon_try_void_) return std::unexpected(std::move(cordon_try_void_).error()); \
  } while (0)
