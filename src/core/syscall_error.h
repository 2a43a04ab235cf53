// Builds Error values for failed system calls, with the call and its arguments in the message.
#pragma once

#include <cerrno>
#include <string>
#include <string_view>

#include "cordon/error.h"

namespace cordon::core {

// "open(/etc/passwd): Permission denied"; errno_value is set.
[[nodiscard]] Error SyscallError(std::string_view call, std::string_view args, int err = errno);

[[nodiscard]] inline std::unexpected<Error> FailSyscall(std::string_view call,
                                                        std::string_view args, int err = errno) {
  return std::unexpected<Error>(SyscallError(call, args, err));
}

}  // namespace cordon::core
