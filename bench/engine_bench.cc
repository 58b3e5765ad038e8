// Speed of the functional engine (integer INT8 and FP32 reference) against the
// machine's memory bandwidth and, when the user points it at a llama.cpp build
// and GGUF files of the same shape, against llama.cpp in the same run.
//   1. ISA levels this CPU/OS supports (kernels/model/cpu_isa.h);
//   2. single-thread streaming read bandwidth (sum over a 512 MiB buffer, best of 5);
//   3. the int8 GEMV kernel alone at every supported level, from DRAM, the
//      prefill GEMM (512 tokens) and the FP32 GEMV (from DRAM) at every level;
//   4. a random-weight model with SmolLM2-135M's shape (and, with --model, a
//      trained one): prefill tokens/s of a --prefill-token prompt (default 512,
//      one batched forward) and decode tokens/s after a --prompt-token prompt
//      (default 32; --decode tokens, default 64), at each --threads count;
//   5. with --llama-bench BIN --gguf-q8 FILE --gguf-f32 FILE: llama.cpp's
//      llama-bench on the same prompts, in --rounds interleaved rounds (ispsim
//      INT8, llama.cpp Q8_0, ispsim FP32, llama.cpp F32, per thread count), and
//      the ratio ispsim / llama.cpp of every round; the median is reported.
// GB = 10^9 bytes. Rates are wall-clock (threads > 1 need it); on a shared
// machine they vary with the load, so compare ratios within one round.
//
//   ispsim_bench_engine [--model DIR --calib FILE] [--prefill N] [--prompt N] [--decode N] [--threads 1,2]
//                       [--isa LEVEL] [--rounds N] [--no-random] [--kernels-only]
//                       [--llama-bench BIN --gguf-q8 FILE --gguf-f32 FILE]
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "kernels/int/gemv_int8.h"
#include "kernels/int/quantized_lm.h"
#include "kernels/int/random_model.h"
#include "kernels/model/cpu_isa.h"
#include "kernels/model/fp32_lm.h"
#include "kernels/model/linear_simd.h"
#include "kernels/model/model.h"
#include "kernels/model/parallel.h"
#include "kernels/model/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace ispsim;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Sum of n int64 values with four AVX2 accumulators where available: the
// loop must be limited by memory, not by the adds.
#if defined(__x86_64__)
__attribute__((target("avx2"))) int64_t stream_sum_avx2(const int64_t* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 16 <= n; i += 16) {
    a0 = _mm256_add_epi64(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 4)));
    a2 = _mm256_add_epi64(a2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
    a3 = _mm256_add_epi64(a3, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 12)));
  }
  __m256i s = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  int64_t out[4];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), s);
  return out[0] + out[1] + out[2] + out[3];
}
#endif

int64_t stream_sum(const int64_t* p, size_t n) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) return stream_sum_avx2(p, n);
#endif
  int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i + 4 <= n; i += 4) s0 += p[i], s1 += p[i + 1], s2 += p[i + 2], s3 += p[i + 3];
  return s0 + s1 + s2 + s3;
}

// Per CPU second of the reading thread, so other jobs' time slices do not count.
double stream_read_gbps() {
  const size_t n = (size_t{512} << 20) / sizeof(int64_t);
  std::vector<int64_t> buf(n);
  for (size_t i = 0; i < n; ++i) buf[i] = static_cast<int64_t>(i);
  double best = 0;
  volatile int64_t sink = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const double c0 = thread_cpu_seconds();
    sink = sink + stream_sum(buf.data(), n);
    best = std::max(best, static_cast<double>(n * sizeof(int64_t)) / (thread_cpu_seconds() - c0) / 1e9);
  }
  return best;
}

