#include "model/validation.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace corral {
namespace {

// Real keys made once with `ssh-keygen -t <type> -N '' -C corral-test-...`.
// The two security-key (sk-*) keys cannot be made without a FIDO token; they
// were assembled from the ed25519 and nistp256 keys below in the layout of
// OpenSSH's PROTOCOL.u2f, with application "ssh:", and `ssh-keygen -l`
// accepts both.
const std::string kEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMxZgP62Li7d1LTEBDNuh75IrP8c8RRx0Noyqk6unAPc "
    "corral-test-ed25519";
const std::string kRsa =
    "ssh-rsa "
    "AAAAB3NzaC1yc2EAAAADAQABAAABAQDLxVBxzrDTiSU2IRn2aW8buUNphQTv+uCwah6gurIsCTtX0Ufl9c3wWX0RwO4SN8"
    "1vawtlR0P7oM/a9FuEoZYQdt8pgGjSReFf5SBLNY5qR9T/FMcrZyAIYyGJM7Ef9BQaXRCo7xwekBMF+qEdJnDauFFIPdsL"
    "orw7uYcGczetn1oT2Ybl8kPhYklq+sNTN97k3tStf0tXqM448XdnTaSfkEWV7t3gRfTBCzo8+"
    "dQGjsATqOiZW1BWNR7zZHB"
    "vQTpVjYZRNTRgh28nPQdszpo0SsukXRCxdp7k8tj2zsRqNhniC6lAPPBdqTTl1Equw9iP74XZGZ5beR3W10NZ47yD "
    "corral-test-rsab2048";
const std::string kEcdsa256 =
    "ecdsa-sha2-nistp256 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBD1PqfOsj6nOmiSAvsRhxLh7NBzoHLCS/"
    "Vnyp6FNXiA9"
    "pPqZGMo6VOQtGAMHVmvJbKLjjs+HI0tt9OsmAYbsuLs= corral-test-ecdsab256";
const std::string kEcdsa384 =
    "ecdsa-sha2-nistp384 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHAzODQAAAAIbmlzdHAzODQAAABhBP2+O6Jk7G+"
    "BcgDBEagE6hsRQCZsoutBY3Enpr55Zi79"
    "pXboYOsH5Vut841RgxCKKJIZYEDhUdOnbi8odFiDlszbvuteHVv28hydcffTUbzAXtt+tRyLgN/yEYiYWVB6Fw== "
    "corral-test-ecdsab384";
const std::string kEcdsa521 =
    "ecdsa-sha2-nistp521 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1MjEAAACFBABNVSdTwd5dAAV45/Vq9psl7u0i/"
    "Z4S0M3Zdi1f01iZ"
    "rcRcXJs1qWVVvAmkc1PVdNZJJ1J0Y2oyDAeypx48QQVsbQHpBD1mbtKO0RDDW+7OySy+WrEe2c841oEEDDpxIO4wem+"
    "TWyPp"
    "wGTQLU4KY7cYXxHhVZavwARtqfdB9s3TXQZ8xA== corral-test-ecdsab521";
const std::string kSkEd25519 =
    "sk-ssh-ed25519@openssh.com "
    "AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIMxZgP62Li7d1LTEBDNuh75IrP8c8RRx0Noyqk6unAPcAAAABH"
    "Nz"
    "aDo= corral-test-sk-ed25519";
const std::string kSkEcdsa =
    "sk-ecdsa-sha2-nistp256@openssh.com "
    "AAAAInNrLWVjZHNhLXNoYTItbmlzdHAyNTZAb3BlbnNzaC5jb20AAAAIbmlzdHAyNTYAAABBBD1PqfOsj6nOmiSAvsRhxL"
    "h7"
    "NBzoHLCS/Vnyp6FNXiA9pPqZGMo6VOQtGAMHVmvJbKLjjs+HI0tt9OsmAYbsuLsAAAAEc3NoOg== "
    "corral-test-sk-ecdsa";

// The base64 data of a key line (its second word).
std::string keyData(const std::string& key) {
  size_t start = key.find(' ') + 1;
  return key.substr(start, key.find(' ', start) - start);
}

std::string encodeBase64(const std::string& in) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (static_cast<unsigned char>(in[i]) << 16) |
                 (static_cast<unsigned char>(in[i + 1]) << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(v >> shift) & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = static_cast<unsigned char>(in[i]) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v =
        (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// An SSH wire-format `string`: a 32-bit big-endian length, then the bytes.
std::string sshString(const std::string& s) {
  std::string out;
  uint32_t n = static_cast<uint32_t>(s.size());
  for (int shift : {24, 16, 8, 0}) out += static_cast<char>((n >> shift) & 0xff);
  return out + s;
}

// Builds "<type> <base64 of the fields> test" for hand-made malformed keys.
std::string makeKey(const std::string& type, const std::vector<std::string>& fields) {
  std::string blob;
  for (const std::string& f : fields) blob += sshString(f);
  return type + " " + encodeBase64(blob) + " test";
}

std::string ecdsaPoint(size_t length) {
  std::string p(length, '\x11');
  p[0] = '\x04';
  return p;
}

// An RSA modulus of `bits` bits, as a positive mpint.
std::string rsaModulus(size_t bits) {
  std::string n(bits / 8, '\xff');
  return std::string(1, '\0') + n;
}

void expectInvalid(const Status& st, const std::string& mentions) {
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.toString();
  EXPECT_NE(st.message().find(mentions), std::string::npos)
      << "message \"" << st.message() << "\" does not mention \"" << mentions << "\"";
}

// ---- Cluster names ----

TEST(ValidateClusterName, AcceptsDnsLabels) {
  for (const std::string& name :
       {std::string("demo"), std::string("a"), std::string("demo-1"), std::string("a1-b2-c3"),
        std::string("x0"), std::string(40, 'a'), std::string("a") + std::string(38, '-') + "z"}) {
    EXPECT_TRUE(validateClusterName(name).isOk()) << name;
  }
}

TEST(ValidateClusterName, RejectsEverythingElse) {
  for (const std::string& name :
       {std::string(""), std::string("Demo"), std::string("demo_1"), std::string("1demo"),
        std::string("-demo"), std::string("demo-"), std::string("de mo"), std::string("demo.x"),
        std::string(41, 'a'), std::string("d\xc3\xa9mo"), std::string("demo\n"),
        std::string("de\0mo", 5)}) {
    Status st = validateClusterName(name);
    EXPECT_FALSE(st.isOk()) << name;
    expectInvalid(st, "invalid cluster name \"");
  }
}

TEST(ValidateClusterName, MessageSaysWhatIsAllowed) {
  Status st = validateClusterName("Demo_1");
  EXPECT_EQ(st.message(),
            "invalid cluster name \"Demo_1\": use 1-40 lowercase letters, digits and '-', "
            "starting with a letter and not ending with '-'");
}

TEST(ValidateClusterName, QuotesUnprintableAndLongNamesSafely) {
  expectInvalid(validateClusterName("a\nb"), "\"a\\x0ab\"");
  Status st = validateClusterName(std::string(10000, 'A'));
  EXPECT_LT(st.message().size(), 300u);
}

// ---- SSH keys ----

TEST(ValidateSshPublicKey, AcceptsEveryRealKeyType) {
  for (const std::string& key :
       {kEd25519, kRsa, kEcdsa256, kEcdsa384, kEcdsa521, kSkEd25519, kSkEcdsa}) {
    Status st = validateSshPublicKey(key);
    EXPECT_TRUE(st.isOk()) << key << ": " << st.toString();
  }
}

TEST(ValidateSshPublicKey, CommentIsOptionalAndFreeForm) {
  EXPECT_TRUE(validateSshPublicKey("ssh-ed25519 " + keyData(kEd25519)).isOk());
  EXPECT_TRUE(validateSshPublicKey("ssh-ed25519 " + keyData(kEd25519) + " alice@laptop  (work key)")
                  .isOk());
  EXPECT_TRUE(validateSshPublicKey("ssh-ed25519\t" + keyData(kEd25519) + "\tx").isOk());
  // Blanks around the key, as a copy from a terminal has, are harmless.
  EXPECT_TRUE(validateSshPublicKey("  " + kEd25519 + " ").isOk());
}

TEST(ValidateSshPublicKey, AcceptsHandMadeKeysOfTheRightShape) {
  // Guards the malformed keys below: the same builder with the right fields
  // makes keys that pass, so each of them fails for the one flaw it has.
  EXPECT_TRUE(
      validateSshPublicKey(makeKey("ssh-ed25519", {"ssh-ed25519", std::string(32, 'k')})).isOk());
  EXPECT_TRUE(validateSshPublicKey(
                  makeKey("ssh-rsa", {"ssh-rsa", std::string("\x01\x00\x01", 3), rsaModulus(2048)}))
                  .isOk());
}

struct BadKey {
  std::string name;
  std::string key;
  std::string mentions;
};

std::vector<BadKey> badKeys() {
  std::string ed = keyData(kEd25519);
  return {
      {"Empty", "", "SSH public key is empty"},
      {"Blank", "   ", "SSH public key is empty"},
      {"Newline", kEd25519 + "\n", "single line"},
      {"NewlineInside", "ssh-ed25519\n" + ed, "single line"},
      {"CarriageReturn", kEd25519 + "\r", "single line"},
      {"Nul", kEd25519 + std::string(1, '\0') + "x", "NUL"},
      {"ControlCharacter", kEd25519 + " \x1b[31mred", "control character \"\\x1b\""},
      {"TooLong", kEd25519 + " " + std::string(kMaxSshKeyLength, 'c'), "at most 16384 are allowed"},
      {"UnknownType", "ssh-dss " + ed, "unsupported SSH key type \"ssh-dss\"; use one of"},
      {"TypeIsCaseSensitive", "SSH-ED25519 " + ed, "unsupported SSH key type"},
      {"AuthorizedKeysOptions", "from=\"10.0.0.1\" " + kEd25519, "unsupported SSH key type"},
      {"PrivateKey", "-----BEGIN OPENSSH PRIVATE KEY-----", "private key"},
      {"NoData", "ssh-ed25519", "no key data after \"ssh-ed25519\""},
      {"NoDataButComment", "ssh-ed25519   ", "no key data"},
      {"NotBase64", "ssh-ed25519 AAAA$AAA", "not valid base64"},
      {"MissingPadding", "ssh-ed25519 " + ed.substr(0, ed.size() - 1), "not valid base64"},
      {"PaddingInside", "ssh-ed25519 AA==AAAA", "not valid base64"},
      {"Truncated", "ssh-ed25519 " + ed.substr(0, ed.size() - 8), "truncated or corrupt"},
      {"TypeMismatch", "ssh-rsa " + ed,
       "says \"ssh-rsa\" but its key data is of type \"ssh-ed25519\""},
      {"SkTypeMismatch", "sk-ssh-ed25519@openssh.com " + ed,
       "but its key data is of type \"ssh-ed25519\""},
      {"EcdsaCurveMismatch", "ecdsa-sha2-nistp384 " + keyData(kEcdsa256),
       "key data is of type \"ecdsa-sha2-nistp256\""},
      {"LengthPastEnd",
       "ssh-ed25519 " + encodeBase64(sshString("ssh-ed25519") + std::string("\0\0\0\x20", 4) +
                                     std::string(10, 'k')),
       "truncated or corrupt"},
      {"ExtraField", makeKey("ssh-ed25519", {"ssh-ed25519", std::string(32, 'k'), "x"}),
       "has 3 fields where 2 belong"},
      {"MissingField", makeKey("ssh-ed25519", {"ssh-ed25519"}), "has 1 fields where 2 belong"},
      {"ShortEd25519", makeKey("ssh-ed25519", {"ssh-ed25519", std::string(31, 'k')}),
       "31-byte public key"},
      {"WeakRsa", makeKey("ssh-rsa", {"ssh-rsa", std::string("\x01\x00\x01", 3), rsaModulus(512)}),
       "has 512 bits"},
      {"RsaNoExponent", makeKey("ssh-rsa", {"ssh-rsa", "", rsaModulus(2048)}),
       "empty public exponent"},
      {"EcdsaWrongCurveName",
       makeKey("ecdsa-sha2-nistp256", {"ecdsa-sha2-nistp256", "nistp384", ecdsaPoint(65)}),
       "names curve \"nistp384\""},
      {"EcdsaShortPoint",
       makeKey("ecdsa-sha2-nistp256", {"ecdsa-sha2-nistp256", "nistp256", ecdsaPoint(64)}),
       "malformed curve point"},
      {"EcdsaCompressedPoint",
       makeKey("ecdsa-sha2-nistp256",
               {"ecdsa-sha2-nistp256", "nistp256", std::string(1, '\x02') + std::string(64, 'p')}),
       "malformed curve point"},
      {"SkEcdsaNoApplication",
       makeKey("sk-ecdsa-sha2-nistp256@openssh.com",
               {"sk-ecdsa-sha2-nistp256@openssh.com", "nistp256", ecdsaPoint(65)}),
       "has 3 fields where 4 belong"},
  };
}

class BadKeyTest : public ::testing::TestWithParam<BadKey> {};

TEST_P(BadKeyTest, IsRejected) {
  const BadKey& c = GetParam();
  expectInvalid(validateSshPublicKey(c.key), c.mentions);
}

INSTANTIATE_TEST_SUITE_P(ValidateSshPublicKey, BadKeyTest, ::testing::ValuesIn(badKeys()),
                         [](const ::testing::TestParamInfo<BadKey>& info) {
                           return info.param.name;
                         });

// ---- Cluster specs ----

ClusterSpec validSpec() {
  ClusterSpec spec;
  spec.name = "demo";
  spec.gpuNodes = 4;
  spec.gpusPerNode = 8;
  spec.cpuNodes = 0;
  spec.sshKeys = {kEd25519};
  return spec;
}

TEST(ValidateClusterSpec, AcceptsValidSpecs) {
  EXPECT_TRUE(validateClusterSpec(validSpec()).isOk());

  ClusterSpec limits = validSpec();
  limits.gpuNodes = kMaxGpuNodes;
  limits.cpuNodes = kMaxCpuNodes;
  limits.gpusPerNode = kMaxGpusPerNode;
  limits.sshKeys = std::vector<std::string>(kMaxSshKeys, kRsa);
  EXPECT_TRUE(validateClusterSpec(limits).isOk()) << validateClusterSpec(limits).toString();

  ClusterSpec cpuOnly = validSpec();
  cpuOnly.gpuNodes = 0;
  cpuOnly.cpuNodes = 1;
  cpuOnly.sshKeys.clear();
  EXPECT_TRUE(validateClusterSpec(cpuOnly).isOk());
  // Without GPU nodes, --gpus-per-node is unused; 0 says so plainly.
  cpuOnly.gpusPerNode = 0;
  EXPECT_TRUE(validateClusterSpec(cpuOnly).isOk());

  for (int gpus = 1; gpus <= kMaxGpusPerNode; ++gpus) {
    ClusterSpec spec = validSpec();
    spec.gpusPerNode = gpus;
    EXPECT_TRUE(validateClusterSpec(spec).isOk()) << gpus;
  }
}

struct BadSpec {
  std::string name;
  ClusterSpec spec;
  std::string message;  // The whole message, or a part of it ending in "...".
};

ClusterSpec with(void (*edit)(ClusterSpec&)) {
  ClusterSpec spec = validSpec();
  edit(spec);
  return spec;
}

std::vector<BadSpec> badSpecs() {
  return {
      {"BadName", with([](ClusterSpec& s) { s.name = "Demo_1"; }),
       "invalid cluster name \"Demo_1\": use 1-40 lowercase letters, digits and '-', starting "
       "with a letter and not ending with '-'"},
      {"NegativeGpuNodes", with([](ClusterSpec& s) { s.gpuNodes = -1; }),
       "--gpu-nodes must be between 0 and 200, got -1"},
      {"TooManyGpuNodes", with([](ClusterSpec& s) { s.gpuNodes = 201; }),
       "--gpu-nodes must be between 0 and 200, got 201"},
      {"NegativeCpuNodes", with([](ClusterSpec& s) { s.cpuNodes = -1; }),
       "--cpu-nodes must be between 0 and 8, got -1"},
      {"TooManyCpuNodes", with([](ClusterSpec& s) { s.cpuNodes = 9; }),
       "--cpu-nodes must be between 0 and 8, got 9"},
      {"NoNodes", with([](ClusterSpec& s) { s.gpuNodes = 0; }),
       "a cluster needs at least one node: set --gpu-nodes or --cpu-nodes"},
      {"ZeroGpusPerNode", with([](ClusterSpec& s) { s.gpusPerNode = 0; }),
       "--gpus-per-node must be between 1 and 16, got 0"},
      {"TooManyGpusPerNode", with([](ClusterSpec& s) { s.gpusPerNode = 17; }),
       "--gpus-per-node must be between 1 and 16, got 17"},
      {"TooManyGpusPerNodeWithoutGpuNodes", with([](ClusterSpec& s) {
         s.gpuNodes = 0;
         s.cpuNodes = 1;
         s.gpusPerNode = 17;
       }),
       "--gpus-per-node must be between 1 and 16, got 17"},
      {"TooManyKeys", with([](ClusterSpec& s) {
         s.sshKeys = std::vector<std::string>(kMaxSshKeys + 1, kEd25519);
       }),
       "too many --ssh-key values: 65 given, at most 64 are allowed"},
      {"BadSecondKey", with([](ClusterSpec& s) {
         s.sshKeys = {kEd25519, "ssh-dss AAAA", kRsa};
       }),
       "invalid --ssh-key #2 of 3: unsupported SSH key type \"ssh-dss\"..."},
      {"KeyWithNewline", with([](ClusterSpec& s) { s.sshKeys = {kEd25519 + "\n"}; }),
       "invalid --ssh-key #1 of 1: SSH public key must be a single line..."},
      // The first error wins: the name is checked before the node counts.
      {"FirstErrorWins", with([](ClusterSpec& s) {
         s.name = "";
         s.gpuNodes = -5;
       }),
       "invalid cluster name \"\"..."},
      {"NodeCountsBeforeKeys", with([](ClusterSpec& s) {
         s.cpuNodes = 100;
         s.sshKeys = {"junk"};
       }),
       "--cpu-nodes must be between 0 and 8, got 100"},
  };
}

class BadSpecTest : public ::testing::TestWithParam<BadSpec> {};

TEST_P(BadSpecTest, ReturnsTheFirstErrorInTheUsersTerms) {
  const BadSpec& c = GetParam();
  Status st = validateClusterSpec(c.spec);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  const std::string ellipsis = "...";
  if (c.message.size() > ellipsis.size() &&
      c.message.compare(c.message.size() - ellipsis.size(), ellipsis.size(), ellipsis) == 0) {
    std::string prefix = c.message.substr(0, c.message.size() - ellipsis.size());
    EXPECT_EQ(st.message().substr(0, prefix.size()), prefix) << st.message();
  } else {
    EXPECT_EQ(st.message(), c.message);
  }
}

INSTANTIATE_TEST_SUITE_P(ValidateClusterSpec, BadSpecTest, ::testing::ValuesIn(badSpecs()),
                         [](const ::testing::TestParamInfo<BadSpec>& info) {
                           return info.param.name;
                         });

TEST(ValidateContainerSettings, CacheUnderSharedAndRegistriesAsHostPort) {
  ClusterSpec s = validSpec();
  s.containers = {true, "/shared/enroot-cache", {"10.1.2.3:5000", "registry.local"}};
  EXPECT_TRUE(validateClusterSpec(s).isOk());
  s.containers.cachePath = "/var/cache/enroot";
  Status st = validateClusterSpec(s);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("must be under /shared/"), std::string::npos) << st.message();
  s.containers.cachePath = "/shared";
  EXPECT_FALSE(validateClusterSpec(s).isOk());
  s.containers.cachePath = "/shared/../etc";
  EXPECT_FALSE(validateClusterSpec(s).isOk());
  s.containers.cachePath = "";
  s.containers.insecureRegistries = {"http://x:5000"};
  st = validateClusterSpec(s);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("host[:port]"), std::string::npos) << st.message();
  s.containers.insecureRegistries.assign(17, "x:1");
  EXPECT_FALSE(validateClusterSpec(s).isOk());
}

}  // namespace
}  // namespace corral
