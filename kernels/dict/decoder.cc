#include "kernels/dict/decoder.h"

#include "common/error.h"
#include "kernels/rag/kv_store.h"

namespace ispsim::dict {

namespace {
const Dictionary& dict_or_empty(const std::vector<Dictionary>& d, size_t i) {
  static const Dictionary empty;
  return i < d.size() ? d[i] : empty;
}
}  // namespace

CompressedDecoder::CompressedDecoder(const model::Model& model, const std::vector<Dictionary>& dicts,
                                     const CacheSettings& settings)
    : model_(model), c_(model.config), backend_(model, rag::tile_tokens_for(model.config.head_dim)) {
  if (settings.compress && dicts.size() != static_cast<size_t>(c_.num_layers) * 2)
    throw BadInput("compressed decoder", "expected " + std::to_string(c_.num_layers * 2) +
                                             " dictionaries (layers x K/V), got " + std::to_string(dicts.size()));
  for (int l = 0; l < c_.num_layers; ++l)
    caches_.push_back(std::make_unique<CompressedKvCache>(dict_or_empty(dicts, l * 2), dict_or_empty(dicts, l * 2 + 1),
                                                          c_.num_heads, c_.num_kv_heads, c_.head_dim, settings));
  reads_.resize(c_.num_layers);
}

void CompressedDecoder::prefill(const std::vector<int>& prompt, std::vector<float>& logits) {
  if (prompt.empty() || position_ != 0) throw BadInput("compressed decoder", "prefill needs >= 1 token, once, first");
  const int n = static_cast<int>(prompt.size()), kvd = c_.kv_dim();
  std::vector<int> pos(n);
  for (int t = 0; t < n; ++t) pos[t] = t;
  x_.resize(static_cast<size_t>(n) * c_.hidden_size);
  q_.resize(static_cast<size_t>(n) * c_.q_dim());
  att_.resize(static_cast<size_t>(n) * c_.q_dim());
  k_pre_.resize(static_cast<size_t>(n) * kvd);
  k_.resize(static_cast<size_t>(n) * kvd);
  v_.resize(static_cast<size_t>(n) * kvd);
  backend_.embed(prompt.data(), n, x_.data());
  for (int l = 0; l < c_.num_layers; ++l) {
    backend_.qkv(l, x_.data(), n, pos.data(), q_.data(), k_pre_.data(), v_.data());
    for (int t = 0; t < n; ++t) backend_.rotate_keys(&k_pre_[static_cast<size_t>(t) * kvd], t, &k_[static_cast<size_t>(t) * kvd]);
    backend_.attention(l, q_.data(), pos.data(), n, k_.data(), v_.data(), n, att_.data());
    for (int t = 0; t < n; ++t) caches_[l]->append(&k_[static_cast<size_t>(t) * kvd], &v_[static_cast<size_t>(t) * kvd]);
    backend_.finish_layer(l, att_.data(), n, x_.data());
  }
  position_ = n;
  backend_.logits(&x_[static_cast<size_t>(n - 1) * c_.hidden_size], logits);
}

void CompressedDecoder::decode(int token, std::vector<float>& logits) {
  if (position_ == 0) throw BadInput("compressed decoder", "decode before prefill");
  const int pos = position_;
  x_.resize(c_.hidden_size);
  backend_.embed(&token, 1, x_.data());
  for (int l = 0; l < c_.num_layers; ++l) {
    backend_.qkv(l, x_.data(), 1, &pos, q_.data(), k_pre_.data(), v_.data());
    backend_.rotate_keys(k_pre_.data(), pos, k_.data());
    caches_[l]->append(k_.data(), v_.data());  // the new token joins the window first
    reads_[l] = StepReads{};
    caches_[l]->attend(q_.data(), att_.data(), &reads_[l]);
    backend_.finish_layer(l, att_.data(), 1, x_.data());
  }
  ++position_;
  backend_.logits(x_.data(), logits);
}

}  // namespace ispsim::dict
