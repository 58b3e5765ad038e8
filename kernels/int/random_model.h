// Random-weight Llama-family models for tests and benchmarks (no checkpoint
// needed). Weights ~ U(-1, 1) / sqrt(fan_in) so activations stay of order one;
// norm weights 1. Deterministic for a given seed.
#pragma once

#include <cstdint>

#include "kernels/model/model.h"

namespace ispsim::integer {

// A Llama-family (RMSNorm, SwiGLU, RoPE) or, for Family::kOpt, a pre-LN OPT
// model (LayerNorm and linear biases U(-1, 1), learned positions, ReLU).
model::Model make_random_model(const model::Config& config, uint32_t seed);

// A pre-LN OPT configuration (MHA, biases, tied embeddings) of the given shape.
model::Config opt_config(int vocab, int hidden, int ffn, int layers, int heads, int max_positions);

// SmolLM2-135M's shape (HF config.json of HuggingFaceTB/SmolLM2-135M): 30
// layers, hidden 576, 9 heads, 3 KV heads, FFN 1536, vocab 49152, RoPE theta
// 100000, tied embeddings, max 8192 positions.
model::Config smollm2_135m_config();

}  // namespace ispsim::integer
