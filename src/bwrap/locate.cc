#include "bwrap/locate.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>

#include "bwrap/run_captured.h"
#include "core/paths.h"
#include "core/syscall_error.h"
#include "core/trusted_path.h"

namespace cordon::bwrap {
namespace {

bool ParseNumber(std::string_view& text, int& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (ec != std::errc{} || ptr == text.data()) return false;
  text.remove_prefix(static_cast<std::size_t>(ptr - text.data()));
  return true;
}

// `bwrap --version` with an empty environment; at most 256 bytes of its output.
Result<std::string> RunVersion(const std::filesystem::path& bwrap) {
  CORDON_TRY(CapturedRun run,
             RunCaptured({bwrap.string(), "--version"}, {}, CapturedStream::kStdout, 256));
  if (!run.exited_zero) {
    return Fail(ErrorCode::kUnavailable, fmt::format("{} --version failed", bwrap.string()));
  }
  return std::move(run.output);
}

std::string Describe(const BwrapVersion& v) {
  return fmt::format("{}.{}.{}", v.major, v.minor, v.patch);
}

}  // namespace

Result<BwrapVersion> ParseBwrapVersion(std::string_view output) {
  constexpr std::string_view kPrefix = "bubblewrap ";
  std::string_view text = output;
  if (!text.starts_with(kPrefix)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("unexpected `bwrap --version` output {:?}", output.substr(0, 64)));
  }
  text.remove_prefix(kPrefix.size());
  BwrapVersion v;
  bool ok = ParseNumber(text, v.major) && text.starts_with('.');
  if (ok) {
    text.remove_prefix(1);
    ok = ParseNumber(text, v.minor);
  }
  if (ok && text.starts_with('.')) {
    text.remove_prefix(1);
    ok = ParseNumber(text, v.patch);
  }
  if (!ok || !(text.empty() || text.front() == '\n' || text.front() == ' ')) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("unexpected `bwrap --version` output {:?}", output.substr(0, 64)));
  }
  return v;
}

Result<BwrapBinary> LocateBwrap(const std::filesystem::path& configured,
                                const std::vector<std::filesystem::path>& writable_roots) {
  std::vector<std::filesystem::path> candidates;
  if (!configured.empty()) {
    if (!configured.is_absolute()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("bwrap path {} is not absolute (PATH is never searched)",
                              configured.string()));
    }
    candidates.push_back(configured);
  } else {
    for (std::string_view location : kBwrapLocations) candidates.emplace_back(location);
  }
  std::string refused;
  for (const std::filesystem::path& candidate : candidates) {
    Result<std::filesystem::path> canonical = core::Canonical(candidate);
    if (!canonical) continue;  // not installed there
    if (::access(canonical->c_str(), X_OK) != 0) {
      refused += fmt::format("; {}: not executable", canonical->string());
      continue;
    }
    if (Result<void> trusted = CheckTrustedPath(*canonical, ::getuid(), writable_roots); !trusted) {
      refused += "; " + trusted.error().message;
      continue;
    }
    CORDON_TRY(std::string output, RunVersion(*canonical));
    CORDON_TRY(BwrapVersion version, ParseBwrapVersion(output));
    if (version < kMinimumBwrapVersion) {
      return Fail(
          ErrorCode::kUnavailable,
          fmt::format("{} is bubblewrap {}; cordon needs {} or newer (upgrade the "
                      "bubblewrap package)",
                      canonical->string(), Describe(version), Describe(kMinimumBwrapVersion)));
    }
    return BwrapBinary{*canonical, version};
  }
  return Fail(ErrorCode::kUnavailable,
              fmt::format("bubblewrap not found{}{} (install it: apt install bubblewrap, or "
                          "dnf install bubblewrap)",
                          configured.empty() ? " in /usr/bin, /bin or /usr/local/bin" : "",
                          refused.empty() ? "" : fmt::format(" or not trusted{}", refused)));
}

}  // namespace cordon::bwrap
