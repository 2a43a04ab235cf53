// The resolver's reply cache on a clock the test moves: kept for the TTL (at most kMaxTtl),
// its age told, and bounded.
#include "resolver/dns_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace cordon::resolver {
namespace {

using namespace std::chrono_literals;

class DnsCacheTest : public ::testing::Test {
 protected:
  std::chrono::steady_clock::time_point now_ = std::chrono::steady_clock::time_point{} + 1h;
  DnsCache cache_{[this] { return now_; }};
  const std::vector<std::uint8_t> reply_{1, 2, 3};
};

TEST_F(DnsCacheTest, AReplyIsFoundUntilItsTtlIsUpWithItsAge) {
  cache_.Store("pkg.test", 1, reply_, 77, 30);
  now_ += 29s;
  const std::optional<DnsCache::Hit> hit = cache_.Find("pkg.test", 1);
  ASSERT_TRUE(hit);
  EXPECT_EQ(std::vector<std::uint8_t>(hit->reply.begin(), hit->reply.end()), reply_);
  EXPECT_EQ(hit->upstream_id, 77);
  EXPECT_EQ(hit->age, 29u);
  // The twin: at 30 s it is gone.
  now_ += 1s;
  EXPECT_FALSE(cache_.Find("pkg.test", 1));
  EXPECT_EQ(cache_.size(), 0u);
}

TEST_F(DnsCacheTest, OnlyTheSameNameAndTypeAreFound) {
  cache_.Store("pkg.test", 1, reply_, 1, 30);
  EXPECT_TRUE(cache_.Find("pkg.test", 1));
  EXPECT_FALSE(cache_.Find("pkg.test", 28));
  EXPECT_FALSE(cache_.Find("other.test", 1));
}

TEST_F(DnsCacheTest, ATtlOfZeroIsNotKept) {
  cache_.Store("pkg.test", 1, reply_, 1, 0);
  EXPECT_FALSE(cache_.Find("pkg.test", 1));
}

TEST_F(DnsCacheTest, ALongTtlIsKeptAtMostAnHour) {
  cache_.Store("pkg.test", 1, reply_, 1, 86400);
  now_ += std::chrono::seconds(DnsCache::kMaxTtl - 1);
  EXPECT_TRUE(cache_.Find("pkg.test", 1));
  now_ += 1s;
  EXPECT_FALSE(cache_.Find("pkg.test", 1));
}

TEST_F(DnsCacheTest, WhenFullTheReplyThatExpiresFirstMakesRoom) {
  for (std::size_t i = 0; i < DnsCache::kMaxEntries; ++i) {
    cache_.Store("n" + std::to_string(i) + ".test", 1, reply_, 1, i == 7 ? 5 : 100);
  }
  EXPECT_EQ(cache_.size(), DnsCache::kMaxEntries);
  cache_.Store("new.test", 1, reply_, 1, 100);
  EXPECT_EQ(cache_.size(), DnsCache::kMaxEntries);
  EXPECT_TRUE(cache_.Find("new.test", 1));
  EXPECT_FALSE(cache_.Find("n7.test", 1));
  EXPECT_TRUE(cache_.Find("n8.test", 1));
  // Expired ones go first, however many.
  now_ += 200s;
  cache_.Store("later.test", 1, reply_, 1, 100);
  EXPECT_EQ(cache_.size(), 1u);
}

TEST_F(DnsCacheTest, TheRepliesBytesTogetherAreBounded) {
  const std::vector<std::uint8_t> large(60000, 7);
  const std::size_t fit = DnsCache::kMaxBytes / large.size();
  for (std::size_t i = 0; i < fit + 10; ++i) {
    cache_.Store("n" + std::to_string(i) + ".test", 1, large, 1,
                 static_cast<std::uint32_t>(100 + i));
  }
  EXPECT_LE(cache_.bytes(), DnsCache::kMaxBytes);
  EXPECT_EQ(cache_.size(), fit);
  // The ones that expire first made room; the newest are kept.
  EXPECT_FALSE(cache_.Find("n0.test", 1));
  EXPECT_TRUE(cache_.Find("n" + std::to_string(fit + 9) + ".test", 1));
  // Replacing one keeps the count of bytes right.
  cache_.Store("n" + std::to_string(fit + 9) + ".test", 1, reply_, 1, 100);
  EXPECT_EQ(cache_.bytes(), (fit - 1) * large.size() + reply_.size());
}

TEST_F(DnsCacheTest, StoringTheSameQuestionAgainReplacesIt) {
  cache_.Store("pkg.test", 1, reply_, 1, 30);
  now_ += 20s;
  const std::vector<std::uint8_t> newer{9};
  cache_.Store("pkg.test", 1, newer, 2, 30);
  const std::optional<DnsCache::Hit> hit = cache_.Find("pkg.test", 1);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->upstream_id, 2);
  EXPECT_EQ(hit->age, 0u);
  EXPECT_EQ(cache_.size(), 1u);
}

}  // namespace
}  // namespace cordon::resolver
