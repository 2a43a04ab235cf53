#include "resolver/tls_server_name.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/tls1.h>

#include <cctype>

namespace cordon::resolver {
namespace {

constexpr std::uint8_t kChangeCipherSpecRecord = 20;
constexpr std::uint8_t kHandshakeRecord = 22;
constexpr std::uint8_t kHeartbeatRecord = 24;
constexpr std::size_t kRecordHeader = 5;
constexpr std::uint8_t kHostName = 0;

struct Outcome {
  bool seen = false;
  std::string name;
  bool malformed = false;
};

// The server_name extension's data: a 2-byte list length, then entries of a type byte and a
// 2-byte length. The first host_name is the name; a list that overruns is malformed.
void ReadServerName(const unsigned char* data, std::size_t size, Outcome& out) {
  if (size < 2) {
    out.malformed = true;
    return;
  }
  const std::size_t list = (std::size_t{data[0]} << 8) | data[1];
  if (list + 2 != size) {
    out.malformed = true;
    return;
  }
  std::size_t at = 2;
  while (at + 3 <= size) {
    const std::uint8_t type = data[at];
    const std::size_t length = (std::size_t{data[at + 1]} << 8) | data[at + 2];
    at += 3;
    if (at + length > size) {
      out.malformed = true;
      return;
    }
    if (type == kHostName) {
      // One name (RFC 6066, 3): a second one, which a server might take instead, is refused.
      if (!out.name.empty()) {
        out.malformed = true;
        return;
      }
      std::string name(reinterpret_cast<const char*>(data + at), length);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (!name.empty() && name.back() == '.') name.pop_back();
      if (name.empty()) {
        out.malformed = true;
        return;
      }
      out.name = std::move(name);
    }
    at += length;
  }
  if (at != size) out.malformed = true;
}

int OnClientHello(SSL* ssl, int* alert, void* /*arg*/) {
  auto& out = *static_cast<Outcome*>(SSL_get_app_data(ssl));
  out.seen = true;
  const unsigned char* data = nullptr;
  std::size_t size = 0;
  if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &data, &size) == 1) {
    ReadServerName(data, size, out);
  }
  *alert = SSL_AD_INTERNAL_ERROR;
  return SSL_CLIENT_HELLO_ERROR;  // read: the handshake goes no further
}

}  // namespace

Result<std::unique_ptr<TlsServerNames>> TlsServerNames::Create() {
  if (OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr) != 1) {
    return Fail(ErrorCode::kInternal, "OpenSSL did not initialise (OPENSSL_init_ssl)");
  }
  SSL_CTX* context = SSL_CTX_new(TLS_server_method());
  if (context == nullptr) {
    return Fail(ErrorCode::kInternal, "OpenSSL: SSL_CTX_new failed");
  }
  // Every version a client may offer (the hello is only read, never answered).
  SSL_CTX_set_min_proto_version(context, 0);
  SSL_CTX_set_security_level(context, 0);
  SSL_CTX_set_client_hello_cb(context, &OnClientHello, nullptr);
  return std::unique_ptr<TlsServerNames>(new TlsServerNames(context));
}

TlsServerNames::~TlsServerNames() { SSL_CTX_free(context_); }

TlsServerNames::Verdict TlsServerNames::Read(std::span<const std::uint8_t> bytes) const {
  Verdict verdict;
  if (bytes.empty()) return verdict;
  if (bytes[0] != kHandshakeRecord) {
    // Another TLS record first (an alert, say, which a server may skip before the hello that
    // follows): no hello cordon read, so refused; anything else is another protocol.
    const bool tls = bytes[0] >= kChangeCipherSpecRecord && bytes[0] <= kHeartbeatRecord;
    verdict.kind = tls ? Verdict::Kind::kInvalid : Verdict::Kind::kNotTls;
    return verdict;
  }
  if (bytes.size() > kMaxHello) {
    verdict.kind = Verdict::Kind::kInvalid;
    return verdict;
  }
  // Not before the first record is whole: a hello sent a byte at a time is parsed once, not
  // once per byte.
  if (bytes.size() < kRecordHeader ||
      bytes.size() < kRecordHeader + ((std::size_t{bytes[3]} << 8) | bytes[4])) {
    return verdict;
  }
  Outcome outcome;
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(context_), &SSL_free);
  BIO* in = BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size()));
  BIO* out = BIO_new(BIO_s_mem());
  if (!ssl || in == nullptr || out == nullptr) {
    BIO_free(in);
    BIO_free(out);
    verdict.kind = Verdict::Kind::kInvalid;
    return verdict;
  }
  // A memory buffer that runs dry asks for more (not end of file).
  BIO_set_mem_eof_return(in, -1);
  SSL_set_bio(ssl.get(), in, out);
  SSL_set_accept_state(ssl.get());
  SSL_set_app_data(ssl.get(), &outcome);
  const int rc = SSL_do_handshake(ssl.get());
  const int err = SSL_get_error(ssl.get(), rc);
  ERR_clear_error();
  if (outcome.seen) {
    verdict.kind = outcome.malformed ? Verdict::Kind::kInvalid : Verdict::Kind::kName;
    verdict.name = std::move(outcome.name);
  } else if (err == SSL_ERROR_WANT_READ) {
    verdict.kind = Verdict::Kind::kMore;
  } else {
    verdict.kind = Verdict::Kind::kInvalid;
  }
  return verdict;
}

}  // namespace cordon::resolver
