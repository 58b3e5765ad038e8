#include "kernels/model/tokenizer.h"

#include <boost/json.hpp>

#include <algorithm>
#include <climits>

#include "common/error.h"
#include "kernels/model/json_file.h"
#include "kernels/model/unicode.h"

namespace ispsim::model {

namespace json = boost::json;

namespace {

// GPT-2's byte <-> printable code point table: printable Latin-1 bytes map to
// themselves, the other 68 bytes to 256, 257, ... in byte order.
uint32_t byte_to_char(int b) {
  static const std::vector<uint32_t> table = [] {
    std::vector<uint32_t> t(256);
    uint32_t next = 256;
    for (int i = 0; i < 256; ++i) {
      bool printable = (i >= '!' && i <= '~') || (i >= 0xA1 && i <= 0xAC) || (i >= 0xAE && i <= 0xFF);
      t[i] = printable ? static_cast<uint32_t>(i) : next++;
    }
    return t;
  }();
  return table[b];
}

std::string type_of(const json::value& v) {
  if (!v.is_object()) return "";
  auto* t = v.as_object().if_contains("type");
  return t && t->is_string() ? std::string(t->as_string()) : "";
}

bool flag(const json::object& o, const char* key, bool fallback) {
  auto* v = o.if_contains(key);
  return v && v->is_bool() ? v->as_bool() : fallback;
}

uint64_t pair_key(int a, int b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }

}  // namespace

Tokenizer::Tokenizer(const std::string& path) : path_(path) {
  const json::object obj = read_json_object(path);

  auto* model = obj.if_contains("model");
  if (!model || !model->is_object()) throw BadInput(path, "missing object 'model'");
  parse_model(model->as_object());

  const json::value* norm = obj.if_contains("normalizer");
  if (norm && !norm->is_null() && type_of(*norm) != "NFC")
    throw BadInput(path, "normalizer type '" + type_of(*norm) + "' is not supported (null or NFC)");

  const json::value* pre = obj.if_contains("pre_tokenizer");
  if (!pre || pre->is_null()) throw BadInput(path, "pre_tokenizer: null is not supported (a ByteLevel step is required)");
  parse_pre_tokenizer(*pre);
  bool byte_level = false;
  std::vector<const json::value*> stack = {pre};
  while (!stack.empty()) {  // the ByteLevel step may sit inside a Sequence
    const json::value* v = stack.back();
    stack.pop_back();
    if (type_of(*v) == "ByteLevel") byte_level = true;
    if (type_of(*v) == "Sequence")
      for (const json::value& s : v->as_object().at("pretokenizers").as_array()) stack.push_back(&s);
  }
  if (!byte_level) throw BadInput(path, "pre_tokenizer has no ByteLevel step; only byte-level BPE is supported");

  const json::value* dec = obj.if_contains("decoder");
  if (dec && !dec->is_null() && type_of(*dec) != "ByteLevel")
    throw BadInput(path, "decoder type '" + type_of(*dec) + "' is not supported (ByteLevel)");

  if (const json::value* added = obj.if_contains("added_tokens")) parse_added_tokens(*added);
  if (const json::value* post = obj.if_contains("post_processor")) parse_post_processor(*post);
}

void Tokenizer::check_fits(int model_vocab, const std::string& model_file) const {
  int largest = static_cast<int>(tokens_.size()) - 1;
  for (const AddedToken& a : added_) largest = std::max(largest, a.id);
  largest = std::max(largest, bos_id_);
  if (largest >= model_vocab)
    throw BadInput(path_, "token id " + std::to_string(largest) + " is beyond the model's vocabulary of " +
                              std::to_string(model_vocab) + " ids (vocab_size in " + model_file + ")");
}

void Tokenizer::parse_model(const json::object& m) {
  auto* type = m.if_contains("type");
  std::string t = type && type->is_string() ? std::string(type->as_string()) : "";
  if (t != "BPE")
    throw BadInput(path_, "model.type '" + t + "' is not supported (byte-level BPE only)");
  if (flag(m, "byte_fallback", false)) throw BadInput(path_, "model.byte_fallback: true is not supported");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    auto* v = m.if_contains(key);
    if (v && !v->is_null() && !(v->is_string() && v->as_string().empty()))
      throw BadInput(path_, std::string("model.") + key + " is not supported");
  }
  auto* dropout = m.if_contains("dropout");
  if (dropout && !dropout->is_null() && !(dropout->is_number() && dropout->to_number<double>() == 0.0))
    throw BadInput(path_, "model.dropout is not supported");
  ignore_merges_ = flag(m, "ignore_merges", false);

