// core::Timeline: exact Chrome trace-event JSON, track order, time strings,
// errors and the atomic file.
#include "models/core/timeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <sstream>
#include <stdexcept>

#include "common/error.h"
#include "tests/support/files.h"

namespace ispsim::core {
namespace {

std::string json_of(const Timeline& t) {
  std::ostringstream os;
  t.write(os);
  return os.str();
}

TEST(Timeline, ExactText) {
  Timeline t;
  t.span("gpu", "qkv_proj", "recomputation", 1'000'000, 3'500'000);   // 1 us .. 3.5 us
  t.span("ssd.ch0", "attention", "recomputation", 2'000'001, 2'000'001);  // an instant, 1 ps past 2 us
  t.span("gpu", "o_proj \"L1\"", "decode", 3'500'000, 12'345'678'901);  // name with quotes is escaped
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(json_of(t),
            "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
            "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"ispsim\"}},\n"
            "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"thread_name\",\"args\":{\"name\":\"gpu\"}},\n"
            "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":0}},\n"
            "{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"ssd.ch0\"}},\n"
            "{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":1}},\n"
            "{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"name\":\"qkv_proj\",\"cat\":\"recomputation\","
            "\"ts\":1.000000,\"dur\":2.500000},\n"
            "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":\"attention\",\"cat\":\"recomputation\","
            "\"ts\":2.000001,\"dur\":0.000000},\n"
            "{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"name\":\"o_proj \\\"L1\\\"\",\"cat\":\"decode\","
            "\"ts\":3.500000,\"dur\":12342.178901}\n"
            "]}\n");
}

TEST(Timeline, ParsesAsJsonWithTracksInOrderOfFirstUse) {
  Timeline t;
  t.span("z.last_name_first_use", "a", "p", 0, 10);
  t.span("a.second", "b", "p", 5, 20);
  t.span("z.last_name_first_use", "c", "p", 20, 30);
  t.span("m.third", "d", "p", 1, 2);
  const boost::json::value v = boost::json::parse(json_of(t));
  const auto& events = v.at("traceEvents").as_array();
  std::vector<std::string> track_names;
  std::vector<std::pair<int64_t, std::string>> spans;
  for (const auto& e : events) {
    if (e.at("ph").as_string() == "M" && e.at("name").as_string() == "thread_name") {
      EXPECT_EQ(e.at("tid").as_int64(), static_cast<int64_t>(track_names.size()));
      track_names.push_back(std::string(e.at("args").at("name").as_string()));
    }
    if (e.at("ph").as_string() == "X")
      spans.push_back({e.at("tid").as_int64(), std::string(e.at("name").as_string())});
  }
  EXPECT_EQ(track_names, (std::vector<std::string>{"z.last_name_first_use", "a.second", "m.third"}));
  EXPECT_EQ(spans, (std::vector<std::pair<int64_t, std::string>>{{0, "a"}, {1, "b"}, {0, "c"}, {2, "d"}}));
  // ts and dur are microseconds: 5 ps -> 0.000005, 15 ps -> 0.000015.
  EXPECT_DOUBLE_EQ(events[events.size() - 3].at("ts").to_number<double>(), 0.000005);
  EXPECT_DOUBLE_EQ(events[events.size() - 3].at("dur").to_number<double>(), 0.000015);
}

TEST(Timeline, EmptyTimelineIsValidJson) {
  Timeline t;
  const std::string text = json_of(t);
  EXPECT_EQ(text,
            "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
            "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"ispsim\"}}\n"
            "]}\n");
  EXPECT_NO_THROW(boost::json::parse(text));
}

TEST(Timeline, ReversedSpanIsAProgrammingError) {
  Timeline t;
  EXPECT_THROW(t.span("gpu", "x", "p", 10, 9), std::logic_error);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_NO_THROW(t.span("gpu", "x", "p", 10, 10));  // an instant is fine
}

TEST(Timeline, LargeTimesAreExact) {
  Timeline t;
  // 2^64 - 1 ps: no floating point on the way.
  t.span("gpu", "x", "p", 0, 18'446'744'073'709'551'615ull);
  EXPECT_NE(json_of(t).find("\"ts\":0.000000,\"dur\":18446744073709.551615}"), std::string::npos);
}

TEST(Timeline, WritesFilesAtomically) {
  Timeline t;
  t.span("gpu", "x", "p", 0, 1'000'000);
  const std::string path = ::testing::TempDir() + "timeline_" + std::to_string(::getpid()) + ".json";
  t.write_file(path);
  EXPECT_EQ(testing::read_text(path), json_of(t));
  // A directory that does not exist: BadInput, nothing written.
  const std::string bad = ::testing::TempDir() + "no_such_dir_" + std::to_string(::getpid()) + "/t.json";
  EXPECT_THROW(t.write_file(bad), BadInput);
  EXPECT_FALSE(testing::file_exists(bad));
}

}  // namespace
}  // namespace ispsim::core
