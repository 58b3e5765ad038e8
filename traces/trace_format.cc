#include "traces/trace_format.h"

#include <cctype>
#include <cstdio>
#include <sstream>

#include "traces/trace_validator.h"

namespace ispsim::trace {

namespace {

std::string strip(const std::string& full, const std::string& prefix) {
  std::string s = full.rfind(prefix, 0) == 0 ? full.substr(prefix.size()) : full;
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s.empty() ? "unknown" : s;
}

std::string range(const TokenRange& r) {
  return "[" + std::to_string(r.begin()) + ", " + std::to_string(r.end()) + ")";
}

std::string number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string mask_text(const BitVector& mask) {
  return std::to_string(mask.bit_length()) + " bits (" + std::to_string(popcount(mask)) + " set)";
}

std::string kv_transfer_text(const KvTransfer& kv) {
  std::string s = "tokens " + range(kv.tokens());
  if (kv.has_token_mask()) s += " masked by " + mask_text(kv.token_mask());
  s += " = " + std::to_string(moved_tokens(kv)) + " tokens, " + region_name(kv.region()) + ", " +
       parts_name(kv.parts());
  if (kv.format() != KV_FORMAT_UNSPECIFIED) s += ", " + kv_format_name(kv.format());
  return s + ", " + format_bytes(kv.bytes());
}

}  // namespace

std::string phase_name(Phase v) { return strip(Phase_Name(v), "PHASE_"); }
std::string dtype_name(DType v) { return strip(DType_Name(v), "DTYPE_"); }
std::string region_name(KvRegion v) { return strip(KvRegion_Name(v), "KV_REGION_"); }
std::string parts_name(KvParts v) { return strip(KvParts_Name(v), "KV_PARTS_"); }
std::string kv_format_name(KvFormat v) { return strip(KvFormat_Name(v), "KV_"); }
std::string nonlinear_name(NonlinearKind v) { return strip(NonlinearKind_Name(v), "NONLINEAR_"); }
std::string pursuit_name(PursuitMethod v) { return strip(PursuitMethod_Name(v), "PURSUIT_"); }
std::string family_name(ArchitectureFamily v) { return strip(ArchitectureFamily_Name(v), "ARCHITECTURE_"); }
std::string producer_name(ProducerKind v) { return strip(ProducerKind_Name(v), "PRODUCER_"); }

std::string kind_name(Op::KindCase kind) {
  if (kind == Op::KIND_NOT_SET) return "none";
  const auto* field = Op::descriptor()->FindFieldByNumber(static_cast<int>(kind));
  return field ? field->name() : "unknown";
}

std::string format_bytes(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " (%.3f MiB)", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return std::to_string(bytes) + " B" + buf;
}

std::string format_u128(unsigned __int128 value) {
  if (value == 0) return "0";
  std::string digits;
  while (value > 0) {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  }
  return digits;
}

std::string format_op(const Op& op) {
  std::string s = "op " + std::to_string(op.id()) + " " + Program_Name(op.program());
  if (op.has_layer()) s += " layer " + std::to_string(op.layer());
  s += " " + phase_name(op.phase());
  if (op.has_decode_step()) s += " step " + std::to_string(op.decode_step());
  s += " | " + kind_name(op.kind_case()) + " ";
  switch (op.kind_case()) {
    case Op::kGemm: {
      const Gemm& g = op.gemm();
      const unsigned __int128 flops = static_cast<unsigned __int128>(2) * g.m() * g.n() * g.k();
      s += "M=" + std::to_string(g.m()) + " N=" + std::to_string(g.n()) + " K=" + std::to_string(g.k()) +
           " " + dtype_name(g.a_dtype()) + " x " + dtype_name(g.b_dtype()) + (g.b_is_weight() ? " (weight)" : "") +
           " -> " + dtype_name(g.out_dtype()) + ", " + format_u128(flops) + " FLOP";
      break;
    }
    case Op::kAttention: {
      const Attention& a = op.attention();
      s += std::to_string(a.query_rows()) + " query rows over";
      uint64_t total = 0;
      for (int i = 0; i < a.kv_size(); ++i) {
        const KvSpan& span = a.kv(i);
        s += std::string(i ? " +" : "") + " " + range(span.tokens()) + " " + region_name(span.region());
        total += span.tokens().end() - span.tokens().begin();
      }
      s += " = " + std::to_string(total) + " KV tokens";
      if (a.has_hkvd_mask()) s += ", hkvd mask " + mask_text(a.hkvd_mask());
      s += a.causal() ? ", causal" : ", not causal";
      s += ", " + dtype_name(a.dtype());
      break;
    }
    case Op::kNonlinear:
      s += nonlinear_name(op.nonlinear().kind()) + " " + std::to_string(op.nonlinear().elements()) +
           " elements " + dtype_name(op.nonlinear().dtype());
      break;
    case Op::kKvLoad: s += kv_transfer_text(op.kv_load()); break;
    case Op::kKvAppend: s += kv_transfer_text(op.kv_append()); break;
    case Op::kHkvdSelect: {
      const HkvdSelect& h = op.hkvd_select();
      s += std::to_string(h.selected_tokens()) + " of " + std::to_string(h.context_tokens()) +
           " context tokens (ratio " + number(h.ratio()) + "), mask " + mask_text(h.mask());
      break;
    }
    case Op::kDictEncode: {
      const DictEncode& d = op.dict_encode();
      s += std::to_string(d.tokens()) + " tokens x " + std::to_string(d.heads()) + " heads x " +
           std::to_string(d.vector_dim()) + " elements, " + parts_name(d.parts()) + ", " +
           std::to_string(d.pursuit_iterations()) + " " + pursuit_name(d.method()) + " iterations over " +
           std::to_string(d.atoms()) + " atoms";
      break;
    }
    case Op::kDictAttention: {
      const DictAttention& d = op.dict_attention();
      s += std::to_string(d.query_rows()) + " query rows over " + std::to_string(d.compressed_tokens()) +
           " compressed + " + std::to_string(d.window_tokens()) + " window tokens, " + std::to_string(d.atoms()) +
           " atoms, k_low " + std::to_string(d.k_low()) + ", k_high " + std::to_string(d.k_high()) +
           ", refine fraction " + number(d.refine_fraction());
      break;
    }
    case Op::kEmbedding:
      s += std::to_string(op.embedding().tokens()) + " tokens " + dtype_name(op.embedding().dtype());
      break;
    case Op::kLmHead:
      s += std::to_string(op.lm_head().rows()) + " rows " + dtype_name(op.lm_head().dtype());
      break;
    case Op::KIND_NOT_SET: break;
  }
  s += " | deps [";
  for (int i = 0; i < op.deps_size(); ++i) s += (i ? ", " : "") + std::to_string(op.deps(i));
  s += "]";
  if (op.has_measured_duration_ns()) s += " | measured " + std::to_string(op.measured_duration_ns()) + " ns";
  if (op.payloads_size()) {
    uint64_t bytes = 0;
    for (const Tensor& t : op.payloads()) bytes += t.data().size();
    s += " | " + std::to_string(op.payloads_size()) + " payloads, " + std::to_string(bytes) + " B";
  }
  if (!op.label().empty()) s += " | " + quoted(op.label());
  return s;
}

std::string format_header(const Header& h) {
  std::ostringstream out;
  out << "format    " << h.version().major() << "." << h.version().minor() << "\n";
  out << "producer  " << producer_name(h.producer().kind());
  if (!h.producer().tool().empty()) out << " " << quoted(h.producer().tool());
  for (const Setting& s : h.producer().settings()) out << " " << s.key() << "=" << quoted(s.value());
  out << "\n";
  const ModelShape& m = h.model();
  out << "model     " << family_name(m.family());
  if (!m.name().empty()) out << " " << quoted(m.name());
  out << ": " << m.layers() << " layers, hidden " << m.hidden() << ", " << m.heads() << " heads, "
      << m.kv_heads() << " KV heads, head dim " << m.head_dim() << ", FFN " << m.ffn_dim() << ", vocab "
      << m.vocab() << " tokens; weight " << m.weight_bits() << " bit, KV " << m.kv_bits()
      << " bit, activation " << m.activation_bits() << " bit\n";
  const Request& r = h.request();
  out << "request   " << r.documents_size() << " documents, " << context_tokens(r) << " context tokens";
  if (!r.dataset().empty()) out << " (dataset " << quoted(r.dataset()) << ")";
  out << "; query " << r.query_tokens() << " tokens; answer " << r.answer_tokens() << " tokens; recompute ratio "
      << number(r.recompute_ratio() * 100.0) << " %; KV " << kv_format_name(r.kv_format()) << "\n";
  if (r.has_dictionary()) {
    const DictionarySettings& d = r.dictionary();
    out << "dictionary " << d.atoms() << " atoms, k_low " << d.k_low() << ", k_high " << d.k_high()
        << ", refine fraction " << number(d.refine_fraction()) << ", window " << d.window_tokens()
        << " tokens, unit " << d.unit_tokens() << " tokens; dictionary " << d.dictionary_bits() << " bit, index "
        << d.index_bits() << " bit, coefficient " << d.coefficient_bits() << " bit\n";
  }
  for (const ProgramInfo& p : h.programs()) {
    out << "program   " << Program_Name(p.program());
    if (p.has_op_count()) out << ": " << p.op_count() << " ops";
    if (!p.description().empty()) out << " " << quoted(p.description());
    out << "\n";
  }
  return out.str();
}

}  // namespace ispsim::trace
