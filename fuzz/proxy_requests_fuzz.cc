// libFuzzer target for what a client of the sandbox's proxy sends (src/resolver/, in
// cordon-resolver): the bytes as HTTP requests (fed in pieces whose sizes the first byte picks,
// each head released as the proxy releases an allowed one), as a SOCKS5 handshake, and as the
// first bytes of a tunnel (a TLS hello). Beyond "no crash, no sanitizer report": nothing beyond
// what was read is released, and a SOCKS5 handshake never takes more than it was given.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

#include "resolver/http_requests.h"
#include "resolver/socks5_handshake.h"
#include "resolver/tls_server_name.h"

namespace {

void HttpRequestsIn(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const std::size_t piece = static_cast<std::size_t>(data[0] % 64) + 1;
  cordon::resolver::HttpRequests requests;
  std::vector<char> bytes;
  for (std::size_t at = 1; at < size;) {
    const std::size_t n = std::min(piece, size - at);
    bytes.insert(bytes.end(), data + at, data + at + n);
    at += n;
    for (int round = 0; round < 64; ++round) {
      const auto event = requests.Read(bytes);
      if (requests.released() > bytes.size() || requests.consumed() > bytes.size()) std::abort();
      using Kind = cordon::resolver::HttpRequests::Event::Kind;
      if (event.kind == Kind::kInvalid) return;
      if (event.kind != Kind::kHead) break;
      requests.Release(bytes);
      if (requests.released() > bytes.size()) std::abort();
    }
    // The released prefix goes on, as the proxy forwards it.
    const std::size_t sent = requests.released();
    bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(sent));
    requests.Drop(sent);
  }
}

void SocksIn(const std::uint8_t* data, std::size_t size) {
  cordon::resolver::Socks5Handshake handshake;
  std::vector<std::uint8_t> reply;
  for (std::size_t end = 0; end <= size; ++end) {
    const auto state = handshake.Read(std::span(data, end), reply);
    if (handshake.consumed() > end) std::abort();
    if (state == cordon::resolver::Socks5Handshake::State::kDone ||
        state == cordon::resolver::Socks5Handshake::State::kFailed) {
      return;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::unique_ptr<cordon::resolver::TlsServerNames> names =
      *cordon::resolver::TlsServerNames::Create();
  HttpRequestsIn(data, size);
  SocksIn(data, size);
  (void)names->Read(std::span(data, size));
  return 0;
}
