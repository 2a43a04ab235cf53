// The sandbox's proxy on real loopback sockets: a client stands in for the command, the test
// for the broker (it answers the service's lookups with ldns replies and its connect requests
// with a socket connected to an upstream server of its own) and for that server. Each refused
// case has its allowed twin.
#include "resolver/proxy_service.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ldns/ldns.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ldns_packets.h"
#include "support/loopback_udp.h"

namespace cordon::resolver {
namespace {

using core::UniqueFd;

// A listening TCP socket on 127.0.0.1 and its address.
UniqueFd Listen(sockaddr_in* address) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  address->sin_family = AF_INET;
  address->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address->sin_port = 0;
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(address), sizeof *address), 0);
  EXPECT_EQ(::listen(fd.get(), 8), 0);
  socklen_t len = sizeof *address;
  EXPECT_EQ(::getsockname(fd.get(), reinterpret_cast<sockaddr*>(address), &len), 0);
  return fd;
}

UniqueFd ConnectTo(const sockaddr_in& address) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  return fd;
}

// A TLS ClientHello naming `server_name`, made by OpenSSL's client side.
std::string ClientHello(const char* server_name) {
  SSL_CTX* context = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(context);
  SSL_set_tlsext_host_name(ssl, server_name);
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  SSL_set_bio(ssl, in, out);
  SSL_set_connect_state(ssl);
  (void)SSL_do_handshake(ssl);
  char* data = nullptr;
  const long size = BIO_get_mem_data(out, &data);
  std::string hello(data, static_cast<std::size_t>(size));
  SSL_free(ssl);
  SSL_CTX_free(context);
  return hello;
}

class ProxyServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<net::DomainRules> parsed =
        net::DomainRules::Parse({"pkg.test", "rebind.test", "far.test"}, {});
    ASSERT_TRUE(parsed) << parsed.error().message;
    rules_ = *parsed;
    sockaddr_in sandbox_address{};
    DnsService::Reports reports{
        .query = [this](std::uint16_t tag, const DnsQuestion& q) { queries_.emplace_back(tag, q); },
        .handed_out =
            [this](const net::IpAddress& a, const std::string& name) {
              handed_.push_back(name + " " + net::ToString(a));
            },
        .refused = [](const std::string&) {},
        .withheld = [](const std::string&, const net::IpAddress&) {},
    };
    auto dns = DnsService::Create(test_support::BoundUdp(&sandbox_address), UniqueFd(), &rules_,
                                  std::move(reports));
    ASSERT_TRUE(dns) << dns.error().message;
    dns_ = std::move(*dns);
    auto names = TlsServerNames::Create();
    ASSERT_TRUE(names) << names.error().message;
    names_ = std::move(*names);
    service_ = std::make_unique<ProxyService>(
        Listen(&proxy_address_), &rules_, dns_.get(), names_.get(),
        ProxyService::Hooks{
            .connect = [this](const net::ConnectRequest& r) { connects_.push_back(r); },
            .refused = [this](const net::ProxyRefused& r) { refusals_.push_back(r); }});
    upstream_listener_ = Listen(&upstream_address_);
  }

  // Runs the service, the test's broker and its upstream server until `done` holds or 5 s pass.
  bool Serve(const std::function<bool()>& done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      AnswerLookups();
      AnswerConnects();
      dns_->AnswerLookups();
      std::vector<pollfd> fds;
      service_->AppendPollSet(fds);
      const std::size_t ours = fds.size();
      fds.push_back({upstream_listener_.get(), POLLIN, 0});
      (void)::poll(fds.data(), fds.size(), 10);
      for (std::size_t i = 0; i < ours; ++i) {
        if (fds[i].revents != 0) service_->OnReady(fds[i].fd, fds[i].revents);
      }
      if (fds[ours].revents != 0)
        upstream_.Reset(::accept4(upstream_listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    }
    return true;
  }

  // The host's resolver: `addresses_` for pkg.test's A question, nothing else.
  void AnswerLookups() {
    for (const auto& [tag, question] : std::exchange(queries_, {})) {
      ldns_pkt* p = test::QueryPacket((question.name + ".").c_str(),
                                      static_cast<ldns_rr_type>(question.type), tag);
      ldns_pkt_set_qr(p, true);
      if (question.type == LDNS_RR_TYPE_A) {
        for (const std::string& a : addresses_[question.name]) {
          ldns_rr* rr = nullptr;
          const std::string text = question.name + ". 60 IN A " + a;
          EXPECT_EQ(ldns_rr_new_frm_str(&rr, text.c_str(), 0, nullptr, nullptr), LDNS_STATUS_OK);
          ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER, rr);
        }
      }
      asked_.push_back(question.name + "/" + std::to_string(question.type));
      dns_->OnReply(tag, test::TakeWire(p));
    }
  }

  // The broker: each request is recorded; `broker_err_` (0: a socket connected to the upstream
  // server) answers it.
  void AnswerConnects() {
    for (; answered_ < connects_.size(); ++answered_) {
      const net::ConnectRequest& r = connects_[answered_];
      if (broker_err_ != 0) {
        service_->OnConnected(r.tag, broker_err_, UniqueFd());
      } else {
        service_->OnConnected(r.tag, 0, ConnectTo(upstream_address_));
      }
    }
  }

  // What `fd` has to read within the serving loop (until `want` bytes, its end, or 5 s).
  std::string ReadFrom(const UniqueFd& fd, std::size_t want, bool* eof = nullptr) {
    std::string got;
    bool closed = false;
    Serve([&] {
      char buffer[4096];
      const ssize_t n = fd ? ::recv(fd.get(), buffer, sizeof buffer, MSG_DONTWAIT) : -1;
      if (n > 0) got.append(buffer, static_cast<std::size_t>(n));
      if (n == 0) closed = true;
      return closed || got.size() >= want;
    });
    if (eof != nullptr) *eof = closed;
    return got;
  }

  void Send(const UniqueFd& fd, const std::string& bytes) {
    ASSERT_EQ(::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }

  net::DomainRules rules_;
  std::unique_ptr<DnsService> dns_;
  std::unique_ptr<TlsServerNames> names_;
  std::unique_ptr<ProxyService> service_;
  sockaddr_in proxy_address_{};
  sockaddr_in upstream_address_{};
  UniqueFd upstream_listener_;
  UniqueFd upstream_;  // the upstream server's side of the last connection
  std::map<std::string, std::vector<std::string>> addresses_{{"pkg.test", {"192.0.2.7"}},
                                                             {"rebind.test", {"127.0.0.1"}}};
  std::vector<std::pair<std::uint16_t, DnsQuestion>> queries_;
  std::vector<std::string> asked_;
  std::vector<std::string> handed_;
  std::vector<net::ConnectRequest> connects_;
  std::size_t answered_ = 0;
  int broker_err_ = 0;
  std::vector<net::ProxyRefused> refusals_;
};

