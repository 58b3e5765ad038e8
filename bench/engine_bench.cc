// Decode speed of the integer-only engine against the machine's memory
// bandwidth, measured in the same run:
//   1. single-thread streaming read bandwidth (sum over a 512 MiB buffer, best of 5);
//   2. the int8 GEMV kernel alone (AVX2 and portable) on a cache-resident and a
//      DRAM-sized matrix;
//   3. decode tokens/s and achieved weight-streaming GB/s for a random-weight
//      model with SmolLM2-135M's shape and, when present, the trained model,
//      for the integer engine (INT8 weights) and the FP32 reference.
// GB = 10^9 bytes. Decode is single-threaded, as is the bandwidth figure.
// Rates are computed from the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so
// that a machine shared with other jobs does not count their time slices; the
// wall-clock time is printed next to it.
//
//   ispsim_bench_engine [--model DIR] [--calib FILE] [--prompt N] [--decode N] [--no-random] [--kernels-only]
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "kernels/int/gemv_int8.h"
#include "kernels/int/quantized_lm.h"
#include "kernels/int/random_model.h"
#include "kernels/model/fp32_lm.h"
#include "kernels/model/model.h"
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

// CPU and wall seconds of one timed region.
struct Timer {
  double cpu0 = thread_cpu_seconds();
  Clock::time_point wall0 = Clock::now();
  double cpu() const { return thread_cpu_seconds() - cpu0; }
  double wall() const { return seconds_since(wall0); }
};

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

double stream_read_gbps() {
  const size_t n = (size_t{512} << 20) / sizeof(int64_t);
  std::vector<int64_t> buf(n);
  for (size_t i = 0; i < n; ++i) buf[i] = static_cast<int64_t>(i);
  double best = 0;
  volatile int64_t sink = 0;
  for (int rep = 0; rep < 5; ++rep) {
    Timer timer;
    sink = sink + stream_sum(buf.data(), n);
    const double t = timer.cpu();
    best = std::max(best, static_cast<double>(n * sizeof(int64_t)) / t / 1e9);
  }
  return best;
}

void bench_gemv(int rows, int cols, int reps) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> d(-127, 127);
  std::vector<int8_t> W(static_cast<size_t>(rows) * cols), x(cols);
  for (auto& v : W) v = static_cast<int8_t>(d(rng));
  for (auto& v : x) v = static_cast<int8_t>(d(rng));
  std::vector<int32_t> y(rows);
  for (bool simd : {true, false}) {
    if (simd && !integer::simd_available()) continue;
    integer::set_simd_enabled(simd);
    integer::gemv_s8(W.data(), x.data(), rows, cols, y.data());  // warm-up
    Timer timer;
    for (int r = 0; r < reps; ++r) integer::gemv_s8(W.data(), x.data(), rows, cols, y.data());
    const double t = timer.cpu() / reps;
    std::printf("  gemv int8 %6d x %-5d (%7.2f MB) %-8s plain       %8.3f ms  %7.2f GMAC/s  %6.2f GB/s of weights\n",
                rows, cols, W.size() / 1e6, simd ? "AVX2" : "portable", t * 1e3, W.size() / t / 1e9, W.size() / t / 1e9);
    // The engine's variant: group-wise scales (g = 128) applied per (row, group).
    const int groups = (cols + 127) / 128;
    std::vector<integer::Dyadic> act(groups, integer::Dyadic{12345, 20}), wsc(static_cast<size_t>(rows) * groups,
                                                                              integer::Dyadic{1234567, 30});
    Timer grouped;
    for (int r = 0; r < reps; ++r) integer::gemv_s8_grouped(W.data(), x.data(), rows, cols, 128, act.data(), wsc.data(), y.data());
    const double tg = grouped.cpu() / reps;
    std::printf("  gemv int8 %6d x %-5d (%7.2f MB) %-8s group-wise  %8.3f ms  %7.2f GMAC/s  %6.2f GB/s of weights\n",
                rows, cols, W.size() / 1e6, simd ? "AVX2" : "portable", tg * 1e3, W.size() / tg / 1e9, W.size() / tg / 1e9);
  }
  integer::set_simd_enabled(true);
}

// Decode tokens per CPU second after a prompt of `prompt` tokens (wall time in *wall).
double decode_speed(model::CausalLm& lm, const std::vector<int>& tokens, int prompt, int decode, double* wall) {
  std::vector<float> logits;
  lm.reset();
  lm.forward(tokens.data(), prompt, false, logits);
  Timer timer;
  for (int i = 0; i < decode; ++i) lm.forward(&tokens[prompt + i], 1, false, logits);
  *wall = timer.wall();
  return decode / timer.cpu();
}

int64_t fp32_weight_bytes(const model::Model& m) {
  int64_t n = m.weights.output_matrix().size() + m.config.hidden_size;
  for (const auto& l : m.weights.layers) n += l.wq.size() + l.wk.size() + l.wv.size() + l.wo.size() + l.w_gate.size() + l.w_up.size() + l.w_down.size();
  return n * 4;
}

