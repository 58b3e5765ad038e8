// ispsim trace gen --decode --shape MODEL --context-tokens C --out FILE [--steps A]
//                  [--atoms M] [--k-low K] [--k-high K] [--refine F] [--window W] [--unit U]
// The shape-only decode programs of paper 1's platforms (traces/gen/decode_program.h).
#include <boost/program_options.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "common/error.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/cli_common.h"
#include "traces/gen/decode_program.h"
#include "traces/gen/model_presets.h"

namespace po = boost::program_options;

namespace ispsim::cli {
namespace {

const std::string kWhere = "ispsim trace gen --decode";

uint64_t whole_number(const std::string& option, const std::string& text, uint64_t min, uint64_t max) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw BadInput(kWhere + ": --" + option, "'" + text + "' is not a whole number");
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || value < min || value > max)
    throw BadInput(kWhere + ": --" + option,
                   text + " is out of range " + std::to_string(min) + ".." + std::to_string(max));
  return value;
}

}  // namespace

int trace_gen_decode(const Args& args) {
  std::string shape, out, context, steps = "32", atoms, k_low, k_high, refine, window, unit;
  po::options_description desc("trace gen --decode options");
  desc.add_options()
      ("help,h", "print this help")
      ("decode", "shape-only decode programs (DECODE_ONLY and DECODE_ONLY_DICTIONARY)")
      ("shape", po::value(&shape)->required(), "model preset, e.g. Llama-3.1-8B")
      ("context-tokens", po::value(&context)->required(), "tokens in the KV cache before the first step, e.g. 65536")
      ("out", po::value(&out)->required(), "output trace file")
      ("steps", po::value(&steps), "decode steps (default 32 = U: one batch pursuit per layer, amortised exactly)")
      ("atoms", po::value(&atoms), "dictionary atoms M (default 32768, paper 1 Sec. 5.1)")
      ("k-low", po::value(&k_low), "coarse atoms K_low (default 3)")
      ("k-high", po::value(&k_high), "refined atoms K_high = pursuit iterations (default 16)")
      ("refine", po::value(&refine), "fraction of compressed tokens refined to K_high (default 0.10)")
      ("window", po::value(&window), "dense local window W in tokens (default 128)")
      ("unit", po::value(&unit), "compression unit U in tokens (default 32)");
  if (!parse_options(args, "trace gen --decode", desc)) return 0;
  tracegen::DecodeRequest request;
  request.model = tracegen::find_model_preset(shape, kWhere + ": --shape");
  request.context_tokens = whole_number("context-tokens", context, 1, uint64_t{1} << 20);
  request.decode_steps = whole_number("steps", steps, 1, 4096);
  request.dictionary = tracegen::paper_dictionary_settings();
  trace::DictionarySettings& d = request.dictionary;
  if (!atoms.empty()) d.set_atoms(whole_number("atoms", atoms, 1, 1u << 24));
  if (!k_low.empty()) d.set_k_low(whole_number("k-low", k_low, 1, 4096));
  if (!k_high.empty()) d.set_k_high(whole_number("k-high", k_high, 1, 4096));
  if (!window.empty()) d.set_window_tokens(whole_number("window", window, 1, 1u << 20));
  if (!unit.empty()) d.set_unit_tokens(whole_number("unit", unit, 1, 1u << 20));
  if (!refine.empty()) {
    char* end = nullptr;
    const double f = std::strtod(refine.c_str(), &end);
    if (end != refine.c_str() + refine.size() || !std::isfinite(f) || f < 0 || f > 1)
      throw BadInput(kWhere + ": --refine", "'" + refine + "' is not a number within 0..1");
    d.set_refine_fraction(f);
  }
  tracegen::generate_decode_trace(request, out);
  return 0;
}

}  // namespace ispsim::cli
