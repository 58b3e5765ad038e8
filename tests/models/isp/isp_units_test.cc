// Closed forms of the ISP building blocks: tile size and placement, Elastic-SIMD
// cycles in both modes, Stream Filter compaction, LSE merge and cost, buffer
// row chunking, parameter resolution.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

#include "common/error.h"
#include "models/isp/elastic_simd.h"
#include "models/isp/isp_config.h"
#include "models/isp/lse_reduction.h"
#include "models/isp/stream_filter.h"
#include "models/isp/tiling.h"
#include "tests/models/isp/engine_rig.h"

namespace ispsim::isp {
namespace {

trace::ModelShape shape(uint32_t layers, uint32_t heads, uint32_t kv_heads, uint32_t head_dim, uint32_t kv_bits) {
  trace::ModelShape s;
  s.set_layers(layers);
  s.set_heads(heads);
  s.set_kv_heads(kv_heads);
  s.set_head_dim(head_dim);
  s.set_kv_bits(kv_bits);
  s.set_activation_bits(16);
  return s;
}

nand::FlashConfig flash(unsigned channels, unsigned dies, uint32_t page_bytes = 16384) {
  schema::NandParams p;
  p.set_channels(channels);
  p.set_dies_per_channel(dies);
  p.set_page_bytes(page_bytes);
  p.set_blocks_per_plane(4);
  p.set_pages_per_block(8);
  return nand::FlashConfig::from_params(schema::resolved(p, "nand"));
}

using testing::mask_of;

TEST(Tiling, ThirtyTwoFp16TokensOfHeadDim128PerSixteenKiBPage) {
  EXPECT_EQ(tokens_per_tile(16384, shape(1, 32, 8, 128, 16)), 32u);  // MemLLM Sec. V-C
  EXPECT_EQ(tokens_per_tile(16384, shape(1, 9, 3, 64, 16)), 64u);
  EXPECT_EQ(tokens_per_tile(16384, shape(1, 32, 8, 128, 8)), 64u);
  EXPECT_EQ(tokens_per_tile(16384, shape(1, 32, 8, 128, 4)), 128u);
  EXPECT_EQ(tokens_per_tile(16384, shape(1, 32, 8, 96, 16)), 42u);  // floor(16384 / 384)
  EXPECT_EQ(kv_bytes_per_token_head(shape(1, 32, 8, 128, 16)), 512u);
  EXPECT_EQ(kv_bytes_per_token(shape(1, 32, 8, 128, 16)), 4096u);
  EXPECT_EQ(pages_for_tokens(100, 32, 5), 4u * 5u);
  EXPECT_EQ(pages_for_tokens(96, 32, 5), 3u * 5u);
  EXPECT_EQ(pages_for_tokens(0, 32, 5), 0u);
}

TEST(Tiling, RejectsAHeadThatDoesNotFitAPage) {
  EXPECT_THROW(tokens_per_tile(512, shape(1, 1, 1, 512, 16)), BadInput);  // 2048 B per token
  EXPECT_THROW(tokens_per_tile(512, shape(1, 3, 2, 64, 16)), BadInput);   // heads % kv_heads
  EXPECT_THROW(tokens_per_tile(512, shape(1, 1, 1, 3, 1)), BadInput);     // 6 bits per token
}

TEST(Tiling, PlacementPutsEveryLayersPrecomputedRegionFirstThenTheAppendedRegions) {
  // 2 layers, 2 KV heads, T = 32: C = 70 -> 3 tiles, appended capacity 40 -> 2 tiles.
  const KvPlacement placement(flash(4, 2), shape(2, 4, 2, 128, 16), 70, 40);
  EXPECT_EQ(placement.tokens_per_tile(), 32u);
  EXPECT_EQ(placement.tiles_per_layer(trace::KV_REGION_PRECOMPUTED), 3u);
  EXPECT_EQ(placement.tiles_per_layer(trace::KV_REGION_APPENDED), 2u);
  EXPECT_EQ(placement.tile_index(0, trace::KV_REGION_PRECOMPUTED, 0, 0), 0u);
  EXPECT_EQ(placement.tile_index(0, trace::KV_REGION_PRECOMPUTED, 2, 1), 5u);
  EXPECT_EQ(placement.tile_index(1, trace::KV_REGION_PRECOMPUTED, 0, 0), 6u);
  EXPECT_EQ(placement.tile_index(0, trace::KV_REGION_APPENDED, 0, 0), 12u);  // after 2 x 3 x 2
  EXPECT_EQ(placement.tile_index(1, trace::KV_REGION_APPENDED, 1, 1), 12u + 7u);
  EXPECT_EQ(placement.total_pages(), 2u * (3 + 2) * 2);
  // Tile 5 -> channel 5 mod 4 = 1, die (5 / 4) mod 2 = 1.
  const nand::PageAddress a = placement.address(0, trace::KV_REGION_PRECOMPUTED, 2, 1);
  EXPECT_EQ(a.channel, 1u);
  EXPECT_EQ(a.die, 1u);

  const auto pages = placement.pages(1, trace::KV_REGION_PRECOMPUTED, 30, 70);
  ASSERT_EQ(pages.size(), 3u * 2u);  // tiles 0, 1, 2, each for both heads
  EXPECT_EQ(pages[0].first_entry, 30u);
  EXPECT_EQ(pages[0].entries, 2u);
  EXPECT_EQ(pages[1].kv_head, 1u);
  EXPECT_EQ(pages[2].first_entry, 32u);
  EXPECT_EQ(pages[2].entries, 32u);
  EXPECT_EQ(pages[5].first_entry, 64u);
  EXPECT_EQ(pages[5].entries, 6u);
  EXPECT_EQ(pages[5].address, placement.address(1, trace::KV_REGION_PRECOMPUTED, 2, 1));
  EXPECT_TRUE(placement.pages(0, trace::KV_REGION_APPENDED, 5, 5).empty());
  EXPECT_THROW(placement.pages(0, trace::KV_REGION_APPENDED, 0, 41), BadInput);
  EXPECT_THROW(placement.tile_index(2, trace::KV_REGION_PRECOMPUTED, 0, 0), BadInput);
  EXPECT_THROW(placement.tile_index(0, trace::KV_REGION_APPENDED, 2, 0), BadInput);
}

// Three slots of the appended region: slot 0 is the one-slot placement page for
// page; each further slot starts R = 2 layers x 2 tiles x 2 heads = 8 pages,
// rounded up to the 4 x 2 x 2 = 16-page layout cycle, after the one before, so
// every page of it is on the channel, die and plane of slot 0's.
TEST(Tiling, AppendedSlotsRepeatSlotZeroOnItsDies) {
  const KvPlacement one(flash(4, 2), shape(2, 4, 2, 128, 16), 70, 40);
  const KvPlacement three(flash(4, 2), shape(2, 4, 2, 128, 16), 70, 40, "kv placement", 3);
  EXPECT_EQ(three.appended_slots(), 3u);
  EXPECT_EQ(three.slot_entries(), 64u);  // 2 tiles of T = 32
  EXPECT_EQ(three.appended_capacity(), 3u * 64u);
  EXPECT_EQ(three.tiles_per_layer(trace::KV_REGION_APPENDED), 6u);
  EXPECT_EQ(three.total_pages(), 12u + 2 * 16 + 8);
  for (uint32_t layer = 0; layer < 2; ++layer) {
    for (uint64_t t = 0; t < 2; ++t) {
      for (uint32_t h = 0; h < 2; ++h) {
        const uint64_t index = one.tile_index(layer, trace::KV_REGION_APPENDED, t, h);
        EXPECT_EQ(three.tile_index(layer, trace::KV_REGION_APPENDED, t, h), index);
        for (uint64_t slot = 1; slot < 3; ++slot) {
          EXPECT_EQ(three.tile_index(layer, trace::KV_REGION_APPENDED, slot * 2 + t, h), index + slot * 16);
          const nand::PageAddress a = three.address(layer, trace::KV_REGION_APPENDED, slot * 2 + t, h);
          const nand::PageAddress b = one.address(layer, trace::KV_REGION_APPENDED, t, h);
          EXPECT_EQ(std::tie(a.channel, a.die, a.plane), std::tie(b.channel, b.die, b.plane));
        }
      }
    }
  }
  EXPECT_EQ(three.pages(1, trace::KV_REGION_APPENDED, 64, 104).size(), 4u);  // slot 1's two tiles
  EXPECT_THROW(three.pages(1, trace::KV_REGION_APPENDED, 60, 70), BadInput);  // spans slots 0 and 1
}

TEST(Tiling, PlacementBeyondTheFlashIsBadInput) {
  // 2 x 1 x 2 planes x 4 blocks x 8 pages = 128 pages; 1 layer x 1 head x 129 tiles.
  EXPECT_THROW(KvPlacement(flash(2, 1), shape(1, 1, 1, 128, 16), 129 * 32, 0), BadInput);
  EXPECT_NO_THROW(KvPlacement(flash(2, 1), shape(1, 1, 1, 128, 16), 100 * 32, 28 * 32));
}

TEST(Tiling, PagesStepThroughEveryChannelDiePlanePageAndBlockAsTheirIndexesDo) {
  // The whole flash: 2 channels x 1 die x 2 planes x 4 blocks x 8 pages = 128.
  const nand::FlashConfig config = flash(2, 1);
  const nand::Layout layout(config);
  for (uint64_t i = 0; i + 1 < layout.capacity_pages(); ++i) {
    nand::PageAddress a = layout.address(i);
    layout.next(a);
    ASSERT_EQ(a, layout.address(i + 1)) << "tile " << i;
  }
  const KvPlacement placement(config, shape(1, 1, 1, 128, 16), 100 * 32, 28 * 32);
  for (trace::KvRegion region : {trace::KV_REGION_PRECOMPUTED, trace::KV_REGION_APPENDED}) {
    const uint64_t tokens = region == trace::KV_REGION_PRECOMPUTED ? 100 * 32 : 28 * 32;
    const auto pages = placement.pages(0, region, 5, tokens);
    ASSERT_EQ(pages.size(), tokens / 32);
    for (const KvPlacement::PageRef& ref : pages)
      ASSERT_EQ(ref.address, placement.address(0, region, ref.tile, ref.kv_head)) << "tile " << ref.tile;
  }
  EXPECT_EQ(layout.address(127).block, 3u);  // the last page: the blocks were all crossed
}

// A read's runs, expanded page by page, against the page list.
std::vector<std::pair<nand::PageAddress, uint32_t>> expanded(const KvPlacement& placement,
                                                             const std::vector<KvPlacement::PageRun>& runs) {
  std::vector<std::pair<nand::PageAddress, uint32_t>> out;
  for (const KvPlacement::PageRun& run : runs) {
    nand::PageAddress a = run.first;
    for (uint64_t k = 0; k < run.count; ++k, placement.layout().next(a)) out.emplace_back(a, run.entries);
  }
  return out;
}

TEST(Tiling, AdvancingAnAddressEqualsStepping) {
  const nand::FlashConfig config = flash(2, 3);
  const nand::Layout layout(config);
  for (uint64_t i = 0; i < layout.capacity_pages(); i += 7) {
    nand::PageAddress stepped = layout.address(i);
    ASSERT_EQ(layout.index_of(stepped), i);
    for (uint64_t k = 0; i + k < layout.capacity_pages(); ++k, layout.next(stepped))
      ASSERT_EQ(layout.advanced(layout.address(i), k), stepped) << i << " + " << k;
  }
}

TEST(Tiling, PageRunsAreThePagesInAtMostThreeRunsOnTheLayout) {
  // 2 layers x 3 KV heads x T = 32 tokens; regions of 5 and 4 tiles (the last precomputed one partial).
  const KvPlacement placement(flash(2, 3), shape(2, 3, 3, 128, 16), 150, 128, "kv placement", 2);
  for (trace::KvRegion region : {trace::KV_REGION_PRECOMPUTED, trace::KV_REGION_APPENDED}) {
    const uint64_t limit = region == trace::KV_REGION_PRECOMPUTED ? 150 : 128;
    for (uint32_t layer = 0; layer < 2; ++layer) {
      for (uint64_t begin = 0; begin < limit; begin += 3) {
        for (uint64_t end = begin + 1; end <= limit; end += 5) {
          const auto runs = placement.page_runs(layer, region, begin, end);
          std::vector<std::pair<nand::PageAddress, uint32_t>> want;
          for (const KvPlacement::PageRef& ref : placement.pages(layer, region, begin, end))
            want.emplace_back(ref.address, ref.entries);
          ASSERT_EQ(expanded(placement, runs), want) << begin << "-" << end;
          ASSERT_LE(runs.size(), 3u);
          for (size_t r = 1; r < runs.size(); ++r) ASSERT_NE(runs[r].entries, runs[r - 1].entries);
        }
      }
    }
  }
  // Whole tiles are one run; a partial first and last tile of equal counts join the run between them only if equal.
  EXPECT_EQ(placement.page_runs(0, trace::KV_REGION_PRECOMPUTED, 0, 128).size(), 1u);
  EXPECT_EQ(placement.page_runs(0, trace::KV_REGION_PRECOMPUTED, 0, 150).size(), 2u);
  EXPECT_EQ(placement.page_runs(0, trace::KV_REGION_PRECOMPUTED, 16, 48).size(), 1u);  // two tiles of 16
  EXPECT_TRUE(placement.page_runs(0, trace::KV_REGION_PRECOMPUTED, 5, 5).empty());
}

TEST(ElasticSimd, BroadsideIsOneTokenPerCyclePerRowHeadAndPhase) {
  const ElasticSimd simd{IspConfig::defaults()};
  // L = 2 * ceil(log2 128) + 4 = 18 cycles.
  EXPECT_EQ(simd.softmax_latency_cycles(), 18u);
  // Decode page, d = 128: 2 * 32 + 18 (nand_stream.proto's 64 MAC cycles + softmax).
  PageCost c = simd.page_cost(SimdMode::kBroadside, 32, 1, 128, 16, 16);
  EXPECT_EQ(c.cycles, 82u);
  EXPECT_EQ(c.macs, 8192u);
  // GQA g = 4 query heads share the page: 2 * 4 * 32 + 18.
  EXPECT_EQ(simd.page_cost(SimdMode::kBroadside, 32, 4, 128, 16, 16).cycles, 274u);
  // d = 64 on 128 PEs: two pairs per cycle: 2 * ceil(3 * 64 / 2) + 18.
  EXPECT_EQ(simd.page_cost(SimdMode::kBroadside, 64, 3, 64, 16, 16).cycles, 2u * 96u + 18u);
  // d = 256: two cycles per pair: 2 * 32 * 2 + 18.
  EXPECT_EQ(simd.page_cost(SimdMode::kBroadside, 32, 1, 256, 16, 16).cycles, 146u);
  // Energy: 8192 MACs x 1.5 + 32 exp x 2 + 64 ops x 0.4 + (2*32*128*2 + 128*2) B x 2.5.
  EXPECT_DOUBLE_EQ(c.energy_pj, 8192 * 1.5 + 32 * 2.0 + 64 * 0.4 + (16384 + 256) * 2.5);
  EXPECT_EQ(simd.page_cost(SimdMode::kBroadside, 0, 4, 128, 16, 16).cycles, 0u);
}

TEST(ElasticSimd, CascadedStreamsTheStationaryPageThroughQTilesWithFillAndDrain) {
  const ElasticSimd simd{IspConfig::defaults()};
  // One Q tile of 128 row-heads: 2 * (32 * 128 + 127) + 18.
  PageCost c = simd.page_cost(SimdMode::kCascaded, 32, 128, 128, 16, 16);
  EXPECT_EQ(c.cycles, 8464u);
  EXPECT_EQ(c.q_tiles, 1u);
  // 130 row-heads: a full tile + a tile of 2: + 2 * (4096 + 1) + 18.
  c = simd.page_cost(SimdMode::kCascaded, 32, 130, 128, 16, 16);
  EXPECT_EQ(c.cycles, 8464u + 8194u + 18u);
  EXPECT_EQ(c.q_tiles, 2u);
  // K and V read once per Q tile: 2 tiles x 2 x 32 x 128 x 2 B, plus 130 Q vectors.
  EXPECT_EQ(c.scratchpad_bytes, 2u * 2 * 32 * 128 * 2 + 130u * 128 * 2);
  // Two MACs per PE per cycle halve the per-token time: 2 * (32 * 64 + 127) + 18.
  IspConfig wide = IspConfig::defaults();
  wide.macs_per_pe_per_cycle = 2;
  EXPECT_EQ(ElasticSimd(wide).page_cost(SimdMode::kCascaded, 32, 128, 128, 16, 16).cycles, 2u * (2048 + 127) + 18);
}

TEST(ElasticSimd, ModeFollowsTheEnergyDelayProductByDefault) {
  const ElasticSimd simd{IspConfig::defaults()};
  EXPECT_EQ(simd.choose_mode(32, 1, 128, 16, 16), SimdMode::kBroadside);   // decode GEMV
  EXPECT_EQ(simd.choose_mode(32, 4, 128, 16, 16), SimdMode::kBroadside);   // GQA decode
  EXPECT_EQ(simd.choose_mode(32, 256, 128, 16, 16), SimdMode::kCascaded);  // fused thin GEMM
  IspConfig fewest = IspConfig::defaults();
  fewest.mode_policy = ModePolicy::kFewestCycles;
  EXPECT_EQ(ElasticSimd(fewest).choose_mode(32, 256, 128, 16, 16), SimdMode::kBroadside);
  IspConfig always = IspConfig::defaults();
  always.mode_policy = ModePolicy::kAlwaysCascaded;
  EXPECT_EQ(ElasticSimd(always).choose_mode(32, 1, 128, 16, 16), SimdMode::kCascaded);
}

TEST(StreamFilter, JaggedRecomputationDropsTheContextAfterTheLastRowAndSubstitutesTheMask) {
  const trace::BitVector mask = mask_of(8, {2, 5});
  FilterContext ctx;
  ctx.context_tokens = 8;
  ctx.hkvd_mask = &mask;
  ctx.causal = true;
  ctx.max_row_position = 5;  // recomputation rows at positions 2 and 5
  const StreamFilter filter(IspConfig::defaults(), ctx);
  EXPECT_EQ(filter.substitutes(), 2u);
  FilterResult r = filter.precomputed_page(0, 8, true);
  EXPECT_EQ(r.kept, 6u);
  EXPECT_EQ(r.substituted, 2u);
  EXPECT_EQ(r.dropped, 2u);
  EXPECT_EQ(r.cycles, 8u);
  ASSERT_EQ(r.tokens.size(), 6u);
  EXPECT_TRUE(r.tokens[2].substituted);
  EXPECT_EQ(r.tokens[2].append_index, 0u);
  EXPECT_TRUE(r.tokens[5].substituted);
  EXPECT_EQ(r.tokens[5].append_index, 1u);
  EXPECT_FALSE(r.tokens[4].substituted);
  // Appended entries: 0, 1 are the substitutes, 2 and 3 own tokens at positions 8, 9.
  EXPECT_EQ(filter.position_of_appended(1), 5u);
  EXPECT_EQ(filter.position_of_appended(3), 9u);
  r = filter.appended_page(0, 4);
  EXPECT_EQ(r.forwarded, 2u);
  EXPECT_EQ(r.dropped, 2u);
  EXPECT_EQ(r.kept, 0u);
}

TEST(StreamFilter, QueryRowsSeeEverythingAndThroughputSetsTheCycles) {
  const trace::BitVector mask = mask_of(10, {0, 9});
  FilterContext ctx;
  ctx.context_tokens = 10;
  ctx.hkvd_mask = &mask;
  ctx.max_row_position = 12;  // query rows at 10..12
  IspConfig config = IspConfig::defaults();
  config.stream_filter_tokens_per_cycle = 3;
  const StreamFilter filter(config, ctx);
  FilterResult r = filter.precomputed_page(8, 2);
  EXPECT_EQ(r.kept, 2u);
  EXPECT_EQ(r.substituted, 1u);
  EXPECT_EQ(r.dropped, 0u);
  EXPECT_EQ(r.cycles, 1u);  // ceil(2 / 3)
  EXPECT_EQ(filter.cycles(10), 4u);
  r = filter.appended_page(1, 4, true);  // substitute 1, own tokens at 10, 11, 12
  EXPECT_EQ(r.forwarded, 1u);
  EXPECT_EQ(r.kept, 3u);
  ASSERT_EQ(r.tokens.size(), 3u);
  EXPECT_EQ(r.tokens[0].position, 10u);
  EXPECT_TRUE(r.tokens[0].appended);
  // Non-causal: nothing is dropped even past the rows.
  ctx.causal = false;
  ctx.max_row_position = 0;
  EXPECT_EQ(StreamFilter(config, ctx).precomputed_page(0, 10).kept, 10u);
}

// The filter of a 40-token context with `mask`.
StreamFilter filter_of(const trace::BitVector& mask, bool causal, uint64_t max_row) {
  FilterContext ctx;
  ctx.context_tokens = 40;
  ctx.hkvd_mask = &mask;
  ctx.causal = causal;
  ctx.max_row_position = max_row;
  return StreamFilter(IspConfig::defaults(), ctx);
}

TEST(StreamFilter, CountsWithoutTokensEqualTheCountedTokensOnEveryPageAndRow) {
  // Counts alone come in closed form; listing the tokens walks them one by one.
  const trace::BitVector mask = mask_of(40, {0, 3, 7, 8, 9, 21, 31, 32, 39});
  for (bool causal : {true, false}) {
    for (uint64_t max_row = 0; max_row < 60; ++max_row) {
      const StreamFilter filter = filter_of(mask, causal, max_row);
      for (uint64_t first = 0; first < 40; ++first) {
        for (uint32_t entries = 1; first + entries <= 40; ++entries) {
          const FilterResult counted = filter.precomputed_page(first, entries, true);
          const FilterResult closed = filter.precomputed_page(first, entries, false);
          ASSERT_EQ(closed.kept, counted.kept) << first << "+" << entries << " row " << max_row;
          ASSERT_EQ(closed.substituted, counted.substituted) << first << "+" << entries << " row " << max_row;
          ASSERT_EQ(closed.dropped, counted.dropped) << first << "+" << entries << " row " << max_row;
          ASSERT_EQ(closed.cycles, counted.cycles);
        }
      }
      for (uint64_t first = 0; first < 30; ++first) {  // 9 substitutes, then own tokens at 40, 41, ...
        for (uint32_t entries = 1; entries < 20; ++entries) {
          const FilterResult counted = filter.appended_page(first, entries, true);
          const FilterResult closed = filter.appended_page(first, entries, false);
          ASSERT_EQ(closed.forwarded, counted.forwarded) << first << "+" << entries << " row " << max_row;
          ASSERT_EQ(closed.kept, counted.kept) << first << "+" << entries << " row " << max_row;
          ASSERT_EQ(closed.dropped, counted.dropped) << first << "+" << entries << " row " << max_row;
        }
      }
    }
  }
}

TEST(StreamFilter, EntriesKeptAsReadEndWhereATokenIsDroppedSubstitutedOrForwarded) {
  // Against the tokens listed one by one: the stretch from `first` whose every
  // token is kept and neither substituted nor forwarded.
  const trace::BitVector mask = mask_of(40, {0, 3, 7, 8, 9, 21, 31, 32, 39});
  for (bool causal : {true, false}) {
    for (uint64_t max_row : {0u, 5u, 20u, 45u, 60u}) {
      const StreamFilter filter = filter_of(mask, causal, max_row);
      for (trace::KvRegion region : {trace::KV_REGION_PRECOMPUTED, trace::KV_REGION_APPENDED}) {
        const uint64_t end = region == trace::KV_REGION_PRECOMPUTED ? 40 : 30;
        auto as_read = [&](uint64_t entry) {
          const FilterResult r = region == trace::KV_REGION_PRECOMPUTED ? filter.precomputed_page(entry, 1, true)
                                                                        : filter.appended_page(entry, 1, true);
          return r.kept == 1 && r.substituted == 0;
        };
        for (uint64_t first = 0; first <= end; ++first) {
          uint64_t want = first;
          while (want < end && as_read(want)) ++want;
          ASSERT_EQ(filter.kept_as_read_end(region, first, end), want)
              << (region == trace::KV_REGION_PRECOMPUTED ? "precomputed " : "appended ") << first << " row "
              << max_row << (causal ? " causal" : "");
        }
      }
    }
  }
}

TEST(StreamFilter, CountsThroughACursorEqualTheCountedTokensInAnyOrder) {
  // A pass's pages in ascending position (the cursor sweeps the mask once),
  // then pages out of order (it searches again): the same counts as listing.
  const trace::BitVector mask = mask_of(40, {0, 3, 7, 8, 9, 21, 31, 32, 39});
  for (uint64_t max_row : {5u, 22u, 60u}) {
    FilterContext ctx;
    ctx.context_tokens = 40;
    ctx.hkvd_mask = &mask;
    ctx.max_row_position = max_row;
    const StreamFilter filter(IspConfig::defaults(), ctx);
    for (uint32_t entries = 1; entries <= 8; ++entries) {
      std::vector<uint64_t> firsts;
      for (uint64_t first = 0; first + entries <= 40; first += entries) firsts.push_back(first);
      for (uint64_t first : {33u, 2u, 17u, 0u, 31u}) firsts.push_back(std::min<uint64_t>(first, 40 - entries));
      size_t cursor = 0;
      for (uint64_t first : firsts) {
        const FilterResult counted = filter.precomputed_page(first, entries, true);
        const FilterResult swept = filter.precomputed_counts(first, entries, cursor);
        ASSERT_EQ(swept.kept, counted.kept) << first << "+" << entries << " row " << max_row;
        ASSERT_EQ(swept.substituted, counted.substituted) << first << "+" << entries << " row " << max_row;
        ASSERT_EQ(swept.dropped, counted.dropped) << first << "+" << entries << " row " << max_row;
      }
    }
  }
}

TEST(StreamFilter, RejectsAMaskOfTheWrongLength) {
  const trace::BitVector mask = mask_of(8, {1});
  FilterContext ctx;
  ctx.context_tokens = 9;
  ctx.hkvd_mask = &mask;
  EXPECT_THROW(StreamFilter(IspConfig::defaults(), ctx), BadInput);
  trace::BitVector stray;  // 7 bits, but bit 7 (past the length) is set
  stray.set_bit_length(7);
  stray.set_bits(std::string(1, char(0x80)));
  ctx.context_tokens = 7;
  ctx.hkvd_mask = &stray;
  EXPECT_THROW(StreamFilter(IspConfig::defaults(), ctx), BadInput);
}

TEST(LseReduction, MergingPartialsEqualsOneOnlineSoftmaxPass) {
  const std::vector<float> scores = {0.5f, -1.0f, 2.0f, 0.25f, 1.5f};
  const std::vector<std::vector<float>> values = {{1, 2}, {3, -1}, {0.5f, 0.5f}, {-2, 4}, {1, 1}};
  PartialState whole(1, 2), first(1, 2), second(1, 2);
  for (size_t j = 0; j < scores.size(); ++j) {
    whole.accumulate(0, scores[j], values[j].data());
    (j < 2 ? first : second).accumulate(0, scores[j], values[j].data());
  }
  PartialState acc(1, 2);
  LseReduction::merge(acc, second);
  LseReduction::merge(acc, first);
  LseReduction::merge(acc, PartialState(1, 2));  // an empty partial changes nothing
  // Reference: softmax in double.
  double m = -1e9, l = 0, o[2] = {0, 0};
  for (float s : scores) m = std::max(m, double(s));
  for (size_t j = 0; j < scores.size(); ++j) {
    const double p = std::exp(scores[j] - m);
    l += p;
    o[0] += p * values[j][0];
    o[1] += p * values[j][1];
  }
  const std::vector<float> a = acc.normalized(), w = whole.normalized();
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(a[i], o[i] / l, 1e-6);
    EXPECT_NEAR(w[i], o[i] / l, 1e-6);
  }
  EXPECT_FLOAT_EQ(acc.max[0], 2.0f);
  EXPECT_EQ(PartialState(2, 3).normalized(), std::vector<float>(6, 0.0f));
}

TEST(LseReduction, CostPerPartialAndRowChunks) {
  const LseReduction lse{CoordinatorConfig::defaults()};
  // 3 row-heads of d = 64 on 128 lanes: 3 cycles + 8 pipeline; 3 x (64 x 2 + 8) bytes.
  ReductionCost c = lse.partial_cost(3, 64, 16);
  EXPECT_EQ(c.occupancy_cycles, 3u);
  EXPECT_EQ(c.latency_cycles, 8u);
  EXPECT_EQ(c.partial_bytes, 408u);
  EXPECT_DOUBLE_EQ(c.energy_pj, 3 * 64 * 8.3 + 2 * 408 * 12.5);
  EXPECT_EQ(lse.partial_cost(2, 256, 16).occupancy_cycles, 4u);  // ceil(256 / 128) per row-head
  // 15 heads x 64: Q row 1920 B (273 rows in 512 KiB), O row 15 x 264 = 3960 B (132 rows).
  RowChunking k = lse.chunk_rows(800, 15, 64, 16);
  EXPECT_EQ(k.q_row_bytes, 1920u);
  EXPECT_EQ(k.o_row_bytes, 3960u);
  EXPECT_EQ(k.rows_per_pass, 132u);
  EXPECT_EQ(k.passes, 7u);
  k = lse.chunk_rows(1, 15, 64, 16);
  EXPECT_EQ(k.rows_per_pass, 1u);
  EXPECT_EQ(k.passes, 1u);
  CoordinatorConfig tiny = CoordinatorConfig::defaults();
  tiny.global_sram_bytes = 4096;
  tiny.q_buffer_bytes = 2048;
  EXPECT_THROW(LseReduction(tiny).chunk_rows(10, 15, 64, 16), BadInput);
}

TEST(IspConfig, DefaultsComeFromTheSchemaAndRangesAreChecked) {
  const IspConfig isp = IspConfig::from_params(schema::resolved(schema::IspParams{}, "isp"));
  EXPECT_EQ(isp.pes, 128u);
  EXPECT_EQ(isp.scratchpad_bytes, 73728u);
  EXPECT_EQ(isp.mode_policy, ModePolicy::kLowestEnergyDelay);
  EXPECT_EQ(isp.q_tile_bytes(16384), 73728u - 4 * 16384);  // 8 KiB Q tile
  EXPECT_EQ(isp.cycles_to_ps(82), 82000u);
  const CoordinatorConfig coordinator = CoordinatorConfig::from_params(schema::resolved(schema::FlashCoordinatorParams{}, "flash_coordinator"));
  EXPECT_EQ(coordinator.global_sram_bytes, 1048576u);
  EXPECT_EQ(coordinator.o_buffer_bytes(), 524288u);

  schema::IspParams bad;
  bad.set_pes(0);
  EXPECT_THROW(IspConfig::from_params(schema::resolved(bad, "isp")), BadInput);
  schema::IspParams small;
  small.set_scratchpad_bytes(65536);
  EXPECT_THROW(IspConfig::from_params(schema::resolved(small, "isp")).q_tile_bytes(16384), BadInput);
  schema::FlashCoordinatorParams split;
  split.set_global_sram_bytes(4096);
  split.set_q_buffer_bytes(4096);
  EXPECT_THROW(CoordinatorConfig::from_params(schema::resolved(split, "flash_coordinator")), BadInput);
}

}  // namespace
}  // namespace ispsim::isp
