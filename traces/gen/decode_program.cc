#include "traces/gen/decode_program.h"

#include <optional>

#include "common/error.h"
#include "traces/gen/program_builder.h"
#include "traces/trace_validator.h"

namespace ispsim::tracegen {

using trace::Op;

namespace {

// Writes one program's ops with consecutive ids; each op depends on the previous one.
class ChainWriter {
 public:
  ChainWriter(trace::TraceWriter& writer, trace::Program program, uint64_t& next_id)
      : writer_(writer), program_(program), next_id_(next_id) {}

  Op& start(uint32_t step, const char* label) {
    op_.Clear();
    op_.set_id(next_id_);
    op_.set_program(program_);
    op_.set_phase(trace::PHASE_DECODE);
    op_.set_decode_step(step);
    op_.set_label(label);
    if (has_previous_) op_.add_deps(previous_);
    return op_;
  }
  uint64_t last_id() const { return previous_; }
  void emit() {
    writer_.write(op_);
    previous_ = op_.id();
    has_previous_ = true;
    ++next_id_;
  }

 private:
  trace::TraceWriter& writer_;
  trace::Program program_;
  uint64_t& next_id_;
  Op op_;
  uint64_t previous_ = 0;
  bool has_previous_ = false;
};

struct Shape {
  const trace::ModelShape& m;
  bool opt() const { return m.family() == trace::ARCHITECTURE_OPT; }
  trace::DType act() const { return dtype_for_bits(m.activation_bits()); }
  trace::DType weight() const { return dtype_for_bits(m.weight_bits()); }
  uint64_t q_width() const { return uint64_t{m.heads()} * m.head_dim(); }
  uint64_t kv_width() const { return uint64_t{m.kv_heads()} * m.head_dim(); }
};

void gemm(ChainWriter& w, const Shape& s, uint32_t step, uint32_t layer, const char* label, uint64_t n, uint64_t k) {
  Op& op = w.start(step, label);
  op.set_layer(layer);
  trace::Gemm* g = op.mutable_gemm();
  g->set_m(1);
  g->set_n(n);
  g->set_k(k);
  g->set_a_dtype(s.act());
  g->set_b_dtype(s.weight());
  g->set_out_dtype(s.act());
  g->set_b_is_weight(true);
  w.emit();
}

void nonlinear(ChainWriter& w, const Shape& s, uint32_t step, std::optional<uint32_t> layer, const char* label,
               trace::NonlinearKind kind, uint64_t elements) {
  Op& op = w.start(step, label);
  if (layer) op.set_layer(*layer);
  op.mutable_nonlinear()->set_kind(kind);
  op.mutable_nonlinear()->set_elements(elements);
  op.mutable_nonlinear()->set_dtype(s.act());
  w.emit();
}

// The layer's ops up to and including the KV append of position `position`.
void attention_inputs(ChainWriter& w, const Shape& s, uint32_t step, uint32_t layer, uint64_t position) {
  const trace::NonlinearKind norm = s.opt() ? trace::NONLINEAR_LAYERNORM : trace::NONLINEAR_RMSNORM;
  nonlinear(w, s, step, layer, "attn_norm", norm, s.m.hidden());
  gemm(w, s, step, layer, "qkv_proj", s.q_width() + 2 * s.kv_width(), s.m.hidden());
  if (!s.opt()) nonlinear(w, s, step, layer, "rope", trace::NONLINEAR_ROPE, s.q_width() + s.kv_width());
  Op& op = w.start(step, "kv_append");
  op.set_layer(layer);
  trace::KvTransfer* kv = op.mutable_kv_append();
  kv->mutable_tokens()->set_begin(position);
  kv->mutable_tokens()->set_end(position + 1);
  kv->set_region(trace::KV_REGION_APPENDED);
  kv->set_parts(trace::KV_PARTS_K_AND_V);
  kv->set_format(kv_format_for_bits(s.m.kv_bits()));
  kv->set_bytes(s.kv_width() * 2 * s.m.kv_bits() / 8);
  w.emit();
}

// The layer's ops after attention.
void attention_outputs(ChainWriter& w, const Shape& s, uint32_t step, uint32_t layer) {
  const trace::NonlinearKind norm = s.opt() ? trace::NONLINEAR_LAYERNORM : trace::NONLINEAR_RMSNORM;
  gemm(w, s, step, layer, "o_proj", s.m.hidden(), s.q_width());
  nonlinear(w, s, step, layer, "attn_residual", trace::NONLINEAR_RESIDUAL_ADD, s.m.hidden());
  nonlinear(w, s, step, layer, "ffn_norm", norm, s.m.hidden());
  gemm(w, s, step, layer, "ffn_up", s.opt() ? s.m.ffn_dim() : 2 * uint64_t{s.m.ffn_dim()}, s.m.hidden());
  nonlinear(w, s, step, layer, s.opt() ? "relu" : "swiglu", s.opt() ? trace::NONLINEAR_RELU : trace::NONLINEAR_SWIGLU,
            s.m.ffn_dim());
  gemm(w, s, step, layer, "ffn_down", s.m.hidden(), s.m.ffn_dim());
  nonlinear(w, s, step, layer, "ffn_residual", trace::NONLINEAR_RESIDUAL_ADD, s.m.hidden());
}

void step_head(ChainWriter& w, const Shape& s, uint32_t step) {
  Op& op = w.start(step, "embedding");
  op.mutable_embedding()->set_tokens(1);
  op.mutable_embedding()->set_dtype(s.weight());
  w.emit();
}

void step_tail(ChainWriter& w, const Shape& s, uint32_t step) {
  nonlinear(w, s, step, std::nullopt, "final_norm", s.opt() ? trace::NONLINEAR_LAYERNORM : trace::NONLINEAR_RMSNORM,
            s.m.hidden());
  Op& op = w.start(step, "lm_head");
  op.mutable_lm_head()->set_rows(1);
  op.mutable_lm_head()->set_dtype(s.act());
  w.emit();
}

void write_dense(trace::TraceWriter& writer, const DecodeRequest& r, uint64_t& next_id) {
  const Shape s{r.model};
  ChainWriter w(writer, trace::DECODE_ONLY, next_id);
  for (uint32_t step = 0; step < r.decode_steps; ++step) {
    const uint64_t position = r.context_tokens + step;
    step_head(w, s, step);
    for (uint32_t layer = 0; layer < r.model.layers(); ++layer) {
      attention_inputs(w, s, step, layer, position);
      Op& op = w.start(step, "attention");
      op.set_layer(layer);
      trace::Attention* a = op.mutable_attention();
      a->set_query_rows(1);
      trace::KvSpan* span = a->add_kv();
      span->mutable_tokens()->set_begin(0);
      span->mutable_tokens()->set_end(position + 1);
      span->set_region(trace::KV_REGION_APPENDED);
      a->set_dtype(dtype_for_bits(r.model.kv_bits()));
      w.emit();
      attention_outputs(w, s, step, layer);
    }
    step_tail(w, s, step);
  }
}

void write_dictionary(trace::TraceWriter& writer, const DecodeRequest& r, uint64_t& next_id) {
  const Shape s{r.model};
  const trace::DictionarySettings& d = r.dictionary;
  ChainWriter w(writer, trace::DECODE_ONLY_DICTIONARY, next_id);
  WindowState state = initial_window(r.context_tokens, d);
  for (uint32_t step = 0; step < r.decode_steps; ++step) {
    const uint64_t position = r.context_tokens + step;
    state = step_window(state, d);
    step_head(w, s, step);
    for (uint32_t layer = 0; layer < r.model.layers(); ++layer) {
      attention_inputs(w, s, step, layer, position);
      const uint64_t append_id = w.last_id();  // the attention reads it: a direct dependency
      if (state.encodes) {
        Op& op = w.start(step, "dict_encode");
        op.set_layer(layer);
        trace::DictEncode* e = op.mutable_dict_encode();
        e->set_tokens(d.unit_tokens());
        e->set_heads(r.model.kv_heads());
        e->set_vector_dim(r.model.head_dim());
        e->set_atoms(d.atoms());
        e->set_pursuit_iterations(d.k_high());
        e->set_method(trace::PURSUIT_PROJECTION);
        e->set_parts(trace::KV_PARTS_K_AND_V);
        w.emit();
      }
      Op& op = w.start(step, "dict_attention");
      if (state.encodes) op.add_deps(append_id);
      op.set_layer(layer);
      trace::DictAttention* a = op.mutable_dict_attention();
      a->set_query_rows(1);
      a->set_compressed_tokens(state.compressed);
      a->set_window_tokens(state.window);
      a->set_atoms(d.atoms());
      a->set_k_low(d.k_low());
      a->set_k_high(d.k_high());
      a->set_refine_fraction(d.refine_fraction());
      w.emit();
      attention_outputs(w, s, step, layer);
    }
    step_tail(w, s, step);
  }
}

}  // namespace

trace::DictionarySettings paper_dictionary_settings() {
  trace::DictionarySettings d;
  d.set_atoms(32768);
  d.set_k_low(3);
  d.set_k_high(16);
  d.set_refine_fraction(0.10);
  d.set_window_tokens(128);
  d.set_unit_tokens(32);
  d.set_dictionary_bits(8);
  d.set_index_bits(16);
  d.set_coefficient_bits(8);
  return d;
}

WindowState initial_window(uint64_t context_tokens, const trace::DictionarySettings& d) {
  WindowState s;
  if (context_tokens > d.window_tokens())
    s.compressed = (context_tokens - d.window_tokens()) / d.unit_tokens() * d.unit_tokens();
  s.window = context_tokens - s.compressed;
  return s;
}

WindowState step_window(const WindowState& before, const trace::DictionarySettings& d) {
  WindowState s{before.compressed, before.window + 1, false};
  if (s.window >= uint64_t{d.window_tokens()} + d.unit_tokens()) {
    s.compressed += d.unit_tokens();
    s.window -= d.unit_tokens();
    s.encodes = true;
  }
  return s;
}

void check_decode_request(const DecodeRequest& r, const std::string& where) {
  if (r.context_tokens == 0 || r.context_tokens > kMaxDecodeContextTokens)
    throw BadInput(where, "context tokens " + std::to_string(r.context_tokens) + " outside 1.." +
                              std::to_string(kMaxDecodeContextTokens));
  if (r.decode_steps == 0 || r.decode_steps > kMaxDecodeSteps)
    throw BadInput(where, "decode steps " + std::to_string(r.decode_steps) + " outside 1.." +
                              std::to_string(kMaxDecodeSteps));
  if (r.model.layers() == 0) throw BadInput(where, "model has no layers");
  if (kv_format_for_bits(r.model.kv_bits()) == trace::KV_FORMAT_UNSPECIFIED)
    throw BadInput(where, "model kv_bits " + std::to_string(r.model.kv_bits()) + " is not 4, 8 or 16");
  // The header check covers the model shape and the dictionary settings.
  trace::TraceValidator validator(where);
  validator.check_header(make_decode_header(r, trace::Producer{}));
}

trace::Header make_decode_header(const DecodeRequest& r, const trace::Producer& producer) {
  trace::Header h;
  h.mutable_version()->set_major(trace::kFormatMajor);
  h.mutable_version()->set_minor(trace::kFormatMinor);
  *h.mutable_model() = r.model;
  trace::Request* request = h.mutable_request();
  trace::Document* doc = request->add_documents();
  doc->set_name("context");
  doc->set_tokens(r.context_tokens);
  request->set_query_tokens(0);
  request->set_answer_tokens(r.decode_steps);
  request->set_kv_format(trace::KV_DICTIONARY);
  *request->mutable_dictionary() = r.dictionary;
  *h.mutable_producer() = producer;
  if (h.producer().kind() == trace::PRODUCER_UNSPECIFIED) h.mutable_producer()->set_kind(trace::PRODUCER_SHAPE_GENERATOR);
  trace::ProgramInfo* dense = h.add_programs();
  dense->set_program(trace::DECODE_ONLY);
  dense->set_description("decode steps over dense KV (paper 1 baseline B1)");
  trace::ProgramInfo* dict = h.add_programs();
  dict->set_program(trace::DECODE_ONLY_DICTIONARY);
  dict->set_description("decode steps over dictionary-compressed KV (paper 1 Sec. 3.2.4: B2, S1, S2)");
  return h;
}

void write_decode_programs(trace::TraceWriter& writer, const DecodeRequest& r) {
  uint64_t next_id = 0;
  write_dense(writer, r, next_id);
  write_dictionary(writer, r, next_id);
}

void generate_decode_trace(const DecodeRequest& r, const std::string& path) {
  check_decode_request(r, path);
  trace::Producer producer;
  producer.set_kind(trace::PRODUCER_SHAPE_GENERATOR);
  producer.set_tool("ispsim trace gen --decode");
  auto setting = [&producer](const std::string& key, const std::string& value) {
    trace::Setting* s = producer.add_settings();
    s->set_key(key);
    s->set_value(value);
  };
  setting("shape", r.model.name());
  setting("context_tokens", std::to_string(r.context_tokens));
  setting("decode_steps", std::to_string(r.decode_steps));
  trace::TraceWriter writer(path, make_decode_header(r, producer));
  write_decode_programs(writer, r);
  writer.close();
}

}  // namespace ispsim::tracegen
