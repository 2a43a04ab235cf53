// The sandbox's resolver on a real loopback socket: a client stands in for the command (its
// queries go to the service's "sandbox" socket), and the test stands in for the broker, which
// asks the host's resolver: it takes the service's questions and hands it replies made with
// ldns. Each refused case has its allowed twin.
#include "resolver/dns_service.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ldns/ldns.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ldns_packets.h"
#include "support/loopback_udp.h"

namespace cordon::resolver {
namespace {

using core::UniqueFd;
using namespace std::chrono_literals;

using test_support::BoundUdp;
using test_support::Readable;

// `edns`: the EDNS buffer size the query offers (0: no EDNS record).
std::vector<std::uint8_t> Query(const char* name, std::uint16_t id, ldns_rr_type type,
                                std::uint16_t edns = 0) {
  ldns_pkt* p = test::QueryPacket(name, type, id);
  if (edns != 0) ldns_pkt_set_edns_udp_size(p, edns);
  return test::TakeWire(p);
}

struct Answer {
  std::uint16_t id = 0;
  int rcode = -1;
  bool truncated = false;
  std::vector<std::string> addresses;
  std::vector<std::uint32_t> ttls;  // of the answer section's records
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
  out.truncated = ldns_pkt_tc(p);
  const ldns_rr_list* answer = ldns_pkt_answer(p);
  for (std::size_t i = 0; i < ldns_rr_list_rr_count(answer); ++i) {
    char* text = ldns_rdf2str(ldns_rr_rdf(ldns_rr_list_rr(answer, i), 0));
    out.addresses.emplace_back(text);
    out.ttls.push_back(ldns_rr_ttl(ldns_rr_list_rr(answer, i)));
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
  void Start(const std::vector<std::string>& allow, const std::vector<std::string>& deny) {
    Result<net::DomainRules> parsed = net::DomainRules::Parse(allow, deny);
    ASSERT_TRUE(parsed) << parsed.error().message;
    rules_ = *parsed;
    sockaddr_in sandbox_address{};
    UniqueFd sandbox = BoundUdp(&sandbox_address);
    UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    listener_address_.sin_family = AF_INET;
    listener_address_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&listener_address_),
                     sizeof listener_address_),
              0);
    ASSERT_EQ(::listen(listener.get(), 4), 0);
    socklen_t len = sizeof listener_address_;
    ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&listener_address_), &len),
              0);
    DnsService::Reports reports{
        .query = [this](std::uint16_t tag, const DnsQuestion& q) { queries_.emplace_back(tag, q); },
        .handed_out =
            [this](const net::IpAddress& a, const std::string& name) {
              handed_[a].push_back(name);
              // The broker must know the address before the command can read it.
              if (Readable(client_.get(), 0)) answered_before_report_ = true;
            },
        .refused = [this](const std::string& name) { refused_.push_back(name); },
        .withheld =
            [this](const std::string& name, const net::IpAddress& a) {
              withheld_.push_back(name + " -> " + net::ToString(a));
            },
    };
    Result<std::unique_ptr<DnsService>> service =
        DnsService::Create(std::move(sandbox), std::move(listener), &rules_, std::move(reports),
                           [this] { return now_; });
    ASSERT_TRUE(service) << service.error().message;
    service_ = std::move(*service);
    client_.Reset(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ASSERT_EQ(::connect(client_.get(), reinterpret_cast<sockaddr*>(&sandbox_address),
                        sizeof sandbox_address),
              0);
  }

  // Sends `name`'s query (`type`) as the command would and lets the service read it.
  void Ask(const char* name, std::uint16_t id, ldns_rr_type type = LDNS_RR_TYPE_A,
           std::uint16_t edns = 0) {
    const std::vector<std::uint8_t> q = Query(name, id, type, edns);
    ASSERT_EQ(::send(client_.get(), q.data(), q.size(), 0), static_cast<ssize_t>(q.size()));
    ASSERT_TRUE(Readable(service_->sandbox_fd(), 2000));
    service_->OnSandboxReadable();
  }

  // The host's resolver answers the last question with `records` (zone-file lines; a line
  // starting with "+" goes to the additional section), as the broker passes it on: the tag in
  // place of the id (or `id`, when given).
  void Upstream(const std::vector<std::string>& records, std::optional<std::uint16_t> id = {}) {
    ASSERT_FALSE(queries_.empty()) << "nothing was asked";
    const auto [tag, question] = queries_.back();
    ldns_pkt* p = test::QueryPacket((question.name + ".").c_str(),
                                    static_cast<ldns_rr_type>(question.type), id.value_or(tag));
    ldns_pkt_set_qr(p, true);
    for (std::string text : records) {
      const bool additional = text.starts_with("+");
      if (additional) text.erase(0, 1);
      ldns_rr* rr = nullptr;
      ASSERT_EQ(ldns_rr_new_frm_str(&rr, text.c_str(), 0, nullptr, nullptr), LDNS_STATUS_OK)
          << text;
      ldns_pkt_push_rr(p, additional ? LDNS_SECTION_ADDITIONAL : LDNS_SECTION_ANSWER, rr);
    }
    service_->OnReply(tag, test::TakeWire(p));
  }

  // The addresses of an A answer for `name`, as zone-file lines.
  static std::vector<std::string> A(const std::string& name,
                                    const std::vector<std::string>& addresses,
                                    std::uint32_t ttl = 60) {
    std::vector<std::string> out;
    for (const std::string& a : addresses) {
      out.push_back(name + ". " + std::to_string(ttl) + " IN A " + a);
    }
    return out;
  }

  // The host resolver's reply to the last question with no records and `rcode`, or truncated.
  void UpstreamEmpty(ldns_pkt_rcode rcode, bool truncated = false) {
    ASSERT_FALSE(queries_.empty()) << "nothing was asked";
    const auto [tag, question] = queries_.back();
    ldns_pkt* p = test::QueryPacket((question.name + ".").c_str(),
                                    static_cast<ldns_rr_type>(question.type), tag);
    ldns_pkt_set_qr(p, true);
    ldns_pkt_set_rcode(p, rcode);
    ldns_pkt_set_tc(p, truncated);
    service_->OnReply(tag, test::TakeWire(p));
  }

  // The names each address was reported handed out for, in order.
  std::vector<std::string> HandedOut(const char* address) const {
    const auto it = handed_.find(Ip(address));
    return it == handed_.end() ? std::vector<std::string>{} : it->second;
  }

  // Serves the service's TCP sockets until `done` or 2 s pass.
  void ServeStreams(const std::function<bool()>& done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!done() && std::chrono::steady_clock::now() < until) {
      std::vector<pollfd> fds;
      service_->AppendStreamPollSet(fds);
      (void)::poll(fds.data(), fds.size(), 50);
      for (const pollfd& p : fds) {
        if (p.revents != 0) service_->OnStreamReady(p.fd, p.revents);
      }
    }
  }

  std::chrono::steady_clock::time_point now_ = std::chrono::steady_clock::time_point{} + 1h;
  net::DomainRules rules_;
  sockaddr_in listener_address_{};
  UniqueFd client_;
  std::unique_ptr<DnsService> service_;
  std::vector<std::pair<std::uint16_t, DnsQuestion>> queries_;
  std::map<net::IpAddress, std::vector<std::string>> handed_;
  std::vector<std::string> refused_;
  std::vector<std::string> withheld_;
  bool answered_before_report_ = false;
};

