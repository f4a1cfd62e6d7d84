#include "slurm/hostlist.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace corral {
namespace {

using Hosts = std::vector<std::string>;

struct ExpandCase {
  std::string expr;
  Hosts want;
};

class ExpandTest : public ::testing::TestWithParam<ExpandCase> {};

TEST_P(ExpandTest, ExpandsLikeSlurm) {
  const ExpandCase& c = GetParam();
  StatusOr<Hosts> got = expandHostlist(c.expr);
  ASSERT_TRUE(got.isOk()) << c.expr << ": " << got.status().toString();
  EXPECT_EQ(*got, c.want) << c.expr;
}

INSTANTIATE_TEST_SUITE_P(
    Hostlist, ExpandTest,
    ::testing::Values(
        ExpandCase{"slinky-0", {"slinky-0"}}, ExpandCase{"login", {"login"}},
        ExpandCase{"slinky-[0-3]", {"slinky-0", "slinky-1", "slinky-2", "slinky-3"}},
        ExpandCase{"slinky-[0-1,5,8-10]",
                   {"slinky-0", "slinky-1", "slinky-5", "slinky-8", "slinky-9", "slinky-10"}},
        ExpandCase{"a,b", {"a", "b"}},
        ExpandCase{"slinky-[00-02]", {"slinky-00", "slinky-01", "slinky-02"}},
        // The width of `lo` pads the whole range, as Slurm's "%0*lu".
        ExpandCase{"n[8-10]", {"n8", "n9", "n10"}}, ExpandCase{"n[08-10]", {"n08", "n09", "n10"}},
        ExpandCase{"n[1-010]", {"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10"}},
        ExpandCase{"n[007]", {"n007"}}, ExpandCase{"n[5]", {"n5"}},
        ExpandCase{"r[1-2]n[1-2]", {"r1n1", "r1n2", "r2n1", "r2n2"}},
        ExpandCase{"rack[1-2]_node[1,3]",
                   {"rack1_node1", "rack1_node3", "rack2_node1", "rack2_node3"}},
        // Slurm's order for three groups: the middle group is the outer loop,
        // then the first, and the last group varies fastest.
        ExpandCase{
            "a[1-2]b[3-4]c[5-6]",
            {"a1b3c5", "a1b3c6", "a2b3c5", "a2b3c6", "a1b4c5", "a1b4c6", "a2b4c5", "a2b4c6"}},
        ExpandCase{"slinky-[0-1],cpu-workers-3", {"slinky-0", "slinky-1", "cpu-workers-3"}},
        ExpandCase{"cpu-workers-[0-1],slinky-[2,0]",
                   {"cpu-workers-0", "cpu-workers-1", "slinky-2", "slinky-0"}},
        // Written order and duplicates are kept, as `scontrol show hostnames`.
        ExpandCase{"b,a,a", {"b", "a", "a"}}, ExpandCase{"n[1-3,2]", {"n1", "n2", "n3", "n2"}},
        // Slurm also separates names with blanks.
        ExpandCase{"a b\tc", {"a", "b", "c"}}, ExpandCase{" a , b ", {"a", "b"}},
        ExpandCase{"[1-2]", {"1", "2"}}, ExpandCase{"Node_A.b-c", {"Node_A.b-c"}},
        ExpandCase{"x[18446744073709551614-18446744073709551615]",
                   {"x18446744073709551614", "x18446744073709551615"}}));

struct ErrorCase {
  std::string expr;
  std::string mentions;  // Part of the message that points at the problem.
};

class ExpandErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ExpandErrorTest, RejectsWithAClearMessage) {
  const ErrorCase& c = GetParam();
  StatusOr<Hosts> got = expandHostlist(c.expr);
  ASSERT_FALSE(got.isOk()) << c.expr << " expanded to " << got->size() << " hosts";
  EXPECT_EQ(got.status().code(), Code::kInvalidArgument);
  EXPECT_NE(got.status().message().find(c.mentions), std::string::npos)
      << c.expr << ": " << got.status().message();
  EXPECT_EQ(got.status().message().rfind("invalid hostlist ", 0), 0u) << got.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Hostlist, ExpandErrorTest,
    ::testing::Values(
        // Unbalanced or nested brackets.
        ErrorCase{"n[1-2", "'[' at character 2 is never closed"},
        ErrorCase{"n1-2]", "']' at character 5 has no matching '['"},
        ErrorCase{"n[1-2]]", "']' at character 7"}, ErrorCase{"n[[1-2]]", "brackets do not nest"},
        ErrorCase{"a,n[1,2", "never closed"},
        // Empty ranges and groups.
        ErrorCase{"n[]", "empty bracket group"}, ErrorCase{"n[1,,2]", "empty range in \"[1,,2]\""},
        ErrorCase{"n[1,]", "empty range"}, ErrorCase{"n[,1]", "empty range"},
        ErrorCase{"n[1-]", "range \"1-\""}, ErrorCase{"n[-3]", "range \"-3\""},
        // Reversed and non-numeric ranges.
        ErrorCase{"n[3-1]", "range \"3-1\" in \"n[3-1]\" runs backwards; write it as \"1-3\""},
        ErrorCase{"n[a-c]", "range \"a-c\" in \"n[a-c]\" is not a number"},
        ErrorCase{"n[1--3]", "range \"1--3\""}, ErrorCase{"n[1-2-3]", "range \"1-2-3\""},
        ErrorCase{"n[+1]", "range \"+1\""}, ErrorCase{"n[1 -2]", "blank inside the bracket group"},
        ErrorCase{"n[99999999999999999999]", "too large"},
        // Empty names.
        ErrorCase{"", "names no hosts"}, ErrorCase{"  ", "names no hosts"},
        ErrorCase{",", "empty host name at character 1"},
        ErrorCase{"a,,b", "empty host name at character 3"},
        ErrorCase{",a", "empty host name at character 1"},
        ErrorCase{"a,", "empty host name after the last ','"},
        ErrorCase{"a , ,b", "empty host name"},
        // Characters outside [A-Za-z0-9._-].
        ErrorCase{"n@1", "invalid character '@' in host name \"n@1\""},
        ErrorCase{"a,b/c", "invalid character '/' in host name \"b/c\""},
        ErrorCase{"n[1-2]x;", "invalid character ';'"},
        ErrorCase{std::string("a\nb"), "invalid character \\x0a"},
        ErrorCase{"caf\xc3\xa9", "invalid character \\xc3"},
        // Slurm allows no text after the last bracket group.
        ErrorCase{"node[1-2]-ib", "text \"-ib\" after the last ']' in \"node[1-2]-ib\""},
        // Too many hosts, or names too long.
        ErrorCase{"n[0-65536]", "more than 65536 hosts"},
        ErrorCase{"n[0-999999999]", "more than 65536 hosts"},
        ErrorCase{"n[0-18446744073709551615]", "more than 65536 hosts"},
        ErrorCase{"a[0-999]b[0-999]", "more than 65536 hosts"},
        ErrorCase{"n[0-40000],m[0-40000]", "more than 65536 hosts"},
        ErrorCase{std::string(256, 'a'), "longer than 255 characters"},
        ErrorCase{std::string(250, 'a') + "[0-100000]", "more than 65536"},
        ErrorCase{std::string(253, 'a') + "[1-100]", "longer than 255 characters"}));

