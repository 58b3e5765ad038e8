// Facade for `ispsim run`: the NAND flash, a StreamReader and an Appender under
// one parent module, driven by a list of KV loads and appends.
//
//   ispsim::nand::NandStreamSystem system("nand_system", nand_params, stream_params);
//   ispsim::nand::KvRunResult r = system.run(ops);   // calls sc_start() itself
//
// Semantics (a simplified controller, stated so results can be checked by hand):
// - Ops run one after another in list order; an op starts when the previous one
//   has finished (the last page consumed or programmed). Reads and appends are
//   therefore never overlapped here (MemLLM overlaps appends with host compute,
//   which the full platform models, not this facade).
// - LOAD (layer, [token_begin, token_end), bytes): bytes / tokens is the KV size
//   of one token in this layer; a page holds floor(page_bytes / that) tokens (a
//   page-aligned tile; a token larger than a page takes ceil(that / page_bytes)
//   whole pages). The op reads every tile that overlaps the token range. Tile t of
//   layer l is flash page l * S + t of the KV region (Layout: page-interleaved
//   across channels, striped across dies), where S is the largest tile count any
//   LOAD needs in one layer, so layers follow each other without gaps.
// - APPEND (bytes): bytes are packed densely into the append region, which starts
//   after the KV region; each full page is programmed when the op runs, a partial
//   page waits for the next APPEND, and what is left after the last op is
//   programmed as one final (padded) page, reported as the "flush" step.
// - run() drives the simulation with sc_start(), so it must be called from
//   sc_main (not from a process) with no other activity pending; it may be called
//   again for another list (the KV region is laid out anew, the append pointer
//   continues).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/vcd.h"
#include "models/nand/appender.h"
#include "models/nand/flash_array.h"
#include "models/nand/layout.h"
#include "models/nand/stream_reader.h"

namespace ispsim::nand {

struct KvOp {
  enum Kind { kLoad, kAppend };
  Kind kind = kLoad;
  uint32_t layer = 0;         // LOAD only
  uint64_t token_begin = 0;   // LOAD only, inclusive
  uint64_t token_end = 0;     // LOAD only, exclusive
  uint64_t bytes = 0;         // useful KV bytes of the op
};

struct KvStepResult {
  std::string what;            // "load", "append" or "flush"
  sc_core::sc_time start, end;
  uint64_t pages = 0;          // pages read or programmed
};

struct KvRunResult {
  sc_core::sc_time total_time;   // first op start to last step end
  sc_core::sc_time read_time;    // summed over LOAD ops
  sc_core::sc_time append_time;  // summed over APPEND ops and the flush
  uint64_t pages_read = 0;
  uint64_t pages_programmed = 0;
  uint64_t bytes_read = 0;        // whole pages, bytes
  uint64_t bytes_programmed = 0;  // whole pages, bytes
  uint64_t bytes_requested = 0;   // sum of the ops' useful bytes
  double read_gbps = 0;           // bytes_read / read_time, GB = 1e9 B
  double append_gbps = 0;         // bytes_programmed / append_time
  std::vector<KvStepResult> steps;
};

// Pages [first, last) of one layer's KV region.
struct TileRange {
  uint64_t first = 0, last = 0;
};

class NandStreamSystem : public sc_core::sc_module {
 public:
  // Throws BadInput for out-of-range parameters ("nand", "stream").
  NandStreamSystem(sc_core::sc_module_name name, const schema::NandParams& nand,
                   const schema::NandStreamParams& stream);

  // Throws BadInput("kv ops", ...) for an op that makes no sense (empty token
  // range, bytes not a whole number per token, KV beyond the flash capacity).
  KvRunResult run(const std::vector<KvOp>& ops);

  FlashArray& flash() { return flash_; }
  StreamReader& reader() { return reader_; }
  Appender& appender() { return appender_; }
  void trace(vcd::Writer& writer);

 private:
  // Reads one load's pages (`tiles` of the layer whose pages start at `layer_first_page`).
  void load(uint64_t layer_first_page, const TileRange& tiles, KvRunResult& result);
  // Programs the next `count` appended pages, after the KV region's `region_pages`.
  void program(uint64_t region_pages, uint64_t count, const char* what, KvRunResult& result);
  FlashArray flash_;
  StreamReader reader_;
  Appender appender_;
  Layout layout_;
  uint64_t append_pointer_ = 0;  // pages appended so far (relative to the region start)
};

}  // namespace ispsim::nand