TEST_F(DnsServiceTest, NameNotAllowedIsNxdomainAtOnceAndReported) {
  Start({"pkg.test"}, {});
  Ask("other.test.", 11);
  ASSERT_TRUE(Readable(client_.get(), 2000));
  const Answer a = Read(client_.get());
  EXPECT_EQ(a.id, 11);
  EXPECT_EQ(a.rcode, LDNS_RCODE_NXDOMAIN);
  EXPECT_TRUE(queries_.empty()) << "a refused name was asked upstream";
  EXPECT_EQ(refused_, std::vector<std::string>{"other.test"});
}

TEST_F(DnsServiceTest, AllowedNameIsAskedAndItsAddressHandedOut) {
  Start({"pkg.test"}, {});
  Ask("PKG.test.", 12);
  ASSERT_EQ(queries_.size(), 1u);
  EXPECT_EQ(queries_[0].second.name, "pkg.test");
  Upstream(A("pkg.test", {"192.0.2.7"}));
  ASSERT_TRUE(Readable(client_.get(), 2000));
  const Answer a = Read(client_.get());
  EXPECT_EQ(a.id, 12);
  EXPECT_EQ(a.rcode, LDNS_RCODE_NOERROR);
  EXPECT_EQ(a.addresses, std::vector<std::string>{"192.0.2.7"});
  EXPECT_EQ(HandedOut("192.0.2.7"), std::vector<std::string>{"pkg.test"});
  EXPECT_TRUE(HandedOut("192.0.2.8").empty());
  EXPECT_FALSE(answered_before_report_);
  EXPECT_TRUE(refused_.empty());
}

