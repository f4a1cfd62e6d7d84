#include "runtime/local/firewall.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace corral {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(FirewallTest, PodsReachNothingOfTheHostButRepliesToIt) {
  std::string nft = renderFirewall({"ac1d0300", "crl-ac1d0300", "", ""});
  EXPECT_THAT(nft, HasSubstr("table inet corral-ac1d0300 {"));
  EXPECT_THAT(nft, HasSubstr("iifname \"crl-ac1d0300\" ct state established,related accept\n"
                             "    iifname \"crl-ac1d0300\" drop\n"));
  EXPECT_THAT(nft, HasSubstr("type filter hook input"));
  // The cluster's own bridged traffic passes; nothing is routed.
  EXPECT_THAT(nft, HasSubstr("iifname \"crl-ac1d0300\" oifname \"crl-ac1d0300\" accept"));
  EXPECT_THAT(nft, HasSubstr("type filter hook forward"));
  EXPECT_THAT(nft, HasSubstr("    oifname \"crl-ac1d0300\" drop\n"));
  EXPECT_THAT(nft, Not(HasSubstr("masquerade")));
}

TEST(FirewallTest, TheScriptReplacesTheTableAtomically) {
  std::string nft = renderFirewall({"k", "crl-k", "", ""});
  // Made if missing, then deleted and made anew, in one `nft -f`.
  EXPECT_EQ(nft.rfind("table inet corral-k\ndelete table inet corral-k\ntable inet corral-k {", 0), 0u);
  EXPECT_EQ(renderFirewallRemoval("k"), "table inet corral-k\ndelete table inet corral-k\n");
}

TEST(FirewallTest, EgressIsTheLoginNodesAloneAndMasqueraded) {
  std::string nft = renderFirewall({"k", "crl-k", "eth9", "172.29.3.3"});
  EXPECT_THAT(nft, HasSubstr("iifname \"crl-k\" ip saddr 172.29.3.3 oifname \"eth9\" accept"));
  EXPECT_THAT(nft, HasSubstr("iifname \"eth9\" oifname \"crl-k\" ip daddr 172.29.3.3 ct state "
                             "established,related accept"));
  EXPECT_THAT(nft, HasSubstr("ip saddr 172.29.3.3 oifname \"eth9\" masquerade"));
  // Everyone else's forwarded traffic is still dropped after the login rules.
  EXPECT_LT(nft.find("ip saddr 172.29.3.3 oifname"), nft.find("    iifname \"crl-k\" drop\n  }\n  chain postrouting"));
}

}  // namespace
}  // namespace corral
