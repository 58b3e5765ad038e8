// core::Timeline: exact Chrome trace-event JSON, track order, time strings,
// errors and the atomic file.
#include "models/core/timeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <sstream>
#include <stdexcept>
#include <tuple>

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

TEST(Timeline, ProcessIsThePlatformWithAPidOfItsName) {
  Timeline t;
  t.set_process("MemLLM");
  t.span("gpu", "x", "p", 0, 1'000'000);
  // 32-bit FNV-1a of "MemLLM" is 1048370905 (below 2^31 - 2), plus one.
  EXPECT_EQ(Timeline::pid_of("MemLLM"), 1048370906u);
  EXPECT_NE(Timeline::pid_of("MemLLM"), Timeline::pid_of("GPU-PreCompute"));
  const boost::json::value v = boost::json::parse(json_of(t));
  for (const auto& e : v.at("traceEvents").as_array()) EXPECT_EQ(e.at("pid").as_int64(), 1048370906);
  EXPECT_EQ(v.at("traceEvents").at(0).at("args").at("name").as_string(), "MemLLM");
}

TEST(Timeline, SpansCarryTheArgumentsTheyKnow) {
  Timeline t;
  t.span("gpu", "a", "p", 0, 1, {7, 3, 4096});
  t.span("gpu", "b", "p", 1, 2, {-1, 0, -1});  // layer 0 is a layer
  t.span("gpu", "c", "p", 2, 3);
  const std::string text = json_of(t);
  EXPECT_NE(text.find("\"name\":\"a\",\"cat\":\"p\",\"ts\":0.000000,\"dur\":0.000001,"
                      "\"args\":{\"op\":7,\"layer\":3,\"bytes\":4096}}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"dur\":0.000001,\"args\":{\"layer\":0}}"), std::string::npos) << text;
  EXPECT_NE(text.find("\"name\":\"c\",\"cat\":\"p\",\"ts\":0.000002,\"dur\":0.000001}"), std::string::npos) << text;
}

TEST(Timeline, CountersAreSampledWithTheirUnitInTheName) {
  Timeline t;
  t.counter("power (W)", 2'500'000, 7.25);
  t.counter("power (W)", 3'000'000, 0);
  const std::string text = json_of(t);
  EXPECT_NE(text.find("{\"ph\":\"C\",\"pid\":1,\"name\":\"power (W)\",\"ts\":2.500000,\"args\":{\"value\":7.250000}},\n"
                      "{\"ph\":\"C\",\"pid\":1,\"name\":\"power (W)\",\"ts\":3.000000,\"args\":{\"value\":0.000000}}"),
            std::string::npos)
      << text;
}

// Two reads on one track: 1000 B over [0, 1000) ps is 1 B/ps = 1000 GB/s, 2000 B
// over [500, 1500) ps is 2000 GB/s; both are open over [500, 1000).
TEST(Timeline, DerivedCountersAreSpansInFlightAndTheirBandwidth) {
  Timeline t;
  t.derive_counters("reads");
  t.derive_counters("never used");  // no spans, no counters
  t.span("reads", "a", "p", 0, 1000, {-1, -1, 1000});
  t.span("reads", "b", "p", 500, 1500, {-1, -1, 2000});
  t.span("reads", "instant", "p", 700, 700, {-1, -1, 5});  // moves nothing over time
  const boost::json::value v = boost::json::parse(json_of(t));
  std::vector<std::tuple<std::string, double, double>> samples;  // name, ts (us), value
  for (const auto& e : v.at("traceEvents").as_array())
    if (e.at("ph").as_string() == "C")
      samples.emplace_back(std::string(e.at("name").as_string()), e.at("ts").to_number<double>(),
                           e.at("args").at("value").to_number<double>());
  using S = std::tuple<std::string, double, double>;
  EXPECT_EQ(samples, (std::vector<S>{{"reads in flight", 0, 1},         {"reads (GB/s)", 0, 1000},
                                     {"reads in flight", 0.0005, 2},    {"reads (GB/s)", 0.0005, 3000},
                                     {"reads in flight", 0.001, 1},     {"reads (GB/s)", 0.001, 2000},
                                     {"reads in flight", 0.0015, 0},    {"reads (GB/s)", 0.0015, 0}}));
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
