#include "cli/tty_approval.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cctype>

#include "core/unique_fd.h"

namespace cordon::cli {
namespace {

// Control characters in the command would let it redraw the prompt (hide part of itself, fake
// an approval line): show them escaped.
std::string Visible(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\n') {
      out += "\n    ";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

bool WriteAll(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

Approval AskOnTerminal(const std::string& command, const std::string& justification) {
  core::UniqueFd tty(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
  if (!tty) return Approval::kNoTerminal;
  const std::string prompt = fmt::format(
      "\ncordon: a command asks to run OUTSIDE the sandbox (unrestricted, once):\n"
      "    {}\n"
      "reason given: {}\n"
      "Run it once without the sandbox? [y/N] ",
      Visible(command), justification.empty() ? "(none)" : Visible(justification));
  if (!WriteAll(tty.get(), prompt)) return Approval::kNoTerminal;
  std::string answer;
  char c = 0;
  while (answer.size() < 16) {
    ssize_t n = ::read(tty.get(), &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    answer += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return answer == "y" || answer == "yes" ? Approval::kApproved : Approval::kDeclined;
}

}  // namespace cordon::cli
