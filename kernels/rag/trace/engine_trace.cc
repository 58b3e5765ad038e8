#include "kernels/rag/trace/engine_trace.h"

#include <stdexcept>

#include "common/error.h"
#include "traces/trace_io.h"

namespace ispsim::rag {

namespace {

trace::ArchitectureFamily trace_family(model::Family family) {
  switch (family) {
    case model::Family::kLlama: return trace::ARCHITECTURE_LLAMA;
    case model::Family::kQwen2: return trace::ARCHITECTURE_QWEN2;
    case model::Family::kOpt: return trace::ARCHITECTURE_OPT;
  }
  return trace::ARCHITECTURE_UNSPECIFIED;
}

}  // namespace

trace::ModelShape model_shape(const model::Config& config, const std::string& name) {
  trace::ModelShape m;
  m.set_family(trace_family(config.family));
  m.set_name(name);
  m.set_layers(config.num_layers);
  m.set_hidden(config.hidden_size);
  m.set_heads(config.num_heads);
  m.set_kv_heads(config.num_kv_heads);
  m.set_head_dim(config.head_dim);
  m.set_ffn_dim(config.ffn_size);
  m.set_vocab(config.vocab_size);
  // FP16 everywhere for the hardware (contract4.md "Data types").
  m.set_weight_bits(16);
  m.set_kv_bits(16);
  m.set_activation_bits(16);
  return m;
}

EngineRun run_request(const RagModel& engine, const KvStore& store, const std::vector<std::string>& doc_ids,
                      const std::vector<int>& query_tokens, const BlendOptions& options) {
  EngineRun run;
  run.blend = blend(engine, store, doc_ids, query_tokens, options);  // checks the inputs first
  if (run.blend.hkvd_count() < 1)
    throw BadInput("--ratio", "ratio " + std::to_string(options.ratio) + " recomputes no context token of " +
                                  std::to_string(run.blend.context_tokens.size()) +
                                  " (round(ratio * C) = 0); the blend programs need at least one");
  run.full = full_prefill(engine, store, doc_ids, query_tokens, options);
  // Same prompt on both sides, or the trace's programs would describe different requests.
  if (run.full.context_tokens != run.blend.context_tokens || run.full.query_tokens != run.blend.query_tokens ||
      run.full.doc_token_counts != run.blend.doc_token_counts)
    throw std::logic_error("run_request: full prefill and blend saw different prompts");
  return run;
}

tracegen::BlendRequest blend_request(const trace::ModelShape& shape, const EngineRun& run, double ratio) {
  tracegen::BlendRequest r;
  r.model = shape;
  r.doc_tokens = run.blend.doc_token_counts;
  r.query_tokens = run.blend.query_tokens.size();
  r.answer_tokens = run.blend.answer.size();
  r.recompute_ratio = ratio;
  r.hkvd_masks = run.blend.hkvd_masks;
  return r;
}

trace::Producer engine_producer(const std::string& tool,
                                const std::vector<std::pair<std::string, std::string>>& settings) {
  trace::Producer p;
  p.set_kind(trace::PRODUCER_FUNCTIONAL_ENGINE);
  p.set_tool(tool);
  for (const auto& [key, value] : settings) {
    trace::Setting* s = p.add_settings();
    s->set_key(key);
    s->set_value(value);
  }
  return p;
}

void write_engine_trace(const std::string& path, const tracegen::BlendRequest& request,
                        const std::vector<std::string>& doc_ids, const trace::Producer& producer) {
  const std::vector<trace::Program> programs = tracegen::all_programs();
  tracegen::check_blend_request(request, programs, path);
  if (doc_ids.size() != request.doc_tokens.size())
    throw std::logic_error("write_engine_trace: " + std::to_string(doc_ids.size()) + " ids for " +
                           std::to_string(request.doc_tokens.size()) + " documents");
  trace::Header header = tracegen::make_header(request, programs, producer);
  for (size_t i = 0; i < doc_ids.size(); ++i) header.mutable_request()->mutable_documents(i)->set_name(doc_ids[i]);
  trace::TraceWriter writer(path, header);
  tracegen::write_programs(writer, request, programs);
  writer.close();
}

}  // namespace ispsim::rag
