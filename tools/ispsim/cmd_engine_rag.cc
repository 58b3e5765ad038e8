// `ispsim engine blend-quality` and `ispsim trace gen --engine`. Results go to stdout, deterministic; wall-clock time to stderr.
#include "tools/ispsim/cmd_engine_rag.h"
#include "tools/ispsim/cli_common.h"

#include <boost/json.hpp>
#include <boost/program_options.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "common/data_dir.h"
#include "common/error.h"
#include "kernels/int/quantized_lm.h"
#include "kernels/model/model.h"
#include "kernels/model/tokenizer.h"
#include "kernels/rag/blend.h"
#include "kernels/rag/kv_store.h"
#include "kernels/rag/rag_model.h"
#include "kernels/rag/trace/engine_trace.h"
#include "kernels/rag/trace/quality.h"
#include "kernels/rag/trace/teacher_forcing.h"

namespace ispsim::cli {

namespace {

namespace po = boost::program_options;

// Options shared by both commands: which model, engine and store.
struct RagOptions {
  std::string model_dir = data_path("assets/brown-llama");  // the demo model (common/data_dir.h)
  std::string store_dir;
  std::string quant = "fp32";                      // fp32 | int-nonlinear | int16
  // Calibration of the integer engine: the same text and count as `ispsim engine
  // --quant` (cmd_engine.cc), so a store precomputed there matches (its fingerprint
  // covers the integer model, hence the calibration).
  std::string calib_file = data_path("kernels/int/data/brown_calibration.txt");
  int calib_tokens = 2048;
  int answer_tokens = 8;
};

void add_rag_options(po::options_description& d, RagOptions& o) {
  d.add_options()
      ("help,h", "print this help")
      ("model", po::value(&o.model_dir)->default_value(o.model_dir),
       "checkpoint directory (config.json, model.safetensors, tokenizer.json)")
      ("store", po::value(&o.store_dir)->required(), "KV store written by 'ispsim engine precompute' with this model and engine")
      ("quant", po::value(&o.quant)->default_value(o.quant), "engine: fp32 | int-nonlinear | int16 (must be the store's)")
      ("calib", po::value(&o.calib_file)->default_value(o.calib_file), "calibration text of the integer engine")
      ("calib-tokens", po::value(&o.calib_tokens)->default_value(o.calib_tokens), "calibration tokens to use at most")
      ("tokens", po::value(&o.answer_tokens)->default_value(o.answer_tokens), "answer tokens decoded per prompt");
  add_engine_speed_options(d);
}

// The engine of --quant; the model must outlive it.
rag::RagModel make_rag_engine(const model::Model& m, const RagOptions& o) {
  return make_rag_model(m, o.model_dir, o.quant, o.calib_file, o.calib_tokens, {});
}

void check_common(const RagOptions& o) {
  if (o.answer_tokens < 1) throw BadInput("--tokens", "must be >= 1");
}

// "a,b,c" → ids; an empty id is bad input.
std::vector<std::string> split_ids(const std::string& text, const std::string& option) {
  std::vector<std::string> ids;
  std::string current;
  std::istringstream in(text);
  while (std::getline(in, current, ',')) {
    if (current.empty()) throw BadInput(option, "empty document id in '" + text + "'");
    ids.push_back(current);
  }
  if (ids.empty() || text.back() == ',') throw BadInput(option, "empty document id in '" + text + "'");
  return ids;
}

std::string join_ids(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "" : ",") + id;
  return out;
}

std::string join_tokens(const std::vector<int>& tokens) {
  std::string out;
  for (int t : tokens) out += (out.empty() ? "" : " ") + std::to_string(t);
  return out;
}

// Shortest decimal text that reads back as the same double (settings, labels).
std::string number_text(double v) {
  std::ostringstream s;
  s << std::setprecision(15) << v;
  return s.str();
}

// The decoded answer in quotes, control characters escaped, for one output line.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '\n') out += "\\n";
    else if (c == '"') out += "\\\"";
    else if (c < 0x20) out += "?";
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The prompt (documents + query) and the answer tokens fed back (all but the
// last) must fit the model's context; checked here so that the error names the
// query's file and line, not "engine".
void check_fits_context(const model::Config& config, const rag::KvStore& store, const std::vector<std::string>& doc_ids,
                        size_t query_tokens, int answer_tokens, const std::string& where) {
  size_t context = 0;
  for (const std::string& id : doc_ids) context += store.document(id).tokens.size();
  const size_t total = context + query_tokens + static_cast<size_t>(std::max(answer_tokens - 1, 0));
  if (config.max_positions > 0 && total > static_cast<size_t>(config.max_positions))
    throw BadInput(where, std::to_string(context) + " document tokens + " + std::to_string(query_tokens) +
                              " query tokens + " + std::to_string(answer_tokens) + " answer tokens exceed the model's " +
                              std::to_string(config.max_positions) + "-token context");
}

std::vector<double> parse_ratios(const std::string& text) {
  std::vector<double> ratios;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const double r = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(r))
      throw BadInput("--ratios", "'" + item + "' is not a number");
    if (r < 0.0 || r > 1.0) throw BadInput("--ratios", item + " is not within 0..1");
    ratios.push_back(r);
  }
  if (ratios.empty() || text.back() == ',') throw BadInput("--ratios", "empty entry in '" + text + "'");
  return ratios;
}