// The int8 kernel on `tokens` input rows at every supported level: decode's
// GEMV (tokens = 1, weights from DRAM when they exceed the caches) and the
// prefill GEMM (the amx level runs it on AMX tiles).
void bench_gemm(int tokens, int rows, int cols, int reps) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> d(-127, 127);
  std::vector<int8_t> W(static_cast<size_t>(rows) * cols), X(static_cast<size_t>(tokens) * cols);
  for (auto& v : W) v = static_cast<int8_t>(d(rng));
  for (auto& v : X) v = static_cast<int8_t>(d(rng));
  const int groups = (cols + 127) / 128;
  std::vector<integer::Dyadic> act(static_cast<size_t>(tokens) * groups, integer::Dyadic{12345, 20}),
      wsc(static_cast<size_t>(rows) * groups, integer::Dyadic{1234567, 30});
  const integer::PackedS8 packed = integer::pack_s8(W.data(), rows, cols, 128, wsc.data());
  std::vector<int32_t> Y(static_cast<size_t>(tokens) * rows);
  for (model::Isa isa : model::supported_isas()) {
    model::set_active_isa(isa);
    auto run = [&] {
      integer::gemm_s8_grouped(W.data(), X.data(), tokens, rows, cols, 128, act.data(), wsc.data(), Y.data(), &packed);
    };
    run();
    const double c0 = thread_cpu_seconds();
    for (int r = 0; r < reps; ++r) run();
    const double t = (thread_cpu_seconds() - c0) / reps;
    if (tokens == 1)
      std::printf("  gemv int8 %6d x %-5d (%7.2f MB) %-7s group-wise  %8.3f ms  %6.2f GB/s of weights (per CPU second)\n",
                  rows, cols, W.size() / 1e6, model::isa_name(isa), t * 1e3, W.size() / t / 1e9);
    else
      std::printf("  gemm int8 %d tokens x %d x %-5d %-7s group-wise  %8.3f ms  %7.1f G multiply-adds/s (per CPU second)\n",
                  tokens, rows, cols, model::isa_name(isa), t * 1e3, static_cast<double>(tokens) * W.size() / t / 1e9);
  }
}

