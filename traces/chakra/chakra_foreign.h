// Mapping the ops of a foreign Chakra trace (e.g. one converted from a PyTorch
// execution trace) onto ispsim ops, by operator name and input shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "traces/chakra/chakra_et.pb.h"
#include "traces/trace.pb.h"

namespace ispsim::chakra {

using Shape = std::vector<uint64_t>;

// The tensor shapes of an IOInfo.shapes text, one per top-level entry: "[[1, 7, 2048],
// [2048, 2048], []]" -> {{1, 7, 2048}, {2048, 2048}, {}}. Entries that are not a flat
// list of whole numbers (scalars, tensor lists) give an empty shape. nullopt when
// the text is not a list at all.
std::optional<std::vector<Shape>> parse_shapes(const std::string& text);

// The operator name without namespace and in-place suffix: "aten::add_" -> "add".
std::string base_op_name(const std::string& name);

// What one node becomes: an op kind with its sizes (program, phase, layer, ids
// and dependencies are assigned by the importer), or the reason it is not mapped.
struct MappedNode {
  std::optional<trace::Op> op;  // set when the node is modelled
  uint64_t rows = 0;            // token rows it processes (0: unknown, e.g. a norm)
  std::string unsupported;      // else: the report line's key, e.g. "COMP_NODE aten::mul"
};

MappedNode map_node(const Node& node, const trace::ModelShape& model, const std::string& where);

}  // namespace ispsim::chakra