TEST(ExpandHostlist, ExactlyMaxHostsIsAllowed) {
  StatusOr<Hosts> got = expandHostlist("n[0-65535]");
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  EXPECT_EQ(got->size(), 65536u);
  EXPECT_EQ(got->front(), "n0");
  EXPECT_EQ(got->back(), "n65535");
}

TEST(ExpandHostlist, MaxHostsCountsTheWholeExpression) {
  EXPECT_TRUE(expandHostlist("a,b,c", 3).isOk());
  EXPECT_FALSE(expandHostlist("a,b,c,d", 3).isOk());
  EXPECT_TRUE(expandHostlist("r[1-2]n[1-2]", 4).isOk());
  EXPECT_FALSE(expandHostlist("r[1-2]n[1-2]", 3).isOk());
  EXPECT_FALSE(expandHostlist("a", 0).isOk());
}

// The host count is computed before expanding, so these fail without
// allocating anything for their hosts. If the check ran after expanding, the
// first would need about 10^9 strings and the last 10^60 and the test would
// run out of memory rather than pass.
TEST(ExpandHostlist, HugeExpressionsFailBeforeExpanding) {
  for (const char* expr :
       {"n[0-999999999]", "n[0-18446744073709551615]", "a[0-999999999]b[0-999999999]c[0-999999999]",
        // Each group fits; only their product (about 4.7e28, past
        // 2^64) does not.
        "a[0-60000]b[0-60000]c[0-60000]d[0-60000]e[0-60000]f[0-60000]"}) {
    StatusOr<Hosts> got = expandHostlist(expr);
    ASSERT_FALSE(got.isOk()) << expr;
    EXPECT_EQ(got.status().code(), Code::kInvalidArgument);
    EXPECT_NE(got.status().message().find("more than 65536 hosts"), std::string::npos)
        << got.status().message();
  }
}

TEST(ExpandHostlist, LongExpressionsAreQuotedShortened) {
  std::string expr = std::string(300, 'a') + "@";
  StatusOr<Hosts> got = expandHostlist(expr);
  ASSERT_FALSE(got.isOk());
  EXPECT_LT(got.status().message().size(), 300u) << got.status().message();
  EXPECT_NE(got.status().message().find("...\""), std::string::npos);
}

struct CompressCase {
  Hosts hosts;
  std::string want;
};

