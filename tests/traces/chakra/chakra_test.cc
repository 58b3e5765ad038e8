// Chakra execution traces: ispsim -> Chakra -> ispsim round trips, the published
// fields a Chakra consumer reads, and the import of a foreign decoder inference
// (hand-built here as the PyTorch converter lays one out) with its report.
#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "tests/support/cli.h"
#include "tests/support/files.h"
#include "traces/chakra/chakra_export.h"
#include "traces/chakra/chakra_foreign.h"
#include "traces/chakra/chakra_import.h"
#include "traces/chakra/chakra_io.h"
#include "traces/trace_io.h"

using namespace ispsim;
using namespace ispsim::chakra;
using ispsim::testing::read_text;
using ispsim::testing::run_cli;
using ispsim::testing::scratch_dir;

namespace {

std::string scratch(const std::string& name) { return (scratch_dir() / name).string(); }
std::string sample(const std::string& name) { return std::string(ISPSIM_SOURCE_DIR) + "/traces/samples/" + name; }

std::vector<Node> read_nodes(const std::string& path) {
  ChakraReader reader(path);
  std::vector<Node> nodes;
  for (Node n; reader.next(n);) nodes.push_back(n);
  return nodes;
}

std::vector<trace::Op> read_ops(const std::string& path, trace::Header* header = nullptr) {
  trace::TraceReader reader(path);
  if (header) *header = reader.header();
  std::vector<trace::Op> ops;
  for (trace::Op op; reader.next(op);) ops.push_back(op);
  return ops;
}

}  // namespace

// Every sample (format 1.0 and 1.2, one and three programs) comes back byte for byte.
TEST(ChakraRoundTrip, SamplesComeBackByteForByte) {
  for (const char* name : {"nand_stream.trace", "blend_toy.trace", "blend_small.trace"}) {
    SCOPED_TRACE(name);
    const std::string et = scratch("x.et"), back = scratch("back.trace");
    export_chakra(sample(name), et);
    const ImportReport report = import_chakra(et, back, {});
    EXPECT_TRUE(report.restored);
    EXPECT_TRUE(report.unsupported.empty());
    EXPECT_EQ(read_text(back), read_text(sample(name)));
  }
}

// One program exported alone: the same ops, and a header declaring only it.
TEST(ChakraRoundTrip, OneProgramIsTheDocumentedSubset) {
  const std::string et = scratch("fused.et"), back = scratch("fused.trace");
  export_chakra(sample("blend_small.trace"), et, trace::PRECOMPUTED_BLEND_FUSED);
  import_chakra(et, back, {});
  trace::Header original, restored;
  std::vector<trace::Op> want;
  for (const trace::Op& op : read_ops(sample("blend_small.trace"), &original))
    if (op.program() == trace::PRECOMPUTED_BLEND_FUSED) want.push_back(op);
  const std::vector<trace::Op> got = read_ops(back, &restored);
  ASSERT_EQ(got.size(), 1817u);  // traces/README.md: 1815 + 2162 + 1817 ops
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].SerializeAsString(), want[i].SerializeAsString()) << i;
  ASSERT_EQ(restored.programs_size(), 1);
  EXPECT_EQ(restored.programs(0).program(), trace::PRECOMPUTED_BLEND_FUSED);
  EXPECT_EQ(restored.model().SerializeAsString(), original.model().SerializeAsString());
  EXPECT_EQ(restored.request().SerializeAsString(), original.request().SerializeAsString());
}

