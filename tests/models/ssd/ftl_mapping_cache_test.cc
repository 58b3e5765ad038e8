// The mapping in controller DRAM: the cached mapping (DFTL) in closed form and
// against the LRU hit rate of the independent reference model; the choice
// between the whole table and the cache (AUTO, FULL, CACHED).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "common/error.h"
#include "models/ssd/ftl/ftl.h"
#include "tests/models/ssd/ftl_test_support.h"

namespace ispsim::ftl {
namespace {

using testing::SmallDrive;

// 2 channels x 2 dies, 64 lines of 16 pages: 3072 logical pages. 512-byte
// pages of 16-byte entries: 32 entries per translation page, 96 translation pages.
constexpr uint64_t kPerPage = 32, kTranslationPages = 96, kLogicalPages = 3072;

SmallDrive drive(schema::FtlParams::Mapping mapping, uint64_t cached_pages) {
  SmallDrive d;
  d.page_bytes = 512;
  d.mapping_entry_bytes = 16;
  d.mapping_dram_bytes = cached_pages * 512;
  d.mapping = mapping;
  return d;
}

Ftl cached_ftl(uint64_t cached_pages) { return Ftl(testing::config(drive(schema::FtlParams::CACHED, cached_pages))); }

std::vector<FlashOp> mapping_ops(const std::vector<FlashOp>& ops) {
  std::vector<FlashOp> out;
  for (const FlashOp& op : ops)
    if (op.cause == OpCause::kMapping) out.push_back(op);
  return out;
}

TEST(FtlMappingCache, TranslationPagesHoldPageBytesOverEntryBytesEntries) {
  const FtlConfig c = testing::config(drive(schema::FtlParams::CACHED, 8));
  EXPECT_EQ(c.logical_pages(), kLogicalPages);
  EXPECT_EQ(c.entries_per_translation_page(), kPerPage);
  EXPECT_EQ(c.translation_pages(), kTranslationPages);
  EXPECT_EQ(c.cached_translation_pages(), 8u);
  EXPECT_EQ(c.mapping_table_bytes(), kLogicalPages * 16);
  // Translation page t is on unit t mod units (channel fastest, then die).
  const nand::PageAddress a = translation_page_address(c.geometry, 6);
  EXPECT_EQ(a.channel, 0u);
  EXPECT_EQ(a.die, 1u);
  EXPECT_EQ(a.page, 1u);
}

// A scan of N logical pages from a cold cache reads each translation page it
// touches once: ceil(N / 32) misses, the rest hits, however small the cache.
TEST(FtlMappingCache, ASequentialScanFromAColdCacheMissesOncePerTranslationPage) {
  for (uint64_t n : {uint64_t{1}, uint64_t{31}, uint64_t{32}, uint64_t{33}, uint64_t{100}, kLogicalPages}) {
    SCOPED_TRACE(n);
    Ftl ftl = cached_ftl(8);
    std::vector<FlashOp> ops;
    ftl.look_up(0, n, &ops);
    const uint64_t misses = (n + kPerPage - 1) / kPerPage;
    EXPECT_EQ(ftl.residency().traffic().misses, misses);
    EXPECT_EQ(ftl.residency().traffic().hits, n - misses);
    ASSERT_EQ(ops.size(), misses);
    for (uint64_t t = 0; t < misses; ++t) {
      EXPECT_EQ(ops[t].kind, OpKind::kRead);
      EXPECT_EQ(ops[t].cause, OpCause::kMapping);
      EXPECT_EQ(ops[t].first, t);
    }
    EXPECT_EQ(ftl.residency().traffic().translation_programs, 0u);  // lookups dirty nothing
  }
}

// The independent reference model: lookups independent and uniform over T
// translation pages. LRU's steady state then holds every set of C pages with
// the same probability, so a lookup hits with probability C / T (King,
// "Analysis of demand paging algorithms", IFIP Congress 1971, whose LRU
// stationary distribution gives C / T for equal reference probabilities).
// 200,000 lookups: the standard error is about 0.001; the tolerance 0.005.
TEST(FtlMappingCache, UniformRandomLookupsHitAtTheLruRateCOverT) {
  for (uint64_t cached : {uint64_t{24}, uint64_t{48}}) {
    SCOPED_TRACE(cached);
    Ftl ftl = cached_ftl(cached);
    std::mt19937_64 rng(7);
    for (int i = 0; i < 10000; ++i) ftl.look_up(rng() % kLogicalPages, 1, nullptr);  // to the steady state
    const MappingTraffic before = ftl.residency().traffic();
    const int lookups = 200000;
    for (int i = 0; i < lookups; ++i) ftl.look_up(rng() % kLogicalPages, 1, nullptr);
    const double hit_rate = double(ftl.residency().traffic().hits - before.hits) / lookups;
    EXPECT_NEAR(hit_rate, double(cached) / double(kTranslationPages), 0.005);
  }
}

// Cache of two translation pages: after 0, 1, 0, the next miss evicts 1, the
// least recently used (first in, first out would evict 0).
TEST(FtlMappingCache, TheLeastRecentlyUsedTranslationPageIsEvicted) {
  Ftl ftl = cached_ftl(2);
  for (uint64_t t : {0, 1, 0, 2}) ftl.look_up(t * kPerPage, 1, nullptr);
  const CachedMapping& cache = dynamic_cast<const CachedMapping&>(ftl.residency());
  EXPECT_EQ(cache.cached(), 2u);
  EXPECT_TRUE(cache.contains(0));
  EXPECT_FALSE(cache.contains(1));
  EXPECT_TRUE(cache.contains(2));
  EXPECT_EQ(ftl.residency().traffic().hits, 1u);
  EXPECT_EQ(ftl.residency().traffic().misses, 3u);
}

// Cache of one translation page: a write dirties translation page 0; a lookup
// of page 32 (translation page 1) evicts it, programming it once; evicting the
// clean translation page 1 programs nothing.
TEST(FtlMappingCache, EvictingADirtyTranslationPageProgramsExactlyOnePage) {
  Ftl ftl = cached_ftl(1);
  std::vector<FlashOp> ops;
  ftl.write(0, 1, &ops);
  ASSERT_EQ(mapping_ops(ops).size(), 1u);
  EXPECT_EQ(mapping_ops(ops)[0].kind, OpKind::kRead);
  ops.clear();
  ftl.look_up(kPerPage, 1, &ops);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].kind, OpKind::kProgram);
  EXPECT_EQ(ops[0].first, 0u);
  EXPECT_EQ(ops[1].kind, OpKind::kRead);
  EXPECT_EQ(ops[1].first, 1u);
  ops.clear();
  ftl.look_up(2 * kPerPage, 1, &ops);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].kind, OpKind::kRead);
  EXPECT_EQ(ftl.residency().traffic().translation_programs, 1u);
}

