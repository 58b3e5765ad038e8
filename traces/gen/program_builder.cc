#include "traces/gen/program_builder.h"

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>

#include "common/error.h"
#include "traces/trace_validator.h"

namespace ispsim::tracegen {

using trace::Op;

namespace {

bool is_blend(trace::Program p) {
  return p == trace::PRECOMPUTED_BLEND || p == trace::PRECOMPUTED_BLEND_FUSED;
}

uint64_t count_set(const std::vector<bool>& bits) {
  return static_cast<uint64_t>(std::count(bits.begin(), bits.end(), true));
}

trace::BitVector pack_bits(const std::vector<bool>& bits) {
  std::string bytes((bits.size() + 7) / 8, '\0');
  for (size_t i = 0; i < bits.size(); ++i)
    if (bits[i]) bytes[i / 8] = static_cast<char>(static_cast<unsigned char>(bytes[i / 8]) | (1u << (i % 8)));
  trace::BitVector v;
  v.set_bits(std::move(bytes));
  v.set_bit_length(bits.size());
  return v;
}

trace::TokenRange range(uint64_t begin, uint64_t end) {
  trace::TokenRange r;
  r.set_begin(begin);
  r.set_end(end);
  return r;
}

trace::KvSpan span(uint64_t begin, uint64_t end, trace::KvRegion region) {
  trace::KvSpan s;
  *s.mutable_tokens() = range(begin, end);
  s.set_region(region);
  return s;
}

uint64_t context_of(const BlendRequest& request) {
  uint64_t c = 0;
  for (uint64_t n : request.doc_tokens) c += n;
  return c;
}

// KV appended by one dense block: the rows' token positions, optionally masked.
struct KvAppendSpec {
  uint64_t begin = 0;
  uint64_t end = 0;
  const std::vector<bool>* mask = nullptr;  // end - begin bits, or none
};

// One dense block (contract4.md): its rows, phase, the KV it appends and the
// attention it runs. With `reuse_q` the norm/qkv_proj/rope ops are skipped and
// the identification pass's rope (or qkv_proj for OPT) supplies Q, K and V.
struct DenseBlock {
  uint32_t layer = 0;
  uint64_t rows = 0;
  trace::Phase phase = trace::PHASE_UNSPECIFIED;
  std::optional<uint32_t> decode_step;
  std::vector<uint64_t> first_deps;  // of the block's first op
  std::optional<uint64_t> reuse_q;
  KvAppendSpec append;
  trace::Attention attention;  // query_rows, kv spans, mask, causal (dtype filled in)
  std::vector<uint64_t> extra_attention_deps;
  // Dictionary-compressed cache: the appended KV goes to the dense window in the
  // model's dense format; `encoded` tokens are sparse-coded after the append
  // (none: no dict_encode op); attention is dict_attention instead.
  const DictionaryLayerStep* dictionary = nullptr;
  uint64_t encoded = 0;
};

struct BlockIds {
  uint64_t q_ready = 0;    // rope (or qkv_proj for OPT) that produced Q/K/V
  uint64_t kv_append = 0;
  uint64_t last = 0;       // the final residual add
};

// Writes the ops of one program with consecutive ids.
class ProgramEmitter {
 public:
  ProgramEmitter(const std::function<void(trace::Op&)>& sink, const BlendRequest& request,
                 trace::Program program, uint64_t& next_id)
      : sink_(sink), request_(request), model_(request.model), program_(program), next_id_(next_id) {
    context_ = context_of(request);
    prompt_ = context_ + request.query_tokens;
    act_ = dtype_for_bits(model_.activation_bits());
    weight_ = dtype_for_bits(model_.weight_bits());
    kv_ = dtype_for_bits(model_.kv_bits());
    kv_bytes_per_token_ = trace::dense_kv_bytes_per_token(model_, trace::KV_PARTS_K_AND_V, model_.kv_bits());
    opt_ = model_.family() == trace::ARCHITECTURE_OPT;
  }

  void write() {
    switch (program_) {
      case trace::FULL_PREFILL: write_full_prefill(); break;
      case trace::PRECOMPUTED_BLEND: write_blend(false); break;
      case trace::PRECOMPUTED_BLEND_FUSED: write_blend(true); break;
      default: throw std::logic_error("ProgramEmitter: unsupported program");  // checked before
    }
  }

