// Program builder: writes the op DAGs of one RAG request (FULL_PREFILL,
// PRECOMPUTED_BLEND, PRECOMPUTED_BLEND_FUSED) into a trace. Shared by the
// shape-only generator (synthetic HKVD masks) and the functional engine (real
// masks from real activations), so both emit exactly the same op structure.
//
// The op structure (traces/README.md, section "Generated traces"):
//   C = sum of doc_tokens (positions 0..C-1), Qn query tokens (C..P-1, P = C+Qn),
//   A answer tokens (decode step s has position P+s), L layers, H = popcount of
//   every mask hkvd_masks[1..L-1] (index 0 is unused: layer 0 is recomputed fully).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "traces/trace.pb.h"
#include "traces/trace_io.h"

namespace ispsim::tracegen {

// Decode with the dictionary-compressed KV cache (paper 1 Sec. 3.2.4-3.2.5), as
// the functional engine ran it (kernels/dict): per decode step and layer, the
// new token's KV joins the dense window (kv_append, dense format of
// model.kv_bits), a batch pursuit encodes the tokens that left the window
// (dict_encode, only when some did), and attention runs in the dictionary
// domain over the compressed tokens and the window (dict_attention).
struct DictionaryLayerStep {
  uint64_t window_tokens = 0;      // dense tokens the attention read
  uint64_t compressed_tokens = 0;  // tokens held as codes
  uint64_t encoded_tokens = 0;     // tokens encoded by this step (a multiple of U; 0 most steps)
  uint32_t k_low = 0;              // atoms of every compressed token (== k_high without hierarchy)
  double refine_fraction = 1.0;    // share of compressed tokens read at k_high (measured)
};

struct DictionaryDecode {
  trace::DictionarySettings settings;                   // the request's dictionary settings
  trace::PursuitMethod method = trace::PURSUIT_PROJECTION;
  std::vector<uint64_t> prefill_encoded_tokens;         // per layer: prompt tokens encoded after the prefill
  std::vector<std::vector<DictionaryLayerStep>> steps;  // [decode step][layer]
};

struct BlendRequest {
  trace::ModelShape model;
  std::vector<uint64_t> doc_tokens;  // context tokens of each retrieved document, in order
  uint64_t query_tokens = 0;         // Qn >= 1
  uint64_t answer_tokens = 0;        // A decode steps (0 allowed: prefill only)
  double recompute_ratio = 0.0;      // requested HKVD fraction, 0..1 (informational; H comes from the masks)
  std::vector<std::vector<bool>> hkvd_masks;  // per layer, [0] unused, each C bits
  // Set: the decode steps use the dictionary-compressed cache (FULL_PREFILL only;
  // kv_format KV_DICTIONARY with these settings); one entry per answer token.
  std::optional<DictionaryDecode> dictionary;
};

// Element types of a model's bit widths (ModelShape's *_bits): 32/16/8/4 bits
// are FP32/FP16/INT8/INT4, anything else DTYPE_UNSPECIFIED.
trace::DType dtype_for_bits(uint32_t bits);
// The dense KV format of kv_bits (16/8/4); anything else KV_FORMAT_UNSPECIFIED.
trace::KvFormat kv_format_for_bits(uint32_t bits);

// The three programs in the order a generated trace holds them.
std::vector<trace::Program> all_programs();

// Checks that the request can be built into `programs`: model shape, C >= 1,
// Qn >= 1, masks (L entries, [1..L-1] of C bits with the same popcount H >= 1;
// needed only for the blend programs, which also need L >= 2), no program twice.
// Throws BadInput(where, problem).
void check_blend_request(const BlendRequest& request, const std::vector<trace::Program>& programs,
                         const std::string& where = "blend request");

// Header for a trace of `request` with `programs`: format version, model,
// request (documents "doc0", "doc1", ...; kv_format from model.kv_bits; dataset
// name), program list with descriptions, and `producer` as given (the shape
// generator and the engine fill in their own kind, tool and settings).
trace::Header make_header(const BlendRequest& request, const std::vector<trace::Program>& programs,
                          const trace::Producer& producer, const std::string& dataset = {});

// Writes every op of `programs` (in the given order) to `writer`, whose header
// must come from make_header() with the same request and programs. Op ids start
// at 0 and increase by one across the whole file; deps name earlier ops of the
// same program. Checks the request first (check_blend_request).
void write_programs(trace::TraceWriter& writer, const BlendRequest& request,
                    const std::vector<trace::Program>& programs);
// The same ops, in the same order, handed to `sink` (a trace built in memory),
// which may move each op away: the emitter is done with it.
void emit_programs(const std::function<void(trace::Op&)>& sink, const BlendRequest& request,
                   const std::vector<trace::Program>& programs);

}  // namespace ispsim::tracegen
