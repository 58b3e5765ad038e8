// Acceptance check of the dataflow: the tiles the timing model streams (same
// placement, same Stream Filter, same row chunks), each turned into a partial
// softmax output on its channel and merged by the LSE reduction, give the same
// attention output as a plain float reference, within 1e-5. Covers GQA, the
// jagged causal mask of HKVD rows, substitutes from the out-of-place region,
// supplied vs in-flash appended KV, decode, and row chunks.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/server.h"
#include "models/isp/attention_engine.h"
#include "models/isp/elastic_simd.h"

namespace ispsim::isp {
namespace {

constexpr uint32_t kHeads = 4, kKvHeads = 2, kGroup = 2, kDim = 8;
constexpr uint64_t kContext = 40, kQuery = 5, kDecode = 3;
const std::vector<uint64_t> kHkvd = {1, 7, 16, 22, 33, 38};

trace::ModelShape model() {
  trace::ModelShape s;
  s.set_layers(2);
  s.set_heads(kHeads);
  s.set_kv_heads(kKvHeads);
  s.set_head_dim(kDim);
  s.set_kv_bits(16);
  s.set_activation_bits(16);
  return s;
}

nand::FlashConfig tiny_flash() {
  schema::NandParams p;
  p.set_channels(3);
  p.set_dies_per_channel(2);
  p.set_page_bytes(512);  // 16 tokens of K and V per page at d = 8, FP16
  p.set_blocks_per_plane(4);
  p.set_pages_per_block(8);
  return nand::FlashConfig::from_params(schema::resolved(p, "nand"));
}

using Vec = std::vector<float>;

// KV of one layer: precomputed entries, recomputed HKVD entries, and the request's
// own tokens (query + decoded), each [position][kv head][dim]; Q per position.
struct Data {
  std::map<uint64_t, std::vector<Vec>> k_pre, v_pre, k_re, v_re, k_own, v_own;
  std::map<uint64_t, std::vector<Vec>> q;  // [position][head][dim]
  trace::BitVector mask;

  Data() {
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    auto vecs = [&](uint32_t n) {
      std::vector<Vec> out(n, Vec(kDim));
      for (Vec& v : out)
        for (float& x : v) x = u(rng);
      return out;
    };
    for (uint64_t p = 0; p < kContext; ++p) {
      k_pre[p] = vecs(kKvHeads);
      v_pre[p] = vecs(kKvHeads);
    }
    for (uint64_t p : kHkvd) {
      k_re[p] = vecs(kKvHeads);
      v_re[p] = vecs(kKvHeads);
      q[p] = vecs(kHeads);
    }
    for (uint64_t p = kContext; p < kContext + kQuery + kDecode; ++p) {
      k_own[p] = vecs(kKvHeads);
      v_own[p] = vecs(kKvHeads);
      q[p] = vecs(kHeads);
    }
    std::string bytes((kContext + 7) / 8, '\0');
    for (uint64_t i : kHkvd) bytes[i / 8] = char(uint8_t(bytes[i / 8]) | (1u << (i % 8)));
    mask.set_bits(bytes);
    mask.set_bit_length(kContext);
  }