 private:
  Op make(trace::Phase phase, const char* label, std::vector<uint64_t> deps, std::optional<uint32_t> layer,
          std::optional<uint32_t> decode_step) const {
    Op op;
    op.set_program(program_);
    op.set_phase(phase);
    op.set_label(label);
    for (uint64_t d : deps)  // a few each: a linear check is cheaper than a set
      if (std::find(op.deps().begin(), op.deps().end(), d) == op.deps().end()) op.add_deps(d);
    if (layer) op.set_layer(*layer);
    if (decode_step) op.set_decode_step(*decode_step);
    return op;
  }

  uint64_t emit(Op& op) {
    const uint64_t id = next_id_++;
    op.set_id(id);
    sink_(op);  // may take the op
    return id;
  }

  uint64_t nonlinear(trace::Phase phase, const char* label, trace::NonlinearKind kind, uint64_t elements,
                     std::vector<uint64_t> deps, std::optional<uint32_t> layer, std::optional<uint32_t> step) {
    Op op = make(phase, label, std::move(deps), layer, step);
    op.mutable_nonlinear()->set_kind(kind);
    op.mutable_nonlinear()->set_elements(elements);
    op.mutable_nonlinear()->set_dtype(act_);
    return emit(op);
  }

  uint64_t gemm(trace::Phase phase, const char* label, uint64_t m, uint64_t n, uint64_t k, std::vector<uint64_t> deps,
                std::optional<uint32_t> layer, std::optional<uint32_t> step) {
    Op op = make(phase, label, std::move(deps), layer, step);
    trace::Gemm* g = op.mutable_gemm();
    g->set_m(m);
    g->set_n(n);
    g->set_k(k);
    g->set_a_dtype(act_);
    g->set_b_dtype(weight_);
    g->set_out_dtype(act_);
    g->set_b_is_weight(true);
    return emit(op);
  }

  trace::NonlinearKind norm_kind() const { return opt_ ? trace::NONLINEAR_LAYERNORM : trace::NONLINEAR_RMSNORM; }

  uint64_t embedding(trace::Phase phase, uint64_t tokens, std::vector<uint64_t> deps, std::optional<uint32_t> step) {
    Op op = make(phase, "embedding", std::move(deps), std::nullopt, step);
    op.mutable_embedding()->set_tokens(tokens);
    op.mutable_embedding()->set_dtype(weight_);
    return emit(op);
  }

  // Final norm of the last token's row, then the LM head (greedy next token).
  uint64_t head(trace::Phase phase, uint64_t after, std::optional<uint32_t> step) {
    const uint64_t norm = nonlinear(phase, "final_norm", norm_kind(), model_.hidden(), {after}, std::nullopt, step);
    Op op = make(phase, "lm_head", {norm}, std::nullopt, step);
    op.mutable_lm_head()->set_rows(1);
    op.mutable_lm_head()->set_dtype(weight_);
    return emit(op);
  }

  // norm -> qkv_proj -> rope (not OPT); returns the op that has Q, K and V ready.
  uint64_t pre_attention(trace::Phase phase, uint32_t layer, uint64_t rows, std::vector<uint64_t> deps,
                         std::optional<uint32_t> step) {
    const uint64_t hidden = model_.hidden(), heads = model_.heads(), kv_heads = model_.kv_heads();
    const uint64_t head_dim = model_.head_dim();
    const uint64_t norm = nonlinear(phase, "input_norm", norm_kind(), rows * hidden, std::move(deps), layer, step);
    const uint64_t qkv = gemm(phase, "qkv_proj", rows, (heads + 2 * kv_heads) * head_dim, hidden, {norm}, layer, step);
    if (opt_) return qkv;  // learned absolute positions, added at the embedding
    return nonlinear(phase, "rope", trace::NONLINEAR_ROPE, rows * (heads + kv_heads) * head_dim, {qkv}, layer, step);
  }

