// ispsim trace gen --decode --shape MODEL --context-tokens C --out FILE [--steps A]
//                  [--atoms M] [--k-low K] [--k-high K] [--refine F] [--window W] [--unit U]
// The shape-only decode programs of paper 1's platforms (traces/gen/decode_program.h).
#include <boost/program_options.hpp>

#include <string>
#include <utility>

#include "common/error.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/cli_common.h"
#include "traces/gen/generator_settings.h"

namespace po = boost::program_options;

namespace ispsim::cli {

int trace_gen_decode(const Args& args) {
  std::string shape, out, context, steps, atoms, k_low, k_high, refine, window, unit;
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
  const std::string where = "ispsim trace gen --decode";
  tracegen::DecodeRequest request = tracegen::default_decode_request();
  tracegen::apply_setting(request, "model", shape, where + ": --shape");
  const std::pair<const char*, const std::string*> settings[] = {
      {"context-tokens", &context}, {"steps", &steps}, {"atoms", &atoms}, {"k-low", &k_low},
      {"k-high", &k_high},          {"refine", &refine}, {"window", &window}, {"unit", &unit}};
  for (const auto& [flag, value] : settings) {
    if (value->empty() && std::string(flag) != "context-tokens") continue;  // not given: the default
    tracegen::apply_setting(request, tracegen::setting_of_flag(flag), *value, where + ": --" + flag);
  }
  tracegen::generate_decode_trace(request, out);
  return 0;
}

}  // namespace ispsim::cli