TEST_F(ProxyServiceTest, ConnectToAnAllowedNameIsLookedUpAskedOfTheBrokerAndRelayed) {
  UniqueFd client = ConnectTo(proxy_address_);
  Send(client, "CONNECT pkg.test:443 HTTP/1.1\r\nHost: pkg.test:443\r\n\r\n");
  EXPECT_EQ(ReadFrom(client, 39), "HTTP/1.1 200 Connection established\r\n\r\n");
  EXPECT_EQ(asked_, std::vector<std::string>{"pkg.test/1"});
  EXPECT_EQ(handed_, std::vector<std::string>{"pkg.test 192.0.2.7"});
  ASSERT_EQ(connects_.size(), 1u);
  EXPECT_EQ(connects_[0].address, *net::ParseAddress("192.0.2.7"));
  EXPECT_EQ(connects_[0].port, 443);
  EXPECT_EQ(connects_[0].name, "pkg.test");
  // Not TLS: relayed both ways as it comes, and each end of file passed on.
  Send(client, "SSH-2.0-client\r\n");
  EXPECT_EQ(ReadFrom(upstream_, 16), "SSH-2.0-client\r\n");
  Send(upstream_, "SSH-2.0-server\r\n");
  EXPECT_EQ(ReadFrom(client, 16), "SSH-2.0-server\r\n");
  ASSERT_EQ(::shutdown(client.get(), SHUT_WR), 0);
  bool eof = false;
  EXPECT_EQ(ReadFrom(upstream_, 1, &eof), "");
  EXPECT_TRUE(eof);
  upstream_.Reset();
  eof = false;
  EXPECT_EQ(ReadFrom(client, 1, &eof), "");
  EXPECT_TRUE(eof);
  EXPECT_TRUE(refusals_.empty());
}

TEST_F(ProxyServiceTest, ANameNotAllowedIsRefusedWithoutALookup) {
  UniqueFd client = ConnectTo(proxy_address_);
  Send(client, "CONNECT other.test:443 HTTP/1.1\r\n\r\n");
  bool eof = false;
  const std::string answer = ReadFrom(client, 1 << 20, &eof);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 403 Forbidden\r\n")) << answer;
  EXPECT_NE(answer.find("other.test:443 is not allowed"), std::string::npos) << answer;
  EXPECT_TRUE(eof);
  EXPECT_TRUE(asked_.empty());
  EXPECT_TRUE(connects_.empty());
  ASSERT_EQ(refusals_.size(), 1u);
  EXPECT_EQ(refusals_[0], (net::ProxyRefused{"other.test", 443, "name", ""}));
}

