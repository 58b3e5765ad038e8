#include "tests/traces/trace_fixtures.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ispsim::trace::testing {

Header small_header() {
  Header h;
  h.mutable_version()->set_major(1);
  h.mutable_version()->set_minor(0);
  ModelShape* m = h.mutable_model();
  m->set_family(ARCHITECTURE_LLAMA);
  m->set_name("toy");
  m->set_layers(2);
  m->set_hidden(64);
  m->set_heads(4);
  m->set_kv_heads(2);
  m->set_head_dim(16);
  m->set_ffn_dim(128);
  m->set_vocab(100);
  m->set_weight_bits(16);
  m->set_kv_bits(16);
  m->set_activation_bits(16);
  Request* r = h.mutable_request();
  Document* d0 = r->add_documents();
  d0->set_name("a");
  d0->set_tokens(40);
  Document* d1 = r->add_documents();
  d1->set_name("b");
  d1->set_tokens(24);
  r->set_query_tokens(8);
  r->set_answer_tokens(4);
  r->set_recompute_ratio(0.25);
  r->set_kv_format(KV_FP16);
  r->set_dataset("toy");
  h.mutable_producer()->set_kind(PRODUCER_HAND_WRITTEN);
  h.mutable_producer()->set_tool("trace_fixtures.cc");
  Setting* s = h.mutable_producer()->add_settings();
  s->set_key("seed");
  s->set_value("7");
  for (Program p : {PRECOMPUTED_BLEND, DECODE_ONLY, MICROBENCHMARK}) h.add_programs()->set_program(p);
  return h;
}

BitVector make_mask(const std::vector<bool>& bits) {
  BitVector v;
  std::string bytes((bits.size() + 7) / 8, '\0');
  for (size_t i = 0; i < bits.size(); ++i)
    if (bits[i]) bytes[i / 8] = static_cast<char>(bytes[i / 8] | (1 << (i % 8)));
  v.set_bits(bytes);
  v.set_bit_length(bits.size());
  return v;
}

namespace {

Op* add_op(TraceText& t, uint64_t id, Program program, Phase phase, std::vector<uint64_t> deps = {}) {
  Op* op = t.add_op();
  op->set_id(id);
  op->set_program(program);
  op->set_phase(phase);
  for (uint64_t d : deps) op->add_deps(d);
  return op;
}

}  // namespace

