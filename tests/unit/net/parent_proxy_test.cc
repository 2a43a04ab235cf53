// net::ParentProxy: which parent a domains run chains (sandbox.parent_proxy and the caller's
// environment), what it refuses to chain, the destinations no_proxy leaves direct, and the
// parent's reply to a CONNECT read from its first bytes.
#include "net/parent_proxy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cordon::net {
namespace {

ParentProxy Parsed(const std::string& url) {
  Result<ParentProxy> parent = ParseParentProxyUrl(url, "HTTPS_PROXY");
  EXPECT_TRUE(parent.has_value()) << url << ": " << parent.error().message;
  return parent.value_or(ParentProxy{});
}

std::string Refusal(const std::string& url) {
  Result<ParentProxy> parent = ParseParentProxyUrl(url, "HTTPS_PROXY");
  EXPECT_FALSE(parent.has_value()) << url;
  return parent ? std::string() : parent.error().message;
}

IpAddress Address(const std::string& text) { return ParseAddress(text).value_or(IpAddress{}); }

TEST(ParentProxyTest, UrlFormsGiveHostAndPort) {
  EXPECT_EQ(Parsed("http://proxy.corp.example:3128").Address(), "proxy.corp.example:3128");
  EXPECT_EQ(Parsed("http://Proxy.Corp.Example:3128/").host, "proxy.corp.example");
  EXPECT_EQ(Parsed("HTTP://192.0.2.7:8080").Address(), "192.0.2.7:8080");
  EXPECT_EQ(Parsed("192.0.2.7:8080").Address(), "192.0.2.7:8080");  // no scheme: http
  EXPECT_EQ(Parsed("http://proxy").port, 80);                       // http's own port
  EXPECT_EQ(Parsed("http://[2001:db8::1]:3128").Address(), "[2001:db8::1]:3128");
  EXPECT_EQ(Parsed("http://[2001:db8::1]").port, 80);
  EXPECT_EQ(Parsed("http://proxy:3128").source, "HTTPS_PROXY");
  EXPECT_FALSE(Parsed("http://proxy:3128").by_name);
}

TEST(ParentProxyTest, ByNameIsCarriedOnlyWhenAsked) {
  Result<std::optional<ParentProxy>> on = ParentProxyFor("auto", true, {"HTTPS_PROXY=http://p:1"});
  ASSERT_TRUE(on.has_value() && on->has_value());
  EXPECT_TRUE((*on)->by_name);
  Result<std::optional<ParentProxy>> off =
      ParentProxyFor("auto", false, {"HTTPS_PROXY=http://p:1"});
  ASSERT_TRUE(off.has_value() && off->has_value());
  EXPECT_FALSE((*off)->by_name);
}

TEST(ParentProxyTest, WhatCannotBeChainedIsRefusedNamingIt) {
  EXPECT_NE(Refusal("https://proxy:3128").find("not https://"), std::string::npos);
  EXPECT_NE(Refusal("socks5://proxy:1080").find("not socks5://"), std::string::npos);
  const std::string credentials = Refusal("http://alice:s3cret@proxy:3128");
  EXPECT_NE(credentials.find("credentials"), std::string::npos);
  // The password never reaches a message (it is shown to the agent).
  EXPECT_EQ(credentials.find("s3cret"), std::string::npos) << credentials;
  EXPECT_EQ(credentials.find("alice"), std::string::npos) << credentials;
  EXPECT_NE(credentials.find("http://***@proxy:3128"), std::string::npos) << credentials;
  // A "://" after the password is no scheme, and what follows the host never shows.
  const std::string tricky = Refusal("alice:s3cret@proxy:3128/?u=http://x&token=t0ken");
  EXPECT_EQ(tricky.find("s3cret"), std::string::npos) << tricky;
  EXPECT_EQ(tricky.find("t0ken"), std::string::npos) << tricky;
  EXPECT_NE(tricky.find("***@proxy:3128/..."), std::string::npos) << tricky;
  const std::string query = Refusal("http://proxy:3128/?token=t0ken");
  EXPECT_EQ(query.find("t0ken"), std::string::npos) << query;
  EXPECT_NE(Refusal("http://proxy:3128/path").find("no path"), std::string::npos);
  EXPECT_NE(Refusal("http://proxy:0").find("port"), std::string::npos);
  EXPECT_NE(Refusal("http://proxy:65536").find("port"), std::string::npos);
  EXPECT_NE(Refusal("http://proxy:80x").find("port"), std::string::npos);
  EXPECT_NE(Refusal("http://proxy:").find("port"), std::string::npos);
  EXPECT_NE(Refusal("http://:3128").find("no host"), std::string::npos);
  EXPECT_NE(Refusal("http://pro xy:3128").find("no host"), std::string::npos);
  EXPECT_NE(Refusal("http://[2001:db8::1:3128").find("'['"), std::string::npos);
  EXPECT_NE(Refusal("http://[proxy]:3128").find("IPv6"), std::string::npos);
  EXPECT_NE(Refusal("").find("not a proxy URL"), std::string::npos);
  EXPECT_NE(Refusal(std::string(2000, 'a')).find("not a proxy URL"), std::string::npos);
  // Control bytes are escaped, never printed raw.
  EXPECT_NE(Refusal("http://pro\x1bxy:3128").find("\\x1b"), std::string::npos);
}

TEST(ParentProxyTest, AutoTakesTheCallersHttpsProxyLowerCaseFirst) {
  const std::vector<std::string> env = {"PATH=/usr/bin", "HTTPS_PROXY=http://upper:1",
                                        "https_proxy=http://lower:2"};
  Result<std::optional<ParentProxy>> parent = ParentProxyFor("auto", false, env);
  ASSERT_TRUE(parent.has_value()) << parent.error().message;
  ASSERT_TRUE(parent->has_value());
  EXPECT_EQ((*parent)->Address(), "lower:2");
  EXPECT_EQ((*parent)->source, "https_proxy");

  parent = ParentProxyFor("auto", false, {"HTTPS_PROXY=http://upper:1"});
  ASSERT_TRUE(parent.has_value() && parent->has_value());
  EXPECT_EQ((*parent)->source, "HTTPS_PROXY");

  // An empty value is no proxy; http_proxy alone is not a CONNECT parent.
  parent = ParentProxyFor("auto", false, {"https_proxy=", "http_proxy=http://plain:3"});
  ASSERT_TRUE(parent.has_value());
  EXPECT_FALSE(parent->has_value());
}

TEST(ParentProxyTest, NoneAndAnExplicitUrlOverrideTheEnvironment) {
  const std::vector<std::string> env = {"HTTPS_PROXY=http://env:1"};
  Result<std::optional<ParentProxy>> none = ParentProxyFor("none", false, env);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
  // "none" even with an environment proxy cordon could not chain: no refusal.
  none = ParentProxyFor("none", false, {"HTTPS_PROXY=socks5://x:1"});
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());