TEST_F(ProxyServiceTest, TlsForTheTunnelsNameGoesOn) {
  UniqueFd client = ConnectTo(proxy_address_);
  Send(client, "CONNECT pkg.test:443 HTTP/1.1\r\n\r\n");
  ASSERT_EQ(ReadFrom(client, 39).size(), 39u);
  const std::string hello = ClientHello("pkg.test");
  // In two pieces: the name is read once the hello is whole.
  Send(client, hello.substr(0, 7));
  Send(client, hello.substr(7));
  EXPECT_EQ(ReadFrom(upstream_, hello.size()), hello);
  EXPECT_TRUE(refusals_.empty());
}

TEST_F(ProxyServiceTest, TlsForAnotherNameIsRefusedBeforeAByteGoesOn) {
  UniqueFd client = ConnectTo(proxy_address_);
  Send(client, "CONNECT pkg.test:443 HTTP/1.1\r\n\r\n");
  ASSERT_EQ(ReadFrom(client, 39).size(), 39u);
  Send(client, ClientHello("other.test"));
  bool eof = false;
  EXPECT_EQ(ReadFrom(upstream_, 1, &eof), "");
  EXPECT_TRUE(eof);
  ASSERT_EQ(refusals_.size(), 1u);
  EXPECT_EQ(refusals_[0], (net::ProxyRefused{"pkg.test", 443, "server_name", "other.test"}));
}

TEST_F(ProxyServiceTest, PlainHttpGoesInOriginFormAndEachRequestMustNameTheHost) {
  UniqueFd client = ConnectTo(proxy_address_);
  const std::string first =
      "GET http://pkg.test:8080/a?b=1 HTTP/1.1\r\nHost: pkg.test:8080\r\n\r\n";
  Send(client, first);
  const std::string expected = "GET /a?b=1 HTTP/1.1\r\nHost: pkg.test:8080\r\n\r\n";
  EXPECT_EQ(ReadFrom(upstream_, expected.size()), expected);
  ASSERT_EQ(connects_.size(), 1u);
  EXPECT_EQ(connects_[0].port, 8080);
  // The same host again: on; another host: nothing of it goes on, and the connection closes.
  Send(client, "GET http://pkg.test:8080/c HTTP/1.1\r\nHost: pkg.test:8080\r\n\r\n");
  EXPECT_EQ(ReadFrom(upstream_, 40), "GET /c HTTP/1.1\r\nHost: pkg.test:8080\r\n\r\n");
  Send(client, "GET http://other.test:8080/d HTTP/1.1\r\nHost: other.test:8080\r\n\r\n");
  bool eof = false;
  EXPECT_EQ(ReadFrom(upstream_, 1, &eof), "");
  EXPECT_TRUE(eof);
  ASSERT_EQ(refusals_.size(), 1u);
  EXPECT_EQ(refusals_[0], (net::ProxyRefused{"pkg.test", 8080, "host_header", "other.test:8080"}));
}

TEST_F(ProxyServiceTest, HttpInATunnelMustNameTheTunnelsHost) {
  UniqueFd client = ConnectTo(proxy_address_);
  Send(client, "CONNECT pkg.test:80 HTTP/1.1\r\n\r\n");
  ASSERT_EQ(ReadFrom(client, 39).size(), 39u);
  const std::string own = "GET /a HTTP/1.1\r\nHost: pkg.test\r\n\r\n";
  Send(client, own);
  EXPECT_EQ(ReadFrom(upstream_, own.size()), own);
  Send(client, "GET /b HTTP/1.1\r\nHost: other.test\r\n\r\n");
  bool eof = false;
  EXPECT_EQ(ReadFrom(upstream_, 1, &eof), "");
  EXPECT_TRUE(eof);
  ASSERT_EQ(refusals_.size(), 1u);
  EXPECT_EQ(refusals_[0], (net::ProxyRefused{"pkg.test", 80, "host_header", "other.test:80"}));
}

