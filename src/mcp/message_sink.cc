#include "mcp/message_sink.h"

#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

#include "report/json_report.h"

namespace cordon::mcp {

void FdSink::Send(const nlohmann::json& message) {
  // Serialise outside the lock: a large command output should not hold up other writers.
  // Dump never emits a raw newline (strings escape it), so one message is one line.
  std::string line = report::Dump(message);
  line.push_back('\n');
  std::lock_guard lock(mutex_);
  if (closed_) return;
  std::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd_, rest.data(), rest.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      closed_ = true;
      return;
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

bool FdSink::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

}  // namespace cordon::mcp