  Result<std::optional<ParentProxy>> set = ParentProxyFor("http://set:8080", false, env);
  ASSERT_TRUE(set.has_value() && set->has_value());
  EXPECT_EQ((*set)->Address(), "set:8080");
  EXPECT_EQ((*set)->source, "sandbox.parent_proxy");

  Result<std::optional<ParentProxy>> bad =
      ParentProxyFor("auto", false, {"HTTPS_PROXY=socks5://x:1"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("HTTPS_PROXY=socks5://x:1"), std::string::npos);
}

TEST(ParentProxyTest, SettingCheckTakesAutoNoneAndUrls) {
  EXPECT_TRUE(CheckParentProxySetting("auto").has_value());
  EXPECT_TRUE(CheckParentProxySetting("none").has_value());
  EXPECT_TRUE(CheckParentProxySetting("http://proxy:3128").has_value());
  Result<void> bad = CheckParentProxySetting("ftp://proxy:21");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("sandbox.parent_proxy"), std::string::npos);
}

TEST(ParentProxyTest, NoProxyNamesSubdomainsLiteralsAndBlocks) {
  Result<std::optional<ParentProxy>> read =
      ParentProxyFor("auto", false,
                     {"HTTPS_PROXY=http://p:1",
                      "no_proxy= pkg.test, .corp.example,*.wild.example,10.0.0.0/8,192.0.2.7,"
                      "host.example:8080,[2001:db8::5],2001:db8:1::/48,"});
  ASSERT_TRUE(read.has_value() && read->has_value());
  const ParentProxy& parent = **read;
  const IpAddress none;
  EXPECT_TRUE(parent.Bypasses("pkg.test", none));
  EXPECT_TRUE(parent.Bypasses("a.pkg.test", none));
  EXPECT_FALSE(parent.Bypasses("xpkg.test", none));  // a suffix only at a dot
  EXPECT_TRUE(parent.Bypasses("corp.example", none));
  EXPECT_TRUE(parent.Bypasses("git.corp.example", none));
  EXPECT_TRUE(parent.Bypasses("a.wild.example", none));
  EXPECT_TRUE(parent.Bypasses("host.example", none));  // its port is not told apart
  EXPECT_TRUE(parent.Bypasses("", Address("10.1.2.3")));
  EXPECT_FALSE(parent.Bypasses("", Address("11.1.2.3")));
  EXPECT_TRUE(parent.Bypasses("", Address("192.0.2.7")));
  EXPECT_FALSE(parent.Bypasses("", Address("192.0.2.8")));
  EXPECT_TRUE(parent.Bypasses("", Address("2001:db8::5")));
  EXPECT_TRUE(parent.Bypasses("", Address("2001:db8:1:ff::1")));
  EXPECT_FALSE(parent.Bypasses("", Address("2001:db8:2::1")));
  EXPECT_FALSE(parent.Bypasses("other.test", Address("198.51.100.1")));
  // The name or the address: either one listed.
  EXPECT_TRUE(parent.Bypasses("other.test", Address("10.0.0.1")));

  Result<std::optional<ParentProxy>> all =
      ParentProxyFor("auto", false, {"HTTPS_PROXY=http://p:1", "NO_PROXY=*"});
  ASSERT_TRUE(all.has_value() && all->has_value());
  EXPECT_TRUE((*all)->Bypasses("anything.example", none));

  Result<std::optional<ParentProxy>> empty =
      ParentProxyFor("auto", false, {"HTTPS_PROXY=http://p:1"});
  ASSERT_TRUE(empty.has_value() && empty->has_value());
  EXPECT_FALSE((*empty)->Bypasses("pkg.test", Address("10.0.0.1")));
}

