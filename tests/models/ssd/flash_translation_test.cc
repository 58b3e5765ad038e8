// The SSD's flash translation (models/ssd/flash_translation.h): where the FTL
// puts the KV space's pages, and the placement finding them through it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "models/isp/tiling.h"
#include "models/nand/flash_config.h"
#include "models/nand/layout.h"
#include "models/ssd/flash_translation.h"
#include "schema/resolve.h"

namespace ispsim::ssd {
namespace {

schema::NandParams nand(unsigned channels, unsigned dies, unsigned pages_per_block, unsigned blocks) {
  schema::NandParams p;
  p.set_channels(channels);
  p.set_dies_per_channel(dies);
  p.set_planes_per_die(1);
  p.set_pages_per_block(pages_per_block);
  p.set_blocks_per_plane(blocks);
  return schema::resolved(p, "nand");
}

ftl::FtlConfig ftl_config(const schema::NandParams& n, double spare_factor = 0.25) {
  schema::FtlParams f;
  f.set_spare_factor(spare_factor);
  return ftl::FtlConfig::from_params(n, schema::resolved(f, "ftl"));
}

// 2 layers, 2 KV heads of dimension 128 at FP16: T = 32 tokens per 16 KB page.
trace::ModelShape shape() {
  trace::ModelShape s;
  s.set_layers(2);
  s.set_heads(2);
  s.set_kv_heads(2);
  s.set_head_dim(128);
  s.set_kv_bits(16);
  return s;
}

trace::ModelShape one_layer_one_head() {
  trace::ModelShape s = shape();
  s.set_layers(1);
  s.set_kv_heads(1);
  s.set_heads(1);
  return s;
}

// Physical page of an address on a drive of 1 die per channel and 1 plane.
uint64_t physical(const nand::PageAddress& a, unsigned channels, unsigned pages_per_block) {
  return (uint64_t(a.block) * pages_per_block + a.page) * channels + a.channel;
}

// Precomputed: 256 tokens = 8 tiles x 2 heads x 2 layers = 32 pages, stored in
// order. Appended: 4 tiles per layer, programmed as decode does (tile 0 of
// layer 0, of layer 1, then tile 1, ...), not in logical order. A fresh drive
// puts each page at its home page, exactly its layout address.
TEST(FlashTranslation, AFreshDrivePutsEveryPageAtItsLayoutAddress) {
  const schema::NandParams n = nand(2, 2, 16, 32);
  const nand::FlashConfig flash = nand::FlashConfig::from_params(n);
  isp::KvPlacement placement(flash, shape(), 256, 128);
  FlashTranslation t(ftl_config(n), flash, placement.total_pages());
  t.store(0, 32);
  const nand::Layout layout(flash);
  for (uint64_t i = 0; i < 32; ++i) EXPECT_EQ(t.run(i).address, layout.address(i)) << "page " << i;
  EXPECT_EQ(t.run(0).count, 32u);  // one extent
  for (uint64_t tile = 0; tile < 4; ++tile) {
    for (uint32_t layer = 0; layer < 2; ++layer) {
      const uint64_t lpn = placement.tile_index(layer, trace::KV_REGION_APPENDED, tile, 0);
      const std::vector<ftl::FlashOp> ops = t.write(lpn, 2);
      ASSERT_EQ(ops.size(), 1u);
      EXPECT_EQ(ops[0].kind, ftl::OpKind::kProgram);
      EXPECT_EQ(ops[0].first, lpn);
      for (uint64_t p = lpn; p < lpn + 2; ++p) EXPECT_EQ(t.run(p).address, layout.address(p)) << "page " << p;
    }
  }
  EXPECT_TRUE(t.ideal());
  EXPECT_EQ(t.run(0).count, placement.total_pages());  // the whole KV space is one extent again
  // The placement resolves through the map, and finds the FTL's addresses.
  placement.set_page_map(&t);
  placement.for_each_page(1, trace::KV_REGION_APPENDED, 0, 128, [&](const isp::KvPlacement::PageRef& ref) {
    const uint64_t lpn = placement.tile_index(1, trace::KV_REGION_APPENDED, ref.tile, ref.kv_head);
    EXPECT_EQ(ref.address, layout.address(lpn));
  });
}

// 2 units (channels) x 4 pages per block, 16 lines of 8 pages. Page 0 written
// 4 more times goes to the frontier, the highest line (15), on its home unit:
// physical 120, 122, 124, 126, which fills unit 0's block there; page 8 written
// again (its home page is taken) goes to the unit with room: physical 121,
// channel 1, off its layout unit.
TEST(FlashTranslation, APageOffItsHomeUnitIsFoundWhereTheFtlPutIt) {
  const schema::NandParams n = nand(2, 1, 4, 16);
  const nand::FlashConfig flash = nand::FlashConfig::from_params(n);
  FlashTranslation t(ftl_config(n), flash, 16);
  for (int i = 0; i < 5; ++i) t.write(0, 1);
  EXPECT_EQ(*t.ftl().lookup(0), 126u);
  t.write(8, 1);
  EXPECT_EQ(*t.ftl().lookup(8), 8u);  // at home
  EXPECT_TRUE(t.ideal());
  const std::vector<ftl::FlashOp> ops = t.write(8, 1);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].first, 121u);
  EXPECT_FALSE(t.ideal());
  const isp::PageMap::Run r = t.run(8);
  EXPECT_EQ(r.address.channel, 1u);
  EXPECT_EQ(r.address.block, 15u);
  EXPECT_EQ(r.address.page, 0u);
  EXPECT_EQ(r.count, 1u);
  // Unwritten pages are at their layout address (data still in the write buffer).
  EXPECT_EQ(t.run(9).address, nand::Layout(flash).address(9));
  EXPECT_EQ(t.run(9).count, 7u);  // up to the end of the KV space
  // TRIM puts the misplaced page back to "not on the flash": ideal again.
  t.trim(8, 1);
  EXPECT_TRUE(t.ideal());
}

