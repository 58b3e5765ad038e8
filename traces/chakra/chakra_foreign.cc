#include "traces/chakra/chakra_foreign.h"

#include <cctype>
#include <map>

#include "common/error.h"

namespace ispsim::chakra {

namespace {

// Recursive-descent reader of a Python list literal of whole numbers.
class ListParser {
 public:
  explicit ListParser(const std::string& text) : s_(text) {}

  // The top-level entries; false when the text is not one list.
  bool parse(std::vector<Shape>& out) {
    skip_space();
    if (!eat('[')) return false;
    skip_space();
    if (eat(']')) return at_end();
    do {
      Shape shape;
      bool flat = true;
      if (!entry(shape, flat)) return false;
      out.push_back(flat ? shape : Shape{});
      skip_space();
    } while (eat(','));
    return eat(']') && at_end();
  }

 private:
  // One entry: a list (flat = a list of whole numbers only) or a scalar.
  bool entry(Shape& shape, bool& flat) {
    skip_space();
    if (!eat('[')) return scalar(flat);
    skip_space();
    if (eat(']')) return true;
    do {
      skip_space();
      if (peek() == '[') {
        Shape inner;
        bool inner_flat = true;
        if (!entry(inner, inner_flat)) return false;
        flat = false;
      } else if (std::isdigit(static_cast<unsigned char>(peek())) && whole_number()) {
        shape.push_back(value_);
      } else if (!scalar(flat)) {
        return false;
      }
      skip_space();
    } while (eat(','));
    return eat(']');
  }
  // A scalar that is not a dimension (0.0, None, True, 'a string'): not a tensor.
  bool scalar(bool& flat) {
    flat = false;
    const size_t start = i_;
    if (peek() == '\'' || peek() == '"') {
      const char quote = s_[i_++];
      while (i_ < s_.size() && s_[i_] != quote) ++i_;
      return eat(quote);
    }
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != ']' && s_[i_] != '[') ++i_;
    return i_ > start;
  }
  // Digits ending at a separator; false (nothing consumed) for 0.5, 1e3 and the like.
  bool whole_number() {
    size_t j = i_;
    uint64_t v = 0;
    while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) {
      if (v > (UINT64_MAX - 9) / 10) return false;
      v = v * 10 + uint64_t(s_[j++] - '0');
    }
    if (j < s_.size() && !std::isspace(static_cast<unsigned char>(s_[j])) && s_[j] != ',' && s_[j] != ']')
      return false;
    i_ = j;
    value_ = v;
    return true;
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  void skip_space() {
    while (std::isspace(static_cast<unsigned char>(peek()))) ++i_;
  }
  bool at_end() {
    skip_space();
    return i_ == s_.size();
  }

