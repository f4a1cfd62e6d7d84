// Base64 as ssh-keygen and kubeconfig files write it.

#include "common/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace corral {
namespace {

TEST(Base64Test, DecodesTheRfcVectorsAndIgnoresWhitespace) {
  std::pair<std::string, std::string> vectors[] = {
      {"", ""},           {"Zg==", "f"},         {"Zm8=", "fo"},
      {"Zm9v", "foo"},    {"Zm9vYg==", "foob"},  {"Zm9vYmE=", "fooba"},
      {"Zm9vYmFy", "foobar"}, {"Zm9v\nYmFy\n", "foobar"},
  };
  for (const auto& [in, out] : vectors) {
    auto r = decodeBase64(in);
    ASSERT_TRUE(r.isOk()) << in << ": " << r.status().toString();
    EXPECT_EQ(*r, out) << in;
  }
  auto binary = decodeBase64("/+8A");
  ASSERT_TRUE(binary.isOk());
  EXPECT_EQ(*binary, std::string("\xff\xef\x00", 3));
}

TEST(Base64Test, RefusesWhatIsNotBase64) {
  EXPECT_EQ(decodeBase64("Zm9").status().message(),
            "its length (3 characters without whitespace) is not a multiple of 4");
  EXPECT_EQ(decodeBase64("Zg==Zm9v").status().message(), "character \"=\" at 2 is not base64");
  EXPECT_EQ(decodeBase64("Z===").status().message(), "character \"=\" at 1 is not base64");
  EXPECT_EQ(decodeBase64("Zm-v").status().message(), "character \"-\" at 2 is not base64");
}

}  // namespace
}  // namespace corral
