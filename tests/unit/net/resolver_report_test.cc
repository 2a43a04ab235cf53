// The resolver's reports as the broker decodes them, and the broker's replies as the resolver
// decodes them: each shape round-trips, and anything a subverted resolver could send
// otherwise is refused whole.
#include "net/resolver_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cordon::net {
namespace {

TEST(ResolverReportTest, EachReportRoundTrips) {
  const ResolverReport reports[] = {
      UpstreamQuery{7, "pkg.test", 28, 1},
      HandedOut{*ParseAddress("192.0.2.7"), "pkg.example.test"},
      HandedOut{*ParseAddress("2001:db8::1"), "pkg.test"},
      Refused{"other.test"},
      Withheld{"pkg.test", *ParseAddress("127.0.0.1")},
      ConnectRequest{70000, *ParseAddress("192.0.2.7"), 443, "pkg.test"},
      ConnectRequest{1, *ParseAddress("2001:db8::1"), 22, ""},
      ConnectRequest{2, IpAddress{}, 443, "pkg.test"},  // by name alone
      ProxyRefused{"pkg.test", 443, "server_name", "other.test"},
      ProxyRefused{"other.test", 80, "name", ""},
  };
  for (const ResolverReport& sent : reports) {
    const std::string bytes = EncodeReport(sent);
    const std::optional<ResolverReport> back = DecodeReport(bytes);
    ASSERT_TRUE(back) << bytes;
    EXPECT_EQ(*back, sent) << bytes;
  }
}

TEST(ResolverReportTest, AMappedAddressIsItsIpv4Address) {
  const std::optional<ResolverReport> back =
      DecodeReport(R"({"handed_out":{"address":"::ffff:192.0.2.7","name":"a.test"}})");
  ASSERT_TRUE(back);
  EXPECT_EQ(std::get<HandedOut>(*back).address, *ParseAddress("192.0.2.7"));
}

TEST(ResolverReportTest, MalformedReportsAreRefusedWhole) {
  for (const char* bytes : {
           "",
           "not json",
           "[]",
           R"({"handed_out":{"address":"192.0.2.7","name":"a.test"},"refused":{"name":"b"}})",
           R"({"handed_out":"192.0.2.7"})",
           R"({"handed_out":{"address":"192.0.2.7"}})",
           R"({"handed_out":{"address":"192.0.2.7","name":""}})",
           R"({"handed_out":{"address":"192.0.2.7","name":7}})",
           R"({"handed_out":{"address":"[192.0.2.7]","name":"a.test"}})",
           R"({"handed_out":{"address":"192.0.2.7:443","name":"a.test"}})",
           R"({"handed_out":{"address":"fe80::1%eth0","name":"a.test"}})",
           R"({"withheld":{"name":"a.test"}})",
           R"({"query":{"tag":7,"name":"a.test","type":1}})",
           R"({"query":{"tag":65536,"name":"a.test","type":1,"class":1}})",
           R"({"query":{"tag":-1,"name":"a.test","type":1,"class":1}})",
           R"({"query":{"tag":1.5,"name":"a.test","type":1,"class":1}})",
           R"({"denial":{"kind":"dns","target":"x","layer":"network","rule":"r","fix":"f"}})",
           R"({"something":{}})",
           R"({"connect":{"tag":1,"address":"192.0.2.7","port":0,"name":""}})",
           R"({"connect":{"tag":1,"address":"192.0.2.7","port":70000,"name":""}})",
           R"({"connect":{"tag":4294967296,"address":"192.0.2.7","port":80,"name":""}})",
           R"({"connect":{"tag":1,"address":"pkg.test","port":80,"name":""}})",
           R"({"connect":{"tag":1,"address":"192.0.2.7","port":80}})",
           // By name alone: only a canonical host name (never text that could reach a request
           // line, another case, or a final dot).
           R"({"connect":{"tag":1,"address":"","port":80,"name":""}})",
           R"({"connect":{"tag":1,"address":"","port":80,"name":"a.test\r\nHost: x"}})",
           R"({"connect":{"tag":1,"address":"","port":80,"name":"10.0.0.1:22 HTTP/1.1"}})",
           R"({"connect":{"tag":1,"address":"","port":80,"name":"API.test"}})",
           R"({"connect":{"tag":1,"address":"","port":80,"name":"api.test."}})",
           R"({"proxy_refused":{"host":"a.test","port":80,"why":"because","detail":""}})",
           R"({"proxy_refused":{"host":"","port":80,"why":"name","detail":""}})",
           R"({"proxy_refused":{"host":"a.test","port":80,"why":"name"}})",
       }) {
    EXPECT_FALSE(DecodeReport(bytes)) << bytes;
  }
}

TEST(ResolverReportTest, OversizedReportIsRefused) {
  const std::string name(kMaxResolverReport, 'a');
  const std::string bytes = R"({"refused":{"name":")" + name + "\"}}";
  EXPECT_FALSE(DecodeReport(bytes));
  // Its twin below the limit is taken.
  EXPECT_TRUE(DecodeReport(R"({"refused":{"name":"a.test"}})"));
}

TEST(ResolverReportTest, UpstreamReplyCarriesTheTagInPlaceOfTheId) {
  std::vector<std::uint8_t> reply(20, 0);
  reply[0] = 0xab;
  reply[1] = 0xcd;
  reply[12] = 0x42;
  const std::vector<std::uint8_t> message = EncodeUpstreamReply(7, reply);
  ASSERT_EQ(message.size(), reply.size() + 1);  // its kind first
  const std::optional<UpstreamReply> back = DecodeUpstreamReply(message);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->tag, 7);
  ASSERT_EQ(back->wire.size(), reply.size());
  EXPECT_EQ(back->wire[0], 0);
  EXPECT_EQ(back->wire[1], 7);
  EXPECT_EQ(back->wire[12], 0x42);
  // No reply: the tag alone.
  const std::optional<UpstreamReply> none = DecodeUpstreamReply(EncodeUpstreamReply(9, {}));
  ASSERT_TRUE(none);
  EXPECT_EQ(none->tag, 9);
  EXPECT_TRUE(none->wire.empty());
  // Shorter than a tag, or a reply shorter than a DNS header: refused.
  EXPECT_FALSE(DecodeUpstreamReply(std::vector<std::uint8_t>{'D', 1}));
  EXPECT_FALSE(DecodeUpstreamReply(std::vector<std::uint8_t>(12, 'D')));
  // Another kind: not a reply.
  std::vector<std::uint8_t> other = message;
  other[0] = 'C';
  EXPECT_FALSE(DecodeUpstreamReply(other));
}

TEST(ResolverReportTest, ConnectResultRoundTripsAndNothingElseIsOne) {
  for (const ConnectResult sent : {ConnectResult{0, 0}, ConnectResult{4000000000u, 111}}) {
    const std::vector<std::uint8_t> message = EncodeConnectResult(sent);
    EXPECT_EQ(DecodeConnectResult(message), sent);
    EXPECT_FALSE(DecodeUpstreamReply(message));
    std::vector<std::uint8_t> longer = message;
    longer.push_back(0);
    EXPECT_FALSE(DecodeConnectResult(longer));
    EXPECT_FALSE(DecodeConnectResult(std::span(message).first(message.size() - 1)));
  }
  // An errno beyond any errno's range is no result.
  std::vector<std::uint8_t> wild = EncodeConnectResult({1, 0});
  wild[5] = 0x7f;
  EXPECT_FALSE(DecodeConnectResult(wild));
  EXPECT_FALSE(DecodeConnectResult(EncodeUpstreamReply(9, {})));
}

}  // namespace
}  // namespace cordon::net
