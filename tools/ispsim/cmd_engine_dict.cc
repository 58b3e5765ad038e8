// `ispsim engine dict-train` and `ispsim engine kv-quality`. Results go to
// stdout (deterministic); wall-clock time and progress to stderr.
#include "tools/ispsim/cmd_engine_dict.h"

#include <unistd.h>

#include <boost/program_options.hpp>

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "common/data_dir.h"
#include "common/error.h"
#include "kernels/dict/accounting.h"
#include "kernels/dict/dictionary.h"
#include "kernels/dict/engine_trace.h"
#include "kernels/dict/quality.h"
#include "kernels/dict/train.h"
#include "kernels/model/model.h"
#include "kernels/model/tokenizer.h"
#include "kernels/rag/trace/engine_trace.h"
#include "tools/ispsim/cli_common.h"

namespace ispsim::cli {

namespace {

namespace po = boost::program_options;

// The demo model and its dictionaries (common/data_dir.h).
const std::string kDefaultModel = data_path("assets/brown-llama");
const std::string kDefaultDict = data_path("assets/brown-llama/kv-dictionaries.safetensors");

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int bos_of(const model::Tokenizer& tok, const model::Model& m) {
  return tok.bos_id() >= 0 ? tok.bos_id() : m.config.bos_token_id;
}

// `option` names where the path came from, for an empty file.
std::vector<int> text_tokens(const std::string& path, const model::Tokenizer& tok, int bos, const std::string& option) {
  std::vector<int> ids;
  if (bos >= 0) ids.push_back(bos);
  std::vector<int> body = tok.encode(read_text_file(path), path);
  if (body.empty()) throw BadInput(path, "holds no text (" + option + ")");
  ids.insert(ids.end(), body.begin(), body.end());
  return ids;
}

// The cache options checked under their own names, before the cache would
// refuse them under its own; `atoms`: the dictionaries' (--dict).
void check_cache_options(const dict::CacheSettings& c, int atoms) {
  const std::string w = std::to_string(c.window_tokens), k = std::to_string(c.k_high);
  if (c.window_tokens < 1) throw BadInput("--window", w + " tokens; must be >= 1");
  if (c.unit_tokens < 1 || c.unit_tokens > c.window_tokens)
    throw BadInput("--unit", std::to_string(c.unit_tokens) + " tokens; must lie in 1..--window (" + w + ")");
  if (c.k_high < 1 || c.k_high > atoms)
    throw BadInput("--k-high", k + "; must lie in 1.." + std::to_string(atoms) + " (the dictionaries' atoms)");
  if (c.k_low < 1 || c.k_low > c.k_high)
    throw BadInput("--k-low", std::to_string(c.k_low) + "; must lie in 1..--k-high (" + k + ")");
  if (!(c.refine_fraction >= 0.0 && c.refine_fraction <= 1.0))
    throw BadInput("--refine", std::to_string(c.refine_fraction) + "; must lie in 0..1");
}

std::vector<dict::Dictionary> dequantized(const dict::KvDictionaries& d) {
  std::vector<dict::Dictionary> out;
  for (const dict::Int8Dictionary& x : d.dicts) out.push_back(dict::dequantize(x));
  return out;
}

}  // namespace

int engine_dict_train(const Args& args) {
  std::string model_dir = kDefaultModel, calib = data_path("kernels/int/data/brown_calibration.txt"), out;
  int calib_tokens = 0;
  std::string eval_text;
  int eval_tokens = 8192;
  dict::TrainOptions t;
  po::options_description d("dict-train options");
  d.add_options()
      ("help,h", "print this help")
      ("model", po::value(&model_dir)->default_value(model_dir), "checkpoint directory")
      ("calib", po::value(&calib)->default_value(calib), "calibration text (training documents only)")
      ("calib-tokens", po::value(&calib_tokens)->default_value(0), "use at most this many tokens (0 = all)")
      ("atoms", po::value(&t.atoms)->default_value(t.atoms), "atoms per dictionary (M)")
      ("sparsity", po::value(&t.sparsity)->default_value(t.sparsity), "atoms per code in training (K)")
      ("epochs", po::value(&t.epochs)->default_value(t.epochs), "passes over the shuffled pool")
      ("batch", po::value(&t.batch)->default_value(t.batch), "vectors per Adam step")
      ("lr", po::value(&t.learning_rate)->default_value(t.learning_rate, "0.001"), "Adam learning rate")
      ("seed", po::value(&t.seed)->default_value(t.seed), "seed of the pool shuffle and the initial atoms")
      ("eval-text", po::value(&eval_text), "also report the error on this text's KV (e.g. the held-out text)")
      ("eval-tokens", po::value(&eval_tokens)->default_value(eval_tokens), "tokens of --eval-text to use")
      ("out", po::value(&out)->required(), "dictionary file to write (safetensors)");
  if (!parse_options(args, "engine dict-train", d)) return 0;
  if (calib_tokens < 0) throw BadInput("--calib-tokens", "must be >= 0");
  if (eval_tokens < 1) throw BadInput("--eval-tokens", "must be >= 1");
  if (t.atoms < 1) throw BadInput("--atoms", "must be >= 1");
  if (t.sparsity < 1 || t.sparsity > t.atoms) throw BadInput("--sparsity", "must lie in 1..atoms");
  if (t.batch < 1) throw BadInput("--batch", "must be >= 1");
  if (t.epochs < 0) throw BadInput("--epochs", "must be >= 0");
  if (!(t.learning_rate > 0.0f)) throw BadInput("--lr", "must be > 0");

  const auto t0 = std::chrono::steady_clock::now();
  model::Model m = model::load_model(model_dir);
  model::Tokenizer tok(model_dir + "/tokenizer.json");
  std::vector<int> ids = text_tokens(calib, tok, bos_of(tok, m), "--calib");
  if (calib_tokens > 0 && static_cast<int>(ids.size()) > calib_tokens) ids.resize(calib_tokens);
  const std::vector<dict::KvPool> pools = dict::collect_kv(m, ids, m.config.max_positions);
  std::vector<dict::KvPool> eval_pools;
  if (!eval_text.empty()) {
    std::vector<int> eval_ids = text_tokens(eval_text, tok, bos_of(tok, m), "--eval-text");
    if (static_cast<int>(eval_ids.size()) > eval_tokens) eval_ids.resize(eval_tokens);
    eval_pools = dict::collect_kv(m, eval_ids, m.config.max_positions);
  }
  std::cout << "calibration: " << calib << ", " << ids.size() << " tokens in windows of " << m.config.max_positions
            << " tokens; " << pools[0].count() << " vectors of " << pools[0].dim
            << " elements per layer and stream (one per KV head and token)\n";
  std::cout << "training: M = " << t.atoms << " atoms, pursuit K = " << t.sparsity << ", " << t.epochs
            << " epochs, batch " << t.batch << ", Adam lr " << t.learning_rate << ", seed " << t.seed << "\n";
  std::cout << "| layer | stream | rel. error, initial atoms | rel. error, trained FP32 | rel. error, INT8 | INT8 scale |"
            << (eval_pools.empty() ? "" : " rel. error, INT8, --eval-text |") << "\n|---|---|---|---|---|---|"
            << (eval_pools.empty() ? "" : "---|") << "\n";
  dict::KvDictionaries all;
  all.layers = m.config.num_layers;
  all.atoms = t.atoms;
  all.dim = m.config.head_dim;
  const bool progress = isatty(STDERR_FILENO);
  for (size_t i = 0; i < pools.size(); ++i) {
    dict::TrainOptions initial = t;
    initial.epochs = 0;
    const double before = dict::pursuit_relative_error(dict::train_dictionary(pools[i], initial), pools[i], t.sparsity);
    const dict::Dictionary trained = dict::train_dictionary(pools[i], t, [&](const dict::EpochReport& e) {
      if (progress)
        std::cerr << "\rdict-train: layer " << i / 2 << (i % 2 ? " V" : " K") << " epoch " << e.epoch << "/" << t.epochs
                  << " rel. error " << std::fixed << std::setprecision(4) << e.relative_error << "   " << std::flush;
    });
    dict::Int8Dictionary q = dict::quantize_per_tensor(trained);
    const double fp32_err = dict::pursuit_relative_error(trained, pools[i], t.sparsity);
    const double int8_err = dict::pursuit_relative_error(dict::dequantize(q), pools[i], t.sparsity);
    std::cout << std::fixed << std::setprecision(4) << "| " << i / 2 << " | " << (i % 2 ? "V" : "K") << " | " << before
              << " | " << fp32_err << " | " << int8_err << " | " << std::setprecision(6) << q.scale << " |";
    if (!eval_pools.empty())
      std::cout << std::setprecision(4) << " " << dict::pursuit_relative_error(dict::dequantize(q), eval_pools[i], t.sparsity)
                << " |";
    std::cout << "\n";
    all.dicts.push_back(std::move(q));
  }
  if (progress) std::cerr << "\r" << std::string(60, ' ') << "\r";
  dict::save(all, out);
  std::cout << "wrote " << out << " (" << all.bytes() << " bytes of INT8 atoms)\n";
  std::cout << "relative error: sum ||x - D gamma||^2 / sum ||x||^2 over the calibration pool, projection pursuit\n";
  std::cerr << std::fixed << std::setprecision(1) << "ispsim engine dict-train: " << seconds_since(t0) << " s wall\n";
  return 0;
}

namespace {

struct QualityOptions {
  std::string model_dir = kDefaultModel;
  std::string dict_file = kDefaultDict;
  std::string text_file = data_path("assets/brown-llama/heldout.txt");
  std::string docs_file = data_path("assets/rag-demo/docs.jsonl");
  std::string queries_file = data_path("assets/rag-demo/queries.jsonl");
  int windows = 16;          // held-out sequences
  int prompt_tokens = 128;   // held-out: dense prompt, the rest of the context decoded
  int answer_tokens = 32;    // RAG: dense greedy answer length (teacher-forced)
  dict::CacheSettings cache;
  dict::EntryBits bits;
};

std::vector<dict::TokenSequence> heldout_sequences(const QualityOptions& o, const std::vector<int>& ids, int context) {
  std::vector<dict::TokenSequence> seqs;
  for (size_t start = 0; start + context <= ids.size() && static_cast<int>(seqs.size()) < o.windows; start += context) {
    dict::TokenSequence s;
    s.prompt.assign(ids.begin() + start, ids.begin() + start + o.prompt_tokens);
    s.continuation.assign(ids.begin() + start + o.prompt_tokens, ids.begin() + start + context);
    seqs.push_back(std::move(s));
  }
  if (seqs.empty()) throw BadInput(o.text_file, "fewer tokens than one context of " + std::to_string(context));
  return seqs;
}

std::vector<dict::TokenSequence> rag_sequences(const QualityOptions& o, const model::Model& m,
                                               const model::Tokenizer& tok, int bos) {
  const std::vector<rag::Document> docs = read_documents(o.docs_file, tok, bos);
  std::vector<dict::TokenSequence> seqs;
  for (const Query& q : read_queries(o.queries_file)) {
    dict::TokenSequence s;
    for (const std::string& id : q.doc_ids) {
      const rag::Document* found = nullptr;
      for (const rag::Document& d : docs) found = d.id == id ? &d : found;
      if (found == nullptr) throw BadInput(o.queries_file, "document '" + id + "' is not in " + o.docs_file);
      s.prompt.insert(s.prompt.end(), found->tokens.begin(), found->tokens.end());
    }
    const std::vector<int> query = tok.encode(q.text, o.queries_file);
    s.prompt.insert(s.prompt.end(), query.begin(), query.end());
    const int room = m.config.max_positions + 1 - static_cast<int>(s.prompt.size());  // last answer token is not fed
    if (room < 1) throw BadInput(o.queries_file, "prompt of " + std::to_string(s.prompt.size()) + " tokens fills the context");
    s.continuation = dict::dense_greedy(m, s.prompt, std::min(o.answer_tokens, room));
    seqs.push_back(std::move(s));
  }
  return seqs;
}

std::string per_layer(const dict::VariantQuality& q, bool keys) {
  if (!q.settings.compress) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(3);
  for (size_t l = 0; l < q.per_layer.size(); ++l)
    s << (l ? " / " : "") << (keys ? q.per_layer[l].key_relative() : q.per_layer[l].value_relative());
  return s.str();
}

void print_rows(const std::string& data, const std::vector<dict::VariantQuality>& rows) {
  const double dense_ppl = rows[0].perplexity();
  for (const dict::VariantQuality& q : rows) {
    std::cout << std::fixed << "| " << data << " | " << q.name << " | " << std::setprecision(3) << q.perplexity() << " | "
              << std::showpos << std::setprecision(2) << 100.0 * (q.perplexity() / dense_ppl - 1.0) << std::noshowpos
              << " % | " << q.top1_agreements << " / " << q.tokens << " (" << std::setprecision(1)
              << 100.0 * q.top1_agreement() << " %) | " << std::setprecision(5) << q.mean_kl() << " | "
              << per_layer(q, true) << " | " << per_layer(q, false) << " | " << q.bytes.dense_bytes() << " | "
              << q.bytes.loaded_bytes() << " | " << std::setprecision(2) << q.bytes.ratio() << "x |\n";
  }
}

}  // namespace

int engine_kv_quality(const Args& args) {
  QualityOptions o;
  dict::CacheSettings& c = o.cache;
  po::options_description d("kv-quality options");
  d.add_options()
      ("help,h", "print this help")
      ("model", po::value(&o.model_dir)->default_value(o.model_dir), "checkpoint directory")
      ("dict", po::value(&o.dict_file)->default_value(o.dict_file), "dictionaries (ispsim engine dict-train)")
      ("text", po::value(&o.text_file)->default_value(o.text_file), "held-out text")
      ("windows", po::value(&o.windows)->default_value(o.windows), "held-out sequences of one model context each")
      ("prompt-tokens", po::value(&o.prompt_tokens)->default_value(o.prompt_tokens),
       "held-out: dense prompt tokens per sequence; the rest of the context is decoded")
      ("docs", po::value(&o.docs_file)->default_value(o.docs_file), "RAG documents (JSON lines; '' skips the RAG rows)")
      ("queries", po::value(&o.queries_file)->default_value(o.queries_file), "RAG queries (JSON lines)")
      ("answer-tokens", po::value(&o.answer_tokens)->default_value(o.answer_tokens),
       "RAG: tokens of the dense greedy answer every cache is teacher-forced on")
      ("window", po::value(&c.window_tokens)->default_value(c.window_tokens), "dense local window W, tokens")
      ("unit", po::value(&c.unit_tokens)->default_value(c.unit_tokens), "compression unit U, tokens")
      ("k-high", po::value(&c.k_high)->default_value(c.k_high), "atoms per code (K_high)")
      ("k-low", po::value(&c.k_low)->default_value(c.k_low), "coarse atoms of hierarchical sparsity (K_low)")
      ("refine", po::value(&c.refine_fraction)->default_value(c.refine_fraction, "0.1"),
       "fraction of compressed tokens refined to K_high, 0..1")
      ("index-bits", po::value(&o.bits.index_bits)->default_value(o.bits.index_bits), "stored atom index, bits")
      ("coef-bits", po::value(&o.bits.coef_bits)->default_value(o.bits.coef_bits), "stored coefficient, bits")
      ("window-bits", po::value(&o.bits.window_bits)->default_value(o.bits.window_bits), "dense window element, bits");
  if (!parse_options(args, "engine kv-quality", d)) return 0;
  if (o.windows < 1) throw BadInput("--windows", "must be >= 1");
  if (o.answer_tokens < 1) throw BadInput("--answer-tokens", "must be >= 1");
  for (auto [name, v] : {std::pair{"--index-bits", o.bits.index_bits}, {"--coef-bits", o.bits.coef_bits},
                         {"--window-bits", o.bits.window_bits}})
    if (v < 1 || v > 64) throw BadInput(name, "must lie in 1..64");

  const auto t0 = std::chrono::steady_clock::now();
  model::Model m = model::load_model(o.model_dir);
  const int context = m.config.max_positions;
  if (o.prompt_tokens < 1 || o.prompt_tokens >= context)
    throw BadInput("--prompt-tokens", "must lie in 1.." + std::to_string(context - 1) + " (the model's context is " +
                                          std::to_string(context) + " tokens)");
  const dict::KvDictionaries dicts = dict::load(o.dict_file);
  if (dicts.layers != m.config.num_layers || dicts.dim != m.config.head_dim)
    throw BadInput(o.dict_file, "dictionaries for " + std::to_string(dicts.layers) + " layers of " +
                                    std::to_string(dicts.dim) + "-element heads, the model has " +
                                    std::to_string(m.config.num_layers) + " layers of " +
                                    std::to_string(m.config.head_dim));
  const std::vector<dict::Dictionary> fp = dequantized(dicts);
  model::Tokenizer tok(o.model_dir + "/tokenizer.json");
  const int bos = bos_of(tok, m);
  check_cache_options(c, dicts.atoms);
  const std::vector<dict::Variant> variants = dict::paper_variants(c);
  for (const dict::Variant& v : variants)  // bad settings fail before any work
    dict::CompressedKvCache check(fp[0], fp[1], m.config.num_heads, m.config.num_kv_heads, m.config.head_dim, v.settings);

  const bool progress = isatty(STDERR_FILENO);
  auto report = [&](const char* what) {
    return [&, what](int done, int total) {
      if (progress) std::cerr << "\rkv-quality: " << what << " " << done << "/" << total << " sequences" << std::flush;
    };
  };
  const std::vector<dict::TokenSequence> held = heldout_sequences(o, text_tokens(o.text_file, tok, bos, "--text"), context);
  const std::vector<dict::VariantQuality> held_rows = dict::evaluate(m, fp, variants, held, o.bits, report("held-out"));
  std::vector<dict::TokenSequence> rag_seqs;
  std::vector<dict::VariantQuality> rag_rows;
  if (!o.docs_file.empty()) {
    rag_seqs = rag_sequences(o, m, tok, bos);
    rag_rows = dict::evaluate(m, fp, variants, rag_seqs, o.bits, report("RAG"));
  }
  if (progress) std::cerr << "\r" << std::string(60, ' ') << "\r";

  std::cout << "model: " << o.model_dir << "; dictionaries: " << o.dict_file << " (" << dicts.layers
            << " layers x K/V, M = " << dicts.atoms << " atoms of " << dicts.dim << " INT8 elements, "
            << dicts.bytes() << " bytes)\n";
  std::cout << "cache: W = " << c.window_tokens << ", U = " << c.unit_tokens << ", K_high = " << c.k_high
            << ", hierarchical K_low = " << c.k_low << ", refine " << 100.0 * c.refine_fraction
            << " %; codes: " << o.bits.index_bits << "-bit index + " << o.bits.coef_bits << "-bit coefficient (FP16)\n";
  std::cout << "held-out: " << held.size() << " sequences from " << o.text_file << ", each " << o.prompt_tokens
            << " prompt tokens (dense) + " << held[0].continuation.size() << " decoded tokens (teacher-forced)\n";
  if (!rag_seqs.empty())
    std::cout << "RAG: " << rag_seqs.size() << " queries of " << o.queries_file
              << ", prompt = retrieved documents + query (dense), answer = the dense cache's greedy answer ("
              << rag_seqs[0].continuation.size() << " tokens for the first query, teacher-forced)\n";
  std::cout << dict::accounting_formula(o.bits);
  std::cout << "rel. error: ||x - x_hat||^2 / ||x||^2 of the stored codes, per layer 0 / 1 / ...; KL(dense || cache)\n\n";
  std::cout << "| data | cache | perplexity | vs dense | top-1 = dense | mean KL (nats) | K rel. error per layer | "
               "V rel. error per layer | dense FP16 KV bytes | bytes loaded | ratio |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|\n";
  print_rows("held-out", held_rows);
  if (!rag_rows.empty()) print_rows("RAG demo", rag_rows);
  std::cerr << std::fixed << std::setprecision(1) << "ispsim engine kv-quality: " << seconds_since(t0) << " s wall\n";
  return 0;
}

int engine_kv_trace(const Args& args) {
  std::string model_dir = kDefaultModel, dict_file = kDefaultDict, docs_file = data_path("assets/rag-demo/docs.jsonl");
  std::string doc_list, query, out, encoder = "pursuit";
  int tokens = 8;
  bool flat = false;
  dict::CacheSettings c;
  c.hierarchical = true;
  po::options_description d("kv-trace options");
  d.add_options()
      ("help,h", "print this help")
      ("model", po::value(&model_dir)->default_value(model_dir), "checkpoint directory")
      ("dict", po::value(&dict_file)->default_value(dict_file), "dictionaries (ispsim engine dict-train)")
      ("docs-file", po::value(&docs_file)->default_value(docs_file), "documents (JSON lines)")
      ("docs", po::value(&doc_list)->required(), "comma-separated document ids, in prompt order")
      ("query", po::value(&query)->required(), "query text (after the documents)")
      ("tokens", po::value(&tokens)->default_value(tokens), "greedy decode steps")
      ("encoder", po::value(&encoder)->default_value(encoder), "pursuit | omp")
      ("flat", po::bool_switch(&flat), "no hierarchical sparsity: every compressed token at K_high")
      ("window", po::value(&c.window_tokens)->default_value(c.window_tokens), "dense local window W, tokens")
      ("unit", po::value(&c.unit_tokens)->default_value(c.unit_tokens), "compression unit U, tokens")
      ("k-high", po::value(&c.k_high)->default_value(c.k_high), "atoms per code (K_high)")
      ("k-low", po::value(&c.k_low)->default_value(c.k_low), "coarse atoms (K_low)")
      ("refine", po::value(&c.refine_fraction)->default_value(c.refine_fraction, "0.1"), "refined fraction, 0..1")
      ("out", po::value(&out)->required(), "trace file to write");
  if (!parse_options(args, "engine kv-trace", d)) return 0;
  if (encoder != "pursuit" && encoder != "omp") throw BadInput("--encoder", "'" + encoder + "' is not pursuit or omp");
  if (tokens < 1) throw BadInput("--tokens", "must be >= 1");
  c.encoder = encoder == "omp" ? dict::Encoder::kOmp : dict::Encoder::kPursuit;
  c.hierarchical = !flat;

  model::Model m = model::load_model(model_dir);
  const dict::KvDictionaries dicts = dict::load(dict_file);
  if (dicts.layers != m.config.num_layers || dicts.dim != m.config.head_dim)
    throw BadInput(dict_file, "dictionaries do not fit the model's layers and head size");
  model::Tokenizer tok(model_dir + "/tokenizer.json");
  const std::vector<rag::Document> all_docs = read_documents(docs_file, tok, bos_of(tok, m));
  std::vector<int> prompt;
  std::vector<uint64_t> doc_tokens;
  std::stringstream ids(doc_list);
  for (std::string id; std::getline(ids, id, ',');) {
    const rag::Document* found = nullptr;
    for (const rag::Document& doc : all_docs) found = doc.id == id ? &doc : found;
    if (found == nullptr) throw BadInput("--docs", "document '" + id + "' is not in " + docs_file);
    prompt.insert(prompt.end(), found->tokens.begin(), found->tokens.end());
    doc_tokens.push_back(found->tokens.size());
  }
  if (doc_tokens.empty()) throw BadInput("--docs", "no document id");
  const std::vector<int> query_ids = tok.encode(query, "--query");
  if (query_ids.empty()) throw BadInput("--query", "has no tokens");
  prompt.insert(prompt.end(), query_ids.begin(), query_ids.end());
  if (static_cast<int>(prompt.size()) + tokens > m.config.max_positions)
    throw BadInput("--tokens", "prompt of " + std::to_string(prompt.size()) + " tokens + " + std::to_string(tokens) +
                                   " decode steps exceed the model's context of " +
                                   std::to_string(m.config.max_positions) + " tokens");
  check_cache_options(c, dicts.atoms);
  { dict::CompressedKvCache check(dict::dequantize(dicts.get(0, dict::Stream::kKey)),
                                  dict::dequantize(dicts.get(0, dict::Stream::kValue)), m.config.num_heads,
                                  m.config.num_kv_heads, m.config.head_dim, c); }  // settings checked before work

  const dict::DictionaryRun run = dict::run_dictionary_decode(m, dequantized(dicts), c, dicts.atoms, prompt, tokens);
  const trace::Producer producer = rag::engine_producer(
      "ispsim engine kv-trace", {{"model", model_dir}, {"dict", dict_file}, {"docs", doc_list}, {"query", query},
                                 {"encoder", encoder}, {"hierarchical", flat ? "false" : "true"}});
  dict::write_dictionary_trace(out, rag::model_shape(m.config, model_dir), doc_tokens, query_ids.size(), run, producer);
  std::cout << "wrote " << out << ": FULL_PREFILL of " << prompt.size() << " prompt tokens (dense), then " << tokens
            << " decode steps with the dictionary-compressed cache\nanswer:";
  for (int t : run.answer) std::cout << " " << t;
  std::cout << "\n";
  return 0;
}

}  // namespace ispsim::cli
