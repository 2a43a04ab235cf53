// The server name (SNI, RFC 6066) a TLS client asks for in its ClientHello, read by OpenSSL
// from the first bytes a client of the sandbox's proxy sends into a tunnel to a name: the
// proxy lets the tunnel carry TLS only to the name it was opened for (no domain fronting
// through an allowed address). OpenSSL parses the record and the hello (a server-side SSL
// object on memory BIOs whose client-hello callback stops the handshake); cordon reads only
// the server_name extension's few bytes.
//
// Create() is called before the resolver confines itself (OpenSSL's set-up may open files);
// Reader objects after it only compute. Not thread-safe.
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "cordon/error.h"

namespace cordon::resolver {

class TlsServerNames {
 public:
  [[nodiscard]] static Result<std::unique_ptr<TlsServerNames>> Create();
  ~TlsServerNames();
  TlsServerNames(const TlsServerNames&) = delete;
  TlsServerNames& operator=(const TlsServerNames&) = delete;

  struct Verdict {
    enum class Kind {
      kMore,     // a hello has begun: more bytes are needed
      kNotTls,   // not a TLS record: another protocol
      kName,     // a ClientHello: `name` (empty: it names none)
      kInvalid,  // a TLS record that is no ClientHello cordon can read (or another record
                 // first), or a hello naming more than one host
    };
    Kind kind = Kind::kMore;
    std::string name;  // lower case, no final dot
  };

  // Reads the first bytes of one connection (all of them so far, from its start).
  Verdict Read(std::span<const std::uint8_t> bytes) const;

  // More than this without a whole hello: kInvalid.
  static constexpr std::size_t kMaxHello = 64 * 1024;

 private:
  explicit TlsServerNames(SSL_CTX* context) : context_(context) {}
  SSL_CTX* context_;
};

}  // namespace cordon::resolver