  // The KV entry that position p has after blending (substitute if recomputed).
  const Vec& key(uint64_t p, uint32_t h, bool masked) const {
    if (p >= kContext) return k_own.at(p)[h];
    return masked && k_re.count(p) ? k_re.at(p)[h] : k_pre.at(p)[h];
  }
  const Vec& value(uint64_t p, uint32_t h, bool masked) const {
    if (p >= kContext) return v_own.at(p)[h];
    return masked && v_re.count(p) ? v_re.at(p)[h] : v_pre.at(p)[h];
  }
};

float dot(const Vec& a, const Vec& b) {
  float s = 0;
  for (uint32_t i = 0; i < kDim; ++i) s += a[i] * b[i];
  return s;
}

// Plain attention in double: row at `position`, query head `head`, over the
// context (when `context`) and own tokens up to `last_own`.
Vec reference(const Data& d, uint64_t position, uint32_t head, uint64_t context, bool masked, uint64_t last_own,
              bool causal) {
  const uint32_t h = head / kGroup;
  std::vector<uint64_t> seen;
  for (uint64_t p = 0; p < context; ++p)
    if (!causal || p <= position) seen.push_back(p);
  for (uint64_t p = kContext; p <= last_own; ++p)
    if (!causal || p <= position) seen.push_back(p);
  const double scale = 1.0 / std::sqrt(double(kDim));
  std::vector<double> s;
  double m = -1e300;
  for (uint64_t p : seen) {
    double x = 0;
    for (uint32_t i = 0; i < kDim; ++i) x += double(d.q.at(position)[head][i]) * d.key(p, h, masked)[i];
    s.push_back(x * scale);
    m = std::max(m, s.back());
  }
  std::vector<double> o(kDim, 0.0);
  double l = 0;
  for (size_t j = 0; j < seen.size(); ++j) {
    const double e = std::exp(s[j] - m);
    l += e;
    for (uint32_t i = 0; i < kDim; ++i) o[i] += e * d.value(seen[j], h, masked)[i];
  }
  Vec out(kDim);
  for (uint32_t i = 0; i < kDim; ++i) out[i] = float(o[i] / l);
  return out;
}

struct Rig {
  nand::FlashArray flash;
  KvPlacement placement;
  core::Server dram, bus;
  AttentionEngine engine;
  explicit Rig(const CoordinatorConfig& coordinator)
      : flash("nand", tiny_flash()),
        placement(flash.config(), model(), kContext, kHkvd.size() + kQuery + kDecode),
        dram("dram", 16.0, sc_core::SC_ZERO_TIME),
        bus("bus", 8.0, sc_core::SC_ZERO_TIME),
        engine("isp", flash, placement, IspConfig::defaults(), std::make_unique<ElasticSimd>(IspConfig::defaults()), coordinator, Organization::PER_CHANNEL,
               Reduction::GLOBAL_SRAM, dram, bus, nullptr) {}
};

// Runs the dataflow of `work` tile by tile and compares every row-head.
void check(const Rig& rig, const Data& d, const AttentionWork& work, bool masked, uint64_t last_own,
           uint64_t expect_passes) {
  const AttentionPlan plan = rig.engine.plan(work);
  EXPECT_EQ(plan.passes, expect_passes);
  std::vector<PartialState> acc(kKvHeads, PartialState(work.query_rows * kGroup, kDim));
  std::vector<uint64_t> positions;
  const LseReduction lse{CoordinatorConfig::defaults()};
  uint64_t kept = 0;
  std::vector<uint64_t> tiles_per_channel(3, 0);
  for (uint64_t pass = 0; pass < plan.passes; ++pass) {
    const PassTiles tiles = rig.engine.pass_tiles(work, pass, true);
    positions.insert(positions.end(), tiles.row_positions.begin(), tiles.row_positions.end());
    for (const PlannedTile& tile : tiles.tiles) {
      ++tiles_per_channel[tile.channel];
      kept += tile.filter.kept;
      ASSERT_EQ(tile.filter.tokens.size(), tile.filter.kept);
      // This tile's partial, as its channel's Elastic-SIMD computes it.
      PartialState partial(tiles.rows * kGroup, kDim);
      for (uint64_t r = 0; r < tiles.rows; ++r) {
        for (uint32_t j = 0; j < kGroup; ++j) {
          const uint32_t head = tile.kv_head * kGroup + j;
          const Vec& q = d.q.at(tiles.row_positions[r])[head];
          for (const FilteredToken& t : tile.filter.tokens) {
            if (work.causal && t.position > tiles.row_positions[r]) continue;  // jagged mask
            const uint32_t h = tile.kv_head;
            const Vec& k = t.appended ? d.k_own.at(t.position)[h]
                                      : (t.substituted ? d.k_re.at(t.position)[h] : d.k_pre.at(t.position)[h]);
            const Vec& v = t.appended ? d.v_own.at(t.position)[h]
                                      : (t.substituted ? d.v_re.at(t.position)[h] : d.v_pre.at(t.position)[h]);
            partial.accumulate(r * kGroup + j, dot(q, k) / std::sqrt(float(kDim)), v.data());
          }
        }
      }
      lse.merge_into(acc[tile.kv_head], tiles.first_row * kGroup, partial);
    }
  }
  EXPECT_EQ(kept, plan.tokens_kept);
  for (uint64_t c = 0; c < 3; ++c) EXPECT_GT(tiles_per_channel[c], 0u) << "channel " << c;
  ASSERT_EQ(positions.size(), work.query_rows);
  for (uint32_t h = 0; h < kKvHeads; ++h) {
    const Vec out = acc[h].normalized();
    for (uint64_t r = 0; r < work.query_rows; ++r) {
      for (uint32_t j = 0; j < kGroup; ++j) {
        const Vec ref = reference(d, positions[r], h * kGroup + j, work.context_tokens, masked, last_own, work.causal);
        for (uint32_t i = 0; i < kDim; ++i) {
          EXPECT_NEAR(out[(r * kGroup + j) * kDim + i], ref[i], 1e-5)
              << "row " << r << " (position " << positions[r] << ") head " << h * kGroup + j << " dim " << i;
        }
      }
    }
  }
}

AttentionWork blend_work(const Data& d, uint64_t rows, uint64_t in_flash, uint64_t supplied) {
  AttentionWork w;
  w.layer = 1;
  w.query_rows = rows;
  w.shape = model();
  w.context_tokens = kContext;
  w.hkvd_mask = &d.mask;
  w.appended_tokens_in_flash = in_flash;
  w.appended_tokens_supplied = supplied;
  w.causal = true;
  return w;
}

const uint64_t kH = kHkvd.size();

TEST(NumericalDataflow, FusedPrefillMatchesReferenceAttention) {
  const Data d;
  Rig rig{CoordinatorConfig::defaults()};
  const AttentionWork w = blend_work(d, kH + kQuery, 0, kH + kQuery);
  EXPECT_EQ(rig.engine.pass_tiles(w, 0).row_positions.front(), kHkvd.front());
  EXPECT_EQ(rig.engine.pass_tiles(w, 0).row_positions.back(), kContext + kQuery - 1);
  check(rig, d, w, true, kContext + kQuery - 1, 1);
}

TEST(NumericalDataflow, JaggedRecomputationMatchesReferenceAttention) {
  const Data d;
  Rig rig{CoordinatorConfig::defaults()};
  const AttentionWork w = blend_work(d, kH, 0, kH);
  const AttentionPlan plan = rig.engine.plan(w);
  EXPECT_EQ(plan.tokens_dropped, (kContext - 1 - kHkvd.back()) * kKvHeads);  // after the last HKVD row
  EXPECT_EQ(plan.tokens_substituted, kH * kKvHeads);
  check(rig, d, w, true, kContext - 1, 1);
}

TEST(NumericalDataflow, QueryPrefillOverSubstitutesInFlashMatchesReferenceAttention) {
  const Data d;
  Rig rig{CoordinatorConfig::defaults()};
  check(rig, d, blend_work(d, kQuery, kH, kQuery), true, kContext + kQuery - 1, 1);
}

TEST(NumericalDataflow, DecodeStepMatchesReferenceAttention) {
  const Data d;
  Rig rig{CoordinatorConfig::defaults()};
  // Step 2: HKVD + query + two decoded tokens in flash, the third token came with the command.
  check(rig, d, blend_work(d, 1, kH + kQuery + 2, 1), true, kContext + kQuery + 2, 1);
}

TEST(NumericalDataflow, RowChunksOfASmallQBufferMatchReferenceAttention) {
  const Data d;
  CoordinatorConfig small = CoordinatorConfig::defaults();
  small.global_sram_bytes = 4096;
  small.q_buffer_bytes = 128;  // 2 rows of 4 heads x 8 x 2 B
  Rig rig{small};
  check(rig, d, blend_work(d, kH + kQuery, 0, kH + kQuery), true, kContext + kQuery - 1, 6);
}

TEST(NumericalDataflow, WithoutAMaskThePrecomputedKvIsUsedAsStored) {
  const Data d;
  Rig rig{CoordinatorConfig::defaults()};
  AttentionWork w = blend_work(d, kQuery, 0, kQuery);
  w.hkvd_mask = nullptr;  // query prefill over unblended precomputed KV
  EXPECT_EQ(rig.engine.plan(w).tokens_substituted, 0u);
  check(rig, d, w, false, kContext + kQuery - 1, 1);
}

}  // namespace
}  // namespace ispsim::isp
