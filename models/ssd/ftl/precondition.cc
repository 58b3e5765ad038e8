#include "models/ssd/ftl/precondition.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace ispsim::ftl {

namespace {

// Writes logical pages 0 .. pages - 1 in the order i -> (a i + b) mod pages, a
// coprime to pages: every page once, in an order drawn from `rng`.
void fill_permuted(Ftl& ftl, uint64_t pages, std::mt19937_64& rng) {
  uint64_t a = rng() % pages;
  while (std::gcd(a, pages) != 1) a = (a + 1) % pages;
  const uint64_t b = rng() % pages;
  uint64_t lpn = b;
  for (uint64_t i = 0; i < pages; ++i) {
    ftl.write(lpn, 1);
    lpn = (lpn + a) % pages;
  }
}

// One window of uniform random overwrites of runs of `run` pages in [0, pages),
// each starting at a multiple of `run` (`writes` pages in all, rounded up to
// whole runs); its WAF.
double overwrite_window(Ftl& ftl, uint64_t pages, uint64_t writes, uint64_t run, std::mt19937_64& rng) {
  const FtlCounters before = ftl.counters();
  for (uint64_t i = 0; i < writes; i += run) ftl.write(rng() % (pages / run) * run, run);
  const FtlCounters& after = ftl.counters();
  return double(after.programs() - before.programs()) / double(after.host_pages - before.host_pages);
}

}  // namespace

PreconditionReport precondition(Ftl& ftl, uint64_t run_pages) {
  const FtlConfig& c = ftl.config();
  std::mt19937_64 rng(c.precondition_seed);
  PreconditionReport report;
  report.fill_pages = uint64_t(std::floor(c.precondition_fill_ratio * double(ftl.logical_pages())));
  if (report.fill_pages == 0) return report;
  if (c.precondition_fill_pattern == FtlConfig::FillPattern::kSequential)
    ftl.write(0, report.fill_pages);
  else
    fill_permuted(ftl, report.fill_pages, rng);

  const uint64_t window = std::max<uint64_t>(1, uint64_t(c.precondition_window_ratio * double(ftl.logical_pages())));
  const uint64_t run = std::max<uint64_t>(1, std::min(run_pages, report.fill_pages));
  bool previous_counts = false;
  for (uint32_t i = 0; i < c.precondition_max_windows && !report.settled; ++i) {
    const bool counts = ftl.counters().block_erases > 0;  // GC was running as the window began
    const double waf = overwrite_window(ftl, report.fill_pages, window, run, rng);
    report.overwrite_pages += (window + run - 1) / run * run;
    report.settled = counts && previous_counts &&
                     std::fabs(waf - report.window_waf.back()) < c.precondition_waf_tolerance * waf;
    report.window_waf.push_back(waf);
    previous_counts = counts;
  }
  return report;
}

}  // namespace ispsim::ftl
