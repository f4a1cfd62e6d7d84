#include "kube/watch.h"

#include <gtest/gtest.h>

#include <vector>

namespace corral::kube {
namespace {

TEST(WatchEventTest, ParsesEveryType) {
  std::pair<std::string, WatchEventType> cases[] = {
      {"ADDED", WatchEventType::kAdded},       {"MODIFIED", WatchEventType::kModified},
      {"DELETED", WatchEventType::kDeleted},   {"BOOKMARK", WatchEventType::kBookmark},
      {"ERROR", WatchEventType::kError},
  };
  for (const auto& [name, type] : cases) {
    auto e = parseWatchEvent(R"({"type":")" + name + R"(","object":{"metadata":{"name":"a"}}})");
    ASSERT_TRUE(e.isOk()) << name << ": " << e.status().toString();
    EXPECT_EQ(e->type, type);
    EXPECT_EQ(e->object["metadata"]["name"], "a");
    EXPECT_STREQ(watchEventTypeName(type), name.c_str());
  }
}

TEST(WatchEventTest, RefusesWhatIsNotAnEvent) {
  EXPECT_EQ(parseWatchEvent("{not json").status().message(),
            "a watch event is not a JSON object: \"{not json\"");
  EXPECT_EQ(parseWatchEvent(R"({"object":{}})").status().message(),
            "a watch event has no type: \"{\\\"object\\\":{}}\"");
  EXPECT_EQ(parseWatchEvent(R"({"type":"ADDED"})").status().message(),
            "a watch event has no object: \"{\\\"type\\\":\\\"ADDED\\\"}\"");
  EXPECT_EQ(parseWatchEvent(R"({"type":"RENAMED","object":{}})").status().message(),
            "a watch event has an unknown type \"RENAMED\"");
}

TEST(WatchLineSplitterTest, FindsLinesWhereverTheChunksEnd) {
  std::string stream = "{\"a\":1}\n{\"b\":2}\r\n\n   \n{\"c\":3}\n{\"d\":4}";
  for (size_t piece = 1; piece <= stream.size(); ++piece) {
    std::vector<std::string> lines;
    WatchLineSplitter split([&](const std::string& line) {
      lines.push_back(line);
      return Status::ok();
    });
    for (size_t i = 0; i < stream.size(); i += piece) {
      ASSERT_TRUE(split.feed(stream.data() + i, std::min(piece, stream.size() - i)).isOk());
    }
    EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"})) << piece;
    ASSERT_TRUE(split.finish().isOk());
    EXPECT_EQ(lines.back(), "{\"d\":4}") << piece;
  }
}

TEST(WatchLineSplitterTest, AnErrorFromTheHandlerStopsIt) {
  int calls = 0;
  WatchLineSplitter split([&](const std::string&) {
    ++calls;
    return invalidArgument("bad line");
  });
  std::string two = "x\ny\n";
  EXPECT_EQ(split.feed(two.data(), two.size()).message(), "bad line");
  EXPECT_EQ(split.feed(two.data(), two.size()).message(), "bad line");
  EXPECT_EQ(split.finish().message(), "bad line");
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace corral::kube
