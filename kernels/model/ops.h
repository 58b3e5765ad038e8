// FP32 building blocks of the reference forward pass: plain loops over
// contiguous arrays, written so the compiler vectorises them.
#pragma once

#include <vector>

#include "kernels/model/model.h"

namespace ispsim::model {

float dot(const float* a, const float* b, int n);

// y[t, o] = sum_i x[t, i] * w[o, i] + bias[o] for t < rows; w is [out, in]
// row-major as stored in checkpoints; bias may be null.
void linear(const float* x, int rows, int in, const float* w, const float* bias, int out, float* y);

// out = x / sqrt(mean(x^2) + eps) * weight (Llama/Qwen2 RMSNorm). out may alias x.
void rms_norm(const float* x, const float* weight, int n, float eps, float* out);

// out = (x - mean) / sqrt(var + eps) * weight + bias, biased variance (torch LayerNorm).
void layer_norm(const float* x, const float* weight, const float* bias, int n, float eps, float* out);

// In place, numerically stable (max subtracted).
void softmax(float* x, int n);

inline float silu(float x);

// Rotary frequencies inv_freq[i], i < head_dim/2, as transformers computes them
// in FP32: rope_theta^(-2i/head_dim), then the Llama-3 rule when configured
// (frequencies with wavelength above original_max/low_freq_factor divided by
// factor, below original_max/high_freq_factor kept, smooth blend between).
std::vector<float> rope_inv_freq(const Config& config);

// cos/sin of pos * inv_freq[i] for one position (head_dim/2 values each).
void rope_angles(const std::vector<float>& inv_freq, int pos, float* cos_out, float* sin_out);

// Rotates one head vector in place with the rotate_half pairing used by
// transformers for Llama and Qwen2: element i pairs with i + head_dim/2.
void apply_rope(float* head, int head_dim, const float* cos_v, const float* sin_v);

}  // namespace ispsim::model

#include <cmath>

inline float ispsim::model::silu(float x) { return x / (1.0f + std::exp(-x)); }
