#include "common/ipv4.h"

#include <gtest/gtest.h>

#include <string>

namespace corral {
namespace {

Cidr mustParse(const std::string& text) {
  StatusOr<Cidr> c = parseCidr(text);
  EXPECT_TRUE(c.isOk()) << text << ": " << c.status().toString();
  return c.isOk() ? *c : Cidr{};
}

TEST(Ipv4Test, ParsesAndFormatsAddresses) {
  StatusOr<uint32_t> a = parseIpv4("172.29.3.10");
  ASSERT_TRUE(a.isOk());
  EXPECT_EQ(*a, (172u << 24) | (29u << 16) | (3u << 8) | 10u);
  EXPECT_EQ(formatIpv4(*a), "172.29.3.10");
  EXPECT_EQ(formatIpv4(0), "0.0.0.0");
  EXPECT_EQ(formatIpv4(0xffffffffu), "255.255.255.255");
  for (const char* bad : {"", "172.29.3", "172.29.3.256", "a.b.c.d", "172.29.3.10 "}) {
    StatusOr<uint32_t> r = parseIpv4(bad);
    EXPECT_FALSE(r.isOk()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(Ipv4Test, ParseCidrAcceptsValidBlocks) {
  Cidr pool = mustParse("172.29.0.0/16");
  EXPECT_EQ(pool.base, (172u << 24) | (29u << 16));
  EXPECT_EQ(pool.prefix, 16);
  EXPECT_EQ(pool.size(), 65536u);
  EXPECT_EQ(pool.toString(), "172.29.0.0/16");

  Cidr host = mustParse("10.1.2.3/32");
  EXPECT_EQ(host.prefix, 32);
  EXPECT_EQ(host.size(), 1u);
  EXPECT_EQ(host.toString(), "10.1.2.3/32");

  Cidr all = mustParse("0.0.0.0/0");
  EXPECT_EQ(all.prefix, 0);
  EXPECT_EQ(all.size(), uint64_t{1} << 32);
}

TEST(Ipv4Test, ParseCidrRejectsHostBitsAndSuggestsTheNetwork) {
  StatusOr<Cidr> r = parseCidr("172.29.3.7/24");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("host bits set"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("172.29.3.0/24"), std::string::npos) << r.status().message();
}

TEST(Ipv4Test, ParseCidrRejectsBadPrefixes) {
  for (const char* bad : {"172.29.0.0", "172.29.0.0/", "172.29.0.0/33", "172.29.0.0/-1",
                          "172.29.0.0/1a", "172.29.0.0/016", "172.29.0/16", "/16"}) {
    StatusOr<Cidr> r = parseCidr(bad);
    EXPECT_FALSE(r.isOk()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(Ipv4Test, SubnetAtCarvesConsecutiveBlocks) {
  Cidr pool = mustParse("172.29.0.0/16");

  StatusOr<Cidr> first = subnetAt(pool, 24, 0);
  ASSERT_TRUE(first.isOk());
  EXPECT_EQ(first->toString(), "172.29.0.0/24");

  StatusOr<Cidr> second = subnetAt(pool, 24, 1);
  ASSERT_TRUE(second.isOk());
  EXPECT_EQ(second->toString(), "172.29.1.0/24");

  StatusOr<Cidr> last = subnetAt(pool, 24, 255);
  ASSERT_TRUE(last.isOk());
  EXPECT_EQ(last->toString(), "172.29.255.0/24");
  EXPECT_TRUE(pool.contains(last->base));
}

TEST(Ipv4Test, SubnetAtReportsAnExhaustedPool) {
  Cidr pool = mustParse("172.29.0.0/16");
  StatusOr<Cidr> r = subnetAt(pool, 24, 256);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("exhausted"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("256"), std::string::npos) << r.status().message();

  // A subnet larger than the pool, or too small to hold pods, does not fit.
  EXPECT_FALSE(subnetAt(pool, 15, 0).isOk());
  EXPECT_FALSE(subnetAt(pool, 31, 0).isOk());
}

TEST(Ipv4Test, ContainsAndOverlaps) {
  Cidr pool = mustParse("172.29.0.0/16");
  Cidr sub = mustParse("172.29.7.0/24");
  Cidr other = mustParse("172.30.0.0/16");
  Cidr sibling = mustParse("172.29.8.0/24");

  EXPECT_TRUE(pool.contains(*parseIpv4("172.29.0.0")));
  EXPECT_TRUE(pool.contains(*parseIpv4("172.29.255.255")));
  EXPECT_FALSE(pool.contains(*parseIpv4("172.30.0.0")));
  EXPECT_FALSE(pool.contains(*parseIpv4("172.28.255.255")));
  EXPECT_TRUE(sub.contains(*parseIpv4("172.29.7.200")));
  EXPECT_FALSE(sub.contains(*parseIpv4("172.29.8.1")));

  EXPECT_TRUE(pool.overlaps(sub));
  EXPECT_TRUE(sub.overlaps(pool));
  EXPECT_TRUE(sub.overlaps(sub));
  EXPECT_FALSE(pool.overlaps(other));
  EXPECT_FALSE(other.overlaps(pool));
  EXPECT_FALSE(sub.overlaps(sibling));
  EXPECT_TRUE(mustParse("0.0.0.0/0").overlaps(other));
}

TEST(Ipv4Test, HostAddressAddsTheOffset) {
  Cidr net = mustParse("172.29.1.0/24");
  EXPECT_EQ(hostAddress(net, 0), "172.29.1.0");
  EXPECT_EQ(hostAddress(net, 1), "172.29.1.1");
  EXPECT_EQ(hostAddress(net, 10), "172.29.1.10");
  EXPECT_EQ(hostAddress(net, 230), "172.29.1.230");
  EXPECT_EQ(hostAddress(mustParse("10.0.0.0/8"), 256 + 5), "10.0.1.5");
}

}  // namespace
}  // namespace corral
