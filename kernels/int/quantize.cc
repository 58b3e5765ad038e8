#include "kernels/int/quantize.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ispsim::integer {
namespace {
float max_abs(const float* x, int n) {
  float m = 0.0f;
  for (int i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}
int8_t quantize_value(float x, float scale) {
  if (scale <= 0.0f) return 0;
  long v = std::lround(x / scale);
  return static_cast<int8_t>(std::clamp(v, -127L, 127L));
}
}  // namespace

QuantizedMatrix quantize_matrix(const float* w, int rows, int cols, int group) {
  QuantizedMatrix m;
  m.rows = rows, m.cols = cols, m.group = group;
  m.q.resize(static_cast<size_t>(rows) * cols);
  if (group <= 0) {
    m.scale = {max_abs(w, rows * cols) / 127.0f};
    for (size_t i = 0; i < m.q.size(); ++i) m.q[i] = quantize_value(w[i], m.scale[0]);
    return m;
  }
  const int groups = m.groups();
  m.scale.resize(static_cast<size_t>(rows) * groups);
  for (int r = 0; r < rows; ++r)
    for (int g = 0; g < groups; ++g) {
      const int start = g * group, len = std::min(group, cols - start);
      const float* src = w + static_cast<size_t>(r) * cols + start;
      const float scale = max_abs(src, len) / 127.0f;
      m.scale[static_cast<size_t>(r) * groups + g] = scale;
      for (int k = 0; k < len; ++k) m.q[static_cast<size_t>(r) * cols + start + k] = quantize_value(src[k], scale);
    }
  return m;
}

std::vector<float> dequantize(const QuantizedMatrix& m) {
  std::vector<float> w(m.q.size());
  for (int r = 0; r < m.rows; ++r)
    for (int c = 0; c < m.cols; ++c) {
      const size_t i = static_cast<size_t>(r) * m.cols + c;
      w[i] = m.q[i] * m.scale_at(r, c);
    }
  return w;
}

void fake_quantize_row(float* x, int n, int group, float static_scale) {
  if (static_scale > 0.0f) {
    for (int i = 0; i < n; ++i) x[i] = quantize_value(x[i], static_scale) * static_scale;
    return;
  }
  const int g = group > 0 ? group : n;
  for (int start = 0; start < n; start += g) {
    const int len = std::min(g, n - start);
    const float scale = max_abs(x + start, len) / 127.0f;
    for (int i = start; i < start + len; ++i) x[i] = quantize_value(x[i], scale) * scale;
  }
}

std::vector<float> smoothquant_factors(const std::vector<float>& act_channel_max,
                                       const std::vector<const std::vector<float>*>& weights, int cols, float alpha) {
  std::vector<float> w_max(cols, 0.0f);
  for (const std::vector<float>* w : weights) {
    const size_t rows = w->size() / cols;
    for (size_t r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) w_max[c] = std::max(w_max[c], std::fabs((*w)[r * cols + c]));
  }
  std::vector<float> s(cols, 1.0f);
  for (int c = 0; c < cols; ++c)
    if (act_channel_max[c] > 0.0f && w_max[c] > 0.0f)
      s[c] = static_cast<float>(std::pow(act_channel_max[c], alpha) / std::pow(w_max[c], 1.0 - alpha));
  return s;
}

void scale_columns(std::vector<float>& w, int cols, const std::vector<float>& s) {
  for (size_t i = 0; i < w.size(); ++i) w[i] *= s[i % cols];
}

Dyadic to_dyadic(double v, int mult_bits) {
  Dyadic d;
  if (!(v > 0.0)) return d;
  // A shift outside [0, 126] cannot be applied to a 128-bit product: the caller's
  // value is not a scale (its loader must refuse it first).
  if (!std::isfinite(v) || v >= std::ldexp(1.0, mult_bits) || v < std::ldexp(1.0, mult_bits - 126))
    throw std::domain_error("to_dyadic: " + std::to_string(v) + " is not representable as mult * 2^-shift");
  int exponent = 0;
  std::frexp(v, &exponent);  // v = f * 2^exponent, f in [0.5, 1)
  int shift = mult_bits - exponent;
  double mult = std::round(std::ldexp(v, shift));
  if (mult >= std::ldexp(1.0, mult_bits)) mult = std::round(std::ldexp(v, --shift));
  d.mult = static_cast<int32_t>(mult);
  d.shift = shift;
  return d;
}

int frac_bits_for(double max_abs, int target_bits) {
  if (!(max_abs > 0.0)) return target_bits;
  int exponent = 0;
  std::frexp(max_abs, &exponent);  // max_abs < 2^exponent
  return target_bits - exponent;
}

}  // namespace ispsim::integer
