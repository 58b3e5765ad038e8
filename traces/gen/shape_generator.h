// Shape-only trace generator: a model preset, a dataset profile and a seed (plus
// optional overrides) give a BlendRequest with seeded synthetic per-layer HKVD
// masks, which the program builder turns into the three programs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "traces/gen/dataset_profiles.h"
#include "traces/gen/program_builder.h"

namespace ispsim::tracegen {

// Recomputation ratio: CacheBlend's and MemLLM's default, 15 % (paper 2
// Sec. VI-A; SPEC.md).
constexpr double kDefaultRecomputeRatio = 0.15;
// Fraction of the selected tokens that change from one layer's HKVD set to the
// next. CacheBlend (Yao et al., EuroSys 2025, arXiv:2405.16444, Sec. 4.3)
// observes that tokens with the highest KV deviation on one layer are very likely
// among the highest on the next, which is why it selects gradually layer by layer;
// it gives no per-layer churn figure, so 10 % is this project's choice.
constexpr double kDefaultMaskResampleFraction = 0.10;
// Seed when none is given.
constexpr uint64_t kDefaultSeed = 1;
// Sanity limits of the generator (not of the trace format): they keep a
// generated trace within memory and disk bounds (each attention op of the blend
// programs carries a C-bit mask).
constexpr uint64_t kMaxGeneratedContextTokens = uint64_t{1} << 20;  // C, all documents
constexpr uint64_t kMaxGeneratedDocs = 1024;
constexpr uint64_t kMaxGeneratedQueryTokens = uint64_t{1} << 16;
constexpr uint64_t kMaxGeneratedAnswerTokens = 4096;  // about 5 million ops for a 32-layer model
// Bytes of HKVD masks the blend programs would carry (estimated_mask_bytes).
constexpr uint64_t kMaxGeneratedMaskBytes = uint64_t{1} << 31;  // 2 GiB

struct ShapeOptions {
  std::string model;    // preset name (model_presets.h)
  std::string dataset;  // profile key (dataset_profiles.h)
  uint64_t seed = kDefaultSeed;
  double recompute_ratio = kDefaultRecomputeRatio;  // 0..1
  double mask_resample_fraction = kDefaultMaskResampleFraction;  // 0..1
  uint64_t docs = kDefaultTopK;                 // >= 1
  std::optional<uint64_t> context_tokens;       // per document; drawn from the profile if absent
  std::optional<uint64_t> query_tokens;         // drawn if absent
  std::optional<uint64_t> answer_tokens;        // drawn if absent
  // Caps for runs that must stay short (the MemLlmGrid acceptance test): drawn
  // document lengths are scaled down together (each by cap / drawn total, rounded
  // down, at least 1 token) when their total exceeds max_context_tokens, keeping
  // the profile's relative lengths; a drawn answer is cut to max_answer_tokens.
  // Given lengths are not capped.
  std::optional<uint64_t> max_context_tokens;
  std::optional<uint64_t> max_answer_tokens;
};

// H = round(ratio * C) selected context tokens per layer.
uint64_t selected_tokens(uint64_t context_tokens, double recompute_ratio);

// Synthetic HKVD masks for `layers` layers over `context_tokens` tokens: [0] is
// empty (layer 0 is recomputed fully); layer 1 selects H tokens uniformly at
// random; each deeper layer keeps the previous selection except
// round(resample_fraction * H) tokens (at most min(H, C - H)), which are swapped
// for as many unselected ones, both chosen uniformly. H is the same in every layer.
std::vector<std::vector<bool>> synthetic_hkvd_masks(uint32_t layers, uint64_t context_tokens, uint64_t selected,
                                                    double resample_fraction, uint64_t seed);

// Bytes of the masks the two blend programs carry: ceil(C / 8) per masked
// attention or KV append; per layer >= 1: recomputation append + attention, query
// attention, fused append + attention, and one masked attention per decode step
// and blend program: (L - 1) x (5 + 2 A) masks (the fused appends' P bits
// counted as C).
uint64_t estimated_mask_bytes(uint32_t layers, uint64_t context_tokens, uint64_t answer_tokens);

// The request the options describe (lengths drawn from the dataset profile
// where not given). Bad options → BadInput naming the option.
BlendRequest make_shape_request(const ShapeOptions& options);

// Producer of a shape-generated trace: kind, tool and the settings used.
trace::Producer shape_producer(const ShapeOptions& options);

// Generates the trace with all three programs into `path` (atomically).
void generate_shape_trace(const ShapeOptions& options, const std::string& path);

}  // namespace ispsim::tracegen