TEST_F(DnsServiceTest, DeniedSubdomainWinsOverAllowedWildcard) {
  Start({"*.pkg.test"}, {"secret.pkg.test"});
  Ask("secret.pkg.test.", 13);
  EXPECT_EQ(Read(client_.get()).rcode, LDNS_RCODE_NXDOMAIN);
  EXPECT_EQ(refused_, std::vector<std::string>{"secret.pkg.test"});
  Ask("mirror.pkg.test.", 14);
  Upstream(A("mirror.pkg.test", {"192.0.2.9"}));
  EXPECT_EQ(Read(client_.get()).addresses, std::vector<std::string>{"192.0.2.9"});
}

TEST_F(DnsServiceTest, InternalAddressOfAnAllowedNameIsWithheldUnlessListed) {
  Start({"pkg.test", "10.0.0.5"}, {});
  Ask("pkg.test.", 15);
  Upstream(A("pkg.test", {"127.0.0.1", "169.254.169.254", "10.0.0.5", "192.0.2.7"}));
  const Answer a = Read(client_.get());
  EXPECT_EQ(a.addresses, (std::vector<std::string>{"10.0.0.5", "192.0.2.7"}));
  EXPECT_TRUE(HandedOut("127.0.0.1").empty());
  EXPECT_TRUE(HandedOut("169.254.169.254").empty());
  EXPECT_EQ(HandedOut("10.0.0.5"), std::vector<std::string>{"pkg.test"});
  EXPECT_EQ(withheld_,
            (std::vector<std::string>{"pkg.test -> 127.0.0.1", "pkg.test -> 169.254.169.254"}));
}

TEST_F(DnsServiceTest, OnlyTheAnswersForTheNameAreHandedOut) {
  // Its CNAME chain counts; glue in the additional section and another owner's record in the
  // answer section stay in the reply, but are not addresses of the name asked.
  Start({"pkg.test"}, {});
  Ask("pkg.test.", 16);
  Upstream({"pkg.test. 60 IN CNAME edge.cdn.test.", "edge.cdn.test. 60 IN A 192.0.2.9",
            "other.test. 60 IN A 192.0.2.10", "+mail.other.test. 60 IN A 192.0.2.11"});
  const Answer a = Read(client_.get());
  EXPECT_EQ(a.rcode, LDNS_RCODE_NOERROR);
  EXPECT_EQ(HandedOut("192.0.2.9"), std::vector<std::string>{"pkg.test"});
  EXPECT_TRUE(HandedOut("192.0.2.10").empty());
  EXPECT_TRUE(HandedOut("192.0.2.11").empty());
  // An MX query's glue is not handed out either.
  Ask("pkg.test.", 17, LDNS_RR_TYPE_MX);
  Upstream({"pkg.test. 60 IN MX 10 mail.other.test.", "+mail.other.test. 60 IN A 192.0.2.12"});
  EXPECT_EQ(Read(client_.get()).rcode, LDNS_RCODE_NOERROR);
  EXPECT_TRUE(HandedOut("192.0.2.12").empty());
}

TEST_F(DnsServiceTest, MalformedQueryGetsFormErrAndNothingIsAsked) {
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
  EXPECT_TRUE(queries_.empty());
}

TEST_F(DnsServiceTest, ReplyWithAnotherIdIsIgnored) {
  Start({"pkg.test"}, {});
  Ask("pkg.test.", 18);
  const std::uint16_t tag = queries_.back().first;
  Upstream(A("pkg.test", {"192.0.2.7"}), static_cast<std::uint16_t>(tag + 1));
  EXPECT_FALSE(Readable(client_.get(), 100));
  EXPECT_TRUE(handed_.empty());
  // Its twin, with the tag, is answered.
  Upstream(A("pkg.test", {"192.0.2.7"}));
  EXPECT_EQ(Read(client_.get()).addresses, std::vector<std::string>{"192.0.2.7"});
}

