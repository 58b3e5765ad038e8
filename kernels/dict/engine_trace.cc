#include "kernels/dict/engine_trace.h"

#include "common/error.h"
#include "kernels/dict/decoder.h"
#include "kernels/rag/trace/quality.h"
#include "traces/trace_io.h"

namespace ispsim::dict {

trace::DictionarySettings trace_settings(const CacheSettings& s, int atoms) {
  trace::DictionarySettings d;
  d.set_atoms(atoms);
  d.set_k_high(s.k_high);
  d.set_k_low(s.hierarchical ? s.k_low : s.k_high);
  d.set_refine_fraction(s.hierarchical ? s.refine_fraction : 1.0);
  d.set_window_tokens(s.window_tokens);
  d.set_unit_tokens(s.unit_tokens);
  d.set_dictionary_bits(8);
  d.set_index_bits(16);
  d.set_coefficient_bits(16);
  return d;
}

DictionaryRun run_dictionary_decode(const model::Model& model, const std::vector<Dictionary>& dicts,
                                    const CacheSettings& settings, int atoms, const std::vector<int>& prompt,
                                    int answer_tokens) {
  if (!settings.compress) throw BadInput("dictionary decode trace", "needs the compressed cache");
  if (answer_tokens < 1) throw BadInput("dictionary decode trace", "needs at least one answer token");
  const model::Config& c = model.config;
  CompressedDecoder dec(model, dicts, settings);
  DictionaryRun run;
  run.decode.settings = trace_settings(settings, atoms);
  run.decode.method = settings.encoder == Encoder::kOmp ? trace::PURSUIT_OMP : trace::PURSUIT_PROJECTION;
  std::vector<float> logits;
  dec.prefill(prompt, logits);
  for (int l = 0; l < c.num_layers; ++l) run.decode.prefill_encoded_tokens.push_back(dec.cache(l).compressed_tokens());
  for (int s = 0; s < answer_tokens; ++s) {
    run.answer.push_back(rag::top1(logits));
    std::vector<int> before(c.num_layers);
    for (int l = 0; l < c.num_layers; ++l) before[l] = dec.cache(l).compressed_tokens();
    dec.decode(run.answer.back(), logits);
    std::vector<tracegen::DictionaryLayerStep> step(c.num_layers);
    for (int l = 0; l < c.num_layers; ++l) {
      const StepReads& r = dec.last_reads()[l];
      tracegen::DictionaryLayerStep& t = step[l];
      t.window_tokens = r.window_tokens;
      t.compressed_tokens = r.compressed_tokens;
      t.encoded_tokens = static_cast<uint64_t>(dec.cache(l).compressed_tokens() - before[l]);
      t.k_low = static_cast<uint32_t>(settings.hierarchical ? settings.k_low : settings.k_high);
      // Measured: KV heads read a token at K_high when any of their query heads refined it.
      t.refine_fraction = settings.hierarchical && r.compressed_tokens > 0
                              ? static_cast<double>(r.refined_tokens) /
                                    static_cast<double>(r.compressed_tokens * c.num_kv_heads)
                              : 1.0;
    }
    run.decode.steps.push_back(std::move(step));
  }
  return run;
}

void write_dictionary_trace(const std::string& path, const trace::ModelShape& shape,
                            const std::vector<uint64_t>& doc_tokens, uint64_t query_tokens, const DictionaryRun& run,
                            const trace::Producer& producer) {
  tracegen::BlendRequest request;
  request.model = shape;
  request.doc_tokens = doc_tokens;
  request.query_tokens = query_tokens;
  request.answer_tokens = run.answer.size();
  request.dictionary = run.decode;
  const std::vector<trace::Program> programs = {trace::FULL_PREFILL};
  tracegen::check_blend_request(request, programs, path);
  trace::TraceWriter writer(path, tracegen::make_header(request, programs, producer));
  tracegen::write_programs(writer, request, programs);
  writer.close();
}

}  // namespace ispsim::dict
