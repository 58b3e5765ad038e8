#include "models/core/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "common/error.h"
#include "tests/support/files.h"

namespace ispsim::stats {
namespace {

std::string json_of(const Registry& r) {
  std::ostringstream os;
  r.write_json(os);
  return os.str();
}

std::string csv_of(const Registry& r) {
  std::ostringstream os;
  r.write_csv(os);
  return os.str();
}

using ispsim::testing::file_exists;
using ispsim::testing::read_text;

// A small system: two groups under "top", one nested deeper, and a sibling
// whose name sorts between "top" and "top.x" in a plain string compare.
struct SmallSystem {
  explicit SmallSystem(Registry& r)
      : nand(r, "top.nand"), die(r, "top.nand.die0"), link(r, "top.link"), other(r, "top-2") {
    Counter& pages = nand.counter("pages_read", "count", "pages read from flash");
    Counter& bytes = nand.counter("bytes_read", "bytes", "bytes read from flash");
    Scalar& busy = nand.scalar("busy_ns", "ns", "time the channel was busy");
    nand.formula("bandwidth", "GB/s", "bytes_read / busy_ns", [&bytes, &busy] {
      return static_cast<double>(bytes.value()) / busy.value();
    });
    Scalar& energy = die.scalar("energy", "pJ", "sensing energy, \"array\" part");
    Counter& tlps = link.counter("tlps", "count", "transaction layer packets, both directions");
    other.counter("events", "count", "events");
    pages += 3;
    bytes += 3 * 16384;
    busy = 20480.0;
    energy = 0.1;
    ++tlps;
  }
  Group nand, die, link, other;
};

TEST(Stats, JsonExactText) {
  Registry r;
  SmallSystem sys(r);
  EXPECT_EQ(json_of(r),
            "{\n"
            "  \"top\": {\n"
            "    \"link\": {\n"
            "      \"tlps\": {\"value\": 1, \"unit\": \"count\", \"desc\": \"transaction layer packets, both directions\"}\n"
            "    },\n"
            "    \"nand\": {\n"
            "      \"bandwidth\": {\"value\": 2.4, \"unit\": \"GB/s\", \"desc\": \"bytes_read / busy_ns\"},\n"
            "      \"busy_ns\": {\"value\": 20480, \"unit\": \"ns\", \"desc\": \"time the channel was busy\"},\n"
            "      \"bytes_read\": {\"value\": 49152, \"unit\": \"bytes\", \"desc\": \"bytes read from flash\"},\n"
            "      \"die0\": {\n"
            "        \"energy\": {\"value\": 0.1, \"unit\": \"pJ\", \"desc\": \"sensing energy, \\\"array\\\" part\"}\n"
            "      },\n"
            "      \"pages_read\": {\"value\": 3, \"unit\": \"count\", \"desc\": \"pages read from flash\"}\n"
            "    }\n"
            "  },\n"
            "  \"top-2\": {\n"
            "    \"events\": {\"value\": 0, \"unit\": \"count\", \"desc\": \"events\"}\n"
            "  }\n"
            "}\n");
}

TEST(Stats, CsvExactTextWithQuoting) {
  Registry r;
  SmallSystem sys(r);
  EXPECT_EQ(csv_of(r),
            "name,value,unit,description\n"
            "top.link.tlps,1,count,\"transaction layer packets, both directions\"\n"
            "top.nand.bandwidth,2.4,GB/s,bytes_read / busy_ns\n"
            "top.nand.busy_ns,20480,ns,time the channel was busy\n"
            "top.nand.bytes_read,49152,bytes,bytes read from flash\n"
            "top.nand.die0.energy,0.1,pJ,\"sensing energy, \"\"array\"\" part\"\n"
            "top.nand.pages_read,3,count,pages read from flash\n"
            "top-2.events,0,count,events\n");
}

TEST(Stats, EmptyRegistry) {
  Registry r;
  EXPECT_EQ(json_of(r), "{}\n");
  EXPECT_EQ(csv_of(r), "name,value,unit,description\n");
}

TEST(Stats, DumpsAreDeterministicWhateverTheDeclarationOrder) {
  Registry a;
  SmallSystem sys_a(a);
  Registry b;
  Group late(b, "top.link");
  Group early(b, "top-2");
  late.counter("tlps", "count", "transaction layer packets, both directions") += 1;
  early.counter("events", "count", "events");
  Group die(b, "top.nand.die0");
  die.scalar("energy", "pJ", "sensing energy, \"array\" part") = 0.1;
  Group nand(b, "top.nand");
  Scalar& busy = nand.scalar("busy_ns", "ns", "time the channel was busy");
  Counter& bytes = nand.counter("bytes_read", "bytes", "bytes read from flash");
  nand.counter("pages_read", "count", "pages read from flash") += 3;
  nand.formula("bandwidth", "GB/s", "bytes_read / busy_ns",
               [&] { return static_cast<double>(bytes.value()) / busy.value(); });
  bytes += 49152;
  busy = 20480.0;
  EXPECT_EQ(json_of(a), json_of(b));
  EXPECT_EQ(csv_of(a), csv_of(b));
  EXPECT_EQ(json_of(a), json_of(a));

  const std::string dir = ::testing::TempDir();
  a.write_file(dir + "/core_stats_1.json");
  b.write_file(dir + "/core_stats_2.json");
  EXPECT_EQ(read_text(dir + "/core_stats_1.json"), read_text(dir + "/core_stats_2.json"));
  EXPECT_EQ(read_text(dir + "/core_stats_1.json"), json_of(a));
}

TEST(Stats, NumbersAreExactAndShortest) {
  Registry r;
  Group g(r, "n");
  g.counter("max", "count", "largest counter") += std::numeric_limits<uint64_t>::max();
  g.scalar("third", "ratio", "one third") = 1.0 / 3.0;
  g.scalar("tiny", "s", "tiny") = 1e-300;
  g.scalar("neg", "pJ", "negative") = -2.5;
  g.scalar("million", "ns", "whole number") = 1e6;
  g.scalar("big", "ns", "whole number beyond 1e15") = 1e20;
  g.scalar("small", "s", "below one") = 0.0001;
  g.formula_integer("exact", "bytes", "2^60 + 1", [] { return (uint64_t{1} << 60) + 1; });
  g.formula("nan", "ratio", "0/0", [] { return std::nan(""); });
  g.formula("inf", "GB/s", "1/0", [] { return std::numeric_limits<double>::infinity(); });
  Entry e;
  e.name = "n.rounded";
  e.unit = "count";
  e.desc = "integral without exact reader";
  e.integral = true;
  e.read = [] { return 1e20; };
  r.add(e);
  EXPECT_EQ(csv_of(r),
            "name,value,unit,description\n"
            "n.big,1e+20,ns,whole number beyond 1e15\n"
            "n.exact,1152921504606846977,bytes,2^60 + 1\n"
            "n.inf,inf,GB/s,1/0\n"
            "n.max,18446744073709551615,count,largest counter\n"
            "n.million,1000000,ns,whole number\n"
            "n.nan,nan,ratio,0/0\n"
            "n.neg,-2.5,pJ,negative\n"
            "n.rounded,100000000000000000000,count,integral without exact reader\n"
            "n.small,1e-04,s,below one\n"
            "n.third,0.3333333333333333,ratio,one third\n"
            "n.tiny,1e-300,s,tiny\n");
  const std::string json = json_of(r);
  EXPECT_NE(json.find("\"nan\": {\"value\": null,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"inf\": {\"value\": null,"), std::string::npos) << json;
  // Shortest round trip: the printed text reads back to the same double.
  EXPECT_EQ(std::stod("0.3333333333333333"), 1.0 / 3.0);
}

TEST(Stats, RejectsDuplicatesEmptyUnitsAndBadNames) {
  Registry r;
  Group g(r, "top.die");
  g.counter("pages", "count", "pages");
  EXPECT_THROW(g.counter("pages", "count", "pages again"), std::logic_error);
  EXPECT_THROW(g.scalar("energy", "", "no unit"), std::logic_error);
  EXPECT_THROW(g.scalar("energy", "pJ", ""), std::logic_error);
  EXPECT_THROW(g.counter("", "count", "empty leaf"), std::logic_error);
  EXPECT_THROW(g.counter("a..b", "count", "empty component"), std::logic_error);
  EXPECT_THROW(g.counter("has space", "count", "space"), std::logic_error);
  EXPECT_THROW(g.formula("f", "ns", "no function", nullptr), std::logic_error);
  EXPECT_THROW(g.formula_integer("f", "count", "no function", nullptr), std::logic_error);
  // A failed declaration leaves nothing behind, and the name stays free.
  EXPECT_EQ(r.size(), 1u);
  g.scalar("energy", "pJ", "energy");
  EXPECT_EQ(r.size(), 2u);
}

TEST(Stats, NameCannotBeBothStatisticAndGroup) {
  Registry r;
  Group die(r, "top.die");
  die.counter("pages", "count", "pages");
  Group below(r, "top.die.pages");
  EXPECT_THROW(below.counter("x", "count", "under a leaf"), std::logic_error);
  Group top(r, "top");
  EXPECT_THROW(top.counter("die", "count", "over a group"), std::logic_error);
  // Similar names that are not prefixes at the '.' boundary are fine.
  top.counter("di", "count", "prefix of a component");
  top.counter("die-1", "count", "sibling with a '-'");
  Group deeper(r, "top.die.pages2");
  deeper.counter("x", "count", "sibling group");
  EXPECT_EQ(r.size(), 4u);
}

TEST(Stats, GroupRemovesOnlyItsOwnStatistics) {
  Registry r;
  Group parent(r, "top.nand");
  parent.counter("pages", "count", "pages");
  {
    Group child(r, "top.nand.ch0");
    child.counter("busy", "count", "busy");
    EXPECT_EQ(r.size(), 2u);
  }
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r.sorted()[0]->name, "top.nand.pages");
  {
    Group child(r, "top.nand.ch0");
    child.counter("busy", "count", "busy");
  }
  r.remove_prefix("top.nand");
  EXPECT_EQ(r.size(), 0u);
}

TEST(Stats, RemovePrefixStopsAtComponentBoundary) {
  Registry r;
  Group a(r, "a");
  a.counter("x", "count", "x");
  Group ab(r, "ab");
  ab.counter("x", "count", "x");
  Group a_dash(r, "a-b");
  a_dash.counter("x", "count", "x");
  r.remove_prefix("a");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r.sorted()[0]->name, "a-b.x");  // '-' sorts before 'b'
  EXPECT_EQ(r.sorted()[1]->name, "ab.x");
}

