#include "traces/gen/generator_settings.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "common/error.h"
#include "traces/gen/dataset_profiles.h"
#include "traces/gen/model_presets.h"

namespace ispsim::tracegen {

uint64_t parse_whole_number(const std::string& text, uint64_t min, uint64_t max, const std::string& where) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw BadInput(where, "'" + text + "' is not a whole number");
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || value < min || value > max)
    throw BadInput(where, text + " is out of range " + std::to_string(min) + ".." + std::to_string(max));
  return value;
}

double parse_fraction(const std::string& text, const std::string& where) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value))
    throw BadInput(where, "'" + text + "' is not a number");
  if (value < 0.0 || value > 1.0) throw BadInput(where, text + " is not within 0..1");
  return value;
}

namespace {

template <class Target>
struct Setting {
  const char* name;
  std::function<void(Target&, const std::string& text, const std::string& where)> apply;
};

// Setting of a whole number within [min, max] stored by `set`.
template <class Target>
Setting<Target> whole_setting(const char* name, uint64_t min, uint64_t max, void (*set)(Target&, uint64_t)) {
  return {name, [min, max, set](Target& t, const std::string& text, const std::string& where) {
            set(t, parse_whole_number(text, min, max, where));
          }};
}

const std::vector<Setting<ShapeOptions>>& request_settings() {
  using O = ShapeOptions;
  static const std::vector<Setting<O>> table = {
      {"model", [](O& o, const std::string& t, const std::string& w) { o.model = find_model_preset(t, w).name(); }},
      {"dataset", [](O& o, const std::string& t, const std::string& w) { o.dataset = find_dataset_profile(t, w).key; }},
      whole_setting<O>("seed", 0, UINT64_MAX, [](O& o, uint64_t v) { o.seed = v; }),
      {"ratio", [](O& o, const std::string& t, const std::string& w) { o.recompute_ratio = parse_fraction(t, w); }},
      whole_setting<O>("docs", 1, kMaxGeneratedDocs, [](O& o, uint64_t v) { o.docs = v; }),
      whole_setting<O>("context_tokens", 1, kMaxGeneratedContextTokens, [](O& o, uint64_t v) { o.context_tokens = v; }),
      whole_setting<O>("query_tokens", 1, kMaxGeneratedQueryTokens, [](O& o, uint64_t v) { o.query_tokens = v; }),
      whole_setting<O>("answer_tokens", 0, kMaxGeneratedAnswerTokens, [](O& o, uint64_t v) { o.answer_tokens = v; }),
      whole_setting<O>("max_context_tokens", 1, kMaxGeneratedContextTokens,
                       [](O& o, uint64_t v) { o.max_context_tokens = v; }),
      whole_setting<O>("max_answer_tokens", 0, kMaxGeneratedAnswerTokens,
                       [](O& o, uint64_t v) { o.max_answer_tokens = v; }),
  };
  return table;
}

const std::vector<Setting<DecodeRequest>>& decode_settings() {
  using R = DecodeRequest;
  static const std::vector<Setting<R>> table = {
      {"model", [](R& r, const std::string& t, const std::string& w) { r.model = find_model_preset(t, w); }},
      whole_setting<R>("context_tokens", 1, kMaxDecodeContextTokens, [](R& r, uint64_t v) { r.context_tokens = v; }),
      whole_setting<R>("steps", 1, kMaxDecodeSteps, [](R& r, uint64_t v) { r.decode_steps = v; }),
      whole_setting<R>("atoms", 1, 1u << 24, [](R& r, uint64_t v) { r.dictionary.set_atoms(uint32_t(v)); }),
      whole_setting<R>("k_low", 1, 4096, [](R& r, uint64_t v) { r.dictionary.set_k_low(uint32_t(v)); }),
      whole_setting<R>("k_high", 1, 4096, [](R& r, uint64_t v) { r.dictionary.set_k_high(uint32_t(v)); }),
      {"refine", [](R& r, const std::string& t, const std::string& w) { r.dictionary.set_refine_fraction(parse_fraction(t, w)); }},
      whole_setting<R>("window", 1, 1u << 20, [](R& r, uint64_t v) { r.dictionary.set_window_tokens(uint32_t(v)); }),
      whole_setting<R>("unit", 1, 1u << 20, [](R& r, uint64_t v) { r.dictionary.set_unit_tokens(uint32_t(v)); }),
  };
  return table;
}

template <class Target>
void apply_from(const std::vector<Setting<Target>>& table, Generator generator, Target& target, const std::string& name,
                const std::string& text, const std::string& where) {
  for (const Setting<Target>& s : table)
    if (name == s.name) return s.apply(target, text, where);
  std::string known;
  for (const Setting<Target>& s : table) known += (known.empty() ? "" : ", ") + std::string(s.name);
  throw BadInput(where, "'" + name + "' is not a setting of the " + generator_name(generator) + " generator (" + known +
                            ")");
}

std::string number(double value) {  // the fewest digits that read back exactly
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

}  // namespace

const char* generator_name(Generator generator) { return generator == Generator::REQUEST ? "request" : "decode"; }

const std::vector<std::string>& setting_names(Generator generator) {
  static const std::vector<std::string> request = [] {
    std::vector<std::string> n;
    for (const auto& s : request_settings()) n.push_back(s.name);
    return n;
  }();
  static const std::vector<std::string> decode = [] {
    std::vector<std::string> n;
    for (const auto& s : decode_settings()) n.push_back(s.name);
    return n;
  }();
  return generator == Generator::REQUEST ? request : decode;
}

std::string setting_of_flag(const std::string& flag) {
  std::string name = flag;
  for (char& c : name) c = c == '-' ? '_' : c;
  return name;
}

bool has_setting(Generator generator, const std::string& name) {
  for (const std::string& n : setting_names(generator))
    if (n == name) return true;
  return false;
}

void apply_setting(ShapeOptions& options, const std::string& name, const std::string& text, const std::string& where) {
  apply_from(request_settings(), Generator::REQUEST, options, name, text, where);
}

void apply_setting(DecodeRequest& request, const std::string& name, const std::string& text,
                   const std::string& where) {
  apply_from(decode_settings(), Generator::DECODE, request, name, text, where);
}

DecodeRequest default_decode_request() {
  DecodeRequest r;
  r.decode_steps = 32;
  r.dictionary = paper_dictionary_settings();
  return r;
}

std::string canonical_text(const ShapeOptions& o) {
  auto optional = [](const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : std::string("-"); };
  return "shape-v1;model=" + o.model + ";dataset=" + o.dataset + ";seed=" + std::to_string(o.seed) +
         ";ratio=" + number(o.recompute_ratio) + ";resample=" + number(o.mask_resample_fraction) +
         ";docs=" + std::to_string(o.docs) + ";context=" + optional(o.context_tokens) +
         ";query=" + optional(o.query_tokens) + ";answer=" + optional(o.answer_tokens) +
         ";max_context=" + optional(o.max_context_tokens) + ";max_answer=" + optional(o.max_answer_tokens);
}

std::string canonical_text(const DecodeRequest& r) {
  const trace::DictionarySettings& d = r.dictionary;
  return "decode-v1;model=" + r.model.name() + ";context=" + std::to_string(r.context_tokens) +
         ";steps=" + std::to_string(r.decode_steps) + ";atoms=" + std::to_string(d.atoms()) +
         ";k_low=" + std::to_string(d.k_low()) + ";k_high=" + std::to_string(d.k_high()) +
         ";refine=" + number(d.refine_fraction()) + ";window=" + std::to_string(d.window_tokens()) +
         ";unit=" + std::to_string(d.unit_tokens()) + ";dictionary_bits=" + std::to_string(d.dictionary_bits()) +
         ";index_bits=" + std::to_string(d.index_bits()) + ";coefficient_bits=" + std::to_string(d.coefficient_bits());
}

}  // namespace ispsim::tracegen
