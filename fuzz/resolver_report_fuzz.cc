// Fuzz target: the messages between cordon-resolver and its run's connect broker
// (src/net/resolver_report.h). The resolver parses bytes the sandboxed command sends, so the
// broker treats what it says as hostile; the resolver reads the broker's replies. Whatever the
// bytes, decoding must not crash, and a report that is accepted must encode to bytes that
// decode to the same report.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "net/resolver_report.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (const std::optional<cordon::net::ResolverReport> report = cordon::net::DecodeReport(bytes)) {
    const std::string again = cordon::net::EncodeReport(*report);
    if (again.size() <= cordon::net::kMaxResolverReport &&
        cordon::net::DecodeReport(again) != report) {
      std::abort();  // accepted, but not the same report once re-encoded
    }
  }
  if (const std::optional<cordon::net::UpstreamReply> reply =
          cordon::net::DecodeUpstreamReply(std::span<const std::uint8_t>(data, size))) {
    // The wire is what follows the kind byte.
    if (!reply->wire.empty() && reply->wire.size() != size - 1) std::abort();
  }
  if (const std::optional<cordon::net::ConnectResult> result =
          cordon::net::DecodeConnectResult(std::span<const std::uint8_t>(data, size))) {
    if (cordon::net::EncodeConnectResult(*result) != std::vector<std::uint8_t>(data, data + size)) {
      std::abort();  // a result is exactly its encoding
    }
  }
  return 0;
}
