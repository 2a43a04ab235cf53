// The sandbox's resolver on real loopback sockets: a client stands in for the command (its
// queries go to the service's "sandbox" socket) and a stand-in upstream answers what the
// service forwards. Each refused case has its allowed twin.
#include "exec/dns_service.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ldns/ldns.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace cordon::exec {
namespace {

using core::UniqueFd;

UniqueFd BoundUdp(sockaddr_in* bound) {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof *bound;
  EXPECT_EQ(::getsockname(fd.get(), reinterpret_cast<sockaddr*>(bound), &len), 0);
  return fd;
}

bool Readable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, ms) == 1;
}

std::vector<std::uint8_t> Wire(ldns_pkt* p) {
  std::uint8_t* data = nullptr;
  std::size_t size = 0;
  EXPECT_EQ(ldns_pkt2wire(&data, p, &size), LDNS_STATUS_OK);
  std::vector<std::uint8_t> out(data, data + size);
  std::free(data);
  return out;
}

std::vector<std::uint8_t> Query(const char* name, std::uint16_t id) {
  ldns_rdf* owner = nullptr;
  EXPECT_EQ(ldns_str2rdf_dname(&owner, name), LDNS_STATUS_OK);
  ldns_pkt* p = ldns_pkt_query_new(owner, LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN, LDNS_RD);
  ldns_pkt_set_id(p, id);
  std::vector<std::uint8_t> out = Wire(p);
  ldns_pkt_free(p);
  return out;
}

struct Answer {
  std::uint16_t id = 0;
  int rcode = -1;
  std::vector<std::string> addresses;
};

Answer Read(int fd) {
  Answer out;
  std::uint8_t buffer[4096];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
  ldns_pkt* p = nullptr;
  if (n <= 0 || ldns_wire2pkt(&p, buffer, static_cast<std::size_t>(n)) != LDNS_STATUS_OK) {
    return out;
  }
  out.id = ldns_pkt_id(p);
  out.rcode = ldns_pkt_get_rcode(p);
  const ldns_rr_list* answer = ldns_pkt_answer(p);
  for (std::size_t i = 0; i < ldns_rr_list_rr_count(answer); ++i) {
    char* text = ldns_rdf2str(ldns_rr_rdf(ldns_rr_list_rr(answer, i), 0));
    out.addresses.emplace_back(text);
    std::free(text);
  }
  ldns_pkt_free(p);
  return out;
}

net::IpAddress Ip(const char* text) {
  std::uint8_t bytes[4];
  EXPECT_EQ(::inet_pton(AF_INET, text, bytes), 1);
  return *net::AddressFromBytes(bytes, 4);
}

class DnsServiceTest : public ::testing::Test {
 protected:
  void Start(const std::vector<std::string>& allow, const std::vector<std::string>& deny,
             const char* unreachable_upstream = nullptr) {
    Result<net::DomainRules> parsed = net::DomainRules::Parse(allow, deny);
    ASSERT_TRUE(parsed) << parsed.error().message;
    rules_ = *parsed;
    sockaddr_in sandbox_address{};
    UniqueFd sandbox = BoundUdp(&sandbox_address);
    sockaddr_in upstream_address{};
    upstream_ = BoundUdp(&upstream_address);
    sockaddr_storage upstream{};
    std::memcpy(&upstream, &upstream_address, sizeof upstream_address);
    if (unreachable_upstream != nullptr) {
      upstream = {};
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&upstream);
      in6->sin6_family = AF_INET6;
      in6->sin6_port = htons(53);
      ASSERT_EQ(::inet_pton(AF_INET6, unreachable_upstream, &in6->sin6_addr), 1);
    }
    Result<std::unique_ptr<DnsService>> service = DnsService::Create(
        std::move(sandbox), &rules_, upstream, [this](Denial d) { denials_.push_back(d); });
    ASSERT_TRUE(service) << service.error().message;
    service_ = std::move(*service);
    client_.Reset(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ASSERT_EQ(::connect(client_.get(), reinterpret_cast<sockaddr*>(&sandbox_address),
                        sizeof sandbox_address),
              0);
  }

  // Sends `name`'s query as the command would and lets the service read it.
  void Ask(const char* name, std::uint16_t id) {
    const std::vector<std::uint8_t> q = Query(name, id);
    ASSERT_EQ(::send(client_.get(), q.data(), q.size(), 0), static_cast<ssize_t>(q.size()));
    ASSERT_TRUE(Readable(service_->sandbox_fd(), 2000));
    service_->OnSandboxReadable();
  }