TEST_F(ProxyServiceTest, TlsInATunnelToAnAddressMustNameAnAllowedHost) {
  for (const char* name : {"pkg.test", "other.test"}) {
    SCOPED_TRACE(name);
    refusals_.clear();
    UniqueFd client = ConnectTo(proxy_address_);
    // SOCKS5 to 203.0.113.5:443, which the broker allows (the test's broker allows all).
    Send(client, std::string("\x05\x01\x00\x05\x01\x00\x01\xcb\x00\x71\x05\x01\xbb", 13));
    ASSERT_EQ(ReadFrom(client, 12).size(), 12u);
    const std::string hello = ClientHello(name);
    Send(client, hello);
    bool eof = false;
    const std::string got = ReadFrom(upstream_, hello.size(), &eof);
    if (std::string(name) == "pkg.test") {
      EXPECT_EQ(got, hello);
      EXPECT_TRUE(refusals_.empty());
    } else {
      EXPECT_EQ(got, "");
      EXPECT_TRUE(eof);
      ASSERT_EQ(refusals_.size(), 1u);
      EXPECT_EQ(refusals_[0].why, "server_name");
      EXPECT_EQ(refusals_[0].detail, "other.test");
    }
  }
}

TEST_F(ProxyServiceTest, SocksToAnAddressGoesToTheBrokerAsItIs) {
  UniqueFd client = ConnectTo(proxy_address_);
  Send(client, std::string("\x05\x01\x00", 3));
  EXPECT_EQ(ReadFrom(client, 2), std::string("\x05\x00", 2));
  broker_err_ = EACCES;  // the broker's refusal (an address no allowed name was handed out for)
  Send(client, std::string("\x05\x01\x00\x01\xcb\x00\x71\x05\x00\x50", 10));
  bool eof = false;
  const std::string reply = ReadFrom(client, 10, &eof);
  ASSERT_EQ(reply.size(), 10u);
  EXPECT_EQ(reply[1], 2) << "not allowed by the ruleset";
  EXPECT_TRUE(asked_.empty());
  ASSERT_EQ(connects_.size(), 1u);
  EXPECT_EQ(connects_[0].address, *net::ParseAddress("203.0.113.5"));
  EXPECT_EQ(connects_[0].port, 80);
  EXPECT_EQ(connects_[0].name, "");
}

TEST_F(ProxyServiceTest, SocksToAnAllowedNameIsRelayed) {
  UniqueFd client = ConnectTo(proxy_address_);
  Send(client, std::string("\x05\x01\x00\x05\x01\x00\x03\x08pkg.test\x01\xbb", 18));
  const std::string reply = ReadFrom(client, 12);
  ASSERT_EQ(reply.size(), 12u);
  EXPECT_EQ(reply.substr(0, 4), std::string("\x05\x00\x05\x00", 4));
  ASSERT_EQ(connects_.size(), 1u);
  EXPECT_EQ(connects_[0].name, "pkg.test");
  Send(client, "ping");
  EXPECT_EQ(ReadFrom(upstream_, 4), "ping");
}

TEST_F(ProxyServiceTest, ANameWithOnlyWithheldAddressesGetsNoConnection) {
  // The broker refuses a connect by name for a name the host's DNS answered (EHOSTUNREACH).
  broker_err_ = EHOSTUNREACH;
  UniqueFd client = ConnectTo(proxy_address_);
  Send(client, "CONNECT rebind.test:80 HTTP/1.1\r\n\r\n");
  bool eof = false;
  const std::string answer = ReadFrom(client, 1 << 20, &eof);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n")) << answer;
  EXPECT_NE(answer.find("no address for rebind.test"), std::string::npos) << answer;
  EXPECT_TRUE(eof);
  // A, then AAAA; the loopback is withheld (not listed), so no address is asked of the broker:
  // only the name alone, which the broker grants through a parent proxy at most (decision 0053).
  EXPECT_EQ(asked_, (std::vector<std::string>{"rebind.test/1", "rebind.test/28"}));
  ASSERT_EQ(connects_.size(), 1u);
  EXPECT_EQ(connects_[0].address.family, 0);
  EXPECT_EQ(connects_[0].name, "rebind.test");
  EXPECT_EQ(connects_[0].port, 80);
}

TEST_F(ProxyServiceTest, ANameWithoutAnAddressIsAskedByNameAndRelayedWhenTheBrokerConnects) {
  // No address from the host's DNS (a network where only a parent proxy resolves names): the
  // broker's tunnel through the parent is relayed as a direct connection is.
  addresses_["far.test"] = {};
  UniqueFd client = ConnectTo(proxy_address_);
  Send(client, "CONNECT far.test:443 HTTP/1.1\r\n\r\n");
  EXPECT_EQ(ReadFrom(client, 39), "HTTP/1.1 200 Connection established\r\n\r\n");
  ASSERT_EQ(connects_.size(), 1u);
  EXPECT_EQ(connects_[0],
            (net::ConnectRequest{connects_[0].tag, net::IpAddress{}, 443, "far.test"}));
}

}  // namespace
}  // namespace cordon::resolver
