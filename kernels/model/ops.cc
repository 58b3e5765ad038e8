#include "kernels/model/ops.h"

#include <algorithm>
#include <cmath>

#include "kernels/model/linear_simd.h"
#include "kernels/model/parallel.h"

namespace ispsim::model {

float dot(const float* a, const float* b, int n) {
  // 16 independent partial sums: the compiler maps them onto vector registers,
  // and the additions no longer wait on one another (one chain is latency-bound).
  constexpr int kLanes = 16;
  float acc[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] += a[i + j] * b[i + j];
  float sum = 0.0f;
  for (; i < n; ++i) sum += a[i] * b[i];
  for (int j = 0; j < kLanes; ++j) sum += acc[j];
  return sum;
}

void linear(const float* x, int rows, int in, const float* w, const float* bias, int out, float* y) {
  // Threads split the output columns (weight rows): each output is computed
  // whole by one thread, so the result does not depend on the thread count.
  const Isa isa = active_isa();
  parallel_for(out, 32, [&](int o0, int o1) { linear_isa(isa, x, rows, in, w, bias, out, o0, o1, y); });
}

void rms_norm(const float* x, const float* weight, int n, float eps, float* out) {
  float ss = dot(x, x, n) / static_cast<float>(n);
  float scale = 1.0f / std::sqrt(ss + eps);
  for (int i = 0; i < n; ++i) out[i] = x[i] * scale * weight[i];
}

void layer_norm(const float* x, const float* weight, const float* bias, int n, float eps, float* out) {
  float mean = 0.0f;
#pragma omp simd reduction(+ : mean)
  for (int i = 0; i < n; ++i) mean += x[i];
  mean /= static_cast<float>(n);
  float var = 0.0f;
#pragma omp simd reduction(+ : var)
  for (int i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<float>(n);
  float scale = 1.0f / std::sqrt(var + eps);
  for (int i = 0; i < n; ++i) out[i] = (x[i] - mean) * scale * weight[i] + bias[i];
}

void softmax(float* x, int n) {
  float max = *std::max_element(x, x + n);
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  float inv = 1.0f / sum;
  for (int i = 0; i < n; ++i) x[i] *= inv;
}

std::vector<float> rope_inv_freq(const Config& c) {
  const int half = c.head_dim / 2;
  std::vector<float> inv(half);
  for (int i = 0; i < half; ++i)
    inv[i] = 1.0f / std::pow(c.rope_theta, static_cast<float>(2 * i) / static_cast<float>(c.head_dim));
  if (!c.rope_llama3) return inv;
  const float pi = 3.14159265358979323846f;
  const float old_ctx = static_cast<float>(c.rope_original_max_positions);
  const float low_freq_wavelen = old_ctx / c.rope_low_freq_factor;
  const float high_freq_wavelen = old_ctx / c.rope_high_freq_factor;
  for (float& f : inv) {
    float wavelen = 2.0f * pi / f;
    if (wavelen > low_freq_wavelen) {
      f = f / c.rope_factor;  // long wavelengths: fully interpolated
    } else if (wavelen >= high_freq_wavelen) {
      float smooth = (old_ctx / wavelen - c.rope_low_freq_factor) / (c.rope_high_freq_factor - c.rope_low_freq_factor);
      f = (1.0f - smooth) * f / c.rope_factor + smooth * f;
    }  // short wavelengths: unchanged
  }
  return inv;
}

void rope_angles(const std::vector<float>& inv_freq, int pos, float* cos_out, float* sin_out) {
  for (size_t i = 0; i < inv_freq.size(); ++i) {
    float angle = static_cast<float>(pos) * inv_freq[i];  // FP32 product, as transformers
    cos_out[i] = std::cos(angle);
    sin_out[i] = std::sin(angle);
  }
}

void apply_rope(float* head, int head_dim, const float* cos_v, const float* sin_v) {
  const int half = head_dim / 2;
  for (int i = 0; i < half; ++i) {
    float a = head[i], b = head[i + half];
    head[i] = a * cos_v[i] - b * sin_v[i];
    head[i + half] = b * cos_v[i] + a * sin_v[i];
  }
}

}  // namespace ispsim::model