void bench_model(const std::string& name, const model::Model& m, const std::vector<int>& calib,
                 const std::vector<int>& tokens, int prompt, int decode, double bandwidth) {
  std::printf("\n%s: %d layers, hidden %d, %d heads / %d KV heads, FFN %d, vocab %d\n", name.c_str(),
              m.config.num_layers, m.config.hidden_size, m.config.num_heads, m.config.num_kv_heads, m.config.ffn_size,
              m.config.vocab_size);
  const int capacity = prompt + decode;
  integer::IntegerOptions o;
  o.calibration_window = std::min<int>(256, static_cast<int>(calib.size()));
  auto t0 = Clock::now();
  auto lm = integer::make_quantized_lm(m, o, calib, capacity);
  std::printf("  integer model built (calibration over %zu tokens) in %.1f s\n", calib.size(), seconds_since(t0));
  const auto& im = static_cast<integer::IntegerLm&>(*lm).integer_model();
  const double int_bytes = static_cast<double>(im.weight_bytes_per_token());
  double int_wall = 0, fp_wall = 0;
  const double int_tps = decode_speed(*lm, tokens, prompt, decode, &int_wall);
  model::Fp32Lm fp32(m, capacity);
  const double fp_bytes = static_cast<double>(fp32_weight_bytes(m));
  const double fp_tps = decode_speed(fp32, tokens, prompt, decode, &fp_wall);
  std::printf("  decode after a %d-token prompt, %d tokens, 1 thread:\n", prompt, decode);
  for (auto [label, tps, bytes, wall] :
       {std::tuple{"integer (INT8)", int_tps, int_bytes, int_wall}, {"FP32 reference", fp_tps, fp_bytes, fp_wall}}) {
    const double gbps = tps * bytes / 1e9;
    std::printf("    %-15s %8.2f tokens/s  %7.2f ms/token (wall %7.2f ms/token)  %7.2f MB weights/token  %6.2f GB/s = "
                "%5.1f %% of the measured %.2f GB/s (bandwidth bound %.1f tokens/s)\n",
                label, tps, 1e3 / tps, 1e3 * wall / decode, bytes / 1e6, gbps, 100 * gbps / bandwidth, bandwidth,
                bandwidth * 1e9 / bytes);
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(path, "cannot open file");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_dir, calib_file;
  int prompt = 32, decode = 64;
  bool random = true, kernels_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    if (a == "--model") model_dir = next();
    else if (a == "--calib") calib_file = next();
    else if (a == "--prompt") prompt = std::atoi(next().c_str());
    else if (a == "--decode") decode = std::atoi(next().c_str());
    else if (a == "--no-random") random = false;
    else if (a == "--kernels-only") random = false, kernels_only = true;
    else { std::fprintf(stderr, "unknown argument '%s'\nusage: ispsim_bench_engine [--model DIR] [--calib FILE] [--prompt N] [--decode N] [--no-random] [--kernels-only]\n", a.c_str()); return 2; }
  }
  if (prompt < 1 || decode < 1) { std::fprintf(stderr, "--prompt and --decode must be >= 1\n"); return 2; }
  try {
    const double bw = stream_read_gbps();
    std::printf("memory: single-thread streaming read %.2f GB/s (512 MiB buffer, best of 5, per CPU second)\n", bw);
    std::printf("int8 GEMV kernel (%s available):\n", integer::simd_available() ? "AVX2" : "no AVX2");
    bench_gemv(1536, 576, 2000);
    bench_gemv(49152, 576, 20);
    if (kernels_only) return 0;
    if (random) {
      model::Model m = integer::make_random_model(integer::smollm2_135m_config(), 7);
      std::mt19937 rng(3);
      std::uniform_int_distribution<int> d(0, m.config.vocab_size - 1);
      std::vector<int> calib(64), tokens(prompt + decode);
      for (int& t : calib) t = d(rng);
      for (int& t : tokens) t = d(rng);
      bench_model("random-weight model, SmolLM2-135M shape", m, calib, tokens, prompt, decode, bw);
    }
    if (!model_dir.empty()) {
      model::Model m = model::load_model(model_dir);
      model::Tokenizer tok(model_dir + "/tokenizer.json");
      if (calib_file.empty()) throw BadInput("--calib", "a calibration text file is needed with --model");
      std::vector<int> calib = tok.encode(read_text(calib_file), calib_file);
      if (calib.size() > 2048) calib.resize(2048);
      std::vector<int> tokens = calib;
      while (static_cast<int>(tokens.size()) < prompt + decode) tokens.insert(tokens.end(), calib.begin(), calib.end());
      bench_model("trained model " + model_dir, m, calib, tokens, prompt, decode, bw);
    }
  } catch (const BadInput& e) {
    std::fprintf(stderr, "ispsim_bench_engine: %s\n", e.what());
    return 2;
  }
  return 0;
}