TEST_F(DnsServiceTest, NameWithAnEscapedDotIsRefusedNotMatchedByItsText) {
  // Labels "a.pkg" and "test": printed "a\\.pkg.test", which a text match would put below
  // pkg.test. Its twin, the real name below pkg.test, is allowed.
  Start({"*.pkg.test"}, {});
  Ask("a\\.pkg.test.", 21);
  EXPECT_EQ(Read(client_.get()).rcode, LDNS_RCODE_NXDOMAIN);
  EXPECT_TRUE(queries_.empty());
  ASSERT_EQ(refused_.size(), 1u);
  EXPECT_NE(refused_[0].find('\\'), std::string::npos);
  Ask("a.pkg.test.", 22);
  Upstream(A("a.pkg.test", {"192.0.2.7"}));
  EXPECT_EQ(Read(client_.get()).addresses, std::vector<std::string>{"192.0.2.7"});
}

TEST_F(DnsServiceTest, AnAnswerLargerThanTheClientTakesIsTruncatedForItToAskOverTcp) {
  Start({"pkg.test"}, {});
  std::vector<std::string> many;
  for (int i = 1; i <= 40; ++i) many.push_back("203.0.113." + std::to_string(i));
  // Without EDNS a client takes 512 bytes: told to ask again (TC), with no records.
  Ask("pkg.test.", 24);
  Upstream(A("pkg.test", many));
  const Answer plain = Read(client_.get());
  EXPECT_EQ(plain.id, 24);
  EXPECT_TRUE(plain.truncated);
  EXPECT_EQ(plain.rcode, LDNS_RCODE_NOERROR);
  EXPECT_TRUE(plain.addresses.empty());
  // The twin: a client offering 1200 bytes (glibc with options edns0) gets every address.
  Ask("pkg.test.", 25, LDNS_RR_TYPE_A, 1200);
  Upstream(A("pkg.test", many));
  const Answer edns = Read(client_.get());
  EXPECT_EQ(edns.id, 25);
  EXPECT_FALSE(edns.truncated);
  EXPECT_EQ(edns.addresses.size(), 40u);
}

