// The server name a TLS client asks for, read from ClientHellos that OpenSSL's own client side
// writes: whole, cut short, with a server_name extension that overruns, and bytes that are no
// TLS hello at all.
#include "resolver/tls_server_name.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cordon::resolver {
namespace {

using Kind = TlsServerNames::Verdict::Kind;
using Bytes = std::vector<std::uint8_t>;

// The first flight of OpenSSL's TLS client: its ClientHello, naming `name` (none when null).
Bytes ClientHello(const char* name) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context(SSL_CTX_new(TLS_client_method()),
                                                            &SSL_CTX_free);
  if (!context) {
    ADD_FAILURE() << "SSL_CTX_new failed";
    return {};
  }
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(context.get()), &SSL_free);
  if (!ssl) {
    ADD_FAILURE() << "SSL_new failed";
    return {};
  }
  if (name != nullptr) {
    EXPECT_EQ(SSL_set_tlsext_host_name(ssl.get(), name), 1);
  }
  SSL_set_connect_state(ssl.get());
  // The SSL object owns both memory BIOs.
  SSL_set_bio(ssl.get(), BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
  const int rc = SSL_do_handshake(ssl.get());
  EXPECT_EQ(SSL_get_error(ssl.get(), rc), SSL_ERROR_WANT_READ);  // it waits for a ServerHello
  char* data = nullptr;
  const long size = BIO_get_mem_data(SSL_get_wbio(ssl.get()), &data);
  if (size <= 0 || data == nullptr) {
    ADD_FAILURE() << "OpenSSL's client wrote no ClientHello";
    return {};
  }
  return Bytes(data, data + size);
}

std::unique_ptr<TlsServerNames> Names() {
  auto names = TlsServerNames::Create();
  if (!names) {
    ADD_FAILURE() << names.error().message;
    return nullptr;
  }
  return std::move(*names);
}

Bytes Text(std::string_view text) { return {text.begin(), text.end()}; }

TEST(TlsServerNamesTest, ReadsTheServerNameOfAWholeHello) {
  const auto names = Names();
  ASSERT_NE(names, nullptr);
  const Bytes hello = ClientHello("pkg.test");
  ASSERT_FALSE(hello.empty());
  EXPECT_EQ(hello[0], 22);
  const TlsServerNames::Verdict verdict = names->Read(hello);
  EXPECT_EQ(verdict.kind, Kind::kName);
  EXPECT_EQ(verdict.name, "pkg.test");
}

TEST(TlsServerNamesTest, ServerNameIsLowerCased) {
  const auto names = Names();
  ASSERT_NE(names, nullptr);
  const TlsServerNames::Verdict verdict = names->Read(ClientHello("PKG.Test"));
  EXPECT_EQ(verdict.kind, Kind::kName);
  EXPECT_EQ(verdict.name, "pkg.test");
}

TEST(TlsServerNamesTest, HelloWithoutServerNameNamesNone) {
  const auto names = Names();
  ASSERT_NE(names, nullptr);
  const TlsServerNames::Verdict verdict = names->Read(ClientHello(nullptr));
  EXPECT_EQ(verdict.kind, Kind::kName);
  EXPECT_EQ(verdict.name, "");
}

TEST(TlsServerNamesTest, HelloCutShortAsksForMore) {
  const auto names = Names();
  ASSERT_NE(names, nullptr);
  const Bytes hello = ClientHello("pkg.test");
  ASSERT_GT(hello.size(), 12u);
  EXPECT_EQ(names->Read({}).kind, Kind::kMore);
  // A byte, a record header, a byte of the hello, half of it, all but its last byte.
  for (const std::size_t size :
       {std::size_t{1}, std::size_t{5}, std::size_t{6}, hello.size() / 2, hello.size() - 1}) {
    const Bytes prefix(hello.begin(), hello.begin() + static_cast<std::ptrdiff_t>(size));
    EXPECT_EQ(names->Read(prefix).kind, Kind::kMore) << size << " of " << hello.size();
  }
}

TEST(TlsServerNamesTest, OtherProtocolsAreNotTls) {
  const auto names = Names();
  ASSERT_NE(names, nullptr);
  EXPECT_EQ(names->Read(Text("GET / HTTP/1.1\r\n")).kind, Kind::kNotTls);
  EXPECT_EQ(names->Read(Text("SSH-2.0-OpenSSH_9.2p1\r\n")).kind, Kind::kNotTls);
  EXPECT_EQ(names->Read(Bytes{5, 1, 0}).kind, Kind::kNotTls);  // a SOCKS5 greeting
}

TEST(TlsServerNamesTest, HandshakeRecordOfGarbageIsInvalid) {
  const auto names = Names();
  ASSERT_NE(names, nullptr);
  Bytes record = {22, 3, 1, 0, 0x40};  // a whole record of 64 bytes: no hello in it
  record.resize(record.size() + 0x40, 0xff);
  EXPECT_EQ(names->Read(record).kind, Kind::kInvalid);
}

TEST(TlsServerNamesTest, ServerNameListThatOverrunsItsExtensionIsInvalid) {
  const auto names = Names();
  ASSERT_NE(names, nullptr);
  Bytes hello = ClientHello("pkg.test");
  // server_name's data: list length (2 bytes), name type (1), name length (2), the name.
  constexpr std::string_view kName = "pkg.test";
  const auto at = std::search(hello.begin(), hello.end(), kName.begin(), kName.end());
  ASSERT_NE(at, hello.end());
  const std::size_t name = static_cast<std::size_t>(at - hello.begin());
  ASSERT_GE(name, 5u);
  ASSERT_EQ(std::size_t{hello[name - 4]}, 1 + 2 + kName.size());  // the list length's low byte
  ++hello[name - 4];
  EXPECT_EQ(names->Read(hello).kind, Kind::kInvalid);
}

TEST(TlsServerNamesTest, AnotherTlsRecordBeforeTheHelloIsInvalidNotAnotherProtocol) {
  const auto names = Names();
  ASSERT_NE(names, nullptr);
  // A warning alert (user_canceled), which a server may skip, then a hello for another name.
  Bytes bytes{21, 3, 1, 0, 2, 1, 90};
  const Bytes hello = ClientHello("other.test");
  bytes.insert(bytes.end(), hello.begin(), hello.end());
  EXPECT_EQ(names->Read(bytes).kind, Kind::kInvalid);
  // Its twin: the hello alone is read.
  EXPECT_EQ(names->Read(hello).name, "other.test");
}

TEST(TlsServerNamesTest, MoreThanMaxHelloIsInvalid) {
  const auto names = Names();
  ASSERT_NE(names, nullptr);
  Bytes bytes(TlsServerNames::kMaxHello + 1, 0);
  bytes[0] = 22;
  EXPECT_EQ(names->Read(bytes).kind, Kind::kInvalid);
}

TEST(TlsServerNamesTest, OneReaderReadsHellosIndependently) {
  const auto names = Names();
  ASSERT_NE(names, nullptr);
  const Bytes first = ClientHello("a.test");
  const Bytes second = ClientHello("b.test");
  EXPECT_EQ(names->Read(first).name, "a.test");
  EXPECT_EQ(names->Read(ClientHello(nullptr)).name, "");
  EXPECT_EQ(names->Read(Bytes(first.begin(), first.begin() + 6)).kind, Kind::kMore);
  const TlsServerNames::Verdict verdict = names->Read(second);
  EXPECT_EQ(verdict.kind, Kind::kName);
  EXPECT_EQ(verdict.name, "b.test");
  EXPECT_EQ(names->Read(first).name, "a.test");
}

}  // namespace
}  // namespace cordon::resolver