// What was read of a range of the map stays true while no write, TRIM or GC
// touched it: the map tells by version and range. GC may move any page, and a
// change too old to be remembered counts as one that moved the range.
TEST(FlashTranslation, TheMapTellsWhetherARangeChangedSinceAVersion) {
  const schema::NandParams n = nand(2, 1, 4, 16);
  const nand::FlashConfig flash = nand::FlashConfig::from_params(n);
  FlashTranslation t(ftl_config(n), flash, 16);
  const uint64_t fresh = t.version();
  t.write(8, 2);
  EXPECT_TRUE(t.unchanged_since(fresh, 0, 8));
  EXPECT_TRUE(t.unchanged_since(fresh, 10, 16));
  EXPECT_FALSE(t.unchanged_since(fresh, 9, 10));
  const uint64_t written = t.version();
  EXPECT_TRUE(t.unchanged_since(written, 0, 16));
  t.trim(3, 1);
  EXPECT_FALSE(t.unchanged_since(written, 0, 4));
  EXPECT_TRUE(t.unchanged_since(written, 4, 16));
  t.write(12, 4);
  bool collected = false;
  for (int i = 0; i < 400 && !collected; ++i) {  // page 0 rewritten until GC runs
    const uint64_t before = t.version();
    for (const ftl::FlashOp& op : t.write(0, 1)) collected = collected || op.cause != ftl::OpCause::kHost;
    if (collected) EXPECT_FALSE(t.unchanged_since(before, 12, 16));
    if (!collected) EXPECT_TRUE(t.unchanged_since(before, 12, 16));
  }
  ASSERT_TRUE(collected);
  const uint64_t old = t.version();
  for (int i = 0; i < 1000; ++i) t.trim(15, 1);
  EXPECT_FALSE(t.unchanged_since(old, 0, 8));
  EXPECT_TRUE(t.unchanged_since(t.version(), 0, 16));
}

// A placement walking a non-ideal map: each page where the map puts it, and a
// page that does not continue the previous one's run says so (the attention
// planner starts a run there). Pages 0-3 at home (physical 0-3); page 0
// rewritten 4 times ends at physical 126 and fills unit 0's block of the
// frontier (line 15), so page 2 rewritten goes to unit 1: physical 121.
TEST(FlashTranslation, ThePlacementFollowsTheMapAndMarksItsBreaks) {
  const schema::NandParams n = nand(2, 1, 4, 16);
  const nand::FlashConfig flash = nand::FlashConfig::from_params(n);
  const trace::ModelShape one_head = one_layer_one_head();
  isp::KvPlacement placement(flash, one_head, 4 * 32, 0);  // 4 pages, logical 0-3
  FlashTranslation t(ftl_config(n), flash, placement.total_pages());
  t.write(0, 4);
  for (int i = 0; i < 4; ++i) t.write(0, 1);
  ASSERT_TRUE(t.ideal());
  t.write(2, 1);
  ASSERT_FALSE(t.ideal());
  placement.set_page_map(&t);
  std::vector<uint64_t> got;
  std::vector<bool> follows;
  placement.for_each_page(0, trace::KV_REGION_PRECOMPUTED, 0, 128, [&](const isp::KvPlacement::PageRef& ref) {
    got.push_back(physical(ref.address, 2, 4));
    follows.push_back(ref.follows);
  });
  EXPECT_EQ(got, (std::vector<uint64_t>{126, 1, 121, 3}));
  EXPECT_EQ(follows, (std::vector<bool>{true, false, false, false}));
}