std::string percent(long long part, long long whole) {
  std::ostringstream s;
  s << part << " of " << whole << " (" << std::fixed << std::setprecision(1)
    << (whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0) << " %)";
  return s.str();
}

}  // namespace

int engine_blend_quality(const Args& args) {
  RagOptions o;
  std::string queries_file;
  std::string ratios_text = "0,0.05,0.15,0.25,1";
  po::options_description d("blend-quality options");
  add_rag_options(d, o);
  d.add_options()
      ("queries", po::value(&queries_file)->required(), "JSON lines {\"query\": TEXT, \"docs\": [ids]} (e.g. assets/rag-demo/queries.jsonl)")
      ("ratios", po::value(&ratios_text)->default_value(ratios_text), "recomputation ratios to compare, fractions in 0..1");
  if (!parse_options(args, "engine blend-quality", d)) return 0;
  check_common(o);
  const std::vector<double> ratios = parse_ratios(ratios_text);
  const std::vector<Query> queries = read_queries(queries_file);

  const auto t0 = std::chrono::steady_clock::now();
  const model::Model m = model::load_model(o.model_dir);
  const model::Tokenizer tok = load_tokenizer(o.model_dir);
  const rag::RagModel engine = make_rag_engine(m, o);
  const rag::KvStore store = rag::KvStore::load(o.store_dir);

  std::vector<rag::QualitySummary> summaries(ratios.size());
  for (size_t r = 0; r < ratios.size(); ++r) summaries[r].ratio = ratios[r];
  std::cout << "blend quality: model " << o.model_dir << ", engine " << engine.engine_name() << ", store "
            << o.store_dir << ", " << queries.size() << " queries from " << queries_file << ", " << o.answer_tokens
            << " answer tokens each\n";
  for (size_t qi = 0; qi < queries.size(); ++qi) {
    const Query& q = queries[qi];
    const std::vector<int> query_tokens = tok.encode(q.text, q.where);
    check_fits_context(m.config, store, q.doc_ids, query_tokens.size(), o.answer_tokens, q.where);
    rag::BlendOptions bo;
    bo.answer_tokens = o.answer_tokens;
    bo.integer = engine.is_integer();
    const rag::BlendOutput full = rag::full_prefill(engine, store, q.doc_ids, query_tokens, bo);
    std::cout << "query " << qi + 1 << " " << quoted(q.text) << ": " << full.context_tokens.size()
              << " context tokens in " << q.doc_ids.size() << " documents, " << query_tokens.size()
              << " query tokens; full-prefill answer " << quoted(tok.decode(full.answer)) << "\n";
    for (size_t r = 0; r < ratios.size(); ++r) {
      bo.ratio = ratios[r];
      const rag::TeacherForced forced =
          rag::teacher_forced_blend(engine, store, q.doc_ids, query_tokens, full.answer, bo);
      summaries[r].add(rag::compare_answers(full.logits, forced.rows), forced.hkvd_count,
                       static_cast<long long>(full.context_tokens.size()));
    }
  }

  std::cout << "answer rows teacher-forced on the full prefill's answer; KL(full || blend) in nats, mean over all "
            << summaries.front().positions << " answer positions\n";
  std::cout << std::left << std::setw(8) << "ratio" << std::setw(24) << "HKVD tokens" << std::setw(26)
            << "first-token agreement" << std::setw(26) << "top-1 agreement" << "mean KL" << std::right << "\n";
  for (const rag::QualitySummary& s : summaries) {
    std::ostringstream ratio, kl;
    const double pct = 100.0 * s.ratio;  // whole percentages without decimals (0.07 * 100 is 7.000000000000001)
    ratio << std::fixed << std::setprecision(std::abs(pct - std::round(pct)) < 1e-9 ? 0 : 1) << pct << " %";
    kl << std::fixed << std::setprecision(6) << s.mean_kl_nats() << " nats";
    std::cout << std::left << std::setw(8) << ratio.str() << std::setw(24) << percent(s.hkvd_tokens, s.context_tokens)
              << std::setw(26) << percent(s.first_token_agreements, s.prompts) << std::setw(26)
              << percent(s.top1_agreements, s.positions) << kl.str() << std::right << "\n";
  }
  std::cerr << std::fixed << std::setprecision(2) << "ispsim engine blend-quality: " << seconds_since(t0)
            << " s wall\n";
  return 0;
}

