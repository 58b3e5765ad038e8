// `ispsim engine ppl | generate | precompute | blend | blend-quality`: the functional engine on
// a Hugging Face checkpoint directory. Results go to stdout (deterministic);
// wall-clock timing goes to stderr.
#include <boost/json.hpp>
#include <boost/program_options.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "common/data_dir.h"
#include "common/error.h"
#include "kernels/int/quantized_lm.h"
#include "kernels/model/evaluation.h"
#include "kernels/model/fp32_lm.h"
#include "kernels/model/model.h"
#include "kernels/model/tokenizer.h"
#include "kernels/rag/blend.h"
#include "tools/ispsim/cmd_engine_dict.h"
#include "tools/ispsim/cmd_engine_rag.h"
#include "tools/ispsim/cli_common.h"
#include "kernels/rag/kv_store.h"
#include "tools/ispsim/cli.h"

namespace ispsim::cli {

namespace {

namespace po = boost::program_options;
using model::CausalLm;

// Every option of the engine subcommands. Engine variants (e.g. the integer
// path's stage switches) add their fields here, register them in
// add_engine_options() and pick the implementation in make_engine().
struct EngineOptions {
  std::string model_dir = data_path("assets/brown-llama");  // default: the demo model (common/data_dir.h)
  std::string text_file;                         // ppl
  long long max_tokens = 0;                      // ppl: score at most this many tokens (0 = all)
  int window = 0;                                // ppl: tokens per window (0 = the model's context)
  std::string prompt;                            // generate
  int new_tokens = 32;                           // generate: tokens to produce at most
  bool add_bos = true;                           // start the token stream with BOS (see bos_id())
  // Quantized engines (kernels/int/quantized_lm.h): the ablation stage, or "all" (ppl only).
  std::string quant = "fp32";
  std::string calib_file = data_path("kernels/int/data/brown_calibration.txt");
  int calib_tokens = 2048;
  integer::IntegerOptions integer;
  // precompute / blend (kernels/rag)
  std::string docs;         // precompute: JSON-lines file; blend: comma-separated document ids
  std::string store_dir;    // precompute: --out; blend: --store
  std::string query;        // blend
  double ratio = 0.15;      // blend: CacheBlend's default recomputation ratio (paper 2 §II-C)
  int answer_tokens = 8;    // blend
};

void add_engine_options(po::options_description& d, EngineOptions& o) {
  d.add_options()
      ("help,h", "print this help")
      ("model", po::value(&o.model_dir)->default_value(o.model_dir),
       "checkpoint directory (config.json, model.safetensors, tokenizer.json)")
      ("no-bos", po::bool_switch()->notifier([&o](bool off) { o.add_bos = !off; }),
       "do not start the token stream with the BOS token")
      ("quant", po::value(&o.quant)->default_value(o.quant),
       "engine: fp32 | w8a8 | smoothquant | int-nonlinear | int16 (cumulative stages; ppl also takes 'all')")
      ("calib", po::value(&o.calib_file)->default_value(o.calib_file), "calibration text for the quantized stages")
      ("calib-tokens", po::value(&o.calib_tokens)->default_value(o.calib_tokens), "calibration tokens to use at most")
      ("smooth-alpha", po::value(&o.integer.smooth_alpha)->default_value(o.integer.smooth_alpha, "0.5"),
       "SmoothQuant migration strength alpha in [0, 1]")
      ("group-size", po::value(&o.integer.group_size)->default_value(o.integer.group_size),
       "quantization group along the hidden dimension, elements")
      ("register-bits", po::value(&o.integer.register_bits)->default_value(o.integer.register_bits),
       "int-nonlinear/int16: width of the integer norms' and Softmax's registers, 64 or 32 (paper 1's), bits");
  add_engine_speed_options(d);
}

// The token a sequence starts with: the one the tokenizer's post-processor adds
// (Llama-3, OPT), else config.json's bos_token_id (SmolLM2; the demo model, whose
// training put <|endoftext|> before every document); -1 for none.
int bos_id(const model::Tokenizer& tok, const model::Model& m, const EngineOptions& o) {
  if (!o.add_bos) return -1;
  return tok.bos_id() >= 0 ? tok.bos_id() : m.config.bos_token_id;
}

std::vector<int> calibration_tokens(const EngineOptions& o) {
  return cli::calibration_tokens(o.model_dir, o.calib_file, o.calib_tokens);
}

std::unique_ptr<CausalLm> make_engine(const model::Model& m, const EngineOptions& o) {
  const integer::QuantStage stage = integer::parse_stage(o.quant);
  if (stage < integer::QuantStage::kIntNonlinear && o.integer.register_bits != 64)
    throw BadInput("--register-bits", std::string("applies to the integer stages (int-nonlinear, int16), not ") + o.quant);
  if (stage == integer::QuantStage::kFp32) return std::make_unique<model::Fp32Lm>(m);
  integer::IntegerOptions io = o.integer;
  io.stage = stage;
  return integer::make_quantized_lm(m, io, calibration_tokens(o));
}

// The RAG engine of --quant: fp32, or the integer engine (int16, int-nonlinear)
// calibrated as make_engine() does. The model must outlive it.
rag::RagModel make_rag_engine(const model::Model& m, const EngineOptions& o) {
  return make_rag_model(m, o.model_dir, o.quant, o.calib_file, o.calib_tokens, o.integer);
}

double parameter_millions(const model::Model& m) {
  const model::Weights& w = m.weights;
  size_t n = w.token_embedding.size() + w.position_embedding.size() + w.final_norm.size() +
             w.final_norm_bias.size() + w.lm_head.size();
  for (const model::LayerWeights& L : w.layers)
    for (const auto* v : {&L.attn_norm, &L.attn_norm_bias, &L.wq, &L.wk, &L.wv, &L.wo, &L.bq, &L.bk, &L.bv, &L.bo,
                          &L.ffn_norm, &L.ffn_norm_bias, &L.w_gate, &L.w_up, &L.w_down, &L.b_up, &L.b_down})
      n += v->size();
  return static_cast<double>(n) / 1e6;
}

void print_model(const model::Model& m) {
  const model::Config& c = m.config;
  std::cout << "model: " << m.dir << " (" << model::family_name(c.family) << ", " << c.num_layers << " layers, hidden "
            << c.hidden_size << ", " << c.num_heads << " heads / " << c.num_kv_heads << " KV heads, vocab "
            << c.vocab_size << " tokens, context " << c.max_positions << " tokens, " << std::fixed
            << std::setprecision(2) << parameter_millions(m) << " M parameters)\n";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int engine_ppl(const Args& args) {
  EngineOptions o;
  po::options_description d("ppl options");
  add_engine_options(d, o);
  d.add_options()
      ("text", po::value(&o.text_file)->required(), "UTF-8 text file to score")
      ("max-tokens", po::value(&o.max_tokens)->default_value(0), "score only the first N tokens (0 = all)")
      ("window", po::value(&o.window)->default_value(0), "tokens per window (0 = the model's context)");
  if (!parse_options(args, "engine ppl", d)) return 0;
  if (o.max_tokens < 0) throw BadInput("--max-tokens", "must be >= 0");
  if (o.window < 0) throw BadInput("--window", "must be >= 0");

  model::Model m = model::load_model(o.model_dir);
  model::Tokenizer tok = load_tokenizer(o.model_dir);
  const std::string text = read_text_file(o.text_file);
  std::vector<int> ids;
  const int bos = bos_id(tok, m, o);
  if (bos >= 0) ids.push_back(bos);
  std::vector<int> body = tok.encode(text, o.text_file);
  ids.insert(ids.end(), body.begin(), body.end());
  if (o.max_tokens > 0 && static_cast<long long>(ids.size()) > o.max_tokens) ids.resize(o.max_tokens);
  if (ids.size() < 2) throw BadInput(o.text_file, "text has fewer than 2 tokens");

  if (o.quant == "all") {  // the cumulative ablation, one row per stage
    print_model(m);
    std::cout << "text: " << o.text_file << " (" << text.size() << " bytes)\n";
    double fp32_ppl = 0;
    const int register_bits = o.integer.register_bits;
    for (integer::QuantStage stage : integer::all_stages()) {
      o.quant = integer::stage_name(stage);
      o.integer.register_bits = stage < integer::QuantStage::kIntNonlinear ? 64 : register_bits;
      std::unique_ptr<CausalLm> lm = make_engine(m, o);
      model::PerplexityResult r = model::perplexity(*lm, ids, o.window);
      if (stage == integer::QuantStage::kFp32) fp32_ppl = r.perplexity;
      std::cout << std::fixed << std::setprecision(4) << "stage " << std::left << std::setw(14) << o.quant
                << std::right << " perplexity " << r.perplexity << " over " << r.tokens << " tokens ("
                << std::showpos << std::setprecision(2) << 100.0 * (r.perplexity / fp32_ppl - 1.0) << std::noshowpos
                << " % vs fp32)\n";
    }
    return 0;
  }
  std::unique_ptr<CausalLm> lm = make_engine(m, o);
  const auto t0 = std::chrono::steady_clock::now();
  model::PerplexityResult r = model::perplexity(*lm, ids, o.window);
  const double wall = seconds_since(t0);

  print_model(m);
  std::cout << "text: " << o.text_file << " (" << text.size() << " bytes)\n";
  if (o.quant != "fp32") std::cout << "engine: " << o.quant << "\n";
  std::cout << std::fixed << std::setprecision(4) << "perplexity " << r.perplexity << " over " << r.tokens
            << " tokens (" << (bos >= 0 ? "BOS id " + std::to_string(bos) + " first, " : std::string("no BOS, "))
            << r.predicted << " tokens predicted, " << r.windows << " windows of at most "
            << (o.window > 0 ? o.window : lm->capacity()) << " tokens); mean NLL " << r.mean_nll
            << " nats/token\n";
  std::cerr << std::fixed << std::setprecision(2) << "ispsim engine ppl: " << wall << " s wall, "
            << static_cast<double>(r.tokens) / wall << " tokens/s\n";
  return 0;
}

int engine_generate(const Args& args) {
  EngineOptions o;
  po::options_description d("generate options");
  add_engine_options(d, o);
  d.add_options()
      ("prompt", po::value(&o.prompt)->required(), "prompt text")
      ("tokens", po::value(&o.new_tokens)->default_value(o.new_tokens), "new tokens to generate at most");
  if (!parse_options(args, "engine generate", d)) return 0;
  if (o.new_tokens < 1) throw BadInput("--tokens", "must be >= 1");

  model::Model m = model::load_model(o.model_dir);
  model::Tokenizer tok = load_tokenizer(o.model_dir);
  std::vector<int> prompt;
  const int bos = bos_id(tok, m, o);
  if (bos >= 0) prompt.push_back(bos);
  std::vector<int> body = tok.encode(o.prompt, "--prompt");
  prompt.insert(prompt.end(), body.begin(), body.end());
  if (prompt.empty()) throw BadInput("--prompt", "prompt is empty");

  std::unique_ptr<CausalLm> lm = make_engine(m, o);
  std::cout << o.prompt << std::flush;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int> out = model::generate_greedy(*lm, prompt, o.new_tokens, [&](int id) {
    std::cout << tok.decode_token(id) << std::flush;
  });
  const double wall = seconds_since(t0);
  std::cout << "\n";
  std::cerr << std::fixed << std::setprecision(2) << "ispsim engine generate: " << prompt.size()
            << " prompt tokens, " << out.size() << " new tokens in " << wall << " s wall ("
            << static_cast<double>(out.size()) / wall << " tokens/s incl. prefill)\n";
  return 0;
}


int engine_precompute(const Args& args) {
  EngineOptions o;
  po::options_description d("precompute options");
  add_engine_options(d, o);
  d.add_options()
      ("docs", po::value(&o.docs)->required(), "JSON-lines file of {\"id\": ..., \"text\": ...} documents")
      ("out", po::value(&o.store_dir)->required(), "KV store directory to write (index.json, tiles.bin)");
  if (!parse_options(args, "engine precompute", d)) return 0;
  model::Model m = model::load_model(o.model_dir);
  model::Tokenizer tok = load_tokenizer(o.model_dir);
  const std::vector<rag::Document> docs = read_documents(o.docs, tok, bos_id(tok, m, o));
  const rag::RagModel engine = make_rag_engine(m, o);
  const auto t0 = std::chrono::steady_clock::now();
  const rag::KvStore store = rag::precompute(engine, docs);
  store.write(o.store_dir);
  const double wall = seconds_since(t0);
  int64_t tokens = 0, tiles = 0;
  for (const rag::DocumentKv& doc : store.documents()) {
    tokens += doc.token_count();
    tiles += store.tiles_for(doc.token_count());
  }
  const rag::StoreShape& s = store.shape();
  std::cout << "precomputed " << docs.size() << " documents (" << tokens << " tokens) with the " << engine.engine_name()
            << " engine into " << o.store_dir << ": " << tiles << " tiles of " << s.tile_tokens << " tokens ("
            << s.num_layers << " layers x " << s.num_kv_heads << " KV heads x blocks), " << s.tile_bytes()
            << " B each at a " << s.tile_stride() << " B page-aligned stride, " << tiles * s.tile_stride()
            << " B in tiles.bin\n";
  std::cerr << std::fixed << std::setprecision(2) << "ispsim engine precompute: " << wall << " s wall\n";
  return 0;
}

std::vector<std::string> split_ids(const std::string& text) {
  std::vector<std::string> ids;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string id = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (id.empty()) throw BadInput("--docs", "empty document id in '" + text + "'");
    ids.push_back(id);
    if (comma == std::string::npos) return ids;
    start = comma + 1;
  }
}

int engine_blend(const Args& args) {
  EngineOptions o;
  po::options_description d("blend options");
  add_engine_options(d, o);
  d.add_options()
      ("store", po::value(&o.store_dir)->required(), "KV store directory written by 'engine precompute'")
      ("docs", po::value(&o.docs)->required(), "comma-separated document ids, in prompt order")
      ("query", po::value(&o.query)->required(), "query text (follows the documents)")
      ("ratio", po::value(&o.ratio)->default_value(o.ratio, "0.15"), "share of document tokens recomputed, in [0, 1]")
      ("tokens", po::value(&o.answer_tokens)->default_value(o.answer_tokens), "answer tokens to decode greedily");
  if (!parse_options(args, "engine blend", d)) return 0;
  const std::vector<std::string> ids = split_ids(o.docs);
  model::Model m = model::load_model(o.model_dir);
  model::Tokenizer tok = load_tokenizer(o.model_dir);
  const std::vector<int> query = tok.encode(o.query, "--query");
  const rag::KvStore store = rag::KvStore::load(o.store_dir);
  const rag::RagModel engine = make_rag_engine(m, o);
  rag::BlendOptions bo;
  bo.ratio = o.ratio;
  bo.answer_tokens = o.answer_tokens;
  bo.integer = engine.is_integer();
  const auto t0 = std::chrono::steady_clock::now();
  const rag::BlendOutput out = rag::blend(engine, store, ids, query, bo);
  const double wall = seconds_since(t0);

  print_model(m);
  std::cout << "store: " << o.store_dir << " (" << store.engine() << " engine, " << store.documents().size()
            << " documents, tiles of " << store.shape().tile_tokens << " tokens)\n";
  std::cout << "prompt: " << ids.size() << " documents (";
  for (size_t i = 0; i < out.doc_token_counts.size(); ++i) std::cout << (i ? " + " : "") << out.doc_token_counts[i];
  std::cout << " = " << out.context_tokens.size() << " tokens) + " << out.query_tokens.size() << " query tokens\n";
  std::cout << "HKVD: " << out.hkvd_count() << " of " << out.context_tokens.size()
            << " document tokens recomputed at layers 1.." << m.config.num_layers - 1 << " (ratio "
            << std::defaultfloat << std::setprecision(6) << 100.0 * o.ratio << " %); the " << out.query_tokens.size()
            << " query tokens are always computed\n";
  std::cout << "answer (" << out.answer.size() << " tokens): ";
  for (int id : out.answer) std::cout << tok.decode_token(id);
  std::cout << "\n";
  std::cerr << std::fixed << std::setprecision(3) << "ispsim engine blend: " << wall << " s wall\n";
  return 0;
}

namespace {

const char* kEngineUsage =
    "usage: ispsim engine <ppl|generate|precompute|blend|blend-quality|dict-train|kv-quality|kv-trace> [options]\n"
    "  ppl         perplexity of a text file: --model DIR --text FILE [--max-tokens N] [--window N] [--quant STAGE|all]\n"
    "  generate    greedy continuation of a prompt: --model DIR --prompt TEXT [--tokens N] [--quant STAGE]\n"
    "  precompute  KV store of documents: --model DIR --docs FILE.jsonl --out STORE [--quant fp32|int16]\n"
    "  blend       CacheBlend answer: --model DIR --store STORE --docs ID,ID.. --query TEXT [--ratio R] [--tokens N]\n"
    "  blend-quality  blended vs full prefill at ratios 0/5/15/25/100 %: --model DIR --store STORE --queries FILE.jsonl\n"
    "              [--tokens N] [--quant fp32|int16]\n"
    "  dict-train  learn the per-layer K/V dictionaries: --model DIR --calib FILE --out FILE [--atoms M]\n"
    "  kv-quality  dictionary-compressed KV cache vs dense: quality and bytes loaded [--dict FILE]\n"
    "  kv-trace    decode trace with dictionary ops: --docs ID,ID.. --query TEXT --out FILE [--tokens N]\n"
    "run 'ispsim engine <subcommand> --help' for details\n";

}  // namespace

int engine(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << kEngineUsage;
    return args.empty() ? 2 : 0;
  }
  return run_subcommand(engine_actions(), args, "ispsim engine");
}

}  // namespace ispsim::cli