  auto* vocab = m.if_contains("vocab");
  if (!vocab || !vocab->is_object()) throw BadInput(path_, "missing object 'model.vocab'");
  for (const auto& [key, value] : vocab->as_object()) {
    if (!value.is_int64() || value.as_int64() < 0 || value.as_int64() >= (1 << 21))
      throw BadInput(path_, "model.vocab: entry '" + std::string(key) + "' has no valid id");
    int id = static_cast<int>(value.as_int64());
    if (static_cast<size_t>(id) >= tokens_.size()) tokens_.resize(id + 1);
    if (!tokens_[id].empty()) throw BadInput(path_, "model.vocab: id " + std::to_string(id) + " is used twice");
    tokens_[id] = std::string(key);
    vocab_[std::string(key)] = id;
  }
  for (int b = 0; b < 256; ++b) {
    std::string sym;
    append_utf8(byte_to_char(b), sym);
    auto it = vocab_.find(sym);
    if (it == vocab_.end())
      throw BadInput(path_, "model.vocab lacks the byte-level symbol for byte " + std::to_string(b));
    byte_token_[b] = it->second;
    char_to_byte_[byte_to_char(b)] = static_cast<uint8_t>(b);
  }

  auto* merges = m.if_contains("merges");
  if (!merges || !merges->is_array()) throw BadInput(path_, "missing array 'model.merges'");
  int rank = 0;
  for (const json::value& e : merges->as_array()) {
    std::string left, right;
    if (e.is_string()) {  // "a b": byte-level symbols never contain a raw space
      std::string s(e.as_string());
      size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        throw BadInput(path_, "model.merges[" + std::to_string(rank) + "]: '" + s + "' is not two symbols");
      left = s.substr(0, sp);
      right = s.substr(sp + 1);
    } else if (e.is_array() && e.as_array().size() == 2 && e.as_array()[0].is_string() && e.as_array()[1].is_string()) {
      left = std::string(e.as_array()[0].as_string());
      right = std::string(e.as_array()[1].as_string());
    } else {
      throw BadInput(path_, "model.merges[" + std::to_string(rank) + "]: expected \"a b\" or [a, b]");
    }
    auto find = [&](const std::string& s) {
      auto it = vocab_.find(s);
      if (it == vocab_.end())
        throw BadInput(path_, "model.merges[" + std::to_string(rank) + "]: '" + s + "' is not in the vocabulary");
      return it->second;
    };
    int a = find(left), b = find(right), ab = find(left + right);
    merges_.emplace(pair_key(a, b), Merge{rank, ab});  // the first (lowest) rank wins on duplicates
    ++rank;
  }
}