// Through the map, a read's runs end where the map's do, and where a page's entries change.
TEST(FlashTranslation, PageRunsFollowTheMap) {
  const schema::NandParams n = nand(2, 1, 4, 16);
  const nand::FlashConfig flash = nand::FlashConfig::from_params(n);
  const trace::ModelShape one_head = one_layer_one_head();
  isp::KvPlacement placement(flash, one_head, 8 * 32, 0);  // 8 pages, logical 0-7
  FlashTranslation t(ftl_config(n), flash, placement.total_pages());
  t.write(0, 8);
  for (int i = 0; i < 4; ++i) t.write(0, 1);  // as above: page 0 ends off its home unit
  t.write(2, 1);                              // and page 2
  ASSERT_FALSE(t.ideal());
  placement.set_page_map(&t);
  const auto runs = placement.page_runs(0, trace::KV_REGION_PRECOMPUTED, 0, 8 * 32 - 10);
  std::vector<uint64_t> counts;
  std::vector<std::pair<uint64_t, uint32_t>> got, want;
  for (const isp::KvPlacement::PageRun& run : runs) {
    counts.push_back(run.count);
    nand::PageAddress a = run.first;
    for (uint64_t k = 0; k < run.count; ++k, placement.layout().next(a))
      got.emplace_back(physical(a, 2, 4), run.entries);
  }
  placement.for_each_page(0, trace::KV_REGION_PRECOMPUTED, 0, 8 * 32 - 10, [&](const isp::KvPlacement::PageRef& ref) {
    want.emplace_back(physical(ref.address, 2, 4), ref.entries);
  });
  EXPECT_EQ(got, want);
  EXPECT_EQ(counts, (std::vector<uint64_t>{1, 1, 1, 4, 1}));  // 0 and 2 moved, 1, 3-6, 7 of 22 entries
  for (uint64_t begin = 0; begin < 8 * 32; begin += 7) {  // every range: the same pages as one by one
    for (uint64_t end = begin + 1; end <= 8 * 32; end += 11) {
      got.clear();
      want.clear();
      for (const isp::KvPlacement::PageRun& run : placement.page_runs(0, trace::KV_REGION_PRECOMPUTED, begin, end)) {
        nand::PageAddress a = run.first;
        for (uint64_t k = 0; k < run.count; ++k, placement.layout().next(a))
          got.emplace_back(physical(a, 2, 4), run.entries);
      }
      placement.for_each_page(0, trace::KV_REGION_PRECOMPUTED, begin, end, [&](const isp::KvPlacement::PageRef& ref) {
        want.emplace_back(physical(ref.address, 2, 4), ref.entries);
      });
      ASSERT_EQ(got, want) << begin << "-" << end;
    }
  }
}

TEST(FlashTranslation, AKvSpaceBeyondTheLogicalCapacityIsRefused) {
  const schema::NandParams n = nand(2, 1, 4, 16);  // 128 physical pages, 96 logical at spare 0.25
  const nand::FlashConfig flash = nand::FlashConfig::from_params(n);
  try {
    FlashTranslation t(ftl_config(n), flash, 97);
    FAIL() << "accepted";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("ftl"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("96"), std::string::npos) << e.what();
  }
}

// A preconditioned drive (full, aged by random single-page overwrites, GC at
// its foreground reserve) starts as it is after idling: background GC has
// reclaimed lines until ceil(0.05 x 64) = 4 are free; with no background
// threshold it starts at the foreground reserve, below that.
TEST(FlashTranslation, AUsedDriveStartsWithTheBackgroundThresholdOfLinesFree) {
  const schema::NandParams n = nand(2, 2, 8, 64);  // 64 lines of 32 pages
  const nand::FlashConfig flash = nand::FlashConfig::from_params(n);
  const auto start = [&](double background) {
    schema::FtlParams f;
    f.set_gc_background_free_ratio(background);
    const ftl::FtlConfig config = ftl::FtlConfig::from_params(n, schema::resolved(f, "ftl"));
    FlashTranslation t(config, flash, 64, "ftl", DriveStart{"", true});
    return t.ftl().free_lines();
  };
  EXPECT_EQ(start(0.05), 4u);
  EXPECT_LT(start(0), 4u);
}

}  // namespace
}  // namespace ispsim::ssd
