// The AMX-INT8 GEMM: the tile emulation against the SDM's definitions, the
// 64-byte configuration operand, and the kernel bit-exact with the scalar
// reference on the emulated tiles (every machine) and on the CPU's tiles
// (skipped, with the reason, where there are none).
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/int/amx_gemm.h"
#include "kernels/int/amx_tiles.h"
#include "kernels/int/gemv_int8.h"
#include "kernels/model/cpu_isa.h"
#include "kernels/model/parallel.h"
#include "tests/kernels/int/gemm_case.h"

namespace ispsim::integer {
namespace {

using amx::EmulatedTiles;
using amx::TileConfig;
using model::Isa;

TileConfig config_of(std::initializer_list<std::array<int, 3>> tiles) {  // {tile, rows, colsb}
  TileConfig cfg;
  cfg.bytes[0] = 1;
  for (const auto& t : tiles) cfg.set(t[0], t[1], t[2]);
  return cfg;
}

class AmxTileEmulation : public ::testing::Test {
 protected:
  void TearDown() override { EmulatedTiles::release(); }
};

// c[m][n] += Σ_k Σ_i a[m][4k+i] · b[k][4n+i], signed bytes, 32-bit wrap-around.
TEST_F(AmxTileEmulation, DpbssdAddsFourSignedProductsPerDwordAndWraps) {
  EmulatedTiles::configure(config_of({{0, 2, 8}, {1, 2, 8}, {2, 2, 8}}));  // C, A: 2 x 8 bytes; B: 2 rows
  const int8_t a[2][8] = {{1, -2, 3, -4, 5, 6, 7, 8}, {-128, -128, -128, -128, 127, 0, 0, 0}};
  const int8_t b[2][8] = {{1, 1, 1, 1, -1, 2, -3, 4}, {2, 0, 0, 0, -128, -128, -128, -128}};
  const int32_t c0[2][2] = {{10, -20}, {INT32_MIN + 100, 0}};
  EmulatedTiles::load_tile(1, a, 8);
  EmulatedTiles::load_tile(2, b, 8);
  EmulatedTiles::load_tile(0, c0, 8);
  EmulatedTiles::dpbssd_tiles(0, 1, 2);
  int32_t c[2][2];
  EmulatedTiles::store_tile(0, c, 8);
  // row 0: k = 0 pairs a[0][0..3] with b[0][4n..], k = 1 pairs a[0][4..7] with b[1][4n..]
  EXPECT_EQ(c[0][0], 10 + (1 - 2 + 3 - 4) + 5 * 2);
  EXPECT_EQ(c[0][1], -20 + (-1 - 4 - 9 - 16) + (5 + 6 + 7 + 8) * -128);
  // row 1: −512 + 254 added to INT32_MIN + 100 wraps around (no saturation)
  EXPECT_EQ(c[1][0], static_cast<int32_t>(0x80000000u + 100u - 512u + 254u));
  EXPECT_GT(c[1][0], 0);
  EXPECT_EQ(c[1][1], -128 * (-1 + 2 - 3 + 4) + 127 * -128);
}

TEST_F(AmxTileEmulation, ReadsEachTilesShapeFromTheSdmOffsetsOfTheConfiguration) {
  TileConfig cfg;
  cfg.bytes[0] = 1;
  cfg.bytes[16 + 2 * 5] = 12;  // tile 5: 12 bytes per row ...
  cfg.bytes[48 + 5] = 3;       // ... 3 rows
  EmulatedTiles::configure(cfg);
  std::vector<uint8_t> src(16 * 64), dst(16 * 64, 0x5A);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i);
  EmulatedTiles::load_tile(5, src.data(), 64);
  EmulatedTiles::store_tile(5, dst.data(), 20);  // another stride
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 20; ++k) {
      const bool inside = r < 3 && k < 12;
      EXPECT_EQ(dst[r * 20 + k], inside ? src[r * 64 + k] : 0x5A) << r << "," << k;
    }
  EXPECT_THROW(EmulatedTiles::load_tile(4, src.data(), 64), std::logic_error);  // tile 4 not configured
}

TEST_F(AmxTileEmulation, RejectsTheConfigurationsLdtilecfgFaultsOn) {
  auto rejected = [](TileConfig cfg) {
    try {
      EmulatedTiles::configure(cfg);
    } catch (const std::logic_error&) {
      return true;
    }
    return false;
  };
  EXPECT_FALSE(rejected(amx::gemm_tile_config(64)));
  for (int reserved : {2, 15, 32, 47, 56, 63}) {
    TileConfig cfg = amx::gemm_tile_config(64);
    cfg.bytes[reserved] = 1;
    EXPECT_TRUE(rejected(cfg)) << "reserved byte " << reserved;
  }
  EXPECT_TRUE(rejected(config_of({{0, 17, 64}})));  // more than 16 rows
  EXPECT_TRUE(rejected(config_of({{0, 16, 65}})));  // more than 64 bytes per row
  EXPECT_TRUE(rejected(config_of({{3, 4, 0}})));    // rows without bytes per row
  TileConfig palette2 = amx::gemm_tile_config(64);
  palette2.bytes[0] = 2;
  EXPECT_TRUE(rejected(palette2));
  // Mismatched shapes: A's 8 bytes per row need a B of 2 rows.
  EmulatedTiles::configure(config_of({{0, 2, 8}, {1, 2, 8}, {2, 3, 8}}));
  EXPECT_THROW(EmulatedTiles::dpbssd_tiles(0, 1, 2), std::logic_error);
}

