#include "kernels/dict/int_pursuit.h"

#include <cstddef>

#include "kernels/int/gemv_int8.h"
#include "kernels/int/requant.h"

namespace ispsim::dict {

void int_projection_pursuit(const IntDictionaryView& d, const int32_t* x, int k, IntSparseCode& code,
                            IntPursuitScratch& s, int32_t* residual_out) {
  code.index.clear();
  code.coef.clear();
  s.residual.assign(x, x + d.dim);
  s.r8_wide.resize(d.dim);
  s.r8.resize(d.dim);
  s.corr.resize(d.atoms);
  s.selected.assign(d.atoms, 0);
  for (int t = 0; t < k; ++t) {
    // Residual to INT8 with one power-of-two scale: r8 = round(r / 2^shift).
    const int shift = integer::requantize_token(s.residual.data(), d.dim, 8, s.r8_wide.data());
    for (int i = 0; i < d.dim; ++i) s.r8[i] = static_cast<int8_t>(s.r8_wide[i]);
    integer::gemv_s8(d.q, s.r8.data(), d.atoms, d.dim, s.corr.data());  // c = D_q^T r8, exact
    int best = -1;
    int64_t best_abs = -1;
    for (int j = 0; j < d.atoms; ++j) {
      const int64_t a = integer::abs64(s.corr[j]);
      if (!s.selected[j] && a > best_abs) {
        best_abs = a;
        best = j;
      }
    }
    s.selected[best] = 1;
    // c · 2^shift is the correlation in units of s_D · 2^-F.
    const int64_t coef = integer::round_shift(s.corr[best], -shift);
    code.index.push_back(best);
    code.coef.push_back(coef);
    const int8_t* atom = d.q + static_cast<std::size_t>(best) * d.dim;
    for (int i = 0; i < d.dim; ++i)
      s.residual[i] = integer::saturate_int32(int64_t{s.residual[i]} - integer::apply(d.scale_sq, coef * atom[i]));
  }
  if (residual_out != nullptr)
    for (int i = 0; i < d.dim; ++i) residual_out[i] = s.residual[i];
}

}  // namespace ispsim::dict
