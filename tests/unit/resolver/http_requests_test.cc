// The HTTP requests a client sends the sandbox's proxy: a CONNECT's head and then its tunnel,
// requests in absolute form held back until judged and released in origin form, and what is
// refused (a Host header naming another host, other forms, heads too large). Each refused case
// has its allowed twin.
#include "resolver/http_requests.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/proxy_target.h"

namespace cordon::resolver {
namespace {

using Kind = HttpRequests::Event::Kind;

std::vector<char> Bytes(std::string_view text) { return {text.begin(), text.end()}; }

void Append(std::vector<char>& bytes, std::string_view text) {
  bytes.insert(bytes.end(), text.begin(), text.end());
}

std::string Text(const std::vector<char>& bytes) { return {bytes.begin(), bytes.end()}; }

// What a new HttpRequests makes of `text` read at once.
HttpRequests::Event ReadOnce(std::string_view text) {
  HttpRequests requests;
  const std::vector<char> bytes = Bytes(text);
  return requests.Read(bytes);
}

constexpr std::string_view kConnect = "CONNECT pkg.test:443 HTTP/1.1\r\nHost: pkg.test:443\r\n\r\n";
constexpr std::string_view kGet =
    "GET http://pkg.test:8080/hello.txt?x=1 HTTP/1.1\r\nHost: pkg.test:8080\r\n\r\n";
constexpr std::string_view kGetInOriginForm =
    "GET /hello.txt?x=1 HTTP/1.1\r\nHost: pkg.test:8080\r\n\r\n";

TEST(HttpRequestsTest, ConnectHeadIsJudgedAndWhatFollowsItIsTheTunnels) {
  HttpRequests requests;
  std::vector<char> bytes = Bytes(kConnect);
  Append(bytes, "\x16\x03\x01");  // the start of a TLS hello, sent before the proxy's answer
  const HttpRequests::Event head = requests.Read(bytes);
  ASSERT_EQ(head.kind, Kind::kHead) << head.reason;
  EXPECT_TRUE(head.connect);
  EXPECT_EQ(head.target.host, "pkg.test");
  EXPECT_EQ(head.target.port, 443);
  EXPECT_EQ(requests.consumed(), kConnect.size());
  EXPECT_EQ(requests.released(), 0u);

  requests.Release(bytes);
  EXPECT_EQ(Text(bytes).substr(0, kConnect.size()), kConnect);  // a CONNECT is not rewritten
  EXPECT_EQ(requests.Read(bytes).kind, Kind::kTunnel);
  EXPECT_EQ(requests.released(), bytes.size());
  // Whatever comes next is the tunnel's, even bytes that read as HTTP.
  Append(bytes, "GET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(requests.Read(bytes).kind, Kind::kTunnel);
  EXPECT_EQ(requests.released(), bytes.size());
  EXPECT_EQ(requests.consumed(), bytes.size());
}

TEST(HttpRequestsTest, ConnectWhoseHostHeaderNamesAnotherHostIsForbidden) {
  const HttpRequests::Event event =
      ReadOnce("CONNECT pkg.test:443 HTTP/1.1\r\nHost: other.test:443\r\n\r\n");
  EXPECT_EQ(event.kind, Kind::kInvalid);
  EXPECT_EQ(event.status, 403);
  EXPECT_EQ(event.other_host, "other.test:443");
  EXPECT_EQ(event.target.host, "pkg.test");
  EXPECT_EQ(event.target.port, 443);
}

TEST(HttpRequestsTest, ConnectWithoutPortIsABadRequest) {
  const HttpRequests::Event event = ReadOnce("CONNECT pkg.test HTTP/1.1\r\nHost: pkg.test\r\n\r\n");
  EXPECT_EQ(event.kind, Kind::kInvalid);
  EXPECT_EQ(event.status, 400);
}

TEST(HttpRequestsTest, AbsoluteFormRequestIsHeldThenReleasedInOriginForm) {
  HttpRequests requests;
  std::vector<char> bytes = Bytes(kGet);
  const HttpRequests::Event head = requests.Read(bytes);
  ASSERT_EQ(head.kind, Kind::kHead) << head.reason;
  EXPECT_FALSE(head.connect);
  EXPECT_EQ(head.target.host, "pkg.test");
  EXPECT_EQ(head.target.port, 8080);
  EXPECT_EQ(requests.released(), 0u);

  requests.Release(bytes);
  EXPECT_EQ(Text(bytes), kGetInOriginForm);
  EXPECT_EQ(requests.Read(bytes).kind, Kind::kMore);
  EXPECT_EQ(requests.released(), bytes.size());
  EXPECT_EQ(requests.consumed(), bytes.size());
}

TEST(HttpRequestsTest, AbsoluteUrlWithoutPortGoesToPort80) {
  HttpRequests requests;
  std::vector<char> bytes = Bytes("GET http://pkg.test HTTP/1.1\r\nHost: pkg.test\r\n\r\n");
  const HttpRequests::Event head = requests.Read(bytes);
  ASSERT_EQ(head.kind, Kind::kHead) << head.reason;
  EXPECT_EQ(head.target.host, "pkg.test");
  EXPECT_EQ(head.target.port, 80);
  requests.Release(bytes);
  EXPECT_EQ(Text(bytes), "GET / HTTP/1.1\r\nHost: pkg.test\r\n\r\n");  // no path: "/"
}

TEST(HttpRequestsTest, RequestWithoutHostHeaderIsJudgedByItsUrl) {
  const HttpRequests::Event head = ReadOnce("GET http://pkg.test/x HTTP/1.0\r\n\r\n");
  ASSERT_EQ(head.kind, Kind::kHead) << head.reason;
  EXPECT_EQ(head.target.host, "pkg.test");
  EXPECT_EQ(head.target.port, 80);
}

TEST(HttpRequestsTest, HostHeaderNamingAnotherHostIsForbidden) {
  const HttpRequests::Event event =
      ReadOnce("GET http://pkg.test:8080/ HTTP/1.1\r\nHost: other.test:8080\r\n\r\n");
  EXPECT_EQ(event.kind, Kind::kInvalid);
  EXPECT_EQ(event.status, 403);
  EXPECT_EQ(event.other_host, "other.test:8080");
  EXPECT_EQ(event.target.host, "pkg.test");
  EXPECT_EQ(event.target.port, 8080);
}

TEST(HttpRequestsTest, HostHeaderNamingAnotherPortIsForbidden) {
  const HttpRequests::Event event =
      ReadOnce("GET http://pkg.test/ HTTP/1.1\r\nHost: pkg.test:8080\r\n\r\n");
  EXPECT_EQ(event.kind, Kind::kInvalid);
  EXPECT_EQ(event.status, 403);
  EXPECT_EQ(event.other_host, "pkg.test:8080");
  EXPECT_EQ(event.target.port, 80);
}

// A Host header without a port names the scheme's default port (80), not the URL's.
TEST(HttpRequestsTest, HostHeaderWithoutPortDoesNotMatchAUrlOnAnotherPort) {
  const HttpRequests::Event event =
      ReadOnce("GET http://pkg.test:8080/ HTTP/1.1\r\nHost: pkg.test\r\n\r\n");
  EXPECT_EQ(event.kind, Kind::kInvalid);
  EXPECT_EQ(event.status, 403);
  EXPECT_EQ(event.target.port, 8080);
}

TEST(HttpRequestsTest, TwoHostHeadersAreABadRequestEvenWhenTheyAgree) {
  const HttpRequests::Event event =
      ReadOnce("GET http://pkg.test/ HTTP/1.1\r\nHost: pkg.test\r\nHost: pkg.test\r\n\r\n");
  EXPECT_EQ(event.kind, Kind::kInvalid);
  EXPECT_EQ(event.status, 400);
}

TEST(HttpRequestsTest, HostHeaderThatNamesNoHostIsABadRequest) {
  for (const char* head : {
           "GET http://pkg.test/ HTTP/1.1\r\nHost: pkg.test:http\r\n\r\n",
           "GET http://pkg.test/ HTTP/1.1\r\nHost: :80\r\n\r\n",
           "GET http://pkg.test/ HTTP/1.1\r\nHost: pkg.test:0\r\n\r\n",
           "GET http://pkg.test/ HTTP/1.1\r\nHost: [::1\r\n\r\n",
       }) {
    const HttpRequests::Event event = ReadOnce(head);
    EXPECT_EQ(event.kind, Kind::kInvalid) << head;
    EXPECT_EQ(event.status, 400) << head;
  }
}

TEST(HttpRequestsTest, OriginFormIsABadRequestForAProxy) {
  const HttpRequests::Event event = ReadOnce("GET / HTTP/1.1\r\nHost: pkg.test\r\n\r\n");
  EXPECT_EQ(event.kind, Kind::kInvalid);
  EXPECT_EQ(event.status, 400);
}

TEST(HttpRequestsTest, HttpsUrlWithoutConnectIsABadRequest) {
  const HttpRequests::Event event =
      ReadOnce("GET https://pkg.test/ HTTP/1.1\r\nHost: pkg.test\r\n\r\n");
  EXPECT_EQ(event.kind, Kind::kInvalid);
  EXPECT_EQ(event.status, 400);
}

TEST(HttpRequestsTest, BytesThatAreNoHttpRequestAreABadRequest) {
  for (const std::string_view garbage : {
           std::string_view("\x01\x02\x03\x04"),
           std::string_view("\x16\x03\x01\x00\x05hello", 10),  // a TLS record
           std::string_view("SSH-2.0-OpenSSH_9.2\r\n"),
           std::string_view("GET http://pkg.test/ XTTP/1.1\r\n\r\n"),
       }) {
    const HttpRequests::Event event = ReadOnce(garbage);
    EXPECT_EQ(event.kind, Kind::kInvalid) << garbage;
    EXPECT_EQ(event.status, 400) << garbage;
  }
}

// Header lines of 73 bytes: 1,000 of them pass kMaxHead (64 KiB) but stay under http-parser's own
// limit (80 KiB), and none is large enough for a callback to refuse it alone.
std::string PaddingLines(int count) {
  std::string lines;
  for (int i = 0; i < count; ++i) lines += "X-Pad: " + std::string(64, 'a') + "\r\n";
  return lines;
}

TEST(HttpRequestsTest, HeadUnderTheLimitIsRead) {
  const std::string head = "GET http://pkg.test/ HTTP/1.1\r\n" + PaddingLines(800) + "\r\n";
  ASSERT_LT(head.size(), HttpRequests::kMaxHead);
  const HttpRequests::Event event = ReadOnce(head);
  EXPECT_EQ(event.kind, Kind::kHead) << event.reason;
}

TEST(HttpRequestsTest, HeadGrowingPastTheLimitIsTooLarge) {
  HttpRequests requests;
  std::vector<char> bytes = Bytes("GET http://pkg.test/ HTTP/1.1\r\n" + PaddingLines(800));
  EXPECT_EQ(requests.Read(bytes).kind, Kind::kMore);
  Append(bytes, PaddingLines(200));
  ASSERT_GT(bytes.size(), HttpRequests::kMaxHead);
  const HttpRequests::Event event = requests.Read(bytes);
  EXPECT_EQ(event.kind, Kind::kInvalid);
  EXPECT_EQ(event.status, 431);
  EXPECT_EQ(requests.released(), 0u);
}

TEST(HttpRequestsTest, Ipv6LiteralInUrlAndHostHeaderIsItsAddressWithoutBrackets) {
  HttpRequests requests;
  std::vector<char> bytes = Bytes("GET http://[::1]:8080/ HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n");
  const HttpRequests::Event head = requests.Read(bytes);
  ASSERT_EQ(head.kind, Kind::kHead) << head.reason;
  EXPECT_EQ(head.target.host, "::1");
  EXPECT_EQ(head.target.port, 8080);
  requests.Release(bytes);
  EXPECT_EQ(Text(bytes), "GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n");
}

TEST(HttpRequestsTest, Ipv6HostHeaderNamingAnotherAddressIsForbidden) {
  const HttpRequests::Event event =
      ReadOnce("GET http://[::1]:8080/ HTTP/1.1\r\nHost: [::2]:8080\r\n\r\n");
  EXPECT_EQ(event.kind, Kind::kInvalid);
  EXPECT_EQ(event.status, 403);
  EXPECT_EQ(event.target.host, "::1");
}

TEST(HttpRequestsTest, HostsAreLowerCasedWithoutTheFinalDot) {
  const HttpRequests::Event head =
      ReadOnce("GET http://PKG.Test.:8080/x HTTP/1.1\r\nHost: Pkg.TEST.:8080\r\n\r\n");
  ASSERT_EQ(head.kind, Kind::kHead) << head.reason;
  EXPECT_EQ(head.target.host, "pkg.test");
  EXPECT_EQ(head.target.port, 8080);
}

TEST(HttpRequestsTest, CanonicalHostIsLowerCaseWithoutBracketsOrFinalDot) {
  EXPECT_EQ(CanonicalHost("PKG.Test."), "pkg.test");
  EXPECT_EQ(CanonicalHost("pkg.test"), "pkg.test");
  EXPECT_EQ(CanonicalHost("[::1]"), "::1");
  EXPECT_EQ(CanonicalHost("[2001:DB8::1]"), "2001:db8::1");
  EXPECT_EQ(CanonicalHost(""), "");
}

TEST(HttpRequestsTest, BodyIsReleasedAsItIsRead) {
  HttpRequests requests;
  std::vector<char> bytes =
      Bytes("POST http://pkg.test/up HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 5\r\n\r\nhel");
  const HttpRequests::Event head = requests.Read(bytes);
  ASSERT_EQ(head.kind, Kind::kHead) << head.reason;
  EXPECT_EQ(requests.released(), 0u);  // not even the body's first bytes before the head's
  requests.Release(bytes);
  EXPECT_EQ(Text(bytes), "POST /up HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 5\r\n\r\nhel");
  EXPECT_EQ(requests.Read(bytes).kind, Kind::kMore);
  EXPECT_EQ(requests.released(), bytes.size());
  Append(bytes, "lo");
  EXPECT_EQ(requests.Read(bytes).kind, Kind::kMore);
  EXPECT_EQ(requests.released(), bytes.size());
}

TEST(HttpRequestsTest, HeadReadOneByteAtATimeGivesOneHead) {
  HttpRequests requests;
  std::vector<char> bytes;
  int heads = 0;
  HttpRequests::Event head;
  for (const char c : kGet) {
    bytes.push_back(c);
    const HttpRequests::Event event = requests.Read(bytes);
    ASSERT_NE(event.kind, Kind::kInvalid) << event.reason << " at byte " << bytes.size();
    if (event.kind == Kind::kHead) {
      ++heads;
      head = event;
      EXPECT_EQ(bytes.size(), kGet.size());  // not before the head is whole
    }
    EXPECT_EQ(requests.released(), 0u);
  }
  EXPECT_EQ(heads, 1);
  EXPECT_EQ(head.target.host, "pkg.test");
  EXPECT_EQ(head.target.port, 8080);
  requests.Release(bytes);
  EXPECT_EQ(requests.Read(bytes).kind, Kind::kMore);
  EXPECT_EQ(Text(bytes), kGetInOriginForm);
  EXPECT_EQ(requests.released(), bytes.size());
}

constexpr std::string_view kFirst = "GET http://pkg.test/a HTTP/1.1\r\nHost: pkg.test\r\n\r\n";
constexpr std::string_view kFirstInOriginForm = "GET /a HTTP/1.1\r\nHost: pkg.test\r\n\r\n";

TEST(HttpRequestsTest, PipelinedRequestIsHeldUntilItsOwnHeadIsJudged) {
  HttpRequests requests;
  std::vector<char> bytes = Bytes(kFirst);
  Append(bytes, "GET http://pkg.test/b HTTP/1.1\r\nHost: pkg.test\r\n\r\n");
  ASSERT_EQ(requests.Read(bytes).kind, Kind::kHead);
  requests.Release(bytes);

  const HttpRequests::Event second = requests.Read(bytes);
  ASSERT_EQ(second.kind, Kind::kHead) << second.reason;
  EXPECT_EQ(second.target.host, "pkg.test");
  EXPECT_EQ(second.target.port, 80);
  EXPECT_EQ(requests.released(), kFirstInOriginForm.size());

  requests.Release(bytes);
  EXPECT_EQ(requests.Read(bytes).kind, Kind::kMore);
  EXPECT_EQ(Text(bytes),
            std::string(kFirstInOriginForm) + "GET /b HTTP/1.1\r\nHost: pkg.test\r\n\r\n");
  EXPECT_EQ(requests.released(), bytes.size());
}

TEST(HttpRequestsTest, PipelinedRequestToAnotherHostIsNotReleasedWithTheFirst) {
  HttpRequests requests;
  std::vector<char> bytes = Bytes(kFirst);
  Append(bytes, "GET http://other.test/b HTTP/1.1\r\nHost: other.test\r\n\r\n");
  ASSERT_EQ(requests.Read(bytes).kind, Kind::kHead);
  requests.Release(bytes);

  // The caller compares the target with the connection's and refuses it without Release.
  const HttpRequests::Event second = requests.Read(bytes);
  ASSERT_EQ(second.kind, Kind::kHead) << second.reason;
  EXPECT_EQ(second.target.host, "other.test");
  EXPECT_EQ(requests.released(), kFirstInOriginForm.size());
}

TEST(HttpRequestsTest, DropMovesTheOffsetsDown) {
  HttpRequests requests;
  std::vector<char> bytes = Bytes(kFirst);
  ASSERT_EQ(requests.Read(bytes).kind, Kind::kHead);
  requests.Release(bytes);
  ASSERT_EQ(requests.Read(bytes).kind, Kind::kMore);
  const std::size_t whole = bytes.size();
  ASSERT_EQ(requests.released(), whole);

  // The caller forwarded four bytes, then the rest.
  bytes.erase(bytes.begin(), bytes.begin() + 4);
  requests.Drop(4);
  EXPECT_EQ(requests.released(), whole - 4);
  EXPECT_EQ(requests.consumed(), whole - 4);
  bytes.clear();
  requests.Drop(whole - 4);
  EXPECT_EQ(requests.released(), 0u);
  EXPECT_EQ(requests.consumed(), 0u);

  // The next request starts at offset 0: it is judged and rewritten there.
  Append(bytes, "GET http://pkg.test/b HTTP/1.1\r\nHost: pkg.test\r\n\r\n");
  const HttpRequests::Event next = requests.Read(bytes);
  ASSERT_EQ(next.kind, Kind::kHead) << next.reason;
  EXPECT_EQ(requests.released(), 0u);
  requests.Release(bytes);
  EXPECT_EQ(requests.Read(bytes).kind, Kind::kMore);
  EXPECT_EQ(Text(bytes), "GET /b HTTP/1.1\r\nHost: pkg.test\r\n\r\n");
  EXPECT_EQ(requests.released(), bytes.size());
}

}  // namespace
}  // namespace cordon::resolver