  const std::string& s_;
  size_t i_ = 0;
  uint64_t value_ = 0;
};

uint64_t product(const Shape& shape, size_t from = 0, size_t to = SIZE_MAX) {
  uint64_t p = 1;
  for (size_t i = from; i < shape.size() && i < to; ++i) p *= shape[i];
  return p;
}

// Element type from IOInfo.types, e.g. "['Tensor(c10::Half)', 'Tensor(c10::Half)']".
trace::DType dtype_of(const std::string& types) {
  if (types.find("BFloat16") != std::string::npos) return trace::DTYPE_BF16;
  if (types.find("Half") != std::string::npos) return trace::DTYPE_FP16;
  if (types.find("float") != std::string::npos || types.find("Float") != std::string::npos) return trace::DTYPE_FP32;
  return trace::DTYPE_FP16;  // not stated: the presets' FP16
}

struct Inputs {
  std::vector<Shape> shapes;
  trace::DType dtype;
  // The i-th shape if it has at least `rank` dimensions, else nullptr.
  const Shape* at(size_t i, size_t rank = 1) const {
    return i < shapes.size() && shapes[i].size() >= rank ? &shapes[i] : nullptr;
  }
};

MappedNode gemm(uint64_t m, uint64_t n, uint64_t k, bool b_is_weight, const Inputs& in,
                const trace::ModelShape& model) {
  MappedNode out;
  out.rows = m;
  trace::Op op;
  if (b_is_weight && n == model.vocab()) {  // the LM head: hidden x vocab logits
    op.mutable_lm_head()->set_rows(m);
    op.mutable_lm_head()->set_dtype(in.dtype);
  } else {
    trace::Gemm* g = op.mutable_gemm();
    g->set_m(m), g->set_n(n), g->set_k(k), g->set_b_is_weight(b_is_weight);
    g->set_a_dtype(in.dtype), g->set_b_dtype(in.dtype), g->set_out_dtype(in.dtype);
  }
  out.op = op;
  return out;
}

std::optional<MappedNode> map_matmul(const std::string& op, const Inputs& in, const trace::ModelShape& model) {
  if (op == "linear") {  // x [..., K], weight [N, K]
    const Shape *x = in.at(0), *w = in.at(1, 2);
    if (x && w) return gemm(product(*x, 0, x->size() - 1), (*w)[0], x->back(), true, in, model);
  } else if (op == "mm" || op == "addmm") {  // [M, K] x [K, N], addmm after its bias
    const size_t a = op == "mm" ? 0 : 1;
    const Shape *x = in.at(a, 2), *w = in.at(a + 1, 2);
    if (x && w) return gemm((*x)[0], (*w)[1], (*x)[1], true, in, model);
  } else if (op == "matmul" || op == "bmm") {  // [..., M, K] x [..., K, N]; a 2-D B is a weight
    const Shape *x = in.at(0, 2), *y = in.at(1, 2);
    if (x && y) return gemm(product(*x, 0, x->size() - 1), y->back(), x->back(), y->size() == 2, in, model);
  }
  return std::nullopt;
}

std::optional<MappedNode> map_attention(const Inputs& in, const trace::ModelShape& model, const std::string& where) {
  const Shape *q = in.at(0, 4), *k = in.at(1, 4);  // [batch, heads, tokens, head_dim]
  if (!q || !k) return std::nullopt;
  if ((*q)[1] != model.heads() || (*q)[3] != model.head_dim() || (*k)[1] != model.kv_heads())
    throw BadInput(where, "attention with " + std::to_string((*q)[1]) + " query heads, " + std::to_string((*k)[1]) +
                              " KV heads of " + std::to_string((*q)[3]) + " elements, but model " + model.name() +
                              " has " + std::to_string(model.heads()) + ", " + std::to_string(model.kv_heads()) +
                              " of " + std::to_string(model.head_dim()) + " (wrong --shape?)");
  MappedNode out;
  out.rows = (*q)[2];
  trace::Op op;
  trace::Attention* a = op.mutable_attention();
  a->set_query_rows((*q)[2]);
  a->set_causal((*q)[2] > 1);
  a->set_dtype(in.dtype);
  trace::KvSpan* span = a->add_kv();
  span->mutable_tokens()->set_end((*k)[2]);
  span->set_region(trace::KV_REGION_APPENDED);
  out.op = op;
  return out;
}

std::optional<MappedNode> map_elementwise(const std::string& name, const Inputs& in) {
  static const std::map<std::string, trace::NonlinearKind> kinds = {
      {"softmax", trace::NONLINEAR_SOFTMAX},      {"_softmax", trace::NONLINEAR_SOFTMAX},
      {"rms_norm", trace::NONLINEAR_RMSNORM},     {"_fused_rms_norm", trace::NONLINEAR_RMSNORM},
      {"layer_norm", trace::NONLINEAR_LAYERNORM}, {"native_layer_norm", trace::NONLINEAR_LAYERNORM},
      {"silu", trace::NONLINEAR_SILU},            {"relu", trace::NONLINEAR_RELU},
      {"gelu", trace::NONLINEAR_GELU},            {"add", trace::NONLINEAR_RESIDUAL_ADD}};
  const auto kind = kinds.find(name);
  const Shape* x = in.at(0);
  if (kind == kinds.end() || !x) return std::nullopt;
  // Only an add of two tensors of one shape is a residual add (not a mask or a bias).
  if (kind->second == trace::NONLINEAR_RESIDUAL_ADD && (in.shapes.size() < 2 || in.shapes[1] != *x))
    return std::nullopt;
  MappedNode out;
  trace::Op op;
  op.mutable_nonlinear()->set_kind(kind->second);
  op.mutable_nonlinear()->set_elements(product(*x));
  op.mutable_nonlinear()->set_dtype(in.dtype);
  out.op = op;
  return out;
}

std::optional<MappedNode> map_embedding(const Inputs& in) {
  const Shape* indices = in.at(1);  // embedding(weight [vocab, hidden], indices [...])
  if (!indices) return std::nullopt;
  MappedNode out;
  out.rows = product(*indices);
  trace::Op op;
  op.mutable_embedding()->set_tokens(out.rows);
  op.mutable_embedding()->set_dtype(in.dtype);
  out.op = op;
  return out;
}

bool is_attention(const std::string& op) {
  return op == "scaled_dot_product_attention" || op == "_scaled_dot_product_flash_attention" ||
         op == "_scaled_dot_product_efficient_attention" || op == "_scaled_dot_product_cudnn_attention" ||
         op == "_flash_attention_forward";
}

}  // namespace

std::optional<std::vector<Shape>> parse_shapes(const std::string& text) {
  std::vector<Shape> shapes;
  if (!ListParser(text).parse(shapes)) return std::nullopt;
  return shapes;
}

std::string base_op_name(const std::string& name) {
  std::string base = name.substr(name.rfind("::") == std::string::npos ? 0 : name.rfind("::") + 2);
  if (base.size() > 1 && base.back() == '_' && base[base.size() - 2] != '_') base.pop_back();
  return base;
}

MappedNode map_node(const Node& node, const trace::ModelShape& model, const std::string& where) {
  MappedNode unsupported;
  unsupported.unsupported = NodeType_Name(node.type()) + " " + node.name();
  if (node.type() != COMP_NODE) return unsupported;
  const std::optional<std::vector<Shape>> shapes = parse_shapes(node.inputs().shapes());
  if (!shapes) return unsupported;
  const Inputs in{*shapes, dtype_of(node.inputs().types())};
  const std::string op = base_op_name(node.name());
  std::optional<MappedNode> mapped = is_attention(op)    ? map_attention(in, model, where)
                                     : op == "embedding" ? map_embedding(in)
                                                         : map_matmul(op, in, model);
  if (!mapped) mapped = map_elementwise(op, in);
  return mapped ? *mapped : unsupported;
}

}  // namespace ispsim::chakra
