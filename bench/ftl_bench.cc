// The FTL's write amplification against the analytic model, and the size of
// its mapping after a sequential fill of a 1 TiB drive.
//
//   ispsim_bench_ftl [warm-up drive writes = 4] [measured drive writes = 4] [lines = 256]
//
// A drive of 2 channels x 2 dies x 1 plane with 64-page blocks (256-page
// lines) is filled sequentially, then overwritten page by page at uniform
// random logical pages: the WAF of the measured writes is printed per spare
// factor and GC policy next to Desnoyers's model (models/ssd/ftl/wear.h), at
// the nominal spare factor and at the log's (one line held free for GC).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "models/ssd/ftl/ftl.h"
#include "models/ssd/ftl/wear.h"
#include "schema/resolve.h"

namespace {

using namespace ispsim;

ftl::FtlConfig config(uint32_t lines, double spare_factor, schema::FtlParams::GcPolicy policy) {
  schema::NandParams nand;
  nand.set_channels(2);
  nand.set_dies_per_channel(2);
  nand.set_planes_per_die(1);
  nand.set_blocks_per_plane(lines);
  nand.set_pages_per_block(64);
  schema::FtlParams f;
  f.set_spare_factor(spare_factor);
  f.set_gc_policy(policy);
  f.set_gc_foreground_free_ratio(0);
  return ftl::FtlConfig::from_params(schema::resolved(nand, "nand"), schema::resolved(f, "ftl"));
}

double measured_waf(const ftl::FtlConfig& c, double warmup, double measured) {
  ftl::Ftl drive(c);
  const uint64_t u = drive.logical_pages();
  drive.write(0, u);
  std::mt19937_64 rng(7);
  for (uint64_t i = 0; i < uint64_t(warmup * double(u)); ++i) drive.write(rng() % u, 1);
  const ftl::FtlCounters before = drive.counters();
  const uint64_t writes = uint64_t(measured * double(u));
  for (uint64_t i = 0; i < writes; ++i) drive.write(rng() % u, 1);
  return double(drive.counters().programs() - before.programs()) / double(writes);
}

void one_terabyte_fill() {
  schema::NandParams nand;
  nand.set_blocks_per_plane(2048);
  const auto c = ftl::FtlConfig::from_params(schema::resolved(nand, "nand"), schema::resolved(schema::FtlParams(), "ftl"));
  const auto start = std::chrono::steady_clock::now();
  ftl::Ftl drive(c);
  drive.write(0, drive.logical_pages());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("\nsequential fill of a 1 TiB drive (%llu logical pages of %u bytes): %llu extent(s), "
              "%llu bytes of simulator memory for the mapping, device page-level table %.2f GiB, %.3f s\n",
              (unsigned long long)drive.logical_pages(), c.geometry.page_bytes,
              (unsigned long long)drive.mapping().entries(), (unsigned long long)drive.mapping().memory_bytes(),
              double(drive.mapping_table_bytes()) / double(1ull << 30), seconds);
}

}  // namespace

int main(int argc, char** argv) {
  const double warmup = argc > 1 ? std::atof(argv[1]) : 4;
  const double measured = argc > 2 ? std::atof(argv[2]) : 4;
  const uint32_t lines = argc > 3 ? uint32_t(std::atoi(argv[3])) : 256;
  std::printf("uniform random single-page overwrites of a full drive: 4 planes x %u lines x 64 pages, "
              "warm-up %.1f, measured %.1f drive writes\n\n",
              lines, warmup, measured);
  std::printf("| spare factor | model WAF | model WAF, one line held free | greedy WAF | greedy / model | "
              "cost-benefit WAF | cost-benefit / model | wall time |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (double sf : {0.07, 0.14, 0.28}) {
    const auto start = std::chrono::steady_clock::now();
    const ftl::FtlConfig greedy_config = config(lines, sf, schema::FtlParams::GREEDY);
    const double nominal = ftl::greedy_waf_model(sf);
    const double model = ftl::greedy_waf_model(ftl::log_spare_factor(greedy_config));
    const double greedy = measured_waf(greedy_config, warmup, measured);
    const double cb = measured_waf(config(lines, sf, schema::FtlParams::COST_BENEFIT), warmup, measured);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("| %.2f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f s |\n", sf, nominal, model, greedy,
                greedy / model, cb, cb / model, seconds);
  }
  one_terabyte_fill();
  return 0;
}