  // Batch pursuit of `tokens` tokens' K and V that left the dense window.
  uint64_t dict_encode(trace::Phase phase, uint32_t layer, std::optional<uint32_t> step, uint64_t tokens,
                       uint64_t after) {
    const DictionaryDecode& d = *request_.dictionary;
    Op op = make(phase, "dict_encode", {after}, layer, step);
    trace::DictEncode* e = op.mutable_dict_encode();
    e->set_tokens(tokens);
    e->set_heads(model_.kv_heads());
    e->set_vector_dim(model_.head_dim());
    e->set_atoms(d.settings.atoms());
    e->set_pursuit_iterations(d.settings.k_high());
    e->set_method(d.method);
    e->set_parts(trace::KV_PARTS_K_AND_V);
    return emit(op);
  }

  BlockIds dense_block(DenseBlock b) {
    const uint64_t hidden = model_.hidden(), ffn = model_.ffn_dim();
    BlockIds ids;
    std::vector<uint64_t> append_deps;
    if (b.reuse_q) {
      ids.q_ready = *b.reuse_q;
      append_deps = b.first_deps;
    } else {
      ids.q_ready = pre_attention(b.phase, b.layer, b.rows, b.first_deps, b.decode_step);
      append_deps = {ids.q_ready};
    }

    Op append = make(b.phase, "kv_append", append_deps, b.layer, b.decode_step);
    trace::KvTransfer* kv = append.mutable_kv_append();
    *kv->mutable_tokens() = range(b.append.begin, b.append.end);
    const uint64_t moved = b.append.mask ? count_set(*b.append.mask) : b.append.end - b.append.begin;
    kv->set_bytes(moved * kv_bytes_per_token_);
    kv->set_region(trace::KV_REGION_APPENDED);
    kv->set_parts(trace::KV_PARTS_K_AND_V);
    if (b.append.mask) *kv->mutable_token_mask() = pack_bits(*b.append.mask);
    if (request_.dictionary) kv->set_format(kv_format_for_bits(model_.kv_bits()));  // the dense window
    ids.kv_append = emit(append);

    std::vector<uint64_t> attention_deps = {ids.q_ready, ids.kv_append};
    if (b.encoded > 0) attention_deps.push_back(dict_encode(b.phase, b.layer, b.decode_step, b.encoded, ids.kv_append));
    attention_deps.insert(attention_deps.end(), b.extra_attention_deps.begin(), b.extra_attention_deps.end());
    Op attention = make(b.phase, b.dictionary ? "dict_attention" : "attention", attention_deps, b.layer, b.decode_step);
    if (b.dictionary != nullptr) {
      trace::DictAttention* a = attention.mutable_dict_attention();
      a->set_query_rows(b.rows);
      a->set_compressed_tokens(b.dictionary->compressed_tokens);
      a->set_window_tokens(b.dictionary->window_tokens);
      a->set_atoms(request_.dictionary->settings.atoms());
      a->set_k_low(b.dictionary->k_low);
      a->set_k_high(request_.dictionary->settings.k_high());
      a->set_refine_fraction(b.dictionary->refine_fraction);
    } else {
      *attention.mutable_attention() = std::move(b.attention);
      attention.mutable_attention()->set_query_rows(b.rows);
      attention.mutable_attention()->set_dtype(kv_);
    }
    const uint64_t attn = emit(attention);

    const uint64_t attn_width = uint64_t{model_.heads()} * model_.head_dim();
    const uint64_t o_proj = gemm(b.phase, "o_proj", b.rows, hidden, attn_width, {attn}, b.layer, b.decode_step);
    const uint64_t res1 = nonlinear(b.phase, "attn_residual", trace::NONLINEAR_RESIDUAL_ADD, b.rows * hidden, {o_proj},
                                    b.layer, b.decode_step);
    const uint64_t norm2 = nonlinear(b.phase, "post_attn_norm", norm_kind(), b.rows * hidden, {res1}, b.layer,
                                     b.decode_step);
    // Llama/Qwen: gate and up projections in one GEMM (N = 2 * ffn); OPT: fc1.
    const uint64_t up_width = opt_ ? ffn : 2 * ffn;
    const uint64_t up = gemm(b.phase, "ffn_up", b.rows, up_width, hidden, {norm2}, b.layer, b.decode_step);
    const uint64_t act = nonlinear(b.phase, opt_ ? "relu" : "swiglu",
                                   opt_ ? trace::NONLINEAR_RELU : trace::NONLINEAR_SWIGLU, b.rows * ffn, {up}, b.layer,
                                   b.decode_step);
    const uint64_t down = gemm(b.phase, "ffn_down", b.rows, hidden, ffn, {act}, b.layer, b.decode_step);
    ids.last = nonlinear(b.phase, "ffn_residual", trace::NONLINEAR_RESIDUAL_ADD, b.rows * hidden, {down}, b.layer,
                         b.decode_step);
    return ids;
  }