// The published fields: node type by op kind, data_deps = deps, num_ops = FLOPs
// of GEMMs and LM heads, tensor_size = bytes of KV transfers, GlobalMetadata first.
TEST(ChakraExport, PublishedFieldsForChakraConsumers) {
  const std::string et = scratch("toy.et");
  const ExportCounts counts = export_chakra(sample("blend_toy.trace"), et);
  EXPECT_EQ(ChakraReader(et).metadata().version(), kChakraVersion);
  trace::Header header;
  const std::vector<trace::Op> ops = read_ops(sample("blend_toy.trace"), &header);
  const std::vector<Node> nodes = read_nodes(et);
  ASSERT_EQ(nodes.size(), ops.size());
  EXPECT_EQ(counts.comp_nodes + counts.mem_load_nodes + counts.mem_store_nodes, ops.size());
  int gemms = 0, loads = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const trace::Op& op = ops[i];
    const Node& n = nodes[i];
    EXPECT_EQ(n.id(), op.id());
    EXPECT_EQ(std::vector<uint64_t>(n.data_deps().begin(), n.data_deps().end()),
              std::vector<uint64_t>(op.deps().begin(), op.deps().end()));
    if (op.has_gemm()) {
      ++gemms;
      EXPECT_EQ(n.type(), COMP_NODE);
      EXPECT_EQ(find_attr(n, "num_ops")->int64_val(), int64_t(2 * op.gemm().m() * op.gemm().n() * op.gemm().k()));
    } else if (op.has_lm_head()) {
      EXPECT_EQ(find_attr(n, "num_ops")->int64_val(),
                int64_t(2 * op.lm_head().rows() * header.model().hidden() * header.model().vocab()));
    } else if (op.has_kv_load()) {
      ++loads;
      EXPECT_EQ(n.type(), MEM_LOAD_NODE);
      EXPECT_EQ(find_attr(n, "tensor_size")->uint64_val(), op.kv_load().bytes());
    } else if (op.has_kv_append()) {
      EXPECT_EQ(n.type(), MEM_STORE_NODE);
      EXPECT_EQ(find_attr(n, "tensor_size")->uint64_val(), op.kv_append().bytes());
    }
  }
  EXPECT_GT(gemms, 0);
  EXPECT_GT(loads, 0);
  EXPECT_EQ(uint64_t(loads), counts.mem_load_nodes);
}

TEST(ChakraExport, UnknownProgramIsBadInput) {
  EXPECT_THROW(export_chakra(sample("nand_stream.trace"), scratch("none.et"), trace::FULL_PREFILL), BadInput);
  EXPECT_FALSE(std::ifstream(scratch("none.et")).good()) << "a failed export leaves no file";
}

TEST(ChakraShapes, PythonListLiterals) {
  using V = std::vector<Shape>;
  EXPECT_EQ(*parse_shapes("[[1, 7, 2048], [2048, 2048], []]"), (V{{1, 7, 2048}, {2048, 2048}, {}}));
  // Scalars and tensor lists are no tensor; a list of non-integers neither.
  EXPECT_EQ(*parse_shapes("[[2, 3], 5, None, 0.0, 'a, b', [[1, 2], [3]], [0.5, 1]]"),
            (V{{2, 3}, {}, {}, {}, {}, {}, {}}));
  EXPECT_EQ(*parse_shapes(" [ ] "), V{});
  EXPECT_FALSE(parse_shapes("").has_value());
  EXPECT_FALSE(parse_shapes("[[1, 2]").has_value());
  EXPECT_FALSE(parse_shapes("[[1, 2]] x").has_value());
  EXPECT_EQ(base_op_name("aten::add_"), "add");
  EXPECT_EQ(base_op_name("aten::_softmax"), "_softmax");
  EXPECT_EQ(base_op_name("linear"), "linear");
}

// An engine-emitted trace (the functional engine's own RAG run on the demo model)
// through the CLI, byte for byte.
TEST(ChakraRoundTripCli, EngineEmittedTrace) {
  const std::string store = scratch("store"), trace = scratch("engine.trace");
  const std::string et = scratch("engine.et"), back = scratch("back.trace");
  ASSERT_EQ(run_cli("engine precompute --model assets/brown-llama --docs assets/rag-demo/docs.jsonl --out " + store)
                .exit_code, 0);
  ASSERT_EQ(run_cli("trace gen --engine --model assets/brown-llama --store " + store +
                    " --docs ch16-1,ch16-2 --query 'How were Du Pont products promoted?' --tokens 4 --out " + trace)
                .exit_code, 0);
  const auto exported = run_cli("trace chakra-export " + trace + " " + et);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const auto imported = run_cli("trace chakra-import " + et + " " + back);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(imported.out.rfind("restored an ispsim export: ", 0), 0u) << imported.out;
  EXPECT_EQ(read_text(back), read_text(trace));
}
