#include "traces/chakra/chakra_export.h"

#include "common/error.h"
#include "traces/chakra/chakra_io.h"
#include "traces/trace_io.h"

namespace ispsim::chakra {

namespace {

template <class Set>
void add_attr(Node& node, const char* name, Set set) {
  AttributeProto* a = node.add_attr();
  a->set_name(name);
  set(*a);
}

NodeType node_type(const trace::Op& op) {
  switch (op.kind_case()) {
    case trace::Op::kKvLoad: return MEM_LOAD_NODE;
    case trace::Op::kKvAppend: return MEM_STORE_NODE;
    default: return COMP_NODE;
  }
}

// FLOPs where the trace format defines them in closed form (GEMM 2MNK, LM head
// 2 rows hidden vocab); 0 for the other ops.
int64_t flops(const trace::Op& op, const trace::ModelShape& model) {
  if (op.has_gemm()) return int64_t(2 * op.gemm().m() * op.gemm().n() * op.gemm().k());
  if (op.has_lm_head()) return int64_t(2 * op.lm_head().rows() * model.hidden() * model.vocab());
  return 0;
}

std::string node_name(const trace::Op& op) {
  const std::string kind = op_kind_name(op);
  std::string name = op.has_layer() ? "L" + std::to_string(op.layer()) + " " : "";
  return name + (op.label().empty() ? kind : kind + " " + op.label());
}

}  // namespace

std::string op_kind_name(const trace::Op& op) {
  return trace::Op::descriptor()->FindFieldByNumber(op.kind_case())->name();
}

Node chakra_node(const trace::Op& op, const trace::Header& header) {
  Node node;
  node.set_id(op.id());
  node.set_name(node_name(op));
  node.set_type(node_type(op));
  for (uint64_t dep : op.deps()) node.add_data_deps(dep);
  if (op.has_measured_duration_ns()) node.set_duration_micros((op.measured_duration_ns() + 500) / 1000);
  add_attr(node, "is_cpu_op", [](AttributeProto& a) { a.set_bool_val(false); });
  if (node.type() == COMP_NODE)
    add_attr(node, "num_ops", [&](AttributeProto& a) { a.set_int64_val(flops(op, header.model())); });
  else
    add_attr(node, "tensor_size", [&](AttributeProto& a) {
      a.set_uint64_val(op.has_kv_load() ? op.kv_load().bytes() : op.kv_append().bytes());
    });
  add_attr(node, kOpAttr, [&](AttributeProto& a) { a.set_bytes_val(op.SerializeAsString()); });
  return node;
}

ExportCounts export_chakra(const std::string& trace_path, const std::string& chakra_path, trace::Program program) {
  trace::TraceReader reader(trace_path);
  trace::Header header = reader.header();
  if (program != trace::PROGRAM_UNSPECIFIED) {
    trace::Header only = header;
    only.clear_programs();
    for (const trace::ProgramInfo& p : header.programs())
      if (p.program() == program) *only.add_programs() = p;
    if (only.programs_size() == 0)
      throw BadInput(trace_path, "has no program " + trace::Program_Name(program));
    header = only;
  }
  header.clear_crc32c();
  GlobalMetadata metadata;
  metadata.set_version(kChakraVersion);
  AttributeProto* a = metadata.add_attr();
  a->set_name(kHeaderAttr);
  a->set_bytes_val(header.SerializeAsString());

  ChakraWriter writer(chakra_path, metadata);
  ExportCounts counts;
  trace::Op op;
  while (reader.next(op)) {
    if (program != trace::PROGRAM_UNSPECIFIED && op.program() != program) continue;
    const Node node = chakra_node(op, header);
    writer.write(node);
    ++(node.type() == COMP_NODE ? counts.comp_nodes
       : node.type() == MEM_LOAD_NODE ? counts.mem_load_nodes : counts.mem_store_nodes);
  }
  writer.close();
  return counts;
}

}  // namespace ispsim::chakra
