#include "traces/gen/shape_generator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/error.h"
#include "traces/gen/model_presets.h"
#include "traces/gen/seeded_random.h"
#include "traces/trace_io.h"

namespace ispsim::tracegen {

namespace {

// Independent random streams of one seed.
constexpr uint64_t kLengthStream = 0;
constexpr uint64_t kMaskStream = 1;

// Shortest decimal text that reads back as the same double (settings are informational,
// but should show 0.15 rather than 0.14999999999999999).
std::string format_double(double value) {
  char text[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof text, "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

void check_fraction(const std::string& option, double value) {
  if (!(value >= 0.0 && value <= 1.0)) throw BadInput(option, format_double(value) + " is not within 0..1");
}

void check_count(const std::string& option, uint64_t value, uint64_t min, uint64_t max) {
  if (value < min || value > max)
    throw BadInput(option, std::to_string(value) + " is out of range " + std::to_string(min) + ".." +
                               std::to_string(max));
}

// Moves `count` uniformly chosen elements of `from` to its first positions (partial Fisher-Yates).
void choose_front(std::vector<uint64_t>& from, uint64_t count, SeededRandom& random) {
  for (uint64_t i = 0; i < count; ++i) std::swap(from[i], from[random.uniform_int(i, from.size() - 1)]);
}

}  // namespace

uint64_t selected_tokens(uint64_t context_tokens, double recompute_ratio) {
  return static_cast<uint64_t>(std::llround(recompute_ratio * double(context_tokens)));
}

std::vector<std::vector<bool>> synthetic_hkvd_masks(uint32_t layers, uint64_t context_tokens, uint64_t selected,
                                                    double resample_fraction, uint64_t seed) {
  std::vector<std::vector<bool>> masks(layers);
  if (layers < 2) return masks;
  SeededRandom random(seed);
  std::vector<uint64_t> all(context_tokens);
  for (uint64_t i = 0; i < context_tokens; ++i) all[i] = i;
  choose_front(all, selected, random);
  std::vector<uint64_t> in(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(selected));
  std::vector<uint64_t> out(all.begin() + static_cast<std::ptrdiff_t>(selected), all.end());
  const uint64_t swaps = std::min({static_cast<uint64_t>(std::llround(resample_fraction * double(selected))),
                                   selected, context_tokens - selected});
  for (uint32_t layer = 1; layer < layers; ++layer) {
    if (layer > 1) {
      choose_front(in, swaps, random);
      choose_front(out, swaps, random);
      for (uint64_t i = 0; i < swaps; ++i) std::swap(in[i], out[i]);
    }
    std::vector<bool>& mask = masks[layer];
    mask.assign(context_tokens, false);
    for (uint64_t token : in) mask[token] = true;
  }
  return masks;
}

uint64_t estimated_mask_bytes(uint32_t layers, uint64_t context_tokens, uint64_t answer_tokens) {
  if (layers < 2) return 0;
  return (context_tokens + 7) / 8 * (layers - 1) * (5 + 2 * answer_tokens);
}

BlendRequest make_shape_request(const ShapeOptions& options) {
  const DatasetProfile& profile = find_dataset_profile(options.dataset);
  BlendRequest request;
  request.model = find_model_preset(options.model);
  check_fraction("--ratio", options.recompute_ratio);
  check_fraction("mask resample fraction", options.mask_resample_fraction);
  check_count("--docs", options.docs, 1, kMaxGeneratedDocs);
  if (options.context_tokens) check_count("--context-tokens", *options.context_tokens, 1, kMaxGeneratedContextTokens);
  if (options.query_tokens) check_count("--query-tokens", *options.query_tokens, 1, kMaxGeneratedQueryTokens);
  if (options.answer_tokens) check_count("--answer-tokens", *options.answer_tokens, 0, kMaxGeneratedAnswerTokens);

  SeededRandom lengths(SeededRandom::derive_seed(options.seed, kLengthStream));
  uint64_t context = 0;
  for (uint64_t d = 0; d < options.docs; ++d) {
    const uint64_t tokens = options.context_tokens ? *options.context_tokens : draw_document_tokens(profile, lengths);
    request.doc_tokens.push_back(tokens);
    context += tokens;
  }
  if (options.max_context_tokens && !options.context_tokens && context > *options.max_context_tokens) {
    const uint64_t cap = *options.max_context_tokens;
    uint64_t capped = 0;
    for (uint64_t& tokens : request.doc_tokens) {
      tokens = std::max<uint64_t>(1, tokens * cap / context);
      capped += tokens;
    }
    context = capped;
  }
  if (context > kMaxGeneratedContextTokens)
    throw BadInput("--context-tokens", "the context of " + std::to_string(context) + " tokens exceeds the generator's " +
                                           std::to_string(kMaxGeneratedContextTokens) + "-token limit");
  request.query_tokens = options.query_tokens ? *options.query_tokens : draw_query_tokens(profile, lengths);
  request.answer_tokens = options.answer_tokens ? *options.answer_tokens : draw_answer_tokens(profile, lengths);
  if (options.max_answer_tokens && !options.answer_tokens)
    request.answer_tokens = std::min(request.answer_tokens, *options.max_answer_tokens);
  request.recompute_ratio = options.recompute_ratio;
  const uint64_t mask_bytes = estimated_mask_bytes(request.model.layers(), context, request.answer_tokens);
  if (mask_bytes > kMaxGeneratedMaskBytes)
    throw BadInput("ispsim trace gen", std::to_string(context) + " context tokens and " +
                                           std::to_string(request.answer_tokens) + " answer tokens on " +
                                           request.model.name() + " would write " + std::to_string(mask_bytes >> 20) +
                                           " MiB of HKVD masks (limit " + std::to_string(kMaxGeneratedMaskBytes >> 20) +
                                           " MiB); use a shorter context or fewer answer tokens");
  const uint64_t selected = selected_tokens(context, options.recompute_ratio);
  request.hkvd_masks = synthetic_hkvd_masks(request.model.layers(), context, selected, options.mask_resample_fraction,
                                            SeededRandom::derive_seed(options.seed, kMaskStream));
  return request;
}

trace::Producer shape_producer(const ShapeOptions& options) {
  trace::Producer producer;
  producer.set_kind(trace::PRODUCER_SHAPE_GENERATOR);
  producer.set_tool("ispsim trace gen --shape");
  auto setting = [&producer](const std::string& key, const std::string& value) {
    trace::Setting* s = producer.add_settings();
    s->set_key(key);
    s->set_value(value);
  };
  setting("shape", find_model_preset(options.model).name());
  setting("dataset", find_dataset_profile(options.dataset).key);
  setting("seed", std::to_string(options.seed));
  setting("ratio", format_double(options.recompute_ratio));
  setting("docs", std::to_string(options.docs));
  if (options.context_tokens) setting("context_tokens", std::to_string(*options.context_tokens));
  if (options.query_tokens) setting("query_tokens", std::to_string(*options.query_tokens));
  if (options.answer_tokens) setting("answer_tokens", std::to_string(*options.answer_tokens));
  if (options.max_context_tokens) setting("max_context_tokens", std::to_string(*options.max_context_tokens));
  if (options.max_answer_tokens) setting("max_answer_tokens", std::to_string(*options.max_answer_tokens));
  setting("mask_resample_fraction", format_double(options.mask_resample_fraction));
  return producer;
}

void generate_shape_trace(const ShapeOptions& options, const std::string& path) {
  const BlendRequest request = make_shape_request(options);
  const std::vector<trace::Program> programs = all_programs();
  check_blend_request(request, programs, "ispsim trace gen");
  const std::string dataset = find_dataset_profile(options.dataset).key;
  trace::TraceWriter writer(path, make_header(request, programs, shape_producer(options), dataset));
  write_programs(writer, request, programs);
  writer.close();
}

}  // namespace ispsim::tracegen