// The GEMM's configuration as the hardware gets it: built in a local struct
// and passed through ISPSIM_TILE_CONFIG_OPERAND, every byte arrives (with an
// 8-byte operand, as GCC 12's _tile_loadconfig declares, an optimizing build
// drops the stores of the rows and bytes per row).
TEST(AmxTileConfig, EveryByteOfTheConfigurationReachesTheInstruction) {
  for (int kc : {4, 36, 48, 64}) {
    const TileConfig expected = amx::gemm_tile_config(kc);
    EXPECT_EQ(expected.bytes[0], 1);
    for (int t : {amx::kC00, amx::kC01, amx::kC10, amx::kC11}) EXPECT_EQ(expected.rows(t) * 1000 + expected.colsb(t), 16064);
    for (int t : {amx::kA0, amx::kA1}) EXPECT_EQ(expected.rows(t) * 1000 + expected.colsb(t), 16000 + kc);
    for (int t : {amx::kB0, amx::kB1}) EXPECT_EQ(expected.rows(t) * 1000 + expected.colsb(t), kc / 4 * 1000 + 64);
    const TileConfig copied = amx::copy_through_config_operand(kc);
    EXPECT_EQ(std::memcmp(copied.bytes, expected.bytes, 64), 0) << "chunk " << kc;
  }
}

// Shapes where tokens (M), output rows (N) and columns (K) are not multiples
// of the tile sizes (16, 16, 64), groups of 4-256 columns (chunks of 4-64).
const std::vector<std::array<int, 4>> kOddShapes = {
    {1, 1, 4, 4},      {17, 33, 300, 128}, {40, 50, 100, 32}, {16, 16, 64, 64},   {33, 47, 1000, 128},
    {5, 20, 130, 128}, {18, 18, 70, 36},   {31, 64, 576, 256}, {3, 17, 12, 4},    {20, 9, 200, 96}};

void expect_tiles_equal_scalar(TileBackend backend, Isa scaling_level) {
  std::mt19937 rng(34);
  for (const auto& s : kOddShapes) {
    const GemmCase c = make_case(s[0], s[1], s[2], s[3], rng);
    const PackedS8 packed = pack_s8_any_cpu(c.W.data(), c.rows, c.cols, c.group, c.wsc.data());
    ASSERT_FALSE(packed.empty());
    model::set_active_isa(Isa::kScalar);
    const std::vector<int32_t> reference = run_gemm(c, nullptr);
    model::set_active_isa(scaling_level);
    for (int threads : {1, 3}) {
      model::set_engine_threads(threads);
      std::vector<int32_t> Y(reference.size(), 0x5A5A5A5A);
      gemm_s8_tiles(packed, c.X.data(), c.tokens, c.act.data(), Y.data(), backend);
      EXPECT_EQ(Y, reference) << s[0] << " tokens x " << s[1] << " rows x " << s[2] << " columns, group " << s[3]
                              << ", " << threads << " threads, scaling at " << model::isa_name(scaling_level);
    }
  }
}

class AmxGemm : public ::testing::Test {
 protected:
  void TearDown() override {
    model::set_active_isa(model::best_isa());
    model::set_engine_threads(1);
  }
};

TEST_F(AmxGemm, EmulatedTilesAreBitExactWithScalarOnOddShapes) {
  expect_tiles_equal_scalar(TileBackend::kEmulated, Isa::kScalar);
  if (model::isa_supported(Isa::kAvx512)) expect_tiles_equal_scalar(TileBackend::kEmulated, Isa::kAvx512);
}

TEST_F(AmxGemm, EmulatedTilesKeepExtremePartialsExact) {
  // 16 tokens of 4096 products ±127·127 in groups of 256: every group's partial is ±4 129 024.
  const int tokens = 16, cols = 4096, group = 256, groups = cols / group;
  std::vector<int8_t> W(2 * cols, 127), X(static_cast<size_t>(tokens) * cols, 127);
  for (int k = 0; k < cols; ++k) W[cols + k] = -127;
  std::vector<Dyadic> act(static_cast<size_t>(tokens) * groups, Dyadic{1, 1}), wsc(2 * groups, Dyadic{1, 1});
  const PackedS8 packed = pack_s8_any_cpu(W.data(), 2, cols, group, wsc.data());
  std::vector<int32_t> Y(static_cast<size_t>(tokens) * 2);
  gemm_s8_tiles(packed, X.data(), tokens, act.data(), Y.data(), TileBackend::kEmulated);
  for (int t = 0; t < tokens; ++t) {
    EXPECT_EQ(Y[2 * t], groups * round_shift(256 * 127 * 127, 2));
    EXPECT_EQ(Y[2 * t + 1], groups * round_shift(-256 * 127 * 127, 2));
  }
}

TEST_F(AmxGemm, HardwareTilesAreBitExactWithScalar) {
  if (!amx_hardware_built()) GTEST_SKIP() << "built without -mamx-tile -mamx-int8 support";
  if (!model::isa_supported(Isa::kAmx)) GTEST_SKIP() << "amx: " << model::isa_unsupported_reason(Isa::kAmx);
  expect_tiles_equal_scalar(TileBackend::kHardware, Isa::kAmx);
  // And through the engine's dispatch, which sends batches of 16 or more tokens to the tiles.
  std::mt19937 rng(3);
  const GemmCase c = make_case(37, 45, 576, 128, rng);
  const PackedS8 packed = pack_s8(c.W.data(), c.rows, c.cols, c.group, c.wsc.data());
  model::set_active_isa(Isa::kScalar);
  const std::vector<int32_t> reference = run_gemm(c, nullptr);
  model::set_active_isa(Isa::kAmx);
  EXPECT_EQ(run_gemm(c, &packed), reference);
}

}  // namespace
}  // namespace ispsim::integer
