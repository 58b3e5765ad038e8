// The settings of the two shape-only generators by name, shared by every front
// end that takes them as text: `ispsim trace gen` flags (--context-tokens) and
// sweep axes (trace.context_tokens). One table per generator gives each
// setting's range and what it sets, so a value is checked the same way wherever
// it comes from.
//
//   REQUEST generator (shape_generator.h: FULL_PREFILL and the blend programs):
//     model, dataset, seed, ratio, docs, context_tokens (per document),
//     query_tokens, answer_tokens, max_context_tokens, max_answer_tokens
//   DECODE generator (decode_program.h: DECODE_ONLY and DECODE_ONLY_DICTIONARY):
//     model, context_tokens (the whole KV cache before step 0), steps, atoms,
//     k_low, k_high, refine, window, unit
#pragma once

#include <string>
#include <vector>

#include "traces/gen/decode_program.h"
#include "traces/gen/shape_generator.h"

namespace ispsim::tracegen {

enum class Generator { REQUEST, DECODE };

// "request" or "decode".
const char* generator_name(Generator generator);

// The setting names of a generator, in the order above.
const std::vector<std::string>& setting_names(Generator generator);
bool has_setting(Generator generator, const std::string& name);

// The setting a command-line flag names: "context-tokens" -> "context_tokens".
std::string setting_of_flag(const std::string& flag);

// Sets `name` from `text`: names of presets and profiles are looked up, numbers
// parsed strictly (whole numbers in range; fractions within 0..1). A bad value
// or an unknown name is BadInput(where, ...).
void apply_setting(ShapeOptions& options, const std::string& name, const std::string& text, const std::string& where);
void apply_setting(DecodeRequest& request, const std::string& name, const std::string& text,
                   const std::string& where);

// The strict number parsers behind the settings, for other options of the same
// front ends: a whole decimal number within [min, max] (no sign, no exponent),
// and a finite number within 0..1. Anything else is BadInput(where, ...).
uint64_t parse_whole_number(const std::string& text, uint64_t min, uint64_t max, const std::string& where);
double parse_fraction(const std::string& text, const std::string& where);

// A decode request with the generator's defaults: 32 steps (= U: one batch
// pursuit per layer, amortised exactly) and paper_dictionary_settings(); model
// and context_tokens are unset.
DecodeRequest default_decode_request();

// Every resolved setting as one line of text: equal texts generate equal traces
// (the sweep's trace key).
std::string canonical_text(const ShapeOptions& options);
std::string canonical_text(const DecodeRequest& request);

}  // namespace ispsim::tracegen