  // Layer `layer` of a full pass over positions [0, rows): append them all, causal attention.
  BlockIds full_layer(trace::Phase phase, uint32_t layer, uint64_t rows, uint64_t after) {
    DenseBlock b;
    b.layer = layer;
    b.rows = rows;
    b.phase = phase;
    b.first_deps = {after};
    b.append = {0, rows, nullptr};
    *b.attention.add_kv() = span(0, rows, trace::KV_REGION_APPENDED);
    b.attention.set_causal(true);
    return dense_block(std::move(b));
  }

  // Decode steps after the prefill's LM head `after`. In the blend programs,
  // layers >= 1 see the precomputed context filtered by the layer's HKVD mask
  // plus the appended query and decoded tokens; layer 0 was recomputed fully,
  // so there all KV is appended.
  void decode(uint64_t after, bool blend) {
    for (uint64_t s = 0; s < request_.answer_tokens; ++s) {
      const auto step = static_cast<uint32_t>(s);
      const uint64_t position = prompt_ + s;
      uint64_t prev = embedding(trace::PHASE_DECODE, 1, {after}, step);
      for (uint32_t layer = 0; layer < model_.layers(); ++layer) {
        DenseBlock b;
        b.layer = layer;
        b.rows = 1;
        b.phase = trace::PHASE_DECODE;
        b.decode_step = step;
        b.first_deps = {prev};
        b.append = {position, position + 1, nullptr};
        if (request_.dictionary) {
          b.dictionary = &request_.dictionary->steps[s][layer];
          b.encoded = b.dictionary->encoded_tokens;
        } else if (blend && layer >= 1) {
          *b.attention.add_kv() = span(0, context_, trace::KV_REGION_PRECOMPUTED);
          *b.attention.add_kv() = span(context_, position + 1, trace::KV_REGION_APPENDED);
          *b.attention.mutable_hkvd_mask() = packed_mask(layer);
        } else {
          *b.attention.add_kv() = span(0, position + 1, trace::KV_REGION_APPENDED);
        }
        b.attention.set_causal(true);
        prev = dense_block(std::move(b)).last;
      }
      after = head(trace::PHASE_DECODE, prev, step);
    }
  }

  void write_full_prefill() {
    const trace::Phase phase = trace::PHASE_FULL_PREFILL;
    uint64_t prev = embedding(phase, prompt_, {}, std::nullopt);
    for (uint32_t layer = 0; layer < model_.layers(); ++layer) {
      const BlockIds ids = full_layer(phase, layer, prompt_, prev);
      prev = ids.last;
      // Dictionary cache: the prompt's attention is dense; its tokens beyond the window
      // are encoded after the layer (kept in the sequential chain of the pass).
      if (request_.dictionary && request_.dictionary->prefill_encoded_tokens[layer] > 0)
        prev = dict_encode(phase, layer, std::nullopt, request_.dictionary->prefill_encoded_tokens[layer], ids.last);
    }
    decode(head(phase, prev, std::nullopt), false);
  }