TEST_F(DnsServiceTest, OverTcpTheWholeAnswerComesBackFramed) {
  Start({"pkg.test"}, {});
  UniqueFd stream(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(stream.get(), reinterpret_cast<sockaddr*>(&listener_address_),
                      sizeof listener_address_),
            0);
  // Two questions in one write: a name not allowed, and an allowed one.
  std::vector<std::uint8_t> out;
  for (const auto& q :
       {Query("other.test.", 31, LDNS_RR_TYPE_A), Query("pkg.test.", 32, LDNS_RR_TYPE_A)}) {
    out.push_back(static_cast<std::uint8_t>(q.size() >> 8));
    out.push_back(static_cast<std::uint8_t>(q.size() & 0xff));
    out.insert(out.end(), q.begin(), q.end());
  }
  ASSERT_EQ(::send(stream.get(), out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
  ServeStreams([&] { return !queries_.empty(); });
  ASSERT_EQ(queries_.size(), 1u);
  std::vector<std::string> many;
  for (int i = 1; i <= 100; ++i) many.push_back("203.0.113." + std::to_string(i));
  Upstream(A("pkg.test", many));
  ServeStreams([&] { return Readable(stream.get(), 0); });
  // Both answers, each with its length: NXDOMAIN, then every address (larger than UDP's).
  std::vector<std::uint8_t> in;
  std::uint8_t buffer[4096];
  while (Readable(stream.get(), 500)) {
    const ssize_t n = ::recv(stream.get(), buffer, sizeof buffer, 0);
    if (n <= 0) break;
    in.insert(in.end(), buffer, buffer + n);
    ServeStreams([] { return true; });
  }
  std::vector<std::vector<std::uint8_t>> answers;
  for (std::size_t at = 0; at + 2 <= in.size();) {
    const std::size_t length = (std::size_t{in[at]} << 8) | in[at + 1];
    ASSERT_LE(at + 2 + length, in.size());
    answers.emplace_back(in.begin() + static_cast<long>(at) + 2,
                         in.begin() + static_cast<long>(at + 2 + length));
    at += 2 + length;
  }
  ASSERT_EQ(answers.size(), 2u);
  ldns_pkt* refused = nullptr;
  ASSERT_EQ(ldns_wire2pkt(&refused, answers[0].data(), answers[0].size()), LDNS_STATUS_OK);
  EXPECT_EQ(ldns_pkt_get_rcode(refused), LDNS_RCODE_NXDOMAIN);
  ldns_pkt_free(refused);
  ldns_pkt* whole = nullptr;
  ASSERT_EQ(ldns_wire2pkt(&whole, answers[1].data(), answers[1].size()), LDNS_STATUS_OK);
  EXPECT_FALSE(ldns_pkt_tc(whole));
  EXPECT_EQ(ldns_pkt_id(whole), 32);
  EXPECT_EQ(ldns_rr_list_rr_count(ldns_pkt_answer(whole)), 100u);
  EXPECT_GT(answers[1].size(), 1232u);
  ldns_pkt_free(whole);
}

TEST_F(DnsServiceTest, NoReplyToGiveIsServfail) {
  Start({"pkg.test"}, {});
  Ask("pkg.test.", 23);
  service_->OnReply(queries_.back().first, {});
  const Answer a = Read(client_.get());
  EXPECT_EQ(a.id, 23);
  EXPECT_EQ(a.rcode, LDNS_RCODE_SERVFAIL);
}

TEST_F(DnsServiceTest, AQuestionAskedAgainIsAnsweredFromTheCacheWhileItsTtlLasts) {
  Start({"pkg.test"}, {});
  Ask("pkg.test.", 40);
  Upstream(A("pkg.test", {"192.0.2.7"}, 60));
  const Answer first = Read(client_.get());
  EXPECT_EQ(first.ttls, std::vector<std::uint32_t>{60});
  now_ += 10s;
  Ask("Pkg.Test.", 41);
  EXPECT_EQ(queries_.size(), 1u) << "asked upstream again";
  ASSERT_TRUE(Readable(client_.get(), 2000));
  const Answer again = Read(client_.get());
  EXPECT_EQ(again.id, 41);
  EXPECT_EQ(again.rcode, LDNS_RCODE_NOERROR);
  EXPECT_EQ(again.addresses, std::vector<std::string>{"192.0.2.7"});
  EXPECT_EQ(again.ttls, std::vector<std::uint32_t>{50}) << "the TTL left, not the first one";
  // Reported again before the answer, as a fresh one is.
  EXPECT_EQ(HandedOut("192.0.2.7"), (std::vector<std::string>{"pkg.test", "pkg.test"}));
  EXPECT_FALSE(answered_before_report_);
  // Another type is another question.
  Ask("pkg.test.", 42, LDNS_RR_TYPE_AAAA);
  EXPECT_EQ(queries_.size(), 2u);
  // The twin: once the TTL is up the question goes upstream again.
  now_ += 50s;
  Ask("pkg.test.", 43);
  EXPECT_EQ(queries_.size(), 3u);
}

TEST_F(DnsServiceTest, AReplyWithATtlOfZeroIsNeverKept) {
  Start({"pkg.test"}, {});
  Ask("pkg.test.", 44);
  Upstream(A("pkg.test", {"192.0.2.7"}, 0));
  EXPECT_EQ(Read(client_.get()).addresses, std::vector<std::string>{"192.0.2.7"});
  Ask("pkg.test.", 45);
  EXPECT_EQ(queries_.size(), 2u);
}

TEST_F(DnsServiceTest, NoAnswerIsKept) {
  // SERVFAIL (no reply), NXDOMAIN, an empty NOERROR and a truncated reply are each asked again.
  Start({"pkg.test"}, {});
  Ask("pkg.test.", 46);
  service_->OnReply(queries_.back().first, {});
  EXPECT_EQ(Read(client_.get()).rcode, LDNS_RCODE_SERVFAIL);
  Ask("pkg.test.", 47);
  UpstreamEmpty(LDNS_RCODE_NXDOMAIN);
  EXPECT_EQ(Read(client_.get()).rcode, LDNS_RCODE_NXDOMAIN);
  Ask("pkg.test.", 48);
  UpstreamEmpty(LDNS_RCODE_NOERROR);
  EXPECT_EQ(Read(client_.get()).rcode, LDNS_RCODE_NOERROR);
  Ask("pkg.test.", 49);
  UpstreamEmpty(LDNS_RCODE_NOERROR, /*truncated=*/true);
  (void)Read(client_.get());
  Ask("pkg.test.", 50);
  EXPECT_EQ(queries_.size(), 5u);
}

TEST_F(DnsServiceTest, ACachedAnswerIsFilteredAndSizedForEachClient) {
  Start({"pkg.test"}, {});
  // An internal address stays withheld from the cached answer, and is reported each time.
  Ask("pkg.test.", 51, LDNS_RR_TYPE_A, 1200);
  std::vector<std::string> many{"127.0.0.1"};
  for (int i = 1; i <= 40; ++i) many.push_back("203.0.113." + std::to_string(i));
  Upstream(A("pkg.test", many));
  EXPECT_EQ(Read(client_.get()).addresses.size(), 40u);
  EXPECT_EQ(withheld_.size(), 1u);
  // Asked without EDNS, the same cached answer does not fit: truncated, for TCP.
  Ask("pkg.test.", 52);
  const Answer plain = Read(client_.get());
  EXPECT_EQ(plain.id, 52);
  EXPECT_TRUE(plain.truncated);
  EXPECT_EQ(withheld_.size(), 2u);
  Ask("pkg.test.", 53, LDNS_RR_TYPE_A, 1200);
  const Answer edns = Read(client_.get());
  EXPECT_FALSE(edns.truncated);
  EXPECT_EQ(edns.addresses.size(), 40u);
  EXPECT_EQ(std::count(edns.addresses.begin(), edns.addresses.end(), "127.0.0.1"), 0);
  EXPECT_EQ(queries_.size(), 1u);
}

TEST_F(DnsServiceTest, TheProxysLookupIsAnsweredFromTheCacheLaterNotWithinTheCall) {
  Start({"pkg.test", "other.test"}, {});
  Ask("pkg.test.", 54);
  Upstream(A("pkg.test", {"192.0.2.7"}));
  (void)Read(client_.get());
  std::optional<std::vector<net::IpAddress>> got;
  service_->Lookup("pkg.test", LDNS_RR_TYPE_A,
                   [&](std::vector<net::IpAddress> addresses) { got = std::move(addresses); });
  EXPECT_FALSE(got) << "answered within Lookup";
  service_->AnswerLookups();
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, std::vector<net::IpAddress>{Ip("192.0.2.7")});
  EXPECT_EQ(queries_.size(), 1u);
  EXPECT_EQ(HandedOut("192.0.2.7").size(), 2u);
  // The twin: a name not cached is asked.
  service_->Lookup("other.test", LDNS_RR_TYPE_A, [](std::vector<net::IpAddress>) {});
  service_->AnswerLookups();
  EXPECT_EQ(queries_.size(), 2u);
}

TEST_F(DnsServiceTest, ALookupItsCallerMakesFromTheCacheIsAnsweredInTheSameCall) {
  // The proxy asks for AAAA when A gave no address: an A answer that is a CNAME alone, and an
  // AAAA answer, both cached, are both answered in one AnswerLookups.
  Start({"pkg.test"}, {});
  Ask("pkg.test.", 60);
  Upstream({"pkg.test. 60 IN CNAME v6.example."});
  (void)Read(client_.get());
  Ask("pkg.test.", 61, LDNS_RR_TYPE_AAAA);
  Upstream({"pkg.test. 60 IN AAAA 2001:db8::7"});
  (void)Read(client_.get());
  ASSERT_EQ(queries_.size(), 2u);
  std::optional<std::vector<net::IpAddress>> v4;
  std::optional<std::vector<net::IpAddress>> v6;
  service_->Lookup("pkg.test", LDNS_RR_TYPE_A, [&](std::vector<net::IpAddress> addresses) {
    v4 = std::move(addresses);
    service_->Lookup("pkg.test", LDNS_RR_TYPE_AAAA,
                     [&](std::vector<net::IpAddress> more) { v6 = std::move(more); });
  });
  service_->AnswerLookups();
  ASSERT_TRUE(v4);
  EXPECT_TRUE(v4->empty());
  ASSERT_TRUE(v6) << "the AAAA lookup waited for another round";
  EXPECT_EQ(v6->size(), 1u);
  EXPECT_EQ(queries_.size(), 2u);
}

TEST_F(DnsServiceTest, ATtlWithItsTopBitSetIsNotKept) {
  Start({"pkg.test"}, {});
  Ask("pkg.test.", 62);
  Upstream(A("pkg.test", {"192.0.2.7"}, 0x80000000U));  // 0 by RFC 2181, 8
  (void)Read(client_.get());
  Ask("pkg.test.", 63);
  EXPECT_EQ(queries_.size(), 2u);
}

}  // namespace
}  // namespace cordon::resolver