TEST(Stats, EmptyGroupPathUsesBareNames) {
  Registry r;
  Group g(r, "");
  g.counter("total", "count", "total");
  EXPECT_EQ(r.sorted()[0]->name, "total");
}

TEST(Stats, GlobalRegistryIsProcessWide) {
  EXPECT_EQ(&Registry::global(), &Registry::global());
  const size_t before = Registry::global().size();
  {
    Group g("core_test_global");
    g.counter("n", "count", "n") += 5;
    ASSERT_EQ(Registry::global().size(), before + 1);
    std::ostringstream os;
    Registry::global().write_csv(os);
    EXPECT_NE(os.str().find("core_test_global.n,5,count,n\n"), std::string::npos);
  }
  EXPECT_EQ(Registry::global().size(), before);
}

TEST(Stats, WriteFileChoosesFormatByExtension) {
  Registry r;
  SmallSystem sys(r);
  const std::string dir = ::testing::TempDir();
  r.write_file(dir + "/core_stats.csv");
  EXPECT_EQ(read_text(dir + "/core_stats.csv"), csv_of(r));
  r.write_file(dir + "/core_stats.json");
  EXPECT_EQ(read_text(dir + "/core_stats.json"), json_of(r));

  try {
    r.write_file(dir + "/core_stats.txt");
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()), dir + "/core_stats.txt: statistics file name must end in .json or .csv");
  }
  EXPECT_FALSE(file_exists(dir + "/core_stats.txt"));
  EXPECT_THROW(r.write_file(dir + "/no/such/dir/stats.json"), BadInput);
  EXPECT_FALSE(file_exists(dir + "/no/such/dir/stats.json"));
}

}  // namespace
}  // namespace ispsim::stats