  void write_blend(bool fused) {
    const auto& masks = request_.hkvd_masks;
    const uint64_t query = request_.query_tokens;
    const uint64_t selected = count_set(masks[1]);
    const uint32_t layers = model_.layers();

    // HKVD identification: layer 0 over all P positions (its fresh KV replaces the
    // stored layer-0 KV), layer 1 up to Q/K/V, the stored layer-1 KV, the selection.
    const trace::Phase ident = trace::PHASE_HKVD_IDENTIFICATION;
    const uint64_t emb = embedding(ident, prompt_, {}, std::nullopt);
    const uint64_t layer0 = full_layer(ident, 0, prompt_, emb).last;
    const uint64_t q1 = pre_attention(ident, 1, prompt_, {layer0}, std::nullopt);
    // No dependency: the stored layer-1 KV can be read while layer 0 computes.
    Op load = make(ident, "kv_load", {}, 1, std::nullopt);
    trace::KvTransfer* kv = load.mutable_kv_load();
    *kv->mutable_tokens() = range(0, context_);
    kv->set_bytes(context_ * kv_bytes_per_token_);
    kv->set_region(trace::KV_REGION_PRECOMPUTED);
    kv->set_parts(trace::KV_PARTS_K_AND_V);
    const uint64_t loaded = emit(load);
    Op select = make(ident, "hkvd_select", {q1, loaded}, 1, std::nullopt);
    trace::HkvdSelect* h = select.mutable_hkvd_select();
    h->set_context_tokens(context_);
    h->set_ratio(request_.recompute_ratio);
    h->set_selected_tokens(selected);
    *h->mutable_mask() = pack_bits(masks[1]);
    const uint64_t hkvd = emit(select);

    // Attention of a blend pass at `layer`: the precomputed context filtered by
    // the layer's mask, plus the appended query positions when `with_query`.
    auto blend_attention = [&](uint32_t layer, bool with_query) {
      trace::Attention a;
      *a.add_kv() = span(0, context_, trace::KV_REGION_PRECOMPUTED);
      if (with_query) *a.add_kv() = span(context_, prompt_, trace::KV_REGION_APPENDED);
      *a.mutable_hkvd_mask() = packed_mask(layer);
      a.set_causal(true);
      return a;
    };

    uint64_t prev = 0;
    trace::Phase last_phase = trace::PHASE_UNSPECIFIED;
    if (fused) {
      // One pass per layer over Q_fused = HKVD rows + query rows (MemLLM Sec. V-A).
      last_phase = trace::PHASE_FUSED_PREFILL;
      std::vector<bool> fused_mask(prompt_, false);
      for (uint32_t layer = 1; layer < layers; ++layer) {
        std::copy(masks[layer].begin(), masks[layer].end(), fused_mask.begin());
        std::fill(fused_mask.begin() + static_cast<std::ptrdiff_t>(context_), fused_mask.end(), true);
        DenseBlock b;
        b.layer = layer;
        b.rows = selected + query;
        b.phase = last_phase;
        b.first_deps = layer == 1 ? std::vector<uint64_t>{hkvd} : std::vector<uint64_t>{prev};
        if (layer == 1) b.reuse_q = q1;
        b.append = {0, prompt_, &fused_mask};
        b.attention = blend_attention(layer, true);
        prev = dense_block(std::move(b)).last;
      }
    } else {
      // Recomputation of the H selected tokens, layer by layer (jagged causal mask).
      std::vector<uint64_t> recomputed_append(layers, 0);
      if (selected > 0) {
        for (uint32_t layer = 1; layer < layers; ++layer) {
          DenseBlock b;
          b.layer = layer;
          b.rows = selected;
          b.phase = trace::PHASE_RECOMPUTATION;
          b.first_deps = layer == 1 ? std::vector<uint64_t>{hkvd} : std::vector<uint64_t>{prev};
          if (layer == 1) b.reuse_q = q1;
          b.append = {0, context_, &masks[layer]};
          b.attention = blend_attention(layer, false);
          const BlockIds ids = dense_block(std::move(b));
          recomputed_append[layer] = ids.kv_append;
          prev = ids.last;
        }
      }
      // Query prefill over precomputed + recomputed KV (reads the context again).
      last_phase = trace::PHASE_QUERY_PREFILL;
      for (uint32_t layer = 1; layer < layers; ++layer) {
        DenseBlock b;
        b.layer = layer;
        b.rows = query;
        b.phase = last_phase;
        b.first_deps = layer == 1 ? std::vector<uint64_t>{q1} : std::vector<uint64_t>{prev};
        if (layer == 1) b.reuse_q = q1;
        b.append = {context_, prompt_, nullptr};
        b.attention = blend_attention(layer, true);
        // The layer's mask and recomputed KV must exist before the query reads them.
        if (selected > 0) b.extra_attention_deps = {recomputed_append[layer]};
        else if (layer == 1) b.extra_attention_deps = {hkvd};
        prev = dense_block(std::move(b)).last;
      }
    }
    decode(head(last_phase, prev, std::nullopt), true);
  }

  // The layer's HKVD mask, packed once: every decode step's attention carries it.
  const trace::BitVector& packed_mask(uint32_t layer) {
    if (packed_masks_.empty()) packed_masks_.resize(request_.hkvd_masks.size());
    std::optional<trace::BitVector>& packed = packed_masks_.at(layer);
    if (!packed) packed = pack_bits(request_.hkvd_masks[layer]);
    return *packed;
  }