void Tokenizer::parse_pre_tokenizer(const json::value& pre) {
  const std::string type = type_of(pre);
  const json::object* o = pre.is_object() ? &pre.as_object() : nullptr;
  if (type == "Sequence") {
    auto* list = o->if_contains("pretokenizers");
    if (!list || !list->is_array()) throw BadInput(path_, "pre_tokenizer Sequence without 'pretokenizers'");
    for (const json::value& step : list->as_array()) parse_pre_tokenizer(step);
  } else if (type == "ByteLevel") {
    if (flag(*o, "add_prefix_space", false)) pre_steps_.push_back({PreStep::kPrefixSpace});
    if (flag(*o, "use_regex", true)) pre_steps_.push_back({PreStep::kPattern, SplitPattern::kGpt2});
  } else if (type == "Split") {
    auto* pattern = o->if_contains("pattern");
    const json::value* regex = pattern && pattern->is_object() ? pattern->as_object().if_contains("Regex") : nullptr;
    if (!regex || !regex->is_string())
      throw BadInput(path_, "pre_tokenizer Split: only a Regex pattern is supported");
    PreStep step{PreStep::kPattern};
    if (!split_pattern_from_regex(std::string(regex->as_string()), step.pattern))
      throw BadInput(path_, "pre_tokenizer Split: regex '" + std::string(regex->as_string()) +
                                "' is not one of the supported GPT-2, Llama-3 or Qwen2 patterns");
    auto* behavior = o->if_contains("behavior");
    if (!behavior || !behavior->is_string() || behavior->as_string() != "Isolated" || flag(*o, "invert", false))
      throw BadInput(path_, "pre_tokenizer Split: only behavior 'Isolated' without invert is supported");
    pre_steps_.push_back(step);
  } else if (type == "Digits") {
    PreStep step{PreStep::kDigits};
    step.individual_digits = flag(*o, "individual_digits", false);
    pre_steps_.push_back(step);
  } else {
    throw BadInput(path_, "pre_tokenizer type '" + type + "' is not supported (ByteLevel, Split, Digits, Sequence)");
  }
}

