#include "core/syscall_error.h"

#include <fmt/format.h>

#include <cstring>

namespace cordon::core {

Error SyscallError(std::string_view call, std::string_view args, int err) {
  return Error{ErrorCode::kSystem, err, fmt::format("{}({}): {}", call, args, std::strerror(err))};
}

}  // namespace cordon::core