  const std::function<void(trace::Op&)>& sink_;
  const BlendRequest& request_;
  const trace::ModelShape& model_;
  trace::Program program_;
  uint64_t& next_id_;
  uint64_t context_ = 0;
  uint64_t prompt_ = 0;
  trace::DType act_ = trace::DTYPE_UNSPECIFIED;
  trace::DType weight_ = trace::DTYPE_UNSPECIFIED;
  trace::DType kv_ = trace::DTYPE_UNSPECIFIED;
  uint64_t kv_bytes_per_token_ = 0;
  bool opt_ = false;
  std::vector<std::optional<trace::BitVector>> packed_masks_;  // by layer
};

const char* program_description(trace::Program p) {
  switch (p) {
    case trace::FULL_PREFILL:
      return "prefill of the context and query from raw tokens, then greedy decode";
    case trace::PRECOMPUTED_BLEND:
      return "CacheBlend: layer-0 pass + layer-1 KV comparison + HKVD selection, selective recomputation, "
             "query prefill over precomputed and recomputed KV, then greedy decode";
    case trace::PRECOMPUTED_BLEND_FUSED:
      return "PRECOMPUTED_BLEND with recomputation and query prefill fused into one pass per layer "
             "(MemLLM Sec. V-A), then greedy decode";
    default:
      return "";
  }
}

void check_dictionary_decode(const BlendRequest& request, const std::vector<trace::Program>& programs,
                             const std::string& where) {
  const DictionaryDecode& d = *request.dictionary;
  if (programs.size() != 1 || programs[0] != trace::FULL_PREFILL)
    throw BadInput(where, "a dictionary-compressed decode is built for FULL_PREFILL only");
  const uint32_t layers = request.model.layers();
  if (d.steps.size() != request.answer_tokens)
    throw BadInput(where, "dictionary decode has " + std::to_string(d.steps.size()) + " steps for " +
                              std::to_string(request.answer_tokens) + " answer tokens");
  if (d.prefill_encoded_tokens.size() != layers)
    throw BadInput(where, "dictionary decode needs prefill_encoded_tokens for each of " + std::to_string(layers) +
                              " layers");
  for (const auto& step : d.steps) {
    if (step.size() != layers) throw BadInput(where, "a dictionary decode step lacks layers");
    for (const DictionaryLayerStep& l : step)
      if (l.window_tokens + l.compressed_tokens == 0 || l.k_low < 1 || l.k_low > d.settings.k_high() ||
          !(l.refine_fraction >= 0.0 && l.refine_fraction <= 1.0))
        throw BadInput(where, "a dictionary decode step sees no token or has k_low/refine_fraction out of range");
  }
}

}  // namespace

trace::DType dtype_for_bits(uint32_t bits) {
  switch (bits) {
    case 32: return trace::DTYPE_FP32;
    case 16: return trace::DTYPE_FP16;
    case 8: return trace::DTYPE_INT8;
    case 4: return trace::DTYPE_INT4;
    default: return trace::DTYPE_UNSPECIFIED;
  }
}

trace::KvFormat kv_format_for_bits(uint32_t bits) {
  switch (bits) {
    case 16: return trace::KV_FP16;
    case 8: return trace::KV_INT8;
    case 4: return trace::KV_INT4;
    default: return trace::KV_FORMAT_UNSPECIFIED;
  }
}

std::vector<trace::Program> all_programs() {
  return {trace::FULL_PREFILL, trace::PRECOMPUTED_BLEND, trace::PRECOMPUTED_BLEND_FUSED};
}

void check_blend_request(const BlendRequest& request, const std::vector<trace::Program>& programs,
                         const std::string& where) {
  if (programs.empty()) throw BadInput(where, "no program to build");
  std::set<trace::Program> seen;
  bool blend = false;
  for (trace::Program p : programs) {
    if (p != trace::FULL_PREFILL && !is_blend(p))
      throw BadInput(where, "program " + trace::Program_Name(p) +
                                " is not built by the program builder (FULL_PREFILL, PRECOMPUTED_BLEND, "
                                "PRECOMPUTED_BLEND_FUSED)");
    if (!seen.insert(p).second) throw BadInput(where, "program " + trace::Program_Name(p) + " given twice");
    blend = blend || is_blend(p);
  }
  if (request.doc_tokens.empty()) throw BadInput(where, "no documents (the context is empty)");
  if (request.query_tokens == 0) throw BadInput(where, "query_tokens is 0; the query needs at least one token");
  if (request.answer_tokens > UINT32_MAX)  // decode_step is a uint32
    throw BadInput(where, "answer_tokens " + std::to_string(request.answer_tokens) + " exceeds " +
                              std::to_string(UINT32_MAX));
  const trace::ModelShape& m = request.model;
  if (kv_format_for_bits(m.kv_bits()) == trace::KV_FORMAT_UNSPECIFIED)
    throw BadInput(where, "model.kv_bits is " + std::to_string(m.kv_bits()) + "; dense KV needs 4, 8 or 16");
  // Model shape, document sizes, limits, ratio: the trace validator's header checks.
  trace::Producer producer;
  producer.set_kind(trace::PRODUCER_SHAPE_GENERATOR);
  trace::TraceValidator(where).check_header(make_header(request, programs, producer));
  if (request.dictionary) check_dictionary_decode(request, programs, where);
  if (!blend) return;

  if (m.layers() < 2)
    throw BadInput(where, "the blend programs need at least 2 layers (layer 1 is compared); model has " +
                              std::to_string(m.layers()));
  const uint64_t context = context_of(request);
  if (request.hkvd_masks.size() != m.layers())
    throw BadInput(where, "hkvd_masks has " + std::to_string(request.hkvd_masks.size()) +
                              " entries; expected one per layer (" + std::to_string(m.layers()) + ", [0] unused)");
  const uint64_t selected = count_set(request.hkvd_masks[1]);
  for (uint32_t layer = 1; layer < m.layers(); ++layer) {
    const std::vector<bool>& mask = request.hkvd_masks[layer];
    if (mask.size() != context)
      throw BadInput(where, "hkvd_masks[" + std::to_string(layer) + "] has " + std::to_string(mask.size()) +
                                " bits; expected one per context token (" + std::to_string(context) + ")");
    if (count_set(mask) != selected)
      throw BadInput(where, "hkvd_masks[" + std::to_string(layer) + "] selects " + std::to_string(count_set(mask)) +
                                " tokens but hkvd_masks[1] selects " + std::to_string(selected) +
                                "; every layer recomputes the same number of rows");
  }
}

trace::Header make_header(const BlendRequest& request, const std::vector<trace::Program>& programs,
                          const trace::Producer& producer, const std::string& dataset) {
  trace::Header header;
  header.mutable_version()->set_major(trace::kFormatMajor);
  header.mutable_version()->set_minor(trace::kFormatMinor);
  *header.mutable_model() = request.model;
  trace::Request* r = header.mutable_request();
  for (size_t i = 0; i < request.doc_tokens.size(); ++i) {
    trace::Document* d = r->add_documents();
    d->set_name("doc" + std::to_string(i));
    d->set_tokens(request.doc_tokens[i]);
  }
  r->set_query_tokens(request.query_tokens);
  r->set_answer_tokens(request.answer_tokens);
  r->set_recompute_ratio(request.recompute_ratio);
  r->set_kv_format(kv_format_for_bits(request.model.kv_bits()));
  if (request.dictionary) {
    r->set_kv_format(trace::KV_DICTIONARY);
    *r->mutable_dictionary() = request.dictionary->settings;
  }
  r->set_dataset(dataset);
  *header.mutable_producer() = producer;
  for (trace::Program p : programs) {
    trace::ProgramInfo* info = header.add_programs();
    info->set_program(p);
    info->set_description(program_description(p));
  }
  return header;
}

void emit_programs(const std::function<void(trace::Op&)>& sink, const BlendRequest& request,
                   const std::vector<trace::Program>& programs) {
  check_blend_request(request, programs);
  uint64_t next_id = 0;
  for (trace::Program p : programs) ProgramEmitter(sink, request, p, next_id).write();
}

void write_programs(trace::TraceWriter& writer, const BlendRequest& request,
                    const std::vector<trace::Program>& programs) {
  emit_programs([&writer](const trace::Op& op) { writer.write(op); }, request, programs);
}

}  // namespace ispsim::tracegen