void Tokenizer::parse_added_tokens(const json::value& added) {
  if (added.is_null()) return;
  if (!added.is_array()) throw BadInput(path_, "added_tokens is not an array");
  for (const json::value& v : added.as_array()) {
    if (!v.is_object()) throw BadInput(path_, "added_tokens: entry is not an object");
    const json::object& o = v.as_object();
    auto* id = o.if_contains("id");
    auto* content = o.if_contains("content");
    if (!id || !id->is_int64() || id->as_int64() < 0 || id->as_int64() >= (1 << 21) || !content || !content->is_string())
      throw BadInput(path_, "added_tokens: entry without a valid id and content");
    std::string text(content->as_string());
    for (const char* key : {"lstrip", "rstrip", "single_word"})
      if (flag(o, key, false))
        throw BadInput(path_, "added token '" + text + "': " + key + " true is not supported");
    AddedToken t;
    size_t bad;
    if (text.empty() || !decode_utf8(text, t.content, bad)) throw BadInput(path_, "added token with empty or invalid content");
    t.id = static_cast<int>(id->as_int64());
    if (static_cast<size_t>(t.id) >= tokens_.size()) tokens_.resize(t.id + 1);
    if (tokens_[t.id].empty()) tokens_[t.id] = text;
    added_text_[t.id] = text;
    added_.push_back(std::move(t));
  }
  // Longest first, so a token that is a prefix of another never shadows it.
  std::stable_sort(added_.begin(), added_.end(),
                   [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
}

void Tokenizer::parse_post_processor(const json::value& post) {
  const std::string type = type_of(post);
  if (type == "Sequence") {
    auto* list = post.as_object().if_contains("processors");
    if (list && list->is_array())
      for (const json::value& p : list->as_array()) parse_post_processor(p);
    return;
  }
  if (type != "TemplateProcessing") return;
  const json::object& o = post.as_object();
  auto* single = o.if_contains("single");
  auto* specials = o.if_contains("special_tokens");
  if (!single || !single->is_array() || single->as_array().empty() || !specials || !specials->is_object()) return;
  const json::value& first = single->as_array()[0];
  const json::value* special = first.is_object() ? first.as_object().if_contains("SpecialToken") : nullptr;
  if (!special || !special->is_object()) return;
  auto* name = special->as_object().if_contains("id");
  if (!name || !name->is_string()) return;
  auto* entry = specials->as_object().if_contains(name->as_string());
  auto* ids = entry && entry->is_object() ? entry->as_object().if_contains("ids") : nullptr;
  if (!ids || !ids->is_array() || ids->as_array().size() != 1 || !ids->as_array()[0].is_int64())
    throw BadInput(path_, "post_processor: special token '" + std::string(name->as_string()) + "' has no single id");
  bos_id_ = static_cast<int>(ids->as_array()[0].as_int64());
}

std::vector<int> Tokenizer::encode(const std::string& text, const std::string& source) const {
  std::u32string cps;
  size_t bad = 0;
  if (!decode_utf8(text, cps, bad)) throw BadInput(source, "invalid UTF-8 at byte " + std::to_string(bad));
  std::vector<int> out;
  size_t segment = 0;
  for (size_t i = 0; i < cps.size();) {
    const AddedToken* hit = nullptr;
    for (const AddedToken& t : added_)
      if (cps.compare(i, t.content.size(), t.content) == 0) { hit = &t; break; }
    if (!hit) { ++i; continue; }
    encode_segment(cps, segment, i, out);
    out.push_back(hit->id);
    i += hit->content.size();
    segment = i;
  }
  encode_segment(cps, segment, cps.size(), out);
  return out;
}

void Tokenizer::encode_segment(const std::u32string& text, size_t begin, size_t end, std::vector<int>& out) const {
  if (begin >= end) return;
  std::vector<std::u32string> pieces = {text.substr(begin, end - begin)};
  std::vector<Span> spans;
  for (const PreStep& step : pre_steps_) {
    std::vector<std::u32string> next;
    for (std::u32string& p : pieces) {
      if (step.kind == PreStep::kPrefixSpace) {
        if (p.empty() || p[0] != ' ') p.insert(p.begin(), U' ');
        next.push_back(std::move(p));
        continue;
      }
      spans.clear();
      if (step.kind == PreStep::kPattern)
        split_by_pattern(p, {0, p.size()}, step.pattern, spans);
      else
        split_digits(p, {0, p.size()}, step.individual_digits, spans);
      for (const Span& s : spans) next.push_back(p.substr(s.first, s.second - s.first));
    }
    pieces = std::move(next);
  }
  std::string utf8;
  for (const std::u32string& p : pieces) {
    utf8.clear();
    for (char32_t c : p) append_utf8(c, utf8);
    encode_piece(utf8, out);
  }
}

// Byte-level BPE of one pre-token: start from its bytes' symbols and apply the
// lowest-ranked merge (leftmost on ties) until none applies.
void Tokenizer::encode_piece(const std::string& utf8, std::vector<int>& out) const {
  if (utf8.empty()) return;
  std::vector<int> ids;
  ids.reserve(utf8.size());
  for (unsigned char b : utf8) ids.push_back(byte_token_[b]);
  if (ignore_merges_) {  // Llama-3: a pre-token that is itself a token is taken whole
    std::string symbols;
    for (unsigned char b : utf8) append_utf8(byte_to_char(b), symbols);
    auto it = vocab_.find(symbols);
    if (it != vocab_.end()) { out.push_back(it->second); return; }
  }
  while (ids.size() > 1) {
    int best_rank = INT_MAX, best_pos = -1, best_result = -1;
    for (size_t k = 0; k + 1 < ids.size(); ++k) {
      auto it = merges_.find(pair_key(ids[k], ids[k + 1]));
      if (it != merges_.end() && it->second.rank < best_rank) {
        best_rank = it->second.rank;
        best_pos = static_cast<int>(k);
        best_result = it->second.result;
      }
    }
    if (best_pos < 0) break;
    ids[best_pos] = best_result;
    ids.erase(ids.begin() + best_pos + 1);
  }
  out.insert(out.end(), ids.begin(), ids.end());
}

std::string Tokenizer::decode_token(int id) const {
  if (id < 0 || static_cast<size_t>(id) >= tokens_.size() || tokens_[id].empty())
    throw BadInput(path_, "token id " + std::to_string(id) + " is not in the vocabulary");
  auto added = added_text_.find(id);
  if (added != added_text_.end()) return added->second;
  std::u32string cps;
  size_t bad;
  decode_utf8(tokens_[id], cps, bad);  // vocab keys came from JSON, so they are valid UTF-8
  std::string bytes;
  for (char32_t c : cps) {
    if (c < 324 && byte_to_char(char_to_byte_[c]) == c)
      bytes += static_cast<char>(char_to_byte_[c]);
    else
      append_utf8(c, bytes);  // not a byte-level symbol: pass through
  }
  return bytes;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  std::string s;
  for (int id : ids) s += decode_token(id);
  return s;
}

}  // namespace ispsim::model
