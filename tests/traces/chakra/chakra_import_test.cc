// Importing a foreign Chakra trace of a decoder inference (llama_fixture.h):
// the mapped ops, their phases, layers, decode steps and sizes in closed form,
// the report of the operators ispsim does not model, and bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>

#include "common/error.h"
#include "tests/support/cli.h"
#include "tests/support/files.h"
#include "tests/traces/chakra/llama_fixture.h"
#include "traces/chakra/chakra_export.h"
#include "traces/chakra/chakra_import.h"
#include "traces/trace_io.h"

using namespace ispsim;
using namespace ispsim::chakra;
using ispsim::testing::CliResult;
using ispsim::testing::run_cli;
using ispsim::testing::scratch_dir;
using ispsim::testing::write_llama_inference;

namespace {

std::string scratch(const std::string& name) { return (scratch_dir() / name).string(); }

}  // namespace

// Prompt 8, 2 decode steps: 3 passes of 16 layers. Per pass 112 linears (one the
// LM head), 16 SDPAs, 81 norms/adds/silus, 1 embedding, 32 muls; 1 all_reduce.
TEST(ChakraImport, DecoderInferenceInClosedForm) {
  const std::string et = scratch("llama.et"), out = scratch("llama.trace");
  write_llama_inference(et, 8, 2);
  const ImportReport r = import_chakra(et, out, {"llama-3.2-1b"});
  EXPECT_FALSE(r.restored);
  EXPECT_EQ(r.nodes, 3u * (1 + 16 * 15 + 2) + 1);
  EXPECT_EQ(r.mapped, (std::map<std::string, uint64_t>{{"attention", 48}, {"embedding", 3}, {"gemm", 336},
                                                        {"kv_append", 48}, {"lm_head", 3}, {"nonlinear", 243}}));
  EXPECT_EQ(r.unsupported,
            (std::map<std::string, uint64_t>{{"COMM_COLL_NODE all_reduce", 1}, {"COMP_NODE aten::mul", 96}}));
  EXPECT_EQ(r.ops, 681u);
  EXPECT_EQ(r.prompt_tokens, 8u);
  EXPECT_EQ(r.decode_steps, 2u);

  trace::TraceReader reader(out);
  const trace::Header& h = reader.header();
  EXPECT_EQ(h.model().name(), "Llama-3.2-1B");
  ASSERT_EQ(h.request().documents_size(), 1);
  EXPECT_EQ(h.request().documents(0).tokens(), 8u);
  EXPECT_EQ(h.request().answer_tokens(), 2u);
  EXPECT_EQ(h.producer().kind(), trace::PRODUCER_CHAKRA_IMPORT);
  ASSERT_EQ(h.programs_size(), 1);
  EXPECT_EQ(h.programs(0).program(), trace::FULL_PREFILL);

  std::map<std::pair<int, uint32_t>, int> attentions;  // (decode step or -1, layer) -> count
  uint64_t append_bytes = 0, gemm_flop = 0, prev_id = 0;
  trace::Op op, previous;
  while (reader.next(op)) {
    const int step = op.phase() == trace::PHASE_DECODE ? int(op.decode_step()) : -1;
    if (op.has_attention()) {
      ++attentions[{step, op.layer()}];
      // Each attention waits for its own KV append, the op just before it.
      ASSERT_TRUE(previous.has_kv_append());
      EXPECT_EQ(op.deps(op.deps_size() - 1), previous.id());
      EXPECT_EQ(op.attention().kv(0).tokens().end(), step < 0 ? 8u : 9u + step);
      EXPECT_EQ(op.attention().query_rows(), step < 0 ? 8u : 1u);
    }
    if (op.has_kv_append()) append_bytes += op.kv_append().bytes();
    if (op.has_gemm()) gemm_flop += 2 * op.gemm().m() * op.gemm().n() * op.gemm().k();
    if (op.has_lm_head()) {
      EXPECT_EQ(op.decode_step(), uint32_t(step < 0 ? 0 : step)) << "LM head closes its step";
    }
    EXPECT_TRUE(op.id() == 0 || op.id() == prev_id + 1);
    prev_id = op.id();
    previous = op;
  }
  for (int step = -1; step < 2; ++step)
    for (uint32_t layer = 0; layer < 16; ++layer) EXPECT_EQ((attentions[{step, layer}]), 1) << step << " " << layer;
  // KV appended: (8 + 1 + 1) tokens x 16 layers x 8 KV heads x 64 x 2 (K, V) x 2 B.
  EXPECT_EQ(append_bytes, 10u * 16 * 8 * 64 * 2 * 2);
  // GEMM FLOPs per token and layer: 2 x 2048 x (2048 + 512 + 512 + 2048 + 3 x 8192).
  EXPECT_EQ(gemm_flop, uint64_t{10} * 16 * 2 * 2048 * (2048 + 512 + 512 + 2048 + 3 * 8192));
}