int trace_gen_engine(const Args& args) {
  RagOptions o;
  std::string docs_text, query_text, out_path, name;
  double ratio = 0.15;
  po::options_description d("trace gen --engine options");
  add_rag_options(d, o);
  d.add_options()
      ("engine", po::bool_switch(), "generate from the functional engine (this command)")
      ("docs", po::value(&docs_text)->required(), "retrieved document ids, comma-separated, in prompt order")
      ("query", po::value(&query_text)->required(), "query text")
      ("ratio", po::value(&ratio)->default_value(ratio, "0.15"), "HKVD recomputation ratio in 0..1 (CacheBlend's default 15 %)")
      ("name", po::value(&name), "model name in the trace (default: the model directory's name)")
      ("out", po::value(&out_path)->required(), "trace file to write");
  if (!parse_options(args, "trace gen --engine", d)) return 0;
  check_common(o);
  if (!(ratio >= 0.0 && ratio <= 1.0)) throw BadInput("--ratio", number_text(ratio) + " is not within 0..1");
  const std::vector<std::string> doc_ids = split_ids(docs_text, "--docs");
  if (query_text.empty()) throw BadInput("--query", "empty query");
  check_outputs_distinct({{"--out", out_path}}, {{"--store", o.store_dir + "/index.json"},
                                                 {"--store", o.store_dir + "/tiles.bin"},
                                                 {"--calib", o.calib_file}});

  const auto t0 = std::chrono::steady_clock::now();
  const model::Model m = model::load_model(o.model_dir);
  // The directory's own name also for ".", "dir/" or "dir/.." (it exists once the model loaded).
  if (name.empty()) name = std::filesystem::weakly_canonical(o.model_dir).filename().string();
  const model::Tokenizer tok = load_tokenizer(o.model_dir);
  const rag::RagModel engine = make_rag_engine(m, o);
  const rag::KvStore store = rag::KvStore::load(o.store_dir);
  const std::vector<int> query_tokens = tok.encode(query_text, "--query");
  check_fits_context(m.config, store, doc_ids, query_tokens.size(), o.answer_tokens, "--query");
  rag::BlendOptions bo;
  bo.ratio = ratio;
  bo.answer_tokens = o.answer_tokens;
  bo.integer = engine.is_integer();
  const rag::EngineRun run = rag::run_request(engine, store, doc_ids, query_tokens, bo);

  const trace::Producer producer = rag::engine_producer(
      "ispsim trace gen --engine",
      {{"model", o.model_dir},
       {"store", o.store_dir},
       {"quant", engine.engine_name()},
       {"ratio", number_text(ratio)},
       {"docs", join_ids(doc_ids)},
       {"query", query_text},
       {"answer_tokens", std::to_string(o.answer_tokens)},
       {"hkvd_tokens", std::to_string(run.blend.hkvd_count())},
       {"full_answer", join_tokens(run.full.answer)},
       {"blend_answer", join_tokens(run.blend.answer)}});
  const tracegen::BlendRequest request = rag::blend_request(rag::model_shape(m.config, name), run, ratio);
  rag::write_engine_trace(out_path, request, doc_ids, producer);

  std::cout << "wrote " << out_path << ": FULL_PREFILL, PRECOMPUTED_BLEND, PRECOMPUTED_BLEND_FUSED of " << name
            << " (" << m.config.num_layers << " layers, FP16); " << run.blend.context_tokens.size()
            << " context tokens in " << doc_ids.size() << " documents, " << query_tokens.size() << " query tokens, "
            << o.answer_tokens << " answer tokens; HKVD " << run.blend.hkvd_count() << " tokens per layer (ratio "
            << number_text(ratio) << ", engine " << engine.engine_name() << ")\n";
  std::cout << "full-prefill answer " << quoted(tok.decode(run.full.answer)) << "; blend answer "
            << quoted(tok.decode(run.blend.answer)) << "\n";
  std::cerr << std::fixed << std::setprecision(2) << "ispsim trace gen --engine: " << seconds_since(t0)
            << " s wall\n";
  return 0;
}

}  // namespace ispsim::cli