TraceText every_kind_trace() {
  TraceText t;
  *t.mutable_header() = small_header();
  // HKVD mask over the 64 context tokens: every 4th token (16 set = 25 %).
  std::vector<bool> bits(64);
  for (size_t i = 0; i < bits.size(); i += 4) bits[i] = true;
  const BitVector mask = make_mask(bits);

  // Layer 1's appended entries that the attention (op 5) reads, its 16 HKVD
  // tokens and 8 query rows, appended before it (a host-side write).
  Op* op = add_op(t, 0, PRECOMPUTED_BLEND, PHASE_OTHER);
  op->set_layer(1);
  {
    KvTransfer* before = op->mutable_kv_append();
    before->mutable_tokens()->set_end(24);
    before->set_bytes(24 * 128);
    before->set_region(KV_REGION_APPENDED);
    before->set_parts(KV_PARTS_K_AND_V);
  }

  op = add_op(t, 1, PRECOMPUTED_BLEND, PHASE_HKVD_IDENTIFICATION);
  op->set_label("embed");
  op->mutable_embedding()->set_tokens(72);
  op->mutable_embedding()->set_dtype(DTYPE_FP16);

  op = add_op(t, 2, PRECOMPUTED_BLEND, PHASE_HKVD_IDENTIFICATION, {1});
  op->set_layer(0);
  op->set_label("qkv_proj");
  Gemm* g = op->mutable_gemm();
  g->set_m(72);
  g->set_n(128);
  g->set_k(64);
  g->set_a_dtype(DTYPE_INT8);
  g->set_b_dtype(DTYPE_INT8);
  g->set_out_dtype(DTYPE_INT32);
  g->set_b_is_weight(true);
  op->set_measured_duration_ns(1500);

  op = add_op(t, 3, PRECOMPUTED_BLEND, PHASE_HKVD_IDENTIFICATION, {2});
  op->set_layer(1);
  KvTransfer* kv = op->mutable_kv_load();
  kv->mutable_tokens()->set_begin(0);
  kv->mutable_tokens()->set_end(64);
  kv->set_bytes(64 * 128);
  kv->set_region(KV_REGION_PRECOMPUTED);
  kv->set_parts(KV_PARTS_K_AND_V);

  op = add_op(t, 4, PRECOMPUTED_BLEND, PHASE_HKVD_IDENTIFICATION, {2, 3});
  op->set_layer(1);
  HkvdSelect* h = op->mutable_hkvd_select();
  h->set_context_tokens(64);
  h->set_ratio(0.25);
  h->set_selected_tokens(16);
  *h->mutable_mask() = mask;

  op = add_op(t, 5, PRECOMPUTED_BLEND, PHASE_FUSED_PREFILL, {4});
  op->set_layer(1);
  Attention* a = op->mutable_attention();
  a->set_query_rows(16 + 8);
  KvSpan* span = a->add_kv();
  span->mutable_tokens()->set_begin(0);
  span->mutable_tokens()->set_end(64);
  span->set_region(KV_REGION_PRECOMPUTED);
  span = a->add_kv();
  span->mutable_tokens()->set_begin(64);
  span->mutable_tokens()->set_end(72);
  span->set_region(KV_REGION_APPENDED);
  *a->mutable_hkvd_mask() = mask;
  a->set_causal(true);
  a->set_dtype(DTYPE_FP16);
  Tensor* payload = op->add_payloads();
  payload->set_name("q_fused");
  payload->set_dtype(DTYPE_INT8);
  payload->add_shape(3);
  payload->add_shape(5);
  payload->set_data(std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f", 15));

  op = add_op(t, 6, PRECOMPUTED_BLEND, PHASE_FUSED_PREFILL, {5});
  op->set_layer(1);
  op->mutable_nonlinear()->set_kind(NONLINEAR_SOFTMAX);
  op->mutable_nonlinear()->set_elements(24 * 72 * 4);
  op->mutable_nonlinear()->set_dtype(DTYPE_INT16);

  // The appends follow the attention here, so they are not KV an SSD attention
  // command carries (trace_validator.h): PHASE_OTHER, a host-side write-back.
  op = add_op(t, 7, PRECOMPUTED_BLEND, PHASE_OTHER, {5});
  op->set_layer(1);
  kv = op->mutable_kv_append();
  kv->mutable_tokens()->set_begin(64);
  kv->mutable_tokens()->set_end(72);
  kv->set_bytes(8 * 128);
  kv->set_region(KV_REGION_APPENDED);
  kv->set_parts(KV_PARTS_K_AND_V);

  op = add_op(t, 8, PRECOMPUTED_BLEND, PHASE_DECODE, {6, 7});
  op->set_decode_step(0);
  op->mutable_lm_head()->set_rows(1);
  op->mutable_lm_head()->set_dtype(DTYPE_FP16);

  // Out-of-place append of the recomputed HKVD tokens' KV: scattered positions.
  op = add_op(t, 9, PRECOMPUTED_BLEND, PHASE_OTHER, {5});
  op->set_layer(1);
  kv = op->mutable_kv_append();
  kv->mutable_tokens()->set_begin(0);
  kv->mutable_tokens()->set_end(64);
  *kv->mutable_token_mask() = mask;
  kv->set_bytes(16 * 128);
  kv->set_region(KV_REGION_APPENDED);
  kv->set_parts(KV_PARTS_K_AND_V);

  op = add_op(t, 10, DECODE_ONLY, PHASE_DECODE);
  op->set_layer(0);
  op->set_decode_step(1);
  DictEncode* e = op->mutable_dict_encode();
  e->set_tokens(32);
  e->set_heads(2);
  e->set_vector_dim(16);
  e->set_atoms(256);
  e->set_pursuit_iterations(16);
  e->set_method(PURSUIT_PROJECTION);
  e->set_parts(KV_PARTS_K_AND_V);

  op = add_op(t, 11, DECODE_ONLY, PHASE_DECODE, {10});
  op->set_layer(0);
  op->set_decode_step(1);
  DictAttention* da = op->mutable_dict_attention();
  da->set_query_rows(1);
  da->set_compressed_tokens(64);
  da->set_window_tokens(9);
  da->set_atoms(256);
  da->set_k_low(3);
  da->set_k_high(16);
  da->set_refine_fraction(0.1);

  op = add_op(t, 20, MICROBENCHMARK, PHASE_OTHER);
  op->set_layer(1);
  kv = op->mutable_kv_load();
  kv->mutable_tokens()->set_begin(0);
  kv->mutable_tokens()->set_end(10);
  kv->set_bytes(10 * 64);  // K only: 2 heads x 16 x 2 B
  kv->set_region(KV_REGION_PRECOMPUTED);
  kv->set_parts(KV_PARTS_K_ONLY);
  return t;
}

namespace {

// Removes the scratch directories when the test process ends, unless
// ISPSIM_KEEP_TEST_FILES is set (to look at them after a failure).
struct ScratchDirs {
  std::vector<std::string> dirs;
  ~ScratchDirs() {
    if (std::getenv("ISPSIM_KEEP_TEST_FILES")) return;
    std::error_code ignored;
    for (const std::string& d : dirs) std::filesystem::remove_all(d, ignored);
  }
};
ScratchDirs scratch_dirs;

}  // namespace

std::string scratch_dir(const std::string& test_name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() /
                       ("ispsim_traces_" + std::to_string(::getpid()) + "_" + test_name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  scratch_dirs.dirs.push_back(dir.string());
  return dir.string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("test cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("test cannot write " + path);
}

}  // namespace ispsim::trace::testing
