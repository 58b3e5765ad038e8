#include "traces/trace_validator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "common/error.h"
#include "traces/trace_format.h"

namespace ispsim::trace {

namespace {

std::string str(uint64_t v) { return std::to_string(v); }

// Problem text for a size that must be in [1, max]; empty when fine.
std::string size_problem(const std::string& name, uint64_t value, uint64_t max) {
  if (value == 0) return name + " is 0; must be > 0";
  if (value > max) return name + " is " + str(value) + "; exceeds the limit " + str(max);
  return {};
}

std::string fraction_problem(const std::string& name, double value) {
  if (!(value >= 0.0 && value <= 1.0))  // also rejects NaN
    return name + " is " + std::to_string(value) + "; must be within 0..1";
  return {};
}

bool is_valid_bits(uint32_t bits) { return bits == 4 || bits == 8 || bits == 16 || bits == 32; }

// Phases whose attention a platform may place on the SSD: the KV appended in
// them travels with the next attention command of the same layer and phase.
bool attention_may_run_in_ssd(Phase phase) {
  return phase == PHASE_RECOMPUTATION || phase == PHASE_QUERY_PREFILL || phase == PHASE_FUSED_PREFILL ||
         phase == PHASE_DECODE;
}

std::string id_list(const std::vector<uint64_t>& ids) {
  std::string text;
  for (uint64_t id : ids) text += (text.empty() ? "" : ", ") + str(id);
  return text;
}

const BitVector* own_hkvd_mask(const Attention& attention) {
  return attention.has_hkvd_mask() ? &attention.hkvd_mask() : nullptr;
}

}  // namespace

uint32_t dtype_bits(DType dtype) {
  switch (dtype) {
    case DTYPE_FP32: case DTYPE_INT32: return 32;
    case DTYPE_FP16: case DTYPE_BF16: case DTYPE_INT16: return 16;
    case DTYPE_INT8: return 8;
    case DTYPE_INT4: return 4;
    default: return 0;
  }
}

uint32_t kv_format_bits(KvFormat format) {
  switch (format) {
    case KV_FP16: return 16;
    case KV_INT8: return 8;
    case KV_INT4: return 4;
    default: return 0;
  }
}

uint64_t context_tokens(const Request& request) {
  uint64_t total = 0;
  for (const Document& d : request.documents()) total += d.tokens();
  return total;
}

uint64_t dense_kv_bytes_per_token(const ModelShape& model, KvParts parts, uint32_t bits) {
  const uint64_t halves = parts == KV_PARTS_K_AND_V ? 2 : 1;
  return uint64_t{model.kv_heads()} * model.head_dim() * halves * bits / 8;
}

namespace {

// Eight bytes at a time, SWAR: the portable build has no POPCNT instruction, and
// __builtin_popcount then calls libgcc once per byte (27 % of a long
// GPU-FullCompute run went there: every decode attention carries a C-bit mask).
uint64_t popcount_words(const std::string& b) {
  uint64_t n = 0;
  size_t i = 0;
  for (; i + 8 <= b.size(); i += 8) {
    uint64_t x;
    std::memcpy(&x, b.data() + i, 8);
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    n += (x * 0x0101010101010101ULL) >> 56;
  }
  for (; i < b.size(); ++i)
    for (unsigned char byte = static_cast<unsigned char>(b[i]); byte != 0; byte &= byte - 1) ++n;
  return n;
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same with the POPCNT instruction, where the CPU has it (every x86-64 CPU
// since 2008): a long mask is counted about five times faster.
__attribute__((target("popcnt"))) uint64_t popcount_instruction(const std::string& b) {
  uint64_t n = 0;
  size_t i = 0;
  for (; i + 8 <= b.size(); i += 8) {
    uint64_t x;
    std::memcpy(&x, b.data() + i, 8);
    n += uint64_t(__builtin_popcountll(x));
  }
  for (; i < b.size(); ++i) n += uint64_t(__builtin_popcount(static_cast<unsigned char>(b[i])));
  return n;
}
bool has_popcnt() {
  static const bool has = (__builtin_cpu_init(), __builtin_cpu_supports("popcnt"));
  return has;
}
#endif

}  // namespace

uint64_t popcount(const BitVector& bits) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (has_popcnt()) return popcount_instruction(bits.bits());
#endif
  return popcount_words(bits.bits());
}

uint64_t moved_tokens(const KvTransfer& kv) {
  if (kv.has_token_mask()) return popcount(kv.token_mask());
  return kv.tokens().end() > kv.tokens().begin() ? kv.tokens().end() - kv.tokens().begin() : 0;
}

AttentionReads attention_reads(const Attention& attention) {
  return attention_reads(attention, own_hkvd_mask(attention));
}

AttentionReads attention_reads(const Attention& attention, const BitVector* hkvd_mask) {
  AttentionReads reads;
  for (const KvSpan& s : attention.kv()) {
    const uint64_t tokens = s.tokens().end() > s.tokens().begin() ? s.tokens().end() - s.tokens().begin() : 0;
    if (s.region() == KV_REGION_PRECOMPUTED) {
      reads.precomputed += tokens;
      reads.precomputed_end = std::max(reads.precomputed_end, s.tokens().end());
    } else {
      reads.appended += tokens;
    }
  }
  if (hkvd_mask != nullptr) reads.hkvd = popcount(*hkvd_mask);
  return reads;
}

std::string attention_kv_problem(const Attention& attention, uint64_t context_tokens, uint64_t appended_before) {
  return attention_kv_problem(attention, own_hkvd_mask(attention), context_tokens, appended_before);
}

std::string attention_kv_problem(const Attention& attention, const BitVector* hkvd_mask, uint64_t context_tokens,
                                 uint64_t appended_before) {
  const AttentionReads reads = attention_reads(attention, hkvd_mask);
  if (reads.precomputed_end > context_tokens)
    return "attention reads precomputed KV up to token " + str(reads.precomputed_end) + " but the context has " +
           str(context_tokens) + " tokens";
  const uint64_t appended = reads.appended + reads.hkvd;
  if (appended > appended_before)
    return "attention reads " + str(appended) + " appended KV tokens (appended spans + HKVD mask bits) but the " +
           "kv_append ops of its layer before it appended " + str(appended_before);
  if (attention.query_rows() > appended)
    return "attention.query_rows is " + str(attention.query_rows()) + " but it reads only " + str(appended) +
           " appended KV tokens (the query rows are the last appended entries)";
  return {};
}

TraceValidator::TraceValidator(std::string where) : where_(std::move(where)) {}

void TraceValidator::fail_header(const std::string& problem) const {
  throw BadInput(where_, "header: " + problem);
}

void TraceValidator::fail_op(const Op& op, const std::string& problem) const {
  throw BadInput(where_, "op " + str(op.id()) + ": " + problem);
}

void TraceValidator::IdRuns::add(uint64_t id) {
  if (!runs_.empty() && runs_.back().second + 1 == id) {
    runs_.back().second = id;
  } else {
    runs_.emplace_back(id, id);
  }
  ++count_;
}

bool TraceValidator::IdRuns::contains(uint64_t id) const {
  // The first run that ends at or after id holds it if it also starts at or before it.
  const auto run = std::lower_bound(runs_.begin(), runs_.end(), id,
                                    [](const std::pair<uint64_t, uint64_t>& r, uint64_t v) { return r.second < v; });
  return run != runs_.end() && run->first <= id;
}

uint64_t TraceValidator::ops_of(Program program) const {
  auto it = ids_.find(program);
  return it == ids_.end() ? 0 : it->second.size();
}

void TraceValidator::check_header(const Header& header) {
  if (!header.has_version() || header.version().major() == 0)
    fail_header("no format version");
  if (header.version().major() != kFormatMajor)
    fail_header("unsupported format version " + str(header.version().major()) + "." +
                str(header.version().minor()) + " (this reader understands major version " +
                str(kFormatMajor) + ")");

  if (!header.has_model()) fail_header("no model shape");
  const ModelShape& m = header.model();
  if (m.family() == ARCHITECTURE_UNSPECIFIED) fail_header("model.family not set");
  const std::pair<const char*, uint32_t> dims[] = {
      {"model.layers", m.layers()},   {"model.hidden", m.hidden()},
      {"model.heads", m.heads()},     {"model.kv_heads", m.kv_heads()},
      {"model.head_dim", m.head_dim()}, {"model.ffn_dim", m.ffn_dim()},
      {"model.vocab", m.vocab()}};
  for (const auto& [name, value] : dims)
    if (std::string p = size_problem(name, value, kMaxModelDim); !p.empty()) fail_header(p);
  if (m.heads() % m.kv_heads() != 0)
    fail_header("model.heads (" + str(m.heads()) + ") is not a multiple of model.kv_heads (" +
                str(m.kv_heads()) + ")");
  const std::pair<const char*, uint32_t> widths[] = {{"model.weight_bits", m.weight_bits()},
                                                     {"model.kv_bits", m.kv_bits()},
                                                     {"model.activation_bits", m.activation_bits()}};
  for (const auto& [name, value] : widths)
    if (!is_valid_bits(value)) fail_header(std::string(name) + " is " + str(value) + "; must be 4, 8, 16 or 32");

  if (!header.has_request()) fail_header("no request");
  const Request& r = header.request();
  for (int i = 0; i < r.documents_size(); ++i) {
    std::string p = size_problem("request.documents[" + str(i) + "].tokens", r.documents(i).tokens(), kMaxTokens);
    if (!p.empty()) fail_header(p);
  }
  if (r.query_tokens() > kMaxTokens) fail_header("request.query_tokens exceeds the limit " + str(kMaxTokens));
  if (r.answer_tokens() > kMaxTokens) fail_header("request.answer_tokens exceeds the limit " + str(kMaxTokens));
  if (context_tokens(r) > kMaxTokens) fail_header("request context exceeds " + str(kMaxTokens) + " tokens");
  if (std::string p = fraction_problem("request.recompute_ratio", r.recompute_ratio()); !p.empty())
    fail_header(p);
  if (r.kv_format() == KV_FORMAT_UNSPECIFIED) fail_header("request.kv_format not set");
  const uint32_t format_bits = kv_format_bits(r.kv_format());
  if (format_bits != 0 && format_bits != m.kv_bits())
    fail_header("request.kv_format " + KvFormat_Name(r.kv_format()) + " has " + str(format_bits) +
                "-bit elements but model.kv_bits is " + str(m.kv_bits()));
  if (r.kv_format() == KV_DICTIONARY) {
    if (!r.has_dictionary()) fail_header("request.kv_format is KV_DICTIONARY but request.dictionary is missing");
    const DictionarySettings& d = r.dictionary();
    const std::pair<const char*, uint32_t> counts[] = {
        {"atoms", d.atoms()}, {"k_low", d.k_low()}, {"k_high", d.k_high()},
        {"window_tokens", d.window_tokens()}, {"unit_tokens", d.unit_tokens()},
        {"dictionary_bits", d.dictionary_bits()}, {"index_bits", d.index_bits()},
        {"coefficient_bits", d.coefficient_bits()}};
    for (const auto& [name, value] : counts)
      if (value == 0) fail_header("request.dictionary." + std::string(name) + " is 0; must be > 0");
    if (d.k_low() > d.k_high() || d.k_high() > d.atoms())
      fail_header("request.dictionary needs k_low <= k_high <= atoms, got " + str(d.k_low()) + ", " +
                  str(d.k_high()) + ", " + str(d.atoms()));
    if (std::string p = fraction_problem("request.dictionary.refine_fraction", d.refine_fraction()); !p.empty())
      fail_header(p);
    if (d.unit_tokens() > d.window_tokens())
      fail_header("request.dictionary.unit_tokens (" + str(d.unit_tokens()) + ") exceeds window_tokens (" +
                  str(d.window_tokens()) + ")");
  } else if (r.has_dictionary()) {
    fail_header("request.dictionary is set but request.kv_format is " + KvFormat_Name(r.kv_format()));
  }

  if (!header.has_producer() || header.producer().kind() == PRODUCER_UNSPECIFIED)
    fail_header("producer.kind not set");

  if (header.programs_size() == 0) fail_header("no programs declared");
  for (const ProgramInfo& p : header.programs()) {
    if (p.program() == PROGRAM_UNSPECIFIED) fail_header("a program entry has no program set");
    if (ids_.count(p.program())) fail_header("program " + Program_Name(p.program()) + " declared twice");
    if (p.has_op_count() && p.op_count() == 0)
      fail_header("program " + Program_Name(p.program()) + " declares 0 ops");
    ids_[p.program()];
  }
  header_ = header;
  have_header_ = true;
}

void TraceValidator::check_op(const Op& op) {
  if (!have_header_) throw BadInput(where_, "op " + str(op.id()) + " before the header");
  if (have_previous_id_ && op.id() <= previous_id_)
    fail_op(op, "id is not greater than the previous op's id " + str(previous_id_));

  auto program = ids_.find(op.program());
  if (op.program() == PROGRAM_UNSPECIFIED) fail_op(op, "program not set");
  if (program == ids_.end())
    fail_op(op, "program " + Program_Name(op.program()) + " is not declared in the header");
  IdRuns& seen = program->second;
  for (const ProgramInfo& p : header_.programs())
    if (p.program() == op.program() && p.has_op_count() && seen.size() >= p.op_count())
      fail_op(op, "program " + Program_Name(op.program()) + " declares " + str(p.op_count()) +
                      " ops in the header but has more");

  if (op.phase() == PHASE_UNSPECIFIED) fail_op(op, "phase not set");
  if (!Phase_IsValid(op.phase())) fail_op(op, "phase " + std::to_string(static_cast<int>(op.phase())) + " is not a phase of this trace format");
  if (op.has_layer() && op.layer() >= header_.model().layers())
    fail_op(op, "layer " + str(op.layer()) + " does not exist (model has " +
                    str(header_.model().layers()) + " layers)");
  if (op.has_decode_step() && op.decode_step() >= header_.request().answer_tokens())
    fail_op(op, "decode_step " + str(op.decode_step()) + " is beyond request.answer_tokens " +
                    str(header_.request().answer_tokens()));

  for (int k = 0; k < op.deps_size(); ++k) {
    const uint64_t dep = op.deps(k);
    if (dep >= op.id()) fail_op(op, "depends on op " + str(dep) + ", which is not an earlier op");
    if (!seen.contains(dep))
      fail_op(op, "depends on op " + str(dep) + ", which is not an earlier op of program " +
                      Program_Name(op.program()));
    // An op lists a few: a linear search is cheaper than a set.
    if (std::find(op.deps().begin(), op.deps().begin() + k, dep) != op.deps().begin() + k)
      fail_op(op, "lists dependency " + str(dep) + " twice");
  }

  check_kind(op);
  check_kv_dataflow(op);
  check_attention_reads(op);

  if (op.has_measured_duration_ns() && op.measured_duration_ns() == 0)
    fail_op(op, "measured_duration_ns is 0; omit it when not measured");
  for (int i = 0; i < op.payloads_size(); ++i) {
    const Tensor& t = op.payloads(i);
    const std::string name = "payloads[" + str(i) + "]";
    if (t.name().empty()) fail_op(op, name + " has no name");
    if (dtype_bits(t.dtype()) == 0) fail_op(op, name + " (" + t.name() + ") dtype not set");
    if (t.shape_size() == 0) fail_op(op, name + " (" + t.name() + ") has no shape");
    uint64_t elements = 1;
    for (uint64_t dim : t.shape()) {
      if (std::string p = size_problem(name + " (" + t.name() + ") dimension", dim, kMaxElements); !p.empty())
        fail_op(op, p);
      if (elements > kMaxElements / dim) fail_op(op, name + " (" + t.name() + ") has too many elements");
      elements *= dim;
    }
    const uint64_t expected = (elements * dtype_bits(t.dtype()) + 7) / 8;
    if (t.data().size() != expected)
      fail_op(op, name + " (" + t.name() + ") has " + str(t.data().size()) + " data bytes, expected " +
                      str(expected));
  }

  seen.add(op.id());
  previous_id_ = op.id();
  have_previous_id_ = true;
  ++ops_seen_;
}

uint64_t TraceValidator::request_positions() const {
  const Request& r = header_.request();
  return context_tokens(r) + r.query_tokens() + r.answer_tokens();
}

void TraceValidator::check_positions(const Op& op, const TokenRange& range, const std::string& name) const {
  if (range.end() > request_positions())
    fail_op(op, name + " [" + str(range.begin()) + ", " + str(range.end()) + ") goes beyond the request's " +
                    str(request_positions()) + " token positions (context + query + answer)");
}

void TraceValidator::check_mask(const Op& op, const BitVector& mask, uint64_t expected_bits,
                                const std::string& name) const {
  if (mask.bit_length() != expected_bits)
    fail_op(op, name + " has " + str(mask.bit_length()) + " bits, expected " + str(expected_bits) +
                    " (one per token it covers)");
  const uint64_t bytes = (mask.bit_length() + 7) / 8;
  if (mask.bits().size() != bytes)
    fail_op(op, name + " holds " + str(mask.bits().size()) + " bytes, expected " + str(bytes) + " for " +
                    str(mask.bit_length()) + " bits");
  if (const unsigned spare = mask.bit_length() % 8; spare != 0) {
    const auto last = static_cast<unsigned char>(mask.bits().back());
    if (last >> spare) fail_op(op, name + " has bits set beyond its bit length");
  }
}

void TraceValidator::check_kv_transfer(const Op& op, const KvTransfer& kv, const std::string& name) const {
  if (!op.has_layer()) fail_op(op, name + " needs a layer");
  if (kv.tokens().end() <= kv.tokens().begin())
    fail_op(op, name + ".tokens [" + str(kv.tokens().begin()) + ", " + str(kv.tokens().end()) + ") is empty");
  check_positions(op, kv.tokens(), name + ".tokens");
  if (std::string p = size_problem(name + ".bytes", kv.bytes(), kMaxElements); !p.empty()) fail_op(op, p);
  if (kv.region() == KV_REGION_UNSPECIFIED) fail_op(op, name + ".region not set");
  if (!KvRegion_IsValid(kv.region())) fail_op(op, name + ".region " + std::to_string(static_cast<int>(kv.region())) + " is not a KV region");
  if (kv.parts() == KV_PARTS_UNSPECIFIED) fail_op(op, name + ".parts not set");
  if (!KvParts_IsValid(kv.parts())) fail_op(op, name + ".parts " + std::to_string(static_cast<int>(kv.parts())) + " is not a KvParts value");
  if (!KvFormat_IsValid(kv.format())) fail_op(op, name + ".format " + std::to_string(static_cast<int>(kv.format())) + " is not a KV format");
  if (kv.has_token_mask()) {
    check_mask(op, kv.token_mask(), kv.tokens().end() - kv.tokens().begin(), name + ".token_mask");
    if (popcount(kv.token_mask()) == 0) fail_op(op, name + ".token_mask selects no token");
  }
  const KvFormat format = kv.format() == KV_FORMAT_UNSPECIFIED ? header_.request().kv_format() : kv.format();
  if (const uint32_t bits = kv_format_bits(format); bits != 0) {
    const uint64_t tokens = moved_tokens(kv);
    // 128 bits: tokens (< 2^40) x bytes per token (< 2^53) cannot overflow.
    const unsigned __int128 expected =
        static_cast<unsigned __int128>(tokens) * dense_kv_bytes_per_token(header_.model(), kv.parts(), bits);
    if (kv.bytes() != expected)
      fail_op(op, name + ".bytes is " + str(kv.bytes()) + " but " + str(tokens) + " tokens of " +
                      KvFormat_Name(format) + " " + KvParts_Name(kv.parts()) + " are " + format_u128(expected) + " bytes");
  }
}

void TraceValidator::check_kind(const Op& op) const {
  auto need = [&](const std::string& problem) { if (!problem.empty()) fail_op(op, problem); };
  auto need_layer = [&](const char* kind) {
    if (!op.has_layer()) fail_op(op, std::string(kind) + " needs a layer");
  };
  switch (op.kind_case()) {
    case Op::kGemm: {
      const Gemm& g = op.gemm();
      need(size_problem("gemm.m", g.m(), kMaxElements));
      need(size_problem("gemm.n", g.n(), kMaxElements));
      need(size_problem("gemm.k", g.k(), kMaxElements));
      if (!dtype_bits(g.a_dtype()) || !dtype_bits(g.b_dtype()) || !dtype_bits(g.out_dtype()))
        fail_op(op, "gemm dtypes (a_dtype, b_dtype, out_dtype) must all be set");
      break;
    }
    case Op::kAttention: {
      const Attention& a = op.attention();
      need_layer("attention");
      need(size_problem("attention.query_rows", a.query_rows(), kMaxTokens));
      if (a.kv_size() == 0) fail_op(op, "attention sees no KV (attention.kv is empty)");
      uint64_t precomputed = 0;
      for (int i = 0; i < a.kv_size(); ++i) {
        const KvSpan& s = a.kv(i);
        const std::string name = "attention.kv[" + str(i) + "]";
        if (s.tokens().end() <= s.tokens().begin())
          fail_op(op, name + " [" + str(s.tokens().begin()) + ", " + str(s.tokens().end()) + ") is empty");
        check_positions(op, s.tokens(), name);
        if (s.region() == KV_REGION_UNSPECIFIED) fail_op(op, name + ".region not set");
        if (!KvRegion_IsValid(s.region())) fail_op(op, name + ".region " + std::to_string(static_cast<int>(s.region())) + " is not a KV region");
        if (s.region() == KV_REGION_PRECOMPUTED) precomputed += s.tokens().end() - s.tokens().begin();
      }
      std::vector<std::pair<uint64_t, int>> starts;  // (begin, span index), to find overlaps
      for (int i = 0; i < a.kv_size(); ++i) starts.emplace_back(a.kv(i).tokens().begin(), i);
      std::sort(starts.begin(), starts.end());
      for (size_t i = 1; i < starts.size(); ++i) {
        const TokenRange& before = a.kv(starts[i - 1].second).tokens();
        if (starts[i].first < before.end())
          fail_op(op, "attention.kv[" + str(starts[i].second) + "] overlaps attention.kv[" +
                          str(starts[i - 1].second) + "]");
      }
      if (!dtype_bits(a.dtype())) fail_op(op, "attention.dtype not set");
      if (a.has_hkvd_mask()) {
        if (precomputed == 0) fail_op(op, "attention.hkvd_mask given but no precomputed KV span to filter");
        check_mask(op, a.hkvd_mask(), precomputed, "attention.hkvd_mask");
      }
      break;
    }
    case Op::kNonlinear: {
      const Nonlinear& n = op.nonlinear();
      if (n.kind() == NONLINEAR_UNSPECIFIED) fail_op(op, "nonlinear.kind not set");
      if (!NonlinearKind_IsValid(n.kind()))
        fail_op(op, "nonlinear.kind " + std::to_string(static_cast<int>(n.kind())) + " is not a nonlinear kind of this trace format");
      need(size_problem("nonlinear.elements", n.elements(), kMaxElements));
      if (!dtype_bits(n.dtype())) fail_op(op, "nonlinear.dtype not set");
      break;
    }
    case Op::kKvLoad:
      check_kv_transfer(op, op.kv_load(), "kv_load");
      break;
    case Op::kKvAppend:
      check_kv_transfer(op, op.kv_append(), "kv_append");
      if (op.kv_append().region() != KV_REGION_APPENDED)
        fail_op(op, "kv_append.region must be KV_REGION_APPENDED (precomputed KV is never modified)");
      break;
    case Op::kHkvdSelect: {
      const HkvdSelect& h = op.hkvd_select();
      need_layer("hkvd_select");
      need(size_problem("hkvd_select.context_tokens", h.context_tokens(), kMaxTokens));
      if (h.context_tokens() > context_tokens(header_.request()))
        fail_op(op, "hkvd_select.context_tokens is " + str(h.context_tokens()) + " but the request has only " +
                        str(context_tokens(header_.request())) + " context tokens");
      need(fraction_problem("hkvd_select.ratio", h.ratio()));
      check_mask(op, h.mask(), h.context_tokens(), "hkvd_select.mask");
      if (popcount(h.mask()) != h.selected_tokens())
        fail_op(op, "hkvd_select.selected_tokens is " + str(h.selected_tokens()) + " but the mask has " +
                        str(popcount(h.mask())) + " bits set");
      break;
    }
    case Op::kDictEncode: {
      const DictEncode& d = op.dict_encode();
      need_layer("dict_encode");
      need(size_problem("dict_encode.tokens", d.tokens(), kMaxTokens));
      need(size_problem("dict_encode.heads", d.heads(), kMaxElements));
      need(size_problem("dict_encode.vector_dim", d.vector_dim(), kMaxElements));
      need(size_problem("dict_encode.atoms", d.atoms(), kMaxElements));
      need(size_problem("dict_encode.pursuit_iterations", d.pursuit_iterations(), d.atoms()));
      if (d.method() == PURSUIT_UNSPECIFIED) fail_op(op, "dict_encode.method not set");
      if (!PursuitMethod_IsValid(d.method())) fail_op(op, "dict_encode.method " + std::to_string(static_cast<int>(d.method())) + " is not a pursuit method");
      if (d.parts() == KV_PARTS_UNSPECIFIED) fail_op(op, "dict_encode.parts not set");
      if (!KvParts_IsValid(d.parts())) fail_op(op, "dict_encode.parts " + std::to_string(static_cast<int>(d.parts())) + " is not a KvParts value");
      break;
    }
    case Op::kDictAttention: {
      const DictAttention& d = op.dict_attention();
      need_layer("dict_attention");
      need(size_problem("dict_attention.query_rows", d.query_rows(), kMaxTokens));
      if (d.compressed_tokens() + d.window_tokens() == 0)
        fail_op(op, "dict_attention sees no tokens (compressed_tokens + window_tokens is 0)");
      if (d.compressed_tokens() > kMaxTokens || d.window_tokens() > kMaxTokens ||
          d.compressed_tokens() + d.window_tokens() > request_positions())
        fail_op(op, "dict_attention sees " + str(d.compressed_tokens()) + " + " + str(d.window_tokens()) +
                        " tokens, more than the request's " + str(request_positions()) + " token positions");
      need(size_problem("dict_attention.atoms", d.atoms(), kMaxElements));
      if (d.k_low() == 0 || d.k_low() > d.k_high() || d.k_high() > d.atoms())
        fail_op(op, "dict_attention needs 1 <= k_low <= k_high <= atoms, got " + str(d.k_low()) + ", " +
                        str(d.k_high()) + ", " + str(d.atoms()));
      need(fraction_problem("dict_attention.refine_fraction", d.refine_fraction()));
      break;
    }
    case Op::kEmbedding:
      need(size_problem("embedding.tokens", op.embedding().tokens(), kMaxTokens));
      if (!dtype_bits(op.embedding().dtype())) fail_op(op, "embedding.dtype not set");
      break;
    case Op::kLmHead:
      need(size_problem("lm_head.rows", op.lm_head().rows(), kMaxTokens));
      if (!dtype_bits(op.lm_head().dtype())) fail_op(op, "lm_head.dtype not set");
      break;
    case Op::KIND_NOT_SET:
      fail_op(op, "has no kind (gemm, attention, kv_load, ...)");
  }
}

void TraceValidator::check_kv_dataflow(const Op& op) {
  if (op.has_kv_append() || op.has_kv_load()) {
    // The runtime moves KV in whole tokens (write chunks split at token bounds).
    const KvTransfer& kv = op.has_kv_append() ? op.kv_append() : op.kv_load();
    const uint64_t tokens = moved_tokens(kv);
    if (tokens > 0 && kv.bytes() % tokens != 0)
      fail_op(op, std::string(op.has_kv_append() ? "kv_append" : "kv_load") + ".bytes " + str(kv.bytes()) +
                      " is not a whole number of bytes per token for " + str(tokens) + " tokens");
  }
  if (op.has_hkvd_select()) selected_tokens_[op.program()] = op.hkvd_select().selected_tokens();
  if (!op.has_layer() || !attention_may_run_in_ssd(op.phase())) return;
  const auto key = std::make_tuple(op.program(), op.layer(), op.phase());
  if (op.has_kv_append()) {
    PendingAppends& p = pending_appends_[key];
    p.ids.push_back(op.id());
    p.tokens += moved_tokens(op.kv_append());
    return;
  }
  if (!op.has_attention() && !op.has_dict_attention()) return;
  // KV the attention reads that may have been appended: appended spans plus
  // the HKVD substitutes; a dictionary attention reads its compressed tokens
  // and its window.
  uint64_t visible = 0;
  if (op.has_attention()) {
    const Attention& a = op.attention();
    const AttentionReads reads = attention_reads(a);
    const auto selected = selected_tokens_.find(op.program());
    if (a.has_hkvd_mask() && selected != selected_tokens_.end() && reads.hkvd != selected->second)
      fail_op(op, "attention.hkvd_mask has " + str(reads.hkvd) + " bits set but the program's hkvd_select selected " +
                      str(selected->second) + " tokens");
    visible = reads.appended + reads.hkvd;
  } else {
    visible = op.dict_attention().compressed_tokens() + op.dict_attention().window_tokens();
  }
  const auto pending = pending_appends_.find(key);
  if (pending == pending_appends_.end()) return;
  // The KV appended for this attention must be appended before it runs ...
  for (uint64_t id : pending->second.ids)
    if (std::find(op.deps().begin(), op.deps().end(), id) == op.deps().end())
      fail_op(op, "attention does not depend on kv_append op " + str(id) + " of layer " + str(op.layer()) +
                      " in " + phase_name(op.phase()) + ", so it may read that KV before it is appended");
  // ... and be KV it reads.
  if (pending->second.tokens > visible)
    fail_op(op, "attention reads " + str(visible) + " appended KV tokens (appended spans + HKVD mask bits) but " +
                    "kv_append op(s) " + id_list(pending->second.ids) + " appended " + str(pending->second.tokens) +
                    " tokens for it");
  pending_appends_.erase(pending);
}

void TraceValidator::check_attention_reads(const Op& op) {
  // A decode-only program starts from a KV cache that no op of it appended.
  if (!op.has_layer() || op.program() == DECODE_ONLY || op.program() == DECODE_ONLY_DICTIONARY) return;
  uint64_t& appended = appended_by_layer_[{op.program(), op.layer()}];
  if (op.has_kv_append()) appended += moved_tokens(op.kv_append());
  if (!op.has_attention()) return;
  const std::string problem = attention_kv_problem(op.attention(), context_tokens(header_.request()), appended);
  if (!problem.empty()) fail_op(op, problem);
}

void TraceValidator::check_end(bool counts_required) const {
  for (const ProgramInfo& p : header_.programs()) {
    const uint64_t seen = ops_of(p.program());
    if (p.has_op_count()) {
      if (seen != p.op_count())
        throw BadInput(where_, "program " + Program_Name(p.program()) + " declares " + str(p.op_count()) +
                                   " ops in the header, but the trace ends after " + str(seen) +
                                   " (truncated file?)");
    } else if (counts_required) {
      throw BadInput(where_, "header: program " + Program_Name(p.program()) + " has no op_count");
    } else if (seen == 0) {
      throw BadInput(where_, "program " + Program_Name(p.program()) + " is declared but has no ops");
    }
  }
  // After the counts: a file cut short is reported as such.
  if (!pending_appends_.empty()) {
    const auto& [key, pending] = *pending_appends_.begin();
    throw BadInput(where_, "op " + str(pending.ids.front()) + ": kv_append of layer " + str(std::get<1>(key)) +
                               " in " + phase_name(std::get<2>(key)) +
                               " is read by no later attention of that layer and phase");
  }
}

}  // namespace ispsim::trace
