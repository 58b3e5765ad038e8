#include "models/nand/nand_energy.h"

#include "models/nand/flash_config.h"
#include "schema/resolve.h"

namespace ispsim::nand {

NandEnergy NandEnergy::from_params(const schema::NandParams& params, const std::string& where) {
  // tR and tPROG as the timing model uses them (rounded to picoseconds).
  return from_params(params, FlashConfig::from_params(params, where));
}

NandEnergy NandEnergy::from_params(const schema::NandParams& params, const FlashConfig& timing) {
  const schema::NandParams& p = params;
  NandEnergy e;
  const double t_read_s = timing.t_read.to_seconds();
  const double t_prog_s = timing.t_prog.to_seconds();
  e.read_j_per_page = p.vcc_v() * p.read_current_ma() * 1e-3 * t_read_s;
  e.program_j_per_page = p.vcc_v() * p.program_current_ma() * 1e-3 * t_prog_s;
  e.io_j_per_byte = p.io_energy_pj_per_bit() * 1e-12 * 8;
  e.idle_w_per_die = p.vcc_v() * p.standby_current_ua() * 1e-6;
  e.dies = timing.dies();
  return e;
}

}  // namespace ispsim::nand