// Every page an FTL programs (host writes, GC and wear-levelling copies) is a
// mapping update: it goes through the cache.
TEST(FtlMappingCache, GcCopiesUpdateTheMappingThroughTheCache) {
  Ftl ftl = cached_ftl(8);
  std::mt19937_64 rng(3);
  std::vector<FlashOp> ops;
  for (uint64_t i = 0; i < 4 * kLogicalPages; ++i) ftl.write(rng() % kLogicalPages, 1, &ops);
  ASSERT_GT(ftl.counters().gc_pages, 0u);
  const MappingTraffic& t = ftl.residency().traffic();
  EXPECT_EQ(t.hits + t.misses, ftl.counters().programs());
  uint64_t reads = 0, programs = 0;
  for (const FlashOp& op : mapping_ops(ops)) (op.kind == OpKind::kRead ? reads : programs) += 1;
  EXPECT_EQ(reads, t.misses);
  EXPECT_EQ(programs, t.translation_programs);
  EXPECT_GT(programs, 0u);
}

// The residency only costs the mapping: placement, GC and every data operation
// are those of the whole table, which adds no operation.
TEST(FtlMappingCache, WithTheWholeTableInDramNothingChanges) {
  Ftl full(testing::config(drive(schema::FtlParams::FULL, 1024)));
  Ftl cached = cached_ftl(8);
  std::mt19937_64 rng(5);
  std::vector<FlashOp> full_ops, cached_ops;
  for (uint64_t i = 0; i < 3 * kLogicalPages; ++i) {
    const uint64_t lpn = rng() % kLogicalPages, count = 1 + rng() % 40;
    const uint64_t n = std::min(count, kLogicalPages - lpn);
    full.write(lpn, n, &full_ops);
    cached.write(lpn, n, &cached_ops);
    full.look_up(lpn, n, &full_ops);
  }
  EXPECT_TRUE(mapping_ops(full_ops).empty());
  EXPECT_FALSE(mapping_ops(cached_ops).empty());
  std::vector<FlashOp> data;
  for (const FlashOp& op : cached_ops)
    if (op.cause != OpCause::kMapping) data.push_back(op);
  ASSERT_EQ(data.size(), full_ops.size());
  for (size_t i = 0; i < data.size(); ++i) {
    EXPECT_EQ(data[i].kind, full_ops[i].kind) << i;
    EXPECT_EQ(data[i].first, full_ops[i].first) << i;
    EXPECT_EQ(data[i].count, full_ops[i].count) << i;
  }
  EXPECT_EQ(full.residency().traffic().misses, 0u);
}

TEST(FtlMappingCache, AutoTakesTheWholeTableWhenItFitsAndTheCacheOtherwise) {
  SmallDrive d = drive(schema::FtlParams::AUTO, 0);
  d.mapping_dram_bytes = kLogicalPages * 16;  // exactly the table
  EXPECT_EQ(testing::config(d).mapping, FtlConfig::Mapping::kFull);
  d.mapping_dram_bytes = kLogicalPages * 16 - 1;
  EXPECT_EQ(testing::config(d).mapping, FtlConfig::Mapping::kCached);
  // The default drive (512 GiB) holds its whole table in the default 1 GiB.
  const FtlConfig c = FtlConfig::from_params(schema::resolved(schema::NandParams(), "nand"),
                                             schema::resolved(schema::FtlParams(), "ftl"));
  EXPECT_EQ(c.mapping_dram_bytes, uint64_t{1} << 30);
  EXPECT_EQ(c.mapping, FtlConfig::Mapping::kFull);
  EXPECT_EQ(c.mapping_table_bytes(), c.logical_pages() * 4);
  EXPECT_LT(c.mapping_table_bytes(), c.mapping_dram_bytes);
}

TEST(FtlMappingCache, ATableThatDoesNotFitOrACacheWithoutAPageIsRefusedWithOneLine) {
  try {
    testing::config(drive(schema::FtlParams::FULL, 8));
    FAIL() << "no error";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()),
              "ftl: mapping = FULL: the page-level table needs 49152 bytes (3072 logical pages x 16), more than "
              "mapping_dram_bytes = 4096");
  }
  SmallDrive d = drive(schema::FtlParams::CACHED, 0);
  d.mapping_dram_bytes = 511;
  try {
    testing::config(d);
    FAIL() << "no error";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()),
              "ftl: mapping_dram_bytes = 511 holds no translation page of 512 bytes for the cached mapping");
  }
}

}  // namespace
}  // namespace ispsim::ftl
