// Quantization done once at model load (float code; not the inference path):
// symmetric INT8 weights per tensor or per (row, group of `group` columns),
// fake quantization for the float ablation rows, SmoothQuant smoothing factors,
// and the conversion of real scales to dyadic numbers for the integer path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/int/fixed_point.h"

namespace ispsim::integer {

// Granularity: group = 0 means one scale for the whole tensor; otherwise one
// scale per row and group of `group` consecutive columns (the hidden/input
// dimension), the last group possibly shorter.
struct QuantizedMatrix {
  int rows = 0, cols = 0, group = 0;
  std::vector<int8_t> q;       // [rows][cols], values in [-127, 127]
  std::vector<float> scale;    // [rows][groups] (group > 0) or [1]
  int groups() const { return group > 0 ? (cols + group - 1) / group : 1; }
  float scale_at(int row, int col) const { return group > 0 ? scale[static_cast<size_t>(row) * groups() + col / group] : scale[0]; }
};

// Symmetric round-to-nearest INT8 with scale max|w| / 127 (a zero block gets scale 0).
QuantizedMatrix quantize_matrix(const float* w, int rows, int cols, int group);
std::vector<float> dequantize(const QuantizedMatrix& m);

// Fake quantization of one activation row in place: per group of `group`
// elements with dynamic scale max|x_g| / 127 (group = 0: the whole row), or,
// when static_scale > 0, with that fixed scale (saturating at +-127).
void fake_quantize_row(float* x, int n, int group, float static_scale = 0.0f);

// SmoothQuant (Xiao et al. 2023): s_j = max|X_j|^alpha / max|W_j|^(1-alpha),
// where max|W_j| runs over column j of every matrix that reads X (e.g. q, k and
// v). Channels where either maximum is zero get s_j = 1. Dividing X_j (i.e.
// the preceding norm's weight) by s_j and multiplying column j of each matrix
// by s_j leaves the product unchanged.
std::vector<float> smoothquant_factors(const std::vector<float>& act_channel_max,
                                       const std::vector<const std::vector<float>*>& weights, int cols, float alpha);
void scale_columns(std::vector<float>& w, int cols, const std::vector<float>& s);

// v as mult * 2^-shift with mult < 2^mult_bits (v >= 0; v = 0 gives {0, 0}).
Dyadic to_dyadic(double v, int mult_bits = 24);

// Fractional bits so that max_abs * 2^frac lands just below 2^target_bits.
int frac_bits_for(double max_abs, int target_bits);

}  // namespace ispsim::integer
