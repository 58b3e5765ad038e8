// Shape-only decode programs (paper 1, Sec. 4 "Layer modeling"): decode steps of
// a model preset over an existing context of C tokens, without weights. One trace
// holds two programs of the same request:
//   DECODE_ONLY             dense KV (the model's kv_bits): every step appends its
//                           token's K and V and attends over all C + s + 1 tokens
//                           (platform B1);
//   DECODE_ONLY_DICTIONARY  dictionary-compressed KV (Sec. 3.2.4): the step's KV
//                           is appended to the dense local window; when the window
//                           reaches W + U tokens its oldest U tokens are
//                           sparse-coded (dict_encode, K_high pursuit iterations)
//                           and leave the window; attention runs in the dictionary
//                           domain over the compressed tokens plus the window
//                           (dict_attention with K_low / K_high / refine fraction)
//                           (platforms B2, S1, S2).
//
// Window bookkeeping: before step 0 the first c0 = U * floor(max(0, C - W) / U)
// tokens are compressed and the window holds w0 = C - c0 tokens (W <= w0 < W + U
// when C >= W). Step s appends one token (w += 1); if then w >= W + U, the
// oldest U are encoded (c += U, w -= U). Every U consecutive steps therefore
// hold exactly one batch pursuit per layer, so U steps give the mean
// time-between-tokens with the pursuit amortised exactly.
//
// Per step: embedding (1 row); per layer: norm -> qkv_proj -> rope (not OPT) ->
// kv_append -> [dict_encode] -> attention -> o_proj -> residual -> norm ->
// ffn_up -> SwiGLU (OPT: ReLU) -> ffn_down -> residual; then the final norm and
// the LM head. Each op depends on the one before it (the decode chain is
// sequential, paper 1 Sec. 4 "Cost primitives and overlap"); the next step's
// embedding depends on the LM head. Ops: A * (L * (B + e) + 3) with B = 12 (OPT
// 11) and e = 1 for a layer whose step compresses (dictionary program only).
#pragma once

#include <cstdint>
#include <string>

#include "traces/trace.pb.h"
#include "traces/trace_io.h"

namespace ispsim::tracegen {

// Generator limits (memory and file size, not format limits).
constexpr uint64_t kMaxDecodeContextTokens = uint64_t{1} << 20;
constexpr uint64_t kMaxDecodeSteps = 4096;

struct DecodeRequest {
  trace::ModelShape model;
  uint64_t context_tokens = 0;           // C >= 1: tokens in the KV cache before step 0
  uint64_t decode_steps = 0;             // A >= 1
  trace::DictionarySettings dictionary;  // settings of the dictionary program
};

// Paper 1 Sec. 5.1: M = 32768 atoms, K_low = 3, K_high = 16, refine 10 %,
// W = 128, U = 32, INT8 dictionaries; 16-bit indices (32768 atoms need 15 bits)
// and INT8 coefficients (this project's choice: the integer pipeline's width;
// the paper does not state the code width).
trace::DictionarySettings paper_dictionary_settings();

// The dictionary state of a step (see the window bookkeeping above).
struct WindowState {
  uint64_t compressed = 0;  // tokens held as sparse codes
  uint64_t window = 0;      // dense tokens in the local window
  bool encodes = false;     // whether this step ran a batch pursuit of U tokens
};
// State before step 0 (encodes = false).
WindowState initial_window(uint64_t context_tokens, const trace::DictionarySettings& d);
// State after one step's append (and batch pursuit, if due) from `before`.
WindowState step_window(const WindowState& before, const trace::DictionarySettings& d);

// Checks the request (model shape, C >= 1, A >= 1, positions within the trace
// limits, dictionary settings consistent). Throws BadInput(where, problem).
void check_decode_request(const DecodeRequest& request, const std::string& where = "decode request");

// Header of a decode trace: one document "context" of C tokens, no query, A
// answer tokens, kv_format KV_DICTIONARY with `request.dictionary` (the dense
// program's KV ops name their own format), both programs.
trace::Header make_decode_header(const DecodeRequest& request, const trace::Producer& producer);

// Writes the ops of both programs (DECODE_ONLY first) to `writer`, whose
// header came from make_decode_header(request, ...). Op ids start at 0.
void write_decode_programs(trace::TraceWriter& writer, const DecodeRequest& request);

// The shape-only decode trace of a model preset: `ispsim trace gen --decode`.
void generate_decode_trace(const DecodeRequest& request, const std::string& path);

}  // namespace ispsim::tracegen
