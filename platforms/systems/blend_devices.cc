#include "platforms/systems/blend_devices.h"

#include <algorithm>
#include <map>

#include "common/error.h"
#include "traces/trace_io.h"
#include "traces/trace_validator.h"

namespace ispsim::systems {

// The program's ops, checked for what this system can run.
trace::InternedOps read_program(const std::string& path, trace::Program program, const std::string& platform,
                               trace::Header& header) {
  trace::TraceReader reader(path);
  header = reader.header();
  bool declared = false;
  for (const auto& p : header.programs()) declared |= p.program() == program;
  if (!declared)
    throw BadInput(path, "has no " + trace::Program_Name(program) + " program, which platform '" + platform +
                             "' runs");
  trace::InternedOps ops;
  trace::Op op;
  while (reader.next(op)) {
    if (op.program() != program) continue;
    if (op.has_dict_encode() || op.has_dict_attention())
      throw BadInput(path, "op " + std::to_string(op.id()) + ": dictionary-compressed KV is not modelled by platform '" +
                               platform + "'");
    ops.add(op);
  }
  return ops;
}

// Sizes of the KV regions the SSD must hold: the context (precomputed, per
// layer) and the most entries any layer appends.
ssd::KvSpace kv_space(const trace::Header& header, const std::vector<trace::Op>& ops) {
  ssd::KvSpace space;
  space.shape = header.model();
  for (const auto& d : header.request().documents()) space.precomputed_tokens += d.tokens();
  std::map<uint32_t, uint64_t> appended;
  for (const trace::Op& op : ops)
    if (op.has_kv_append()) {
      const trace::KvTransfer& t = op.kv_append();
      appended[op.layer()] += trace::moved_tokens(t);
    }
  for (const auto& [layer, n] : appended) space.appended_capacity = std::max(space.appended_capacity, n);
  return space;
}

// The runtime's background-write chunk: one page on every die.
uint64_t write_chunk_bytes(ssd::Ssd& ssd) {
  const nand::FlashConfig& flash = ssd.flash().config();
  return uint64_t{flash.page_bytes} * flash.channels * flash.dies_per_channel;
}

}  // namespace ispsim::systems