class CompressTest : public ::testing::TestWithParam<CompressCase> {};

TEST_P(CompressTest, PrintsLikeSinfo) {
  const CompressCase& c = GetParam();
  EXPECT_EQ(compressHostlist(c.hosts), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Hostlist, CompressTest,
    ::testing::Values(
        CompressCase{{}, ""}, CompressCase{{"slinky-0"}, "slinky-0"},
        CompressCase{{"login"}, "login"},
        CompressCase{{"slinky-0", "slinky-1", "slinky-2", "slinky-3"}, "slinky-[0-3]"},
        CompressCase{{"slinky-3", "slinky-0", "slinky-1"}, "slinky-[0-1,3]"},
        CompressCase{
            {"slinky-0", "slinky-1", "slinky-2", "slinky-3", "cpu-workers-0", "cpu-workers-1"},
            "cpu-workers-[0-1],slinky-[0-3]"},
        CompressCase{{"slinky-1", "slinky-1", "slinky-0"}, "slinky-[0-1]"},
        CompressCase{{"slinky-9", "slinky-10", "slinky-11"}, "slinky-[9-11]"},
        CompressCase{{"n00", "n01", "n02"}, "n[00-02]"},
        // Padding is part of the name: n1 and n01 are different hosts.
        CompressCase{{"n01", "n1"}, "n[1,01]"},
        CompressCase{{"n01", "n02", "n1", "n2"}, "n[1-2,01-02]"},
        // 10 prints the same with width 2, so it joins the padded range.
        CompressCase{{"n08", "n09", "n10", "n11"}, "n[08-11]"},
        CompressCase{{"n098", "n099", "n100", "n1000"}, "n[098-100,1000]"},
        CompressCase{{"n9", "n10", "n010"}, "n[9-10,010]"},
        // Prefixes compare naturally, as Slurm's strnatcmp.
        CompressCase{{"r10n1", "r2n1", "r2n2"}, "r2n[1-2],r10n1"},
        // A name without a number comes before numbered names of its prefix.
        CompressCase{{"n1", "n", "n2"}, "n,n[1-2]"}, CompressCase{{"b", "a", "c1"}, "a,b,c1"},
        CompressCase{{"1", "2", "3"}, "[1-3]"},
        CompressCase{{"x18446744073709551615", "x18446744073709551614"},
                     "x[18446744073709551614-18446744073709551615]"},
        // Trailing digits beyond 64 bits are not a number; the name stands alone.
        CompressCase{{"n99999999999999999999"}, "n99999999999999999999"}));

// Compression is the inverse of expansion, up to order and duplicates.
TEST(CompressHostlist, RoundTripsThroughExpand) {
  std::mt19937 rng(12345);  // Fixed seed: the test is deterministic.
  const std::vector<std::string> prefixes = {"slinky-", "cpu-workers-", "n", "r1n", "r10n", ""};
  for (int iteration = 0; iteration < 500; ++iteration) {
    Hosts hosts;
    int count = std::uniform_int_distribution<int>(1, 40)(rng);
    for (int k = 0; k < count; ++k) {
      const std::string& prefix = prefixes[rng() % prefixes.size()];
      int num = std::uniform_int_distribution<int>(0, 120)(rng);
      std::string digits = std::to_string(num);
      int pad = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? 1 : 0;
      if (rng() % 5 == 0 && !prefix.empty()) {
        hosts.push_back(prefix + "x");  // A name without a number.
        continue;
      }
      hosts.push_back(prefix + std::string(pad, '0') + digits);
    }
    std::string compressed = compressHostlist(hosts);
    StatusOr<Hosts> expanded = expandHostlist(compressed);
    ASSERT_TRUE(expanded.isOk()) << compressed << ": " << expanded.status().toString();

    Hosts want = hosts;
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    Hosts got = *expanded;
    // The expansion holds no duplicates.
    Hosts gotUnique = got;
    std::sort(gotUnique.begin(), gotUnique.end());
    gotUnique.erase(std::unique(gotUnique.begin(), gotUnique.end()), gotUnique.end());
    EXPECT_EQ(got.size(), gotUnique.size()) << compressed;
    EXPECT_EQ(gotUnique, want) << compressed;
    // Compressing again is stable.
    EXPECT_EQ(compressHostlist(got), compressed);
  }
}

TEST(CompressHostlist, ExpandedRangesCompressBack) {
  for (const char* expr : {"slinky-[0-3]", "slinky-[0-1,3]", "cpu-workers-[0-1],slinky-[0-3]",
                           "n[00-02]", "n[08-11]", "n[1-2,01-02]", "slinky-[0-199]"}) {
    StatusOr<Hosts> hosts = expandHostlist(expr);
    ASSERT_TRUE(hosts.isOk()) << expr;
    EXPECT_EQ(compressHostlist(*hosts), expr);
  }
}

}  // namespace
}  // namespace corral
