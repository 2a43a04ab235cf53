// The resolver's DNS messages: what a query must be to be read, what a refusal keeps of it,
// and an upstream reply filtered by address.
#include "resolver/dns_message.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ldns/ldns.h>

#include <cstdlib>

#include "ldns_packets.h"

namespace cordon::resolver {
namespace {

using test::QueryPacket;
using test::TakeWire;

// A reply to `name` A with id `id` and these A records.
std::vector<std::uint8_t> Reply(const char* name, std::uint16_t id,
                                const std::vector<std::string>& addresses) {
  ldns_pkt* p = QueryPacket(name, LDNS_RR_TYPE_A, id);
  ldns_pkt_set_qr(p, true);
  for (const std::string& a : addresses) {
    ldns_rr* rr = nullptr;
    const std::string text = std::string(name) + " 60 IN A " + a;
    EXPECT_EQ(ldns_rr_new_frm_str(&rr, text.c_str(), 0, nullptr, nullptr), LDNS_STATUS_OK);
    ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER, rr);
  }
  return TakeWire(p);
}

std::vector<std::string> Addresses(const std::vector<std::uint8_t>& wire) {
  std::vector<std::string> out;
  ldns_pkt* p = nullptr;
  EXPECT_EQ(ldns_wire2pkt(&p, wire.data(), wire.size()), LDNS_STATUS_OK);
  if (p == nullptr) return out;
  const ldns_rr_list* answer = ldns_pkt_answer(p);
  for (std::size_t i = 0; i < ldns_rr_list_rr_count(answer); ++i) {
    char* text = ldns_rdf2str(ldns_rr_rdf(ldns_rr_list_rr(answer, i), 0));
    out.emplace_back(text);
    std::free(text);
  }
  ldns_pkt_free(p);
  return out;
}

TEST(DnsMessageTest, ReadsOneQuestionLowerCasedWithoutTheDot) {
  const std::vector<std::uint8_t> wire = TakeWire(QueryPacket("Pkg.TEST.", LDNS_RR_TYPE_AAAA, 7));
  const std::optional<DnsQuestion> q = ParseQuery(wire);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->id, 7);
  EXPECT_EQ(q->name, "pkg.test");
  EXPECT_EQ(q->type, LDNS_RR_TYPE_AAAA);
  EXPECT_EQ(q->qclass, LDNS_RR_CLASS_IN);
}

TEST(DnsMessageTest, RefusesWhatIsNotAQuery) {
  EXPECT_FALSE(ParseQuery(Reply("pkg.test.", 7, {"192.0.2.7"})));  // a response
  ldns_pkt* two = QueryPacket("a.test.", LDNS_RR_TYPE_A, 1);
  ldns_rr* extra = nullptr;
  ASSERT_EQ(ldns_rr_new_question_frm_str(&extra, "b.test. IN A", nullptr, nullptr), LDNS_STATUS_OK);
  ldns_pkt_push_rr(two, LDNS_SECTION_QUESTION, extra);
  EXPECT_FALSE(ParseQuery(TakeWire(two)));
  const std::vector<std::uint8_t> garbage = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
  EXPECT_FALSE(ParseQuery(garbage));
  EXPECT_FALSE(ParseQuery({}));
}

TEST(DnsMessageTest, RefusalKeepsIdAndQuestionAndHasNoRecords) {
  const std::vector<std::uint8_t> answer =
      AnswerWithoutRecords(TakeWire(QueryPacket("pkg.test.", LDNS_RR_TYPE_A, 99)), kRcodeNxDomain);
  ldns_pkt* p = nullptr;
  ASSERT_EQ(ldns_wire2pkt(&p, answer.data(), answer.size()), LDNS_STATUS_OK);
  EXPECT_TRUE(ldns_pkt_qr(p));
  EXPECT_EQ(ldns_pkt_id(p), 99);
  EXPECT_EQ(ldns_pkt_get_rcode(p), kRcodeNxDomain);
  EXPECT_EQ(ldns_pkt_qdcount(p), 1);
  EXPECT_EQ(ldns_pkt_ancount(p), 0);
  ldns_pkt_free(p);
}

TEST(DnsMessageTest, RefusalOfAnUnreadableMessageIsItsHeaderOnly) {
  std::vector<std::uint8_t> garbage(20, 0xff);
  garbage[0] = 0x12;
  garbage[1] = 0x34;
  const std::vector<std::uint8_t> answer = AnswerWithoutRecords(garbage, kRcodeFormErr);
  ASSERT_EQ(answer.size(), 12u);
  EXPECT_EQ(answer[0], 0x12);
  EXPECT_EQ(answer[1], 0x34);
  EXPECT_EQ(answer[3] & 0x0f, kRcodeFormErr);
  EXPECT_TRUE(AnswerWithoutRecords(std::vector<std::uint8_t>(11, 0), kRcodeFormErr).empty());
}

TEST(DnsMessageTest, UpstreamQueryCarriesTheQuestionOnly) {
  const DnsQuestion q{.id = 5, .name = "pkg.test", .type = LDNS_RR_TYPE_A, .qclass = 1};
  const std::optional<DnsQuestion> again = ParseQuery(QueryFor(q, 4242));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->id, 4242);
  EXPECT_EQ(again->name, "pkg.test");
  EXPECT_EQ(again->type, LDNS_RR_TYPE_A);
}

TEST(DnsMessageTest, FilterKeepsAllowedAddressesAndDropsTheOthers) {
  const DnsQuestion q{.id = 5, .name = "pkg.test", .type = LDNS_RR_TYPE_A, .qclass = 1};
  const auto keep = [](const net::IpAddress& a) { return net::InternalKind(a) == nullptr; };
  const std::optional<FilteredReply> reply =
      FilterReply(Reply("pkg.test.", 4242, {"192.0.2.7", "127.0.0.1"}), q, 4242, 5, keep);
  ASSERT_TRUE(reply);
  EXPECT_EQ(Addresses(reply->wire), std::vector<std::string>{"192.0.2.7"});
  ASSERT_EQ(reply->kept.size(), 1u);
  EXPECT_EQ(net::ToString(reply->kept[0]), "192.0.2.7");
  ASSERT_EQ(reply->dropped.size(), 1u);
  EXPECT_EQ(net::ToString(reply->dropped[0]), "127.0.0.1");
  ldns_pkt* p = nullptr;
  ASSERT_EQ(ldns_wire2pkt(&p, reply->wire.data(), reply->wire.size()), LDNS_STATUS_OK);
  EXPECT_EQ(ldns_pkt_id(p), 5);  // the client's id again
  ldns_pkt_free(p);
}

TEST(DnsMessageTest, FilterRefusesAReplyToAnotherQuery) {
  const DnsQuestion q{.id = 5, .name = "pkg.test", .type = LDNS_RR_TYPE_A, .qclass = 1};
  const auto keep = [](const net::IpAddress&) { return true; };
  EXPECT_TRUE(FilterReply(Reply("pkg.test.", 4242, {"192.0.2.7"}), q, 4242, 5, keep));
  EXPECT_FALSE(FilterReply(Reply("pkg.test.", 4243, {"192.0.2.7"}), q, 4242, 5, keep));
  EXPECT_FALSE(FilterReply(Reply("other.test.", 4242, {"192.0.2.7"}), q, 4242, 5, keep));
  EXPECT_FALSE(
      FilterReply(TakeWire(QueryPacket("pkg.test.", LDNS_RR_TYPE_A, 4242)), q, 4242, 5, keep));
}

}  // namespace
}  // namespace cordon::resolver
