// The engine's worker threads (`--threads N`). Work is split into fixed,
// contiguous ranges of independent outputs (matrix rows, attention heads), so
// every output is computed by the same code in the same order whatever the
// thread count: results are bit-identical at any N. No reduction crosses a
// thread boundary.
//
// Integer-only header: included by the no-float integer kernels.
#pragma once

namespace ispsim::model {

// Threads the kernels use (default 1; the caller's thread counts as one).
void set_engine_threads(int n);
int engine_threads();

// Calls fn(ctx, begin, end) on disjoint ranges covering [0, n), split at
// multiples of `align`; returns when all have finished. Ranges depend only on
// n, align and engine_threads(), and every output must be computed within one
// range (no reduction across ranges). One parallel_ranges at a time (the pool
// is shared): calls from inside fn run inline.
void parallel_ranges(int n, int align, void (*fn)(void* ctx, int begin, int end), void* ctx);

// Lambda form: body(begin, end).
template <typename Body>
void parallel_for(int n, int align, Body&& body) {
  parallel_ranges(
      n, align, [](void* ctx, int begin, int end) { (*static_cast<Body*>(ctx))(begin, end); },
      static_cast<void*>(&body));
}

}  // namespace ispsim::model