// The FP32 linear layer on one token (decode's GEMV) at every supported level,
// weights from DRAM when they exceed the caches.
void bench_gemv_fp32(int rows, int cols, int reps) {
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> W(static_cast<size_t>(rows) * cols), x(cols), y(rows);
  for (float& v : W) v = d(rng);
  for (float& v : x) v = d(rng);
  for (model::Isa isa : model::supported_isas()) {
    auto run = [&] { model::linear_isa(isa, x.data(), 1, cols, W.data(), nullptr, rows, 0, rows, y.data()); };
    run();
    const double c0 = thread_cpu_seconds();
    for (int r = 0; r < reps; ++r) run();
    const double t = (thread_cpu_seconds() - c0) / reps, bytes = static_cast<double>(W.size() * sizeof(float));
    std::printf("  gemv fp32 %6d x %-5d (%7.2f MB) %-7s             %8.3f ms  %6.2f GB/s of weights (per CPU second)\n",
                rows, cols, bytes / 1e6, model::isa_name(isa), t * 1e3, bytes / t / 1e9);
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Speeds {
  double prefill = 0, decode = 0;            // tokens per wall second
  double prefill_cpu = 0, decode_cpu = 0;    // tokens per CPU second of the process (meaningful at 1 thread)
};

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// One batched forward of `prefill` tokens; then a `prompt`-token prompt and
// `decode` single-token forwards (only these are timed for decode).
Speeds engine_speeds(model::CausalLm& lm, const std::vector<int>& tokens, int prefill, int prompt, int decode) {
  Speeds s;
  std::vector<float> logits;
  lm.reset();
  auto t0 = Clock::now();
  double c0 = process_cpu_seconds();
  lm.forward(tokens.data(), prefill, false, logits);
  s.prefill = prefill / seconds_since(t0);
  s.prefill_cpu = prefill / (process_cpu_seconds() - c0);
  lm.reset();
  lm.forward(tokens.data(), prompt, false, logits);
  t0 = Clock::now();
  c0 = process_cpu_seconds();
  for (int i = 0; i < decode; ++i) lm.forward(&tokens[prompt + i], 1, false, logits);
  s.decode = decode / seconds_since(t0);
  s.decode_cpu = decode / (process_cpu_seconds() - c0);
  return s;
}

int64_t fp32_weight_bytes(const model::Model& m) {
  int64_t n = m.weights.output_matrix().size() + m.config.hidden_size;
  for (const auto& l : m.weights.layers) n += l.wq.size() + l.wk.size() + l.wv.size() + l.wo.size() + l.w_gate.size() + l.w_up.size() + l.w_down.size();
  return n * 4;
}

// llama.cpp's llama-bench, one run: pp<prefill>, pp<prompt> and pp<prompt>+tg<decode>;
// decode tokens/s = decode / (t(pp+tg) - t(pp<prompt>)), as ispsim measures it.
struct LlamaCpp {
  std::string bench;
  Speeds run(const std::string& gguf, int threads, int prefill, int prompt, int decode) const {
    const std::string cmd = bench + " -m '" + gguf + "' -t " + std::to_string(threads) + " -r 1 -o jsonl -n 0 -p " +
                            std::to_string(prefill) + "," + std::to_string(prompt) + " -pg " + std::to_string(prompt) +
                            "," + std::to_string(decode) + " 2>/dev/null";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) throw BadInput("--llama-bench", "cannot run '" + cmd + "'");
    std::map<std::pair<int, int>, double> seconds;  // (n_prompt, n_gen) -> average seconds
    char line[65536];
    while (std::fgets(line, sizeof line, pipe)) {
      boost::system::error_code ec;
      const boost::json::value v = boost::json::parse(line, ec);
      if (ec || !v.is_object()) continue;
      const auto& o = v.as_object();
      if (!o.contains("n_prompt") || !o.contains("n_gen") || !o.contains("avg_ns")) continue;
      seconds[{static_cast<int>(o.at("n_prompt").to_number<double>()), static_cast<int>(o.at("n_gen").to_number<double>())}] =
          o.at("avg_ns").to_number<double>() * 1e-9;
    }
    const int status = pclose(pipe);
    const auto pp = seconds.find({prefill, 0}), short_pp = seconds.find({prompt, 0}), pg = seconds.find({prompt, decode});
    if (status != 0 || pp == seconds.end() || short_pp == seconds.end() || pg == seconds.end())
      throw BadInput("--llama-bench", "'" + cmd + "' failed or printed no pp/tg results (exit status " +
                                          std::to_string(status) + ")");
    return Speeds{prefill / pp->second, decode / (pg->second - short_pp->second)};
  }
};

struct Options {
  std::string model_dir, calib_file, llama_bench, gguf_q8, gguf_f32;
  int prefill = 512, prompt = 32, decode = 64, rounds = 3;
  std::vector<int> threads = {1, 2};
  bool random = true, kernels_only = false;
};

void bench_model(const std::string& name, const model::Model& m, const std::vector<int>& calib,
                 const std::vector<int>& tokens, const Options& o, double bandwidth) {
  std::printf("\n%s: %d layers, hidden %d, %d heads / %d KV heads, FFN %d, vocab %d\n", name.c_str(),
              m.config.num_layers, m.config.hidden_size, m.config.num_heads, m.config.num_kv_heads, m.config.ffn_size,
              m.config.vocab_size);
  const int capacity = std::max(o.prefill, o.prompt + o.decode);
  integer::IntegerOptions io;
  io.calibration_window = std::min<int>(256, static_cast<int>(calib.size()));
  auto t0 = Clock::now();
  auto int_lm = integer::make_quantized_lm(m, io, calib, capacity);
  std::printf("  integer model built (calibration over %zu tokens) in %.1f s\n", calib.size(), seconds_since(t0));
  const auto& im = static_cast<integer::IntegerLm&>(*int_lm).integer_model();
  model::Fp32Lm fp32(m, capacity);
  const double int_bytes = static_cast<double>(im.weight_bytes_per_token()), fp_bytes = static_cast<double>(fp32_weight_bytes(m));
  const bool with_llama = !o.llama_bench.empty();
  LlamaCpp llama{o.llama_bench};
  struct Row {
    std::vector<double> ours_prefill, ours_decode, theirs_prefill, theirs_decode, r_prefill, r_decode, cpu_prefill,
        cpu_decode;
  };
  std::map<std::pair<int, int>, Row> rows;  // (engine 0 = INT8 / 1 = FP32, threads)
  for (int round = 0; round < o.rounds; ++round) {
    for (int threads : o.threads)
      for (int engine = 0; engine < 2; ++engine) {
        model::set_engine_threads(threads);
        model::CausalLm& lm = engine == 0 ? *int_lm : static_cast<model::CausalLm&>(fp32);
        const Speeds ours = engine_speeds(lm, tokens, o.prefill, o.prompt, o.decode);
        model::set_engine_threads(1);
        Row& row = rows[{engine, threads}];
        row.ours_prefill.push_back(ours.prefill);
        row.ours_decode.push_back(ours.decode);
        row.cpu_prefill.push_back(ours.prefill_cpu);
        row.cpu_decode.push_back(ours.decode_cpu);
        if (with_llama) {
          const Speeds theirs = llama.run(engine == 0 ? o.gguf_q8 : o.gguf_f32, threads, o.prefill, o.prompt, o.decode);
          row.theirs_prefill.push_back(theirs.prefill);
          row.theirs_decode.push_back(theirs.decode);
          row.r_prefill.push_back(ours.prefill / theirs.prefill);
          row.r_decode.push_back(ours.decode / theirs.decode);
        }
        std::fprintf(stderr, "  round %d/%d, %s, %d thread(s) done\n", round + 1, o.rounds, engine == 0 ? "INT8" : "FP32",
                     threads);
      }
  }
  std::printf("  medians of %d interleaved rounds, tokens per wall second (prefill: one %d-token prompt; decode: %d "
              "tokens after a %d-token prompt)\n",
              o.rounds, o.prefill, o.decode, o.prompt);
  if (with_llama)
    std::printf("  | engine | threads | ispsim prefill | llama.cpp prefill | ratio | ispsim decode | llama.cpp decode | ratio | decode weight stream |\n"
                "  |---|---|---|---|---|---|---|---|---|\n");
  else
    std::printf("  | engine | threads | ispsim prefill | ispsim decode | per CPU second: prefill, decode | decode weight stream | bandwidth bound (1 thread) |\n"
                "  |---|---|---|---|---|---|---|\n");
  for (const auto& [key, row] : rows) {
    const double bytes = key.first == 0 ? int_bytes : fp_bytes, decode = median(row.ours_decode);
    const double gbps = (key.second == 1 ? median(row.cpu_decode) : decode) * bytes / 1e9;
    const char* label = key.first == 0 ? "INT8 vs Q8_0" : "FP32 vs F32";
    char stream[128];
    std::snprintf(stream, sizeof stream, "%.2f GB/s %s (%.0f %% of %.2f)", gbps,
                  key.second == 1 ? "per CPU s" : "per wall s", 100 * gbps / bandwidth, bandwidth);
    if (with_llama)
      std::printf("  | %s | %d | %.1f tok/s | %.1f tok/s | %.2f | %.1f tok/s | %.1f tok/s | %.2f | %s |\n", label, key.second,
                  median(row.ours_prefill), median(row.theirs_prefill), median(row.r_prefill), decode,
                  median(row.theirs_decode), median(row.r_decode), stream);
    else
      std::printf("  | %s | %d | %.1f tok/s | %.1f tok/s | %.1f, %.1f tok/s | %s | %.1f tok/s |\n",
                  key.first == 0 ? "INT8" : "FP32", key.second, median(row.ours_prefill), decode,
                  median(row.cpu_prefill), median(row.cpu_decode), stream, bandwidth * 1e9 / bytes);
  }
  std::printf("  weights per decoded token: INT8 %.2f MB, FP32 %.2f MB\n", int_bytes / 1e6, fp_bytes / 1e6);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(path, "cannot open file");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<int> parse_threads(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const int n = std::atoi(item.c_str());
    if (n < 1 || n > 256) throw BadInput("--threads", "'" + text + "' must list counts between 1 and 256");
    out.push_back(n);
  }
  if (out.empty()) throw BadInput("--threads", "is empty");
  return out;
}

const char* kUsage =
    "usage: ispsim_bench_engine [--model DIR --calib FILE] [--prefill N] [--prompt N] [--decode N] [--threads 1,2]\n"
    "                           [--isa scalar|avx2|avx512|amx|best] [--rounds N] [--no-random] [--kernels-only]\n"
    "                           [--llama-bench BIN --gguf-q8 FILE --gguf-f32 FILE]\n";

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw BadInput(a, "needs a value");
        return argv[++i];
      };
      auto count = [&](int min) {
        const std::string v = next();
        const int n = std::atoi(v.c_str());
        if (n < min) throw BadInput(a, "must be an integer >= " + std::to_string(min) + ", got '" + v + "'");
        return n;
      };
      if (a == "--model") o.model_dir = next();
      else if (a == "--calib") o.calib_file = next();
      else if (a == "--prefill") o.prefill = count(1);
      else if (a == "--prompt") o.prompt = count(1);
      else if (a == "--decode") o.decode = count(1);
      else if (a == "--rounds") o.rounds = count(1);
      else if (a == "--threads") o.threads = parse_threads(next());
      else if (a == "--isa") model::set_active_isa(model::parse_isa(next(), "--isa"));
      else if (a == "--llama-bench") o.llama_bench = next();
      else if (a == "--gguf-q8") o.gguf_q8 = next();
      else if (a == "--gguf-f32") o.gguf_f32 = next();
      else if (a == "--no-random") o.random = false;
      else if (a == "--kernels-only") o.random = false, o.kernels_only = true;
      else throw BadInput(a, std::string("unknown argument\n") + kUsage);
    }
    const bool any_llama = !o.llama_bench.empty() || !o.gguf_q8.empty() || !o.gguf_f32.empty();
    if (any_llama && (o.llama_bench.empty() || o.gguf_q8.empty() || o.gguf_f32.empty()))
      throw BadInput("--llama-bench", "needs --gguf-q8 and --gguf-f32 too (and they need --llama-bench)");
    for (const std::string* f : {&o.llama_bench, &o.gguf_q8, &o.gguf_f32})
      if (!f->empty() && !std::ifstream(*f)) throw BadInput(*f, "cannot open file");

    std::printf("instruction sets:");
    for (model::Isa isa : {model::Isa::kScalar, model::Isa::kAvx2, model::Isa::kAvx512, model::Isa::kAmx}) {
      const std::string why = model::isa_unsupported_reason(isa);
      std::printf(" %s %s;", model::isa_name(isa), why.empty() ? "yes" : ("no (" + why + ")").c_str());
    }
    std::printf(" kernels use %s\n", model::isa_name(model::active_isa()));
    if (!any_llama)
      std::printf("llama.cpp: not compared (point --llama-bench at a llama.cpp build's llama-bench and --gguf-q8/--gguf-f32 "
                  "at GGUF files of the same shape; see bench/README.md)\n");
    const double bw = stream_read_gbps();
    std::printf("memory: single-thread streaming read %.2f GB/s (512 MiB buffer, best of 5, per CPU second)\n", bw);
    std::printf("int8 GEMV and prefill GEMM, FP32 GEMV kernels at each level:\n");
    const model::Isa chosen = model::active_isa();  // the kernels run at every level, the models at this one
    bench_gemm(1, 1536, 576, 2000);
    bench_gemm(1, 49152, 576, 20);
    bench_gemm(512, 1536, 576, 3);
    bench_gemv_fp32(49152, 576, 10);
    model::set_active_isa(chosen);
    if (o.kernels_only) return 0;
    if (o.random) {
      model::Model m = integer::make_random_model(integer::smollm2_135m_config(), 7);
      std::mt19937 rng(3);
      std::uniform_int_distribution<int> d(0, m.config.vocab_size - 1);
      std::vector<int> calib(64), tokens(std::max(o.prefill, o.prompt + o.decode));
      for (int& t : calib) t = d(rng);
      for (int& t : tokens) t = d(rng);
      bench_model("random-weight model, SmolLM2-135M shape", m, calib, tokens, o, bw);
    }
    if (!o.model_dir.empty()) {
      model::Model m = model::load_model(o.model_dir);
      model::Tokenizer tok(o.model_dir + "/tokenizer.json");
      if (o.calib_file.empty()) throw BadInput("--calib", "a calibration text file is needed with --model");
      std::vector<int> calib = tok.encode(read_text(o.calib_file), o.calib_file);
      if (calib.size() > 2048) calib.resize(2048);
      std::vector<int> tokens = calib;
      while (static_cast<int>(tokens.size()) < std::max(o.prefill, o.prompt + o.decode))
        tokens.insert(tokens.end(), calib.begin(), calib.end());
      Options trained = o;
      trained.llama_bench.clear();  // the GGUF files have the random model's shape
      trained.prefill = std::min(o.prefill, m.config.max_positions);
      trained.decode = std::min(o.decode, m.config.max_positions - o.prompt);
      if (trained.decode < 1) throw BadInput("--prompt", "leaves no room to decode in the model's context");
      bench_model("trained model " + o.model_dir, m, calib, tokens, trained, bw);
    }
  } catch (const BadInput& e) {
    std::fprintf(stderr, "ispsim_bench_engine: %s\n", e.what());
    return 2;
  }
  return 0;
}
