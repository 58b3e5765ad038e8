// The bad-input catalogue: hostile inputs across every subcommand.
// Each case must exit with code 2 and exactly one stderr line that names the
// file or option, create no file, and change no file (the scratch directory and
// the shipped samples are compared byte for byte before and after).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "traces/trace_io.h"

namespace fs = std::filesystem;
using ispsim::testing::read_text;
using ispsim::testing::shell_quote;

namespace {

struct Case {
  std::string args;    // after "ispsim"; "{S}" is the scratch directory
  std::string needle;  // must appear in the one stderr line (the file or option named)
  std::string stdout_to = "";  // stdout redirect target ("" = a capture file)
  std::string env = "";        // "NAME=value ..." for this command; "{S}" is the scratch directory
};

std::string substitute(std::string text, const std::string& dir) {
  for (size_t at; (at = text.find("{S}")) != std::string::npos;) text.replace(at, 3, dir);
  return text;
}

// Every file below `dir` with its contents (FIFOs and links by their kind).
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const fs::path& p = e.path();
    if (fs::is_symlink(fs::symlink_status(p))) files[p.string()] = "link:" + fs::read_symlink(p).string();
    else if (fs::is_fifo(fs::symlink_status(p))) files[p.string()] = "fifo";
    else if (fs::is_directory(fs::symlink_status(p))) files[p.string()] = "dir";
    else if (fs::file_size(p) > (1u << 20))  // the sparse 100 MB file: size and time
      files[p.string()] = std::to_string(fs::file_size(p)) + "@" +
                          std::to_string(fs::last_write_time(p).time_since_epoch().count());
    else files[p.string()] = read_text(p);
  }
  return files;
}

std::string varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>((v & 0x7f) | 0x80));
  out.push_back(static_cast<char>(v));
  return out;
}

// Writes ops as a format-1.1 file without the validator (the way a faulty or
// hostile producer would), so the reader alone must catch the problem.
void write_unvalidated(const std::string& path, ispsim::trace::Header header,
                       const std::vector<ispsim::trace::Op>& ops) {
  header.mutable_version()->set_minor(1);
  std::string bytes(ispsim::trace::kTraceMagic, ispsim::trace::kTraceMagicSize);
  const std::string h = header.SerializeAsString();
  bytes += varint(h.size()) + h;
  for (const ispsim::trace::Op& op : ops) {
    const std::string o = op.SerializeAsString();
    bytes += varint(o.size()) + o;
  }
  std::ofstream(path, std::ios::binary) << bytes;
}

