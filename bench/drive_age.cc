// Ages a drive of the default flash and FTL parameters (schema defaults, the
// MemLLM-study platforms' drive) and saves its state for `ispsim run
// --drive-state`:
//
//   ispsim_age_drive OUT.ftl [blocks per plane = 2048 (1 TiB)] [overwrite run = 64 pages]
//
// The drive is filled sequentially, then overwritten in runs of the given
// length at uniformly random logical pages until the WAF of two consecutive
// windows agrees (ftl::precondition; KV-sized runs keep the mapping to about
// one extent per run, so an aged 1 TiB drive fits in memory). Prints the
// windows' WAF, the mapping's size and the time taken.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "models/ssd/ftl/drive_state.h"
#include "models/ssd/ftl/precondition.h"
#include "schema/resolve.h"

int main(int argc, char** argv) {
  using namespace ispsim;
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: ispsim_age_drive OUT.ftl [blocks_per_plane] [run_pages]\n");
    return 2;
  }
  schema::NandParams nand;
  nand.set_blocks_per_plane(argc > 2 ? uint32_t(std::strtoul(argv[2], nullptr, 10)) : 2048);
  const uint64_t run = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 64;
  try {
    const auto config =
        ftl::FtlConfig::from_params(schema::resolved(nand, "nand"), schema::resolved(schema::FtlParams(), "ftl"));
    const auto start = std::chrono::steady_clock::now();
    ftl::Ftl drive(config);
    const ftl::PreconditionReport report = ftl::precondition(drive, run);
    ftl::DriveState::save(drive, argv[1]);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("drive: %llu physical / %llu logical pages of %u bytes; overwrite runs of %llu pages\n",
                (unsigned long long)config.geometry.physical_pages(), (unsigned long long)drive.logical_pages(),
                config.geometry.page_bytes, (unsigned long long)run);
    std::printf("window WAF:");
    for (double waf : report.window_waf) std::printf(" %.3f", waf);
    std::printf("\n%s after %zu windows; WAF since fresh %.3f; %llu extents, %.1f MB of simulator memory for the "
                "mapping; %.1f s\n",
                report.settled ? "settled" : "NOT settled", report.window_waf.size(), drive.waf(),
                (unsigned long long)drive.mapping().entries(), double(drive.mapping().memory_bytes()) / 1e6, seconds);
    return 0;
  } catch (const BadInput& e) {
    std::fprintf(stderr, "ispsim_age_drive: %s\n", e.what());
    return 2;
  }
}
