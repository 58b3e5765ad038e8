// AiF's in-flash GEMV (Lee et al., "AiF: Accelerating On-Device LLM Inference
// Using In-Flash Processing", ISCA 2025; MemLLM Sec. VI-A, Table IV): the weight
// matrix of a decode-phase linear layer is stored in the flash, and a small
// processing element next to each die's page buffer multiplies every page it
// senses by the input vector. Only the input vector goes in and the output
// vector comes out over the channels; the weights never leave the dies.
//
// Closed form (aggregate mode: the weight pages are not simulated one by one):
//   pages  = ceil(weight_bytes / page_bytes)
//   waves  = ceil(pages / (dies x planes_per_die))       every die senses one
//            multi-plane group per wave, all dies in parallel
//   t_read = tR / in_flash_read_speedup                   AiF's charge-recycling
//            read shortens sequential-wordline sensing
//   time   = transfer_time(input_bytes)                   input broadcast, once
//            per channel, all channels in parallel
//          + waves x t_read
//          + transfer_time(ceil(output_bytes / channels)) each channel returns
//            its dies' slice of the output
// The per-die PE is taken to keep pace with sensing (AiF sizes it to the page
// buffer's rate; its throughput is not published in the MemLLM paper), so a
// wave costs t_read whatever the rows. Energy: NAND read energy of every page
// sensed (nand::NandEnergy, at the full tR: the cr-read energy is not
// published), channel energy of the vectors moved, and rows x weights MACs at
// the ISP's FP16 MAC energy.
#pragma once

#include <cstdint>
#include <systemc>

#include "models/nand/flash_config.h"
#include "models/nand/nand_energy.h"

namespace ispsim::ssd {

struct InFlashGemvCost {
  uint64_t pages = 0;          // weight pages sensed
  uint64_t waves = 0;          // rounds of all dies sensing at once
  uint64_t macs = 0;           // rows x weight elements
  sc_core::sc_time time;       // from the command reaching the flash to the output at the controller
  double nand_joules = 0;      // sensing + channel transfers
  double pe_joules = 0;        // MACs
};

class InFlashGemv {
 public:
  // `read_speedup` >= 1 (SsdParams.in_flash_read_speedup); `mac_pj` the energy of one MAC.
  InFlashGemv(const nand::FlashConfig& flash, const nand::NandEnergy& energy, double read_speedup, double mac_pj);

  // One GEMV (or `rows` of them sharing the weights) over `weight_bytes` of
  // weights holding `weight_elements` elements.
  InFlashGemvCost cost(uint64_t weight_bytes, uint64_t weight_elements, uint64_t rows, uint64_t input_bytes,
                       uint64_t output_bytes) const;

 private:
  const nand::FlashConfig flash_;
  const nand::NandEnergy energy_;
  const double read_speedup_;
  const double mac_pj_;
};

}  // namespace ispsim::ssd