TEST(ParentProxyTest, ConnectRequestNamesTheTargetTwice) {
  EXPECT_EQ(ConnectRequestHead("198.51.100.10:443"),
            "CONNECT 198.51.100.10:443 HTTP/1.1\r\nHost: 198.51.100.10:443\r\n\r\n");
  EXPECT_EQ(ConnectRequestHead("[2001:db8::1]:443"),
            "CONNECT [2001:db8::1]:443 HTTP/1.1\r\nHost: [2001:db8::1]:443\r\n\r\n");
  EXPECT_EQ(ConnectRequestHead("pkg.test:8080"),
            "CONNECT pkg.test:8080 HTTP/1.1\r\nHost: pkg.test:8080\r\n\r\n");
}

TEST(ParentProxyTest, ATargetThatIsNoHostAndPortMakesNoRequest) {
  // Whatever a subverted resolver puts in a name, nothing of it can end the request line or add
  // a header: only host names and address literals with a port are sent.
  for (const std::string bad :
       {"10.0.0.1:22 HTTP/1.1\r\nHost: 10.0.0.1:22\r\n\r\nj.example.com:443",
        "a.example.com\r\nX: y:443", "a b.example:443", "Pkg.Test:443", "pkg.test.:443", "pkg.test",
        "pkg.test:", "pkg.test:0", "pkg.test:65536", "pkg.test:+80", "pkg.test:8o", ":443",
        "2001:db8::1:443", "[198.51.100.10]:443", "[pkg.test]:443", "[::1:443", "pkg..test:443"}) {
    EXPECT_FALSE(ConnectRequestHead(bad).has_value()) << bad;
  }
}

TEST(ParentProxyTest, ReplyHeadIsReadToItsLastByte) {
  const std::string ok = "HTTP/1.1 200 Connection established\r\nVia: p\r\n\r\n";
  ParentReply reply = ReadParentReply(ok + "SSH-2.0-server\r\n");
  ASSERT_EQ(reply.state, ParentReply::State::kDone);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.head_length, ok.size());  // the server's first bytes are left alone
  EXPECT_EQ(reply.status_line, "HTTP/1.1 200 Connection established");

  reply = ReadParentReply("HTTP/1.0 403 Forbidden\r\n\r\n");
  ASSERT_EQ(reply.state, ParentReply::State::kDone);
  EXPECT_EQ(reply.status, 403);
  EXPECT_EQ(ReadParentReply("HTTP/1.1 200\r\n\r\n").status, 200);  // no reason phrase

  for (const std::string partial : {"", "HT", "HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\n\r"}) {
    EXPECT_EQ(ReadParentReply(partial).state, ParentReply::State::kIncomplete) << partial;
  }
}

TEST(ParentProxyTest, WhatIsNoProxyReplyIsMalformed) {
  for (const std::string bad :
       {"SSH-2.0-x\r\n\r\n", "HTTP/2 200\r\n\r\n", "HTTP/1.1 20x OK\r\n\r\n",
        "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1  200\r\n\r\n", "XTTP", "HTTP/1.1200\r\n\r\n"}) {
    EXPECT_EQ(ReadParentReply(bad).state, ParentReply::State::kMalformed) << bad;
  }
  // A head that never ends is bounded.
  const std::string endless = "HTTP/1.1 200 OK\r\n" + std::string(kMaxParentReplyHead, 'x');
  EXPECT_EQ(ReadParentReply(endless).state, ParentReply::State::kMalformed);
  // Control bytes in the status line are not passed on raw (it goes into a denial).
  const ParentReply odd = ReadParentReply("HTTP/1.1 403 No\x1b[31m\r\n\r\n");
  ASSERT_EQ(odd.state, ParentReply::State::kDone);
  EXPECT_EQ(odd.status_line.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace cordon::net
