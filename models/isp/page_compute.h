// The PageCompute role: the compute unit of one ISP accelerator (per channel,
// or the central one of MemLLM-Base/Fused), as the attention engine sees it.
//
// The engine (attention_engine.h) owns the dataflow: which KV tiles an op
// reads, what the Stream Filter's functional semantics make of them (kept /
// substituted / dropped / forwarded entries: which tokens the attention sees),
// the NAND stream, the scratchpad page buffers and the reduction. The role
// owns the cost of computing one tile: cycles, MACs, scratchpad/SRAM traffic
// and energy, and the mode it runs an op in. One tile = the entries of one KV
// head of a NAND page (or of a tile of own tokens that came with the command)
// against the n = R x g query row-heads of the pass. Per tile and mode it does
// the op's two matrix products (Q.K^T, then P.V: a GEMV in decode, n = g, a thin
// GEMM in the fused / recomputation prefill) and the online-softmax correction
// between them (reduce-max, exp, reduce-sum) that turns the tile into a
// partial output for the LSE reduction.
//
// Implementations register by name in isp::register_all() (register_all.h);
// a platform picks one with modules.isp_accelerator. Their parameters are
// IspParams (schema/isp.proto): the shared technology and budget
// fields (clock, energies per operation, static power) plus, for a plug-in,
// its own sub-message.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/core/registry.h"
#include "models/isp/isp_config.h"
#include "models/isp/stream_filter.h"
#include "schema/isp.pb.h"

namespace ispsim::isp {

// The op's shape as one tile sees it.
struct TileShape {
  uint64_t row_heads = 0;  // n = query rows of the pass x (heads / kv_heads)
  uint32_t head_dim = 0;   // d
  uint32_t kv_bits = 0;    // stored K/V element
  uint32_t q_bits = 0;     // activation (Q, scores) element
};

// The cost of one tile. cycles = compute_cycles + sram_io_cycles (the two are
// serial within a tile; the engine overlaps tiles with the NAND stream).
struct TileCost {
  uint64_t cycles = 0;
  uint64_t compute_cycles = 0;   // MACs and the exposed softmax correction
  uint64_t sram_io_cycles = 0;   // exposed scratchpad / SRAM traffic (filter pass, staging, exchange)
  uint64_t macs = 0;             // multiply-accumulates done (padded tokens included)
  uint64_t computed_tokens = 0;  // entries that went through the MACs (kept, or kept + padding)
  uint64_t scratchpad_bytes = 0; // bytes read from and written to the scratchpad / SRAM
  double energy_pj = 0;

  // Adds exposed SRAM I/O (a filter pass, staging, an exchange) to the tile.
  void add_sram_io(uint64_t io_cycles, uint64_t bytes, double pj) {
    sram_io_cycles += io_cycles;
    cycles += io_cycles;
    scratchpad_bytes += bytes;
    energy_pj += pj;
  }
};

// A mode of an accelerator is an index into its modes(); the engine names its
// waveform values (index + 1; 0 is idle) and the simd_busy_<name> statistics
// after them, so nothing outside the accelerator knows what a mode is.
using ComputeMode = unsigned;

struct ModeInfo {
  std::string name;              // [a-z0-9_]+ (a statistic and waveform value name)
  std::string busy_description;  // of the simd_busy_<name> statistic
};

class PageCompute {
 public:
  virtual ~PageCompute() = default;

  // At least one mode; the engine picks one per op with choose_mode().
  virtual const std::vector<ModeInfo>& modes() const = 0;
  // The mode for an op whose full tiles have `tokens` entries.
  virtual ComputeMode choose_mode(uint64_t tokens, const TileShape& shape) const = 0;
  // The cost of one tile of `entries` entries in `mode`; `filter` is what the
  // Stream Filter's semantics make of it (its `cycles` are the filter's own
  // time, for an accelerator that has one). A tile with nothing kept costs at
  // most the pass that finds that out.
  virtual TileCost tile_cost(ComputeMode mode, const FilterResult& filter, uint32_t entries,
                             const TileShape& shape) const = 0;
  // Picoseconds of `cycles` cycles of this accelerator's clock.
  virtual uint64_t cycles_to_ps(uint64_t cycles) const = 0;
  // Static power of one accelerator, and its peak power (static + every MAC
  // unit busy): the power budget the accelerators are compared under.
  virtual double static_power_w() const = 0;
  virtual double peak_power_w() const = 0;
};

// The IspParams fields the accelerator registered as `accelerator` reads, the
// attention engine's own included (a sub-message's name stands for all its
// fields), in field order: from the fields' `read_by` option (schema/options.proto).
std::vector<std::string> parameters_read_by(const std::string& accelerator);

// Implementations are built from the platform's IspParams, already converted
// once into an IspConfig by the caller (its own sub-messages are read from the
// params; BadInput names `where`).
using PageComputeFactory =
    core::Factory<PageCompute, const IspConfig&, const schema::IspParams&, const std::string&>;

// The factory of the role, filled by isp::register_all(). Its role name is the
// platform parameter that selects an implementation, so an unknown name reads
// "modules.isp_accelerator: unknown implementation 'x' (known: ...)".
PageComputeFactory& accelerators();

}  // namespace ispsim::isp