class BadInputCatalogue : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = ispsim::testing::scratch_dir() / "catalogue";
    fs::create_directories(dir_ / "dir");
    fs::create_directories(dir_ / "dir.json");
    fs::create_directories(dir_ / "model");
    const std::string src = ISPSIM_SOURCE_DIR;
    std::ofstream(dir_ / "exist.json") << "an earlier result\n";
    std::ofstream(dir_ / "unknown_module.textproto")
        << "name: \"X\"\nprogram: PRECOMPUTED_BLEND_FUSED\nmodules { isp_accelerator: \"nope\" }\n"
           "placement { prefill_attention: SSD_ISP decode_attention: SSD_ISP }\n";
    std::ofstream(dir_ / "escape.textproto") << "name: \"../escaped\"\ndescription: \"d\"\nprogram: FULL_PREFILL\n";
    std::ofstream(dir_ / "empty.txt");
    // A Slurm configuration whose controller nobody answers (port 9, discard).
    std::ofstream(dir_ / "no_controller.conf") << "ClusterName=none\nSlurmctldHost=localhost(127.0.0.1)\n"
                                                  "SlurmctldPort=9\nMessageTimeout=1\nNodeName=localhost\n"
                                                  "PartitionName=p Nodes=localhost Default=YES\n";
    std::ofstream(dir_ / "hello.txt") << "The jury said\n";
    ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
    ASSERT_EQ(::mkfifo((dir_ / "fifo.textproto").c_str(), 0600), 0);
    ASSERT_EQ(::mkfifo((dir_ / "fifo.json").c_str(), 0600), 0);
    fs::create_symlink("/dev/full", dir_ / "full.json");
    fs::create_symlink("/dev/full", dir_ / "full.vcd");
    fs::create_symlink(dir_ / "missing-dir" / "x.json", dir_ / "dangling.json");
    // 100 MB, sparse: over the 64 MiB text cap without using the disk.
    { std::ofstream(dir_ / "big.txt"); }
    fs::resize_file(dir_ / "big.txt", 100u << 20);
    fs::copy_file(src + "/traces/samples/nand_stream.trace", dir_ / "in.trace");
    fs::copy_file(src + "/traces/samples/blend_toy.txtpb", dir_ / "toy.txtpb");
    {  // GPU ops measured at 4e15 ns each: the run passes 2^64 ps of simulated time
      std::string text = read_text(src + "/traces/samples/blend_toy.txtpb");
      for (size_t at = text.find("gemm {"), n = 0; at != std::string::npos && n < 8; at = text.find("gemm {", at + 1), ++n)
        text.insert(text.find('}', at) + 1, " measured_duration_ns: 4000000000000000");
      std::ofstream(dir_ / "long_time.txtpb") << text;
      ASSERT_EQ(ispsim::testing::run_cli("trace pack " + (dir_ / "long_time.txtpb").string() + " " +
                                         (dir_ / "long_time.trace").string())
                    .exit_code,
                0);
    }
    {  // an enum value the trace format does not define
      std::string text = read_text(src + "/traces/samples/blend_toy.txtpb");
      const std::string kind = "kind: NONLINEAR_RMSNORM";
      text.replace(text.find(kind), kind.size(), "kind: 99");
      std::ofstream(dir_ / "kind99.txtpb") << text;
    }
    // A model whose tokenizer has an id beyond its config.json's vocab_size.
    std::string config = read_text(src + "/assets/brown-llama/config.json");
    std::ofstream(dir_ / "model" / "config.json") << config;
    std::string tokenizer = read_text(src + "/assets/brown-llama/tokenizer.json");
    const auto vocab = tokenizer.find("\"vocab\": {");
    ASSERT_NE(vocab, std::string::npos);
    tokenizer.insert(vocab + 10, "\"zz-beyond\": 99999, ");
    std::ofstream(dir_ / "model" / "tokenizer.json") << tokenizer;
    fs::create_symlink(src + "/assets/brown-llama/model.safetensors", dir_ / "model" / "model.safetensors");
    make_corrupt_traces(src);
  }

  // The issue's crash inputs (they passed validation and crashed the runtime)
  // and one-byte corruptions that format 1.2 detects.
  static void make_corrupt_traces(const std::string& src) {
    using namespace ispsim::trace;
    const TraceText trace = read_trace(src + "/traces/samples/blend_small.trace");
    const std::vector<Op> ops(trace.op().begin(), trace.op().end());
    std::map<uint64_t, size_t> index_of;
    for (size_t i = 0; i < ops.size(); ++i) index_of[ops[i].id()] = i;
    size_t fused = ops.size();
    for (size_t i = 0; i < ops.size() && fused == ops.size(); ++i)
      if (ops[i].program() == PRECOMPUTED_BLEND_FUSED && ops[i].phase() == PHASE_FUSED_PREFILL &&
          ops[i].has_attention() && ops[i].attention().has_hkvd_mask())
        fused = i;
    ASSERT_LT(fused, ops.size());
    {  // the attention no longer waits for its KV append
      std::vector<Op> changed = ops;
      auto* deps = changed[fused].mutable_deps();
      deps->erase(std::remove_if(deps->begin(), deps->end(),
                                 [&](uint64_t d) { return ops[index_of.at(d)].has_kv_append(); }),
                  deps->end());
      write_unvalidated((dir_ / "crash_dep.trace").string(), trace.header(), changed);
    }
    {  // one HKVD mask bit cleared
      std::vector<Op> changed = ops;
      std::string& bits = *changed[fused].mutable_attention()->mutable_hkvd_mask()->mutable_bits();
      const auto byte = std::find_if(bits.begin(), bits.end(), [](char c) { return c != 0; });
      *byte = static_cast<char>(*byte & (*byte - 1));
      write_unvalidated((dir_ / "crash_mask.trace").string(), trace.header(), changed);
    }
    make_inconsistent_kv_traces(trace.header(), ops);
    // One byte of a label changed in a format-1.2 file (the sample is one).
    std::string bytes = read_text(src + "/traces/samples/blend_small.trace");
    const auto label = bytes.find("o_proj");
    ASSERT_NE(label, std::string::npos);
    bytes[label] = 'x';
    std::ofstream(dir_ / "label_flip.trace", std::ios::binary) << bytes;
  }

  // Attentions whose KV the runtime could not find: more appended KV than the
  // layer's appends gave, more query rows than appended entries, precomputed
  // KV beyond the context, a layer the model does not have.
  static void make_inconsistent_kv_traces(const ispsim::trace::Header& header,
                                          const std::vector<ispsim::trace::Op>& ops) {
    using namespace ispsim::trace;
    const auto first = [&](auto&& pick) {
      return size_t(std::find_if(ops.begin(), ops.end(), pick) - ops.begin());
    };
    const size_t full = first([](const Op& op) { return op.program() == FULL_PREFILL && op.has_attention(); });
    const size_t decode = first([](const Op& op) {
      return op.phase() == PHASE_DECODE && op.has_attention() && op.attention().kv_size() == 2;
    });
    ASSERT_LT(full, ops.size());
    ASSERT_LT(decode, ops.size());
    std::vector<Op> changed = ops;
    TokenRange& span = *changed[full].mutable_attention()->mutable_kv(0)->mutable_tokens();
    span.set_end(span.end() + 1);
    write_unvalidated((dir_ / "kv_unappended.trace").string(), header, changed);
    changed = ops;
    changed[full].mutable_attention()->set_query_rows(ops[full].attention().query_rows() + 1);
    write_unvalidated((dir_ / "rows_unappended.trace").string(), header, changed);
    changed = ops;
    for (KvSpan& shifted : *changed[decode].mutable_attention()->mutable_kv()) {  // one token later
      shifted.mutable_tokens()->set_begin(shifted.tokens().begin() + 1);
      shifted.mutable_tokens()->set_end(shifted.tokens().end() + 1);
    }
    write_unvalidated((dir_ / "beyond_context.trace").string(), header, changed);
    changed = ops;
    changed[decode].set_layer(header.model().layers());
    write_unvalidated((dir_ / "no_layer.trace").string(), header, changed);
  }

  static fs::path dir_;
};
fs::path BadInputCatalogue::dir_;

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      // --- outputs that must not be replaced, or clash (class 1)
      {"run --platform nand_stream --trace {S}/in.trace --stats {S}/fifo.json", "{S}/fifo.json: is a FIFO with no reader"},
      {"run --platform nand_stream --trace {S}/in.trace --vcd {S}/fifo", "{S}/fifo: waveform file must end in .vcd or .fst"},
      {"run --platform nand_stream --trace {S}/in.trace --stats {S}/dangling.json", "{S}/dangling.json: is a symlink to a missing"},
      {"run --platform nand_stream --trace {S}/in.trace --stats {S}/dir.json", "{S}/dir.json: is a directory"},
      {"run --platform nand_stream --trace {S}/in.trace --stats {S}/nope/s.json", "{S}/nope/s.json: cannot open for writing"},
      {"run --platform nand_stream --trace {S}/in.trace --stats {S}/exist.json --vcd {S}/exist.json", "--vcd: {S}/exist.json is also the output of --stats"},
      {"run --platform memllm --trace traces/samples/blend_small.trace --stats {S}/t.json --timeline {S}/t.json", "--timeline: {S}/t.json is also the output of --stats"},
      {"run --platform nand_stream --trace {S}/in.trace --stats {S}/in.trace", "--stats: {S}/in.trace is the input of --trace"},
      {"run --platform nand_stream --trace {S}/in.trace --stats {S}/exist.json --timeline {S}/../catalogue/exist.json", "--timeline: {S}/../catalogue/exist.json is also the output of --stats"},
      {"run --platform nand_stream --trace {S}/in.trace --vcd {S}/./in.trace", "--vcd: {S}/./in.trace is the input of --trace"},
      {"compare --trace traces/samples/blend_small.trace --csv {S}/c.out --json {S}/c.out", "--json: {S}/c.out is also the output of --csv"},
      {"compare --trace {S}/in.trace --csv {S}/in.trace", "--csv: {S}/in.trace is the input of --trace"},
      {"compare --trace traces/samples/blend_small.trace --platforms memllm,memllm --timeline-dir {S}", "--timeline-dir: {S}/MemLLM.json is also the output"},
      {"compare --trace traces/samples/blend_small.trace --csv {S}/fifo", "{S}/fifo: is a FIFO with no reader"},
      {"trace pack {S}/toy.txtpb {S}/toy.txtpb", "{S}/toy.txtpb is the input of ispsim trace pack INPUT"},
      {"trace pack {S}/toy.txtpb {S}/fifo", "{S}/fifo: is a FIFO with no reader"},
      {"trace pack {S}/toy.txtpb {S}/dir", "{S}/dir: is a directory"},
      {"trace pack {S}/toy.txtpb /dev/full", "/dev/full: write failed: No space left on device"},
      {"trace gen --shape SmolLM2-135M --dataset wik --context-tokens 50 --answer-tokens 1 --out {S}/fifo", "{S}/fifo: is a FIFO with no reader"},
      {"trace gen --shape SmolLM2-135M --dataset wik --context-tokens 50 --answer-tokens 1 --out {S}/dangling.json", "{S}/dangling.json: is a symlink to a missing"},
      {"trace gen --shape SmolLM2-135M --dataset wik --context-tokens 50 --answer-tokens 1 --out /dev/full", "/dev/full: write failed: No space left on device"},
      {"run --platform nand_stream --trace {S}/in.trace --stats {S}/full.json", "{S}/full.json: write failed: No space left on device"},
      {"run --platform memllm --trace traces/samples/blend_small.trace --timeline {S}/full.json", "{S}/full.json: write failed: No space left on device"},
      // --- stdout must be written completely (class 2)
      {"trace dump {S}/in.trace", "stdout: write failed", "/dev/full"},
      // The table to stdout comes before the output files are committed: a failed stdout leaves none.
      {"run --platform memllm --trace traces/samples/blend_small.trace --stats {S}/full_stdout.json --timeline {S}/full_stdout_timeline.json", "stdout: write failed", "/dev/full"},
      {"run --platform nand_stream --trace {S}/in.trace --stats {S}/full_stdout_nand.json", "stdout: write failed", "/dev/full"},
      {"trace dump --text {S}/in.trace", "stdout: write failed", "/dev/full"},
      {"trace stats {S}/in.trace", "stdout: write failed", "/dev/full"},
      {"run --platform nand_stream --trace {S}/in.trace", "stdout: write failed", "/dev/full"},
      {"describe memllm", "stdout: write failed", "/dev/full"},
      {"describe", "stdout: write failed", "/dev/full"},
      {"--help", "stdout: write failed", "/dev/full"},
      {"trace gen --help", "stdout: write failed", "/dev/full"},
      // --- trace semantics the runtime relies on: the issue's crash inputs (class 3)
      {"run --platform memllm --trace {S}/crash_dep.trace", "{S}/crash_dep.trace: op "},
      {"run --platform memllm --trace {S}/crash_mask.trace", "{S}/crash_mask.trace: op "},
      {"compare --trace {S}/crash_dep.trace", "{S}/crash_dep.trace: op "},
      {"trace dump {S}/crash_dep.trace", "attention does not depend on kv_append op"},
      {"trace pack {S}/kind99.txtpb {S}/kind99.trace", "nonlinear.kind 99 is not a nonlinear kind of this trace format"},
      {"run --platform gpu_precompute --trace {S}/long_time.trace", "{S}/long_time.trace: its simulated time passes 2^64 ps"},
      {"trace stats {S}/crash_mask.trace", "bits set but the program's hkvd_select selected"},
      {"run --platform gpu_fullcompute --trace {S}/kv_unappended.trace", "the kv_append ops of its layer before it appended"},
      {"run --platform gpu_fullcompute --trace {S}/rows_unappended.trace", "the query rows are the last appended entries"},
      {"run --platform memllm --trace {S}/beyond_context.trace", "attention reads precomputed KV up to token 1001 but the context has 1000 tokens"},
      {"compare --trace {S}/no_layer.trace", "{S}/no_layer.trace: op "},
      // --- leftovers after failure (class 4): the snapshot shows none
      {"run --platform nand_stream --trace {S}/in.trace --vcd {S}/full.vcd", "{S}/full.vcd: write failed: No space left on device"},
      {"run --platform memllm --trace traces/samples/blend_small.trace --stats {S}/vcd_stats.json --vcd {S}/full.vcd", "{S}/full.vcd: write failed"},
      {"run --platform nand_stream --trace {S}/in.trace --vcd {S}/none.vcd --vcd-filter 'nothing.*'", "--vcd-filter: selects no signal of this platform (its signals are under "},
      {"sweep tools/baselines/grid.textproto --slurm --submit --out {S}/slurm_out", "SLURM_CONF", "", "SLURM_CONF={S}/no_controller.conf"},
      {"reproduce cim --slurm --out {S}/reproduce_out", "tools/slurm/local_cluster.sh", "", "SLURM_CONF={S}/no_controller.conf"},
      // --- messages name what the user wrote (class 6)
      {"reproduce cim --contexts 0 --list", "--contexts: 0 is out of range"},
      {"reproduce cim --steps x --list", "--steps: 'x' is not a whole number"},
      {"engine kv-trace --window 0 --docs ca10-1 --query hi --out {S}/kv.trace", "--window: 0 tokens; must be >= 1"},
      {"engine kv-trace --unit 200 --docs ca10-1 --query hi --out {S}/kv.trace", "--unit: 200 tokens; must lie in 1..--window (128)"},
      {"engine dict-train --calib {S}/empty.txt --out {S}/dict.safetensors", "{S}/empty.txt: holds no text (--calib)"},
      {"run --platform b2 --trace traces/samples/blend_small.trace", "traces/samples/blend_small.trace: its request has no dictionary KV"},
      {"sweep {S}/big.txt --list", "{S}/big.txt: larger than 16 MB: not a sweep file"},
      // --- integrity (class 7)
      {"trace dump {S}/label_flip.trace", "{S}/label_flip.trace: op record #"},
      {"trace stats {S}/label_flip.trace", "fails its CRC-32C checksum"},
      {"run --platform memllm --trace {S}/label_flip.trace", "fails its CRC-32C checksum"},
      // --- inputs that must neither hang nor exhaust memory (class 5)
      {"run --platform nand_stream --trace {S}/fifo", "{S}/fifo: is a FIFO, not a regular input file"},
      {"trace dump {S}/fifo", "{S}/fifo: is a FIFO"},
      {"trace dump /dev/zero", "/dev/zero: is a character device"},
      {"trace pack {S}/fifo {S}/out.trace", "{S}/fifo: is a FIFO"},
      {"trace pack /dev/zero {S}/out.trace", "/dev/zero: is a character device"},
      {"trace pack {S}/big.txt {S}/out.trace", "{S}/big.txt: larger than the limit"},
      {"run --platform {S}/fifo.textproto --trace {S}/in.trace", "{S}/fifo.textproto: not a regular file"},
      {"describe {S}/fifo.textproto", "{S}/fifo.textproto: not a regular file"},
      {"engine ppl --text /dev/zero", "/dev/zero: is a character device"},
      {"engine ppl --text {S}/fifo", "{S}/fifo: is a FIFO"},
      {"engine ppl --text {S}/big.txt", "{S}/big.txt: larger than the limit"},
      {"engine ppl --text {S}/hello.txt --quant int16 --calib /dev/zero", "/dev/zero: is a character device"},
      {"engine ppl --text {S}/hello.txt --quant int16 --calib {S}/big.txt", "{S}/big.txt: larger than the limit"},
      {"engine precompute --docs {S}/fifo --out {S}/store", "{S}/fifo: is a FIFO"},
      {"engine precompute --docs /dev/zero --out {S}/store", "/dev/zero: is a character device"},
      {"engine blend-quality --queries {S}/fifo --store {S}/store", "{S}/fifo: is a FIFO"},
      {"engine blend-quality --queries {S}/big.txt --store {S}/store", "{S}/big.txt: larger than the limit"},
      // --- silent acceptance (class 6)
      {"compare --trace traces/samples/blend_small.trace -j -1", "--jobs: -1 is not within 1..1024"},
      {"compare --trace traces/samples/blend_small.trace -j 0", "--jobs: 0 is not within 1..1024"},
      {"compare --trace traces/samples/blend_small.trace --platforms {S}/escape.textproto --timeline-dir {S}/dir", "{S}/escape.textproto: name '../escaped' cannot name a timeline file"},
      {"reproduce memllm --out {S}/exist.json", "--out: {S}/exist.json exists and is not a directory"},
      {"describe {S}/unknown_module.textproto", "{S}/unknown_module.textproto: modules.isp_accelerator = 'nope' is no ISP accelerator"},
      {"sweep tools/baselines/grid.textproto --slurm --sbatch '--partition=a\nrm -rf x'", "--sbatch: '--partition=a...' holds a control character"},
      {"sweep tools/baselines/grid.textproto -j -1 --list", "--jobs: -1 is not within 1..1024"},
      {"sweep tools/baselines/grid.textproto -j 4294967295 --list", "--jobs: 4294967295 is not within 1..1024"},
      {"sweep tools/baselines/grid.textproto --slurm --shards -1", "--shards: -1 is not within 1..10000"},
      {"sweep tools/baselines/grid.textproto --slurm --shards 0", "--shards: 0 is not within 1..10000"},
      {"sweep tools/baselines/grid.textproto --collect --shards 4294967295", "--shards: 4294967295 is not within 1..10000"},
      {"reproduce memllm -j -1 --list", "--jobs: -1 is not within 1..1024"},
      {"reproduce memllm --slurm --shards 0 --list", "--shards: 0 is not within 1..10000"},
      {"compare --trace traces/samples/blend_small.trace --platforms memllm,,memllm_fused", "--platforms: empty entry"},
      {"compare --trace traces/samples/blend_small.trace --platforms memllm,", "--platforms: empty entry"},
      {"compare --trace traces/samples/blend_small.trace --platforms ,", "--platforms: empty entry"},
      {"compare --trace traces/samples/blend_small.trace --set isp.macs_per_pe_per_cycle=4", "--set isp.macs_per_pe_per_cycle: platform 'GPU-FullCompute'"},
      {"run --platform gpu_fullcompute --trace traces/samples/blend_small.trace --set flash_coordinator.sram_bytes=1024", "--set flash_coordinator"},
      {"run --platform nand_stream --trace {S}/in.trace --set ssd.organization=SIDEWAYS_ATTENTION", "--set ssd"},
      {"run --platform memllm --trace traces/samples/blend_small.trace --set stream.read_mode=SEQUENTIAL", "--set stream.read_mode: platform 'MemLLM'"},
      {"describe gpu_fullcompute --set isp.macs_per_pe_per_cycle=4", "--set isp.macs_per_pe_per_cycle"},
      // --- the ISP accelerator role
      {"run --platform memllm --trace traces/samples/blend_small.trace --set modules.isp_accelerator=tensor_core", "modules.isp_accelerator = 'tensor_core' is no ISP accelerator (known: "},
      {"run --platform gpu_fullcompute --trace traces/samples/blend_small.trace --set modules.isp_accelerator=systolic_pair", "has no ISP accelerator"},
      {"run --platform memllm --trace traces/samples/blend_small.trace --set isp.systolic_pair.simd_lanes=32", "isp.systolic_pair.simd_lanes is set (--set)"},
      // --- constraints a range cannot state, checked by the loader with the file's name
      {"run --platform memllm --trace traces/samples/blend_small.trace --set nand.channel_width_bits=12", "memllm.textproto: nand.channel_width_bits = 12 bits is not a whole number of bytes"},
      {"run --platform memllm --trace traces/samples/blend_small.trace --set flash_coordinator.q_buffer_bytes=1048576", "memllm.textproto: flash_coordinator.q_buffer_bytes = 1048576 bytes leaves no O reduction buffer"},
      {"describe isp_accelerator --set isp.pes=3", "--set applies to platforms, not roles"},
      {"engine generate --model {S}/model --prompt hello", "{S}/model/tokenizer.json: token id"},
      {"engine ppl --text {S}/hello.txt --quant int16 --calib {S}/empty.txt", "{S}/empty.txt: calibration text is empty"},
      // --- plain bad arguments, for completeness
      {"frobnicate", "unknown command 'frobnicate'"},
      {"run --platform nand_stream", "--trace"},
      {"run --platform nand_stream --trace {S}/in.trace --stats {S}/s.txt", "{S}/s.txt: statistics file must end in .json or .csv"},
      {"trace dump {S}/missing.trace", "{S}/missing.trace: no such file"},
      {"trace frobnicate", "unknown action 'frobnicate'"},
      {"describe nosuchplatform", "nosuchplatform"},
  };
  return all;
}

}  // namespace