  // The stand-in upstream answers the forwarded query with `addresses`.
  void Upstream(const std::vector<std::string>& addresses) {
    ASSERT_TRUE(Readable(upstream_.get(), 2000)) << "nothing was forwarded";
    std::uint8_t buffer[4096];
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    const ssize_t n = ::recvfrom(upstream_.get(), buffer, sizeof buffer, 0,
                                 reinterpret_cast<sockaddr*>(&from), &len);
    ASSERT_GT(n, 0);
    ldns_pkt* p = nullptr;
    ASSERT_EQ(ldns_wire2pkt(&p, buffer, static_cast<std::size_t>(n)), LDNS_STATUS_OK);
    ldns_pkt_set_qr(p, true);
    char* owner = ldns_rdf2str(ldns_rr_owner(ldns_rr_list_rr(ldns_pkt_question(p), 0)));
    for (const std::string& a : addresses) {
      ldns_rr* rr = nullptr;
      const std::string text = std::string(owner) + " 60 IN A " + a;
      ASSERT_EQ(ldns_rr_new_frm_str(&rr, text.c_str(), 0, nullptr, nullptr), LDNS_STATUS_OK);
      ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER, rr);
    }
    std::free(owner);
    const std::vector<std::uint8_t> reply = Wire(p);
    ldns_pkt_free(p);
    ASSERT_GT(::sendto(upstream_.get(), reply.data(), reply.size(), 0,
                       reinterpret_cast<sockaddr*>(&from), len),
              0);
    ASSERT_TRUE(Readable(service_->upstream_fd(), 2000));
    service_->OnUpstreamReadable();
  }

  net::DomainRules rules_;
  UniqueFd upstream_;
  UniqueFd client_;
  std::unique_ptr<DnsService> service_;
  std::vector<Denial> denials_;
};

TEST_F(DnsServiceTest, NameNotAllowedIsNxdomainAtOnceAndRecorded) {
  Start({"pkg.test"}, {});
  Ask("other.test.", 11);
  ASSERT_TRUE(Readable(client_.get(), 2000));
  const Answer a = Read(client_.get());
  EXPECT_EQ(a.id, 11);
  EXPECT_EQ(a.rcode, LDNS_RCODE_NXDOMAIN);
  EXPECT_FALSE(Readable(upstream_.get(), 0)) << "a refused name was forwarded";
  ASSERT_EQ(denials_.size(), 1u);
  EXPECT_EQ(denials_[0].kind, "dns");
  EXPECT_EQ(denials_[0].target, "other.test");
  EXPECT_NE(denials_[0].fix.find("--allow-domain other.test"), std::string::npos);
}

TEST_F(DnsServiceTest, AllowedNameIsForwardedAndItsAddressHandedOut) {
  Start({"pkg.test"}, {});
  Ask("PKG.test.", 12);
  Upstream({"192.0.2.7"});
  ASSERT_TRUE(Readable(client_.get(), 2000));
  const Answer a = Read(client_.get());
  EXPECT_EQ(a.id, 12);
  EXPECT_EQ(a.rcode, LDNS_RCODE_NOERROR);
  EXPECT_EQ(a.addresses, std::vector<std::string>{"192.0.2.7"});
  EXPECT_EQ(service_->HandedOut(Ip("192.0.2.7")), std::vector<std::string>{"pkg.test"});
  EXPECT_TRUE(service_->HandedOut(Ip("192.0.2.8")).empty());
  EXPECT_TRUE(denials_.empty());
}

TEST_F(DnsServiceTest, DeniedSubdomainWinsOverAllowedWildcard) {
  Start({"*.pkg.test"}, {"secret.pkg.test"});
  Ask("secret.pkg.test.", 13);
  EXPECT_EQ(Read(client_.get()).rcode, LDNS_RCODE_NXDOMAIN);
  ASSERT_EQ(denials_.size(), 1u);
  EXPECT_NE(denials_[0].rule.find("secret.pkg.test"), std::string::npos);
  Ask("mirror.pkg.test.", 14);
  Upstream({"192.0.2.9"});
  EXPECT_EQ(Read(client_.get()).addresses, std::vector<std::string>{"192.0.2.9"});
}