TEST(ChakraImport, ForeignTraceNeedsAShapeThatFits) {
  const std::string et = scratch("llama.et");
  write_llama_inference(et, 4, 0);
  try {
    import_chakra(et, scratch("x.trace"), {});
    FAIL() << "imported without a shape";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("not an ispsim export: give the model's shape with --shape"),
              std::string::npos) << e.what();
  }
  try {
    import_chakra(et, scratch("x.trace"), {"Qwen2.5-0.5B"});
    FAIL() << "imported attention of the wrong shape";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("attention with 32 query heads, 8 KV heads of 64 elements, but model "
                                         "Qwen2.5-0.5B has 14, 2 of 64 (wrong --shape?)"),
              std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(scratch("x.trace"))) << "a failed import leaves no file";
}

TEST(ChakraImport, CycleIsBadInput) {
  const std::string et = scratch("cycle.et");
  write_llama_inference(et, 4, 0, true);
  EXPECT_THROW(import_chakra(et, scratch("x.trace"), {"Llama-3.2-1B"}), BadInput);
}

// The CLI prints one line per operator not modelled; the imported trace runs.
TEST(ChakraImportCli, ReportAndRun) {
  const std::string et = scratch("llama.et"), out = scratch("llama.trace");
  write_llama_inference(et, 8, 2);
  const CliResult r = run_cli("trace chakra-import " + et + " " + out + " --shape Llama-3.2-1B");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "imported: 730 nodes -> 681 ops (48 attention, 3 embedding, 336 gemm, 48 kv_append, 3 lm_head, "
            "243 nonlinear); prompt 8 tokens, 2 decode steps; 97 nodes not modelled\n"
            "not modelled: COMM_COLL_NODE all_reduce (1 nodes)\n"
            "not modelled: COMP_NODE aten::mul (96 nodes)\n");
  const CliResult run = run_cli("run --platform gpu_fullcompute --trace " + out);
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST(ChakraImportCli, BadFilesAreOneLine) {
  const std::string et = scratch("llama.et");
  write_llama_inference(et, 4, 0);
  std::string bytes = ispsim::testing::read_text(et);
  for (const auto& [name, content, problem] :
       {std::tuple<std::string, std::string, std::string>{"cut.et", bytes.substr(0, bytes.size() - 5), "is cut off"},
        {"gz.et", std::string("\x1f\x8b\x08\x00", 4), "gzip-compressed Chakra trace; decompress it first"},
        {"garbage.et", std::string("\x03\xff\xff\xff", 4), "not a Chakra GlobalMetadata"}}) {
    std::ofstream(scratch(name), std::ios::binary) << content;
    const CliResult r =
        run_cli("trace chakra-import " + scratch(name) + " " + scratch("o.trace") + " --shape Llama-3.2-1B");
    EXPECT_EQ(r.exit_code, 2) << name;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find(scratch(name) + ": "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(problem), std::string::npos) << r.err;
  }
  const CliResult unknown =
      run_cli("trace chakra-export traces/samples/blend_toy.trace " + scratch("o.et") + " --program NOPE");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("ispsim trace chakra-export: --program: unknown program 'NOPE'"), std::string::npos)
      << unknown.err;
}

// Seeded random damage to an ispsim export and to a foreign trace: the import
// either succeeds or throws BadInput, never crashes or throws anything else
// (the libFuzzer target fuzz/chakra_import_fuzz.cc goes further).
TEST(ChakraImport, DamagedFilesAreBadInputOrImported) {
  const std::string foreign = scratch("llama.et"), exported = scratch("toy.et");
  write_llama_inference(foreign, 4, 1);
  export_chakra(std::string(ISPSIM_SOURCE_DIR) + "/traces/samples/blend_toy.trace", exported);
  std::mt19937_64 rng(7);
  int imported = 0, refused = 0;
  for (const std::string& source : {foreign, exported}) {
    const std::string original = ispsim::testing::read_text(source);
    for (int i = 0; i < 300; ++i) {
      std::string bytes = original;
      for (int e = 0; e < 1 + int(rng() % 3); ++e) {
        const size_t at = rng() % bytes.size();
        if (rng() % 3 == 0) bytes.resize(at);
        else bytes[at] = static_cast<char>(rng());
      }
      if (bytes.empty()) continue;
      std::ofstream(scratch("damaged.et"), std::ios::binary | std::ios::trunc) << bytes;
      try {
        import_chakra(scratch("damaged.et"), scratch("damaged.trace"), {"Llama-3.2-1B"});
        ++imported;
      } catch (const BadInput&) {
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(imported + refused, 500);
}
