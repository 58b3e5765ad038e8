// ispsim trace -> Chakra execution trace.
//
// Every op becomes one Node with the published fields a Chakra consumer reads
// (type, data_deps, num_ops, tensor_size, duration_micros) and the attribute
// "ispsim.op" holding the serialized op; the GlobalMetadata holds the header in
// "ispsim.header". chakra_import() restores the trace exactly from these.
#pragma once

#include <cstdint>
#include <string>

#include "traces/chakra/chakra_et.pb.h"
#include "traces/trace.pb.h"

namespace ispsim::chakra {

inline constexpr const char* kOpAttr = "ispsim.op";
inline constexpr const char* kHeaderAttr = "ispsim.header";

struct ExportCounts {
  uint64_t comp_nodes = 0;
  uint64_t mem_load_nodes = 0;
  uint64_t mem_store_nodes = 0;
};

// Writes the ops of `program` (every program when PROGRAM_UNSPECIFIED) of the
// trace at `trace_path` to `chakra_path`. BadInput for a bad trace or a program
// the trace does not hold.
ExportCounts export_chakra(const std::string& trace_path, const std::string& chakra_path,
                           trace::Program program = trace::PROGRAM_UNSPECIFIED);

// The op's kind as the trace schema names it ("gemm", "kv_append", ...).
std::string op_kind_name(const trace::Op& op);

// The Chakra node of one op (the header gives the model shape for num_ops).
Node chakra_node(const trace::Op& op, const trace::Header& header);

}  // namespace ispsim::chakra