TEST_F(DnsServiceTest, InternalAddressOfAnAllowedNameIsWithheldUnlessListed) {
  Start({"pkg.test", "10.0.0.5"}, {});
  Ask("pkg.test.", 15);
  Upstream({"127.0.0.1", "169.254.169.254", "10.0.0.5", "192.0.2.7"});
  const Answer a = Read(client_.get());
  EXPECT_EQ(a.addresses, (std::vector<std::string>{"10.0.0.5", "192.0.2.7"}));
  EXPECT_TRUE(service_->HandedOut(Ip("127.0.0.1")).empty());
  EXPECT_TRUE(service_->HandedOut(Ip("169.254.169.254")).empty());
  EXPECT_EQ(service_->HandedOut(Ip("10.0.0.5")), std::vector<std::string>{"pkg.test"});
  ASSERT_EQ(denials_.size(), 2u);
  EXPECT_EQ(denials_[0].target, "pkg.test -> 127.0.0.1");
  EXPECT_NE(denials_[0].rule.find("rebinding"), std::string::npos);
}

TEST_F(DnsServiceTest, MalformedQueryGetsFormErrAndNothingIsForwarded) {
  Start({"pkg.test"}, {});
  std::vector<std::uint8_t> junk(30, 0x41);
  ASSERT_GT(::send(client_.get(), junk.data(), junk.size(), 0), 0);
  ASSERT_TRUE(Readable(service_->sandbox_fd(), 2000));
  service_->OnSandboxReadable();
  ASSERT_TRUE(Readable(client_.get(), 2000));
  std::uint8_t buffer[512];
  const ssize_t n = ::recv(client_.get(), buffer, sizeof buffer, 0);
  ASSERT_EQ(n, 12);
  EXPECT_EQ(buffer[3] & 0x0f, 1);  // FORMERR
  EXPECT_FALSE(Readable(upstream_.get(), 0));
}

TEST_F(DnsServiceTest, ReplyFromAnotherIdIsIgnored) {
  Start({"pkg.test"}, {});
  Ask("pkg.test.", 16);
  ASSERT_TRUE(Readable(upstream_.get(), 2000));
  std::uint8_t buffer[4096];
  sockaddr_storage from{};
  socklen_t len = sizeof from;
  const ssize_t n = ::recvfrom(upstream_.get(), buffer, sizeof buffer, 0,
                               reinterpret_cast<sockaddr*>(&from), &len);
  ASSERT_GT(n, 2);
  buffer[0] ^= 0xff;  // a forged reply: an id the service never sent
  buffer[2] |= 0x80;
  ASSERT_GT(::sendto(upstream_.get(), buffer, static_cast<std::size_t>(n), 0,
                     reinterpret_cast<sockaddr*>(&from), len),
            0);
  ASSERT_TRUE(Readable(service_->upstream_fd(), 2000));
  service_->OnUpstreamReadable();
  EXPECT_FALSE(Readable(client_.get(), 100));
}

TEST_F(DnsServiceTest, NameWithAnEscapedDotIsRefusedNotMatchedByItsText) {
  // Labels "a.pkg" and "test": printed "a\\.pkg.test", which a text match would put below
  // pkg.test. Its twin, the real name below pkg.test, is allowed.
  Start({"*.pkg.test"}, {});
  Ask("a\\.pkg.test.", 21);
  EXPECT_EQ(Read(client_.get()).rcode, LDNS_RCODE_NXDOMAIN);
  EXPECT_FALSE(Readable(upstream_.get(), 0));
  ASSERT_EQ(denials_.size(), 1u);
  EXPECT_NE(denials_[0].rule.find("characters host names do not have"), std::string::npos);
  Ask("a.pkg.test.", 22);
  Upstream({"192.0.2.7"});
  EXPECT_EQ(Read(client_.get()).addresses, std::vector<std::string>{"192.0.2.7"});
}

TEST_F(DnsServiceTest, UnreachableUpstreamAnswersServfailWithTheReason) {
  // A link-local resolver without its interface cannot be connected to (EINVAL).
  Start({"pkg.test"}, {}, "fe80::1");
  EXPECT_EQ(service_->upstream_fd(), -1);
  Ask("pkg.test.", 23);
  EXPECT_EQ(Read(client_.get()).rcode, LDNS_RCODE_SERVFAIL);
  ASSERT_EQ(denials_.size(), 1u);
  EXPECT_NE(denials_[0].rule.find("no upstream"), std::string::npos);
  // A name that is not allowed is still refused as such.
  Ask("other.test.", 24);
  EXPECT_EQ(Read(client_.get()).rcode, LDNS_RCODE_NXDOMAIN);
}

}  // namespace
}  // namespace cordon::exec