TEST_F(BadInputCatalogue, EveryCaseExitsTwoWithOneLineAndTouchesNothing) {
  const std::string src = ISPSIM_SOURCE_DIR;
  const std::string dir = dir_.string();
  ASSERT_GE(cases().size(), 60u);
  const auto samples_before = snapshot(src + "/traces/samples");
  for (const Case& c : cases()) {
    const std::string args = substitute(c.args, dir);
    const std::string needle = substitute(c.needle, dir);
    const auto before = snapshot(dir_);
    const std::string err_file = ispsim::testing::scratch_dir() / "catalogue.err";
    const std::string out = c.stdout_to.empty() ? (ispsim::testing::scratch_dir() / "catalogue.out").string() : c.stdout_to;
    const std::string env = c.env.empty() ? "" : substitute(c.env, dir) + " ";
    const std::string command = "cd " + shell_quote(src) + " && " + env + ISPSIM_CLI + " " + args + " </dev/null >" +
                                shell_quote(out) + " 2>" + shell_quote(err_file);
    const int status = std::system(command.c_str());
    const std::string err = read_text(err_file);
    fs::remove(err_file);
    if (c.stdout_to.empty()) fs::remove(out);
    SCOPED_TRACE("ispsim " + args);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_EQ(err.rfind("ispsim: error: ", 0), 0u) << err;
    EXPECT_NE(err.find(needle), std::string::npos) << "expected '" << needle << "' in: " << err;
    EXPECT_EQ(snapshot(dir_), before) << "a file was created or changed";
  }
  EXPECT_EQ(snapshot(src + "/traces/samples"), samples_before);
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
}
