#include "models/ssd/in_flash_gemv.h"

#include <cmath>

namespace ispsim::ssd {

namespace {
uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
}  // namespace

InFlashGemv::InFlashGemv(const nand::FlashConfig& flash, const nand::NandEnergy& energy, double read_speedup,
                         double mac_pj)
    : flash_(flash), energy_(energy), read_speedup_(read_speedup), mac_pj_(mac_pj) {}

InFlashGemvCost InFlashGemv::cost(uint64_t weight_bytes, uint64_t weight_elements, uint64_t rows,
                                  uint64_t input_bytes, uint64_t output_bytes) const {
  InFlashGemvCost c;
  c.pages = ceil_div(weight_bytes, flash_.page_bytes);
  c.waves = ceil_div(c.pages, flash_.dies() * flash_.planes_per_die);
  c.macs = rows * weight_elements;
  const uint64_t t_read_ps = uint64_t(std::llround(double(flash_.t_read.value()) / read_speedup_));
  const uint64_t output_per_channel = ceil_div(output_bytes, flash_.channels);
  c.time = flash_.transfer_time(input_bytes) + sc_core::sc_time::from_value(c.waves * t_read_ps) +
           flash_.transfer_time(output_per_channel);
  c.nand_joules = energy_.read_joules(c.pages) +
                  energy_.transfer_joules(input_bytes * flash_.channels + output_bytes);
  c.pe_joules = double(c.macs) * mac_pj_ * 1e-12;
  return c;
}

}  // namespace ispsim::ssd
