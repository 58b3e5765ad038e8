// ispsim reproduce memllm|cim [--out DIR] [-j N] [--full] [--slurm [--shards N]]
// One command per paper: writes the sweep files its experiments need, runs them
// (locally or as Slurm job arrays), draws every figure with tools/plot and
// writes DIR/index.md listing each figure with the exact commands behind it.
// Experiments whose systems or parameters do not exist yet are listed as
// missing in the index, never skipped silently. (tools/ispsim/sweep/README.md)
#include <boost/program_options.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "common/atomic_file.h"
#include "common/data_dir.h"
#include "common/error.h"
#include "schema/platform_loader.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/cli_common.h"
#include "tools/ispsim/provenance.h"
#include "tools/ispsim/sweep/results.h"
#include "tools/ispsim/sweep/runner.h"
#include "tools/ispsim/sweep/slurm.h"

extern char** environ;

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace ispsim::cli {
namespace {

struct Figure {
  std::string stem;   // file name in figures/ without extension
  std::string title;  // what it shows, with the paper's reference
  std::vector<std::string> plot_args;  // after RESULTS: --figure NAME ...
};

struct Experiment {
  std::string name;   // sweep name and folder
  std::string title;  // SPEC.md Sec. 5 item
  std::string sweep;  // sweep file text
  std::vector<Figure> figures;
};

struct Paper {
  std::string title;
  std::vector<Experiment> experiments;
  std::vector<std::pair<std::string, std::string>> missing;  // (item, why)
};

bool has_platform(const std::string& name) {
  for (const schema::PlatformFile& p : schema::list_platform_files())
    if (p.name == name) return true;
  return false;
}

std::string axis(const std::string& name, const std::vector<std::string>& values) {
  std::string s = "axis { name: \"" + name + "\"";
  for (const std::string& v : values) s += " values: \"" + v + "\"";
  return s + " }\n";
}

std::string sweep_text(const std::string& name, const std::string& description, const std::string& axes) {
  return "# proto-file: tools/ispsim/sweep/sweep.proto\n# proto-message: ispsim.sweep.Sweep\n"
         "# Written by `ispsim reproduce`.\nname: \"" + name + "\"\ndescription: \"" + description + "\"\n" + axes;
}

// The MemLLM study's platforms, in the paper's order (their platform files' group).
std::vector<std::string> memllm_platforms(Paper& paper) {
  std::vector<std::string> present = schema::platforms_in_group("memllm_study");
  if (present.empty())
    paper.missing.emplace_back("the MemLLM systems", "no platform file of group \"memllm_study\"; no MemLLM figure is drawn");
  return present;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// MemLLM (paper 2), SPEC.md Sec. 5. Short: two models and short line sweeps
// (minutes on 2 cores); --full: the six models and the realistic ranges.
Paper memllm_paper(bool full) {
  Paper paper;
  paper.title = "MemLLM (paper 2): on-device RAG with in-storage attention";
  const std::vector<std::string> platforms = memllm_platforms(paper);
  const std::vector<std::string> models =
      full ? std::vector<std::string>{"SmolLM2-135M", "SmolLM2-360M", "SmolLM2-1.7B", "OPT-350M", "OPT-1.3B", "OPT-2.7B"}
           : std::vector<std::string>{"SmolLM2-360M", "OPT-1.3B"};
  const std::vector<std::string> datasets = {"fin", "tat", "cov", "cad", "prv", "wik", "web", "hpt"};
  // The line sweeps vary one thing around one (model, dataset) request.
  const std::string model = "SmolLM2-360M", dataset = "hpt";
  const std::string one_request = axis("trace.model", {model}) + axis("trace.dataset", {dataset});
  const std::vector<std::string> ladder = {"MemLLM-Base", "MemLLM-Fused", "MemLLM-PerCh", "MemLLM"};
  const std::string all_platforms = axis("platform", platforms);

  Experiment grid{"memllm-grid", "Speedup of every system over GPU-FullCompute on the eight datasets and " +
                                     std::to_string(models.size()) + " models" +
                                     (full ? "" : " (requests capped at 4096 context and 32 answer tokens)"),
                  sweep_text("memllm-grid", "every platform x model x dataset profile (profile-drawn lengths, seed 1)",
                             axis("trace.model", models) + axis("trace.dataset", datasets) +
                                 (full ? "" : axis("trace.max_context_tokens", {"4096"}) +
                                                  axis("trace.max_answer_tokens", {"32"})) +
                                 all_platforms),
                  {}};
  grid.figures = {
      {"speedup_by_dataset", "Speedup over GPU-FullCompute per dataset (geometric mean over the models)",
       {"--figure", "speedup", "--group", "trace.dataset"}},
      {"speedup_by_model", "Speedup over GPU-FullCompute per model (geometric mean over the datasets)",
       {"--figure", "speedup", "--group", "trace.model"}},
      {"ablation_ladder", "Ablation ladder Base -> Fused -> PerCh -> MemLLM: speedup over MemLLM-Base per dataset",
       {"--figure", "ablation", "--group", "trace.dataset", "--systems", join(ladder, ",")}},
      {"prefill_breakdown", "Latency breakdown per system (" + model + "): prefill compute, exposed NAND, decode",
       {"--figure", "breakdown", "--group", "trace.dataset", "--where", "trace.model=" + model, "--where",
        "trace.dataset=" + dataset}},
      {"pcie_traffic", "PCIe traffic per request per system and dataset (" + model + ")",
       {"--figure", "pcie", "--group", "trace.dataset", "--where", "trace.model=" + model}},
      {"controller_dram_traffic", "Controller DRAM traffic of the attention datapath per dataset (" + model + ")",
       {"--figure", "bars", "--y", "controller_dram_bytes", "--group", "trace.dataset", "--where",
        "trace.model=" + model, "--systems", join(ladder, ",")}},
      {"power", "Average and peak power per system (geometric mean over models and datasets)", {"--figure", "power"}},
      {"speedup_table", "MemLLM's speedup over GPU-FullCompute per model and dataset (table)",
       {"--figure", "table", "--rows", "trace.model", "--columns", "trace.dataset", "--systems", "MemLLM"}},
  };
  paper.experiments.push_back(grid);

  auto line = [&](const std::string& name, const std::string& title, const std::string& x_axis,
                  const std::vector<std::string>& values, const std::string& x_label,
                  const std::string& request, const std::vector<std::string>& plot_extra = {}) {
    Experiment e{name, title, sweep_text(name, title, request + all_platforms + axis(x_axis, values)), {}};
    std::string stem = name;
    std::replace(stem.begin(), stem.end(), '-', '_');
    std::vector<std::string> common = {"--figure", "line", "--x", x_axis, "--x-label", x_label};
    common.insert(common.end(), plot_extra.begin(), plot_extra.end());
    auto with = [&common](std::vector<std::string> more) {
      more.insert(more.begin(), common.begin(), common.end());
      return more;
    };
    e.figures = {{stem + "_speedup", title + ": speedup over GPU-FullCompute", with({"--y", "speedup"})},
                 {stem + "_latency", title + ": end-to-end latency", with({"--y", "latency_s"})}};
    paper.experiments.push_back(e);
  };
  line("memllm-ratio", "Recomputation ratio 5-25 % (" + model + ", " + dataset + ")", "trace.ratio",
       {"0.05", "0.1", "0.15", "0.2", "0.25"}, "recomputation ratio (fraction of context tokens)", one_request);
  line("memllm-context", "Context length (" + model + ", " + dataset + ", 5 documents)", "trace.context_tokens",
       full ? std::vector<std::string>{"256", "512", "1024", "2048", "4096", "8192"}
            : std::vector<std::string>{"128", "256", "512", "1024"},
       "context tokens per document", one_request);
  line("memllm-answer", "Answer length incl. long answers of 100 tokens (" + model + ", " + dataset + ")",
       "trace.answer_tokens", {"1", "10", "25", "50", "100"}, "answer tokens (decode steps)", one_request);
  line("memllm-channels", "NAND channel count (" + model + ", " + dataset + ")", "nand.channels",
       {"4", "8", "16"}, "NAND channels (count)", one_request);
  // The budget matters only when the KV does not fit. Full: MemLLM's 8-16 GiB
  // with OPT-2.7B on 5 x 8192 tokens (KV 2 x 32 layers x 2560 x 2 B = 320 KiB
  // per token, 13.4 GB). Short: the same crossing scaled down, SmolLM2-360M on
  // 5 x 4096 tokens (KV 2 x 32 x 320 x 2 B = 40 KiB per token, 0.84 GB; weights
  // 0.72 GB and the 1 GiB workspace also live in the budget) over 2-3 GiB.
  const std::string dram_request =
      full ? axis("trace.model", {"OPT-2.7B"}) + axis("trace.dataset", {dataset}) + axis("trace.context_tokens", {"8192"})
           : axis("trace.model", {model}) + axis("trace.dataset", {dataset}) + axis("trace.context_tokens", {"4096"});
  const std::vector<std::string> budgets =
      full ? std::vector<std::string>{"8589934592", "10737418240", "12884901888", "15032385536", "17179869184"}
           : std::vector<std::string>{"2147483648", "2415919104", "2684354560", "2952790016", "3221225472"};
  line("memllm-dram",
       full ? "Host DRAM budget 8-16 GiB (OPT-2.7B, " + dataset + ", 5 x 8192 tokens)"
            : "Host DRAM budget, scaled down to 2-3 GiB (" + model + ", " + dataset + ", 5 x 4096 tokens; --full: 8-16 GiB)",
       "host.dram_capacity_bytes", budgets, "host DRAM budget (GiB)", dram_request,
       {"--x-scale", "9.313225746154785e-10"});

  Experiment bw{"memllm-nand-bandwidth", "Naive vs pipelined aggregate NAND read bandwidth",
                sweep_text("memllm-nand-bandwidth", "NAND stream microbenchmark, tR exposed vs die-level pipelined",
                           axis("trace.file", {data_path("traces/samples/nand_stream.trace")}) +
                               axis("platform", {"nand_stream"}) +
                               axis("stream.read_mode", {"SEQUENTIAL", "PIPELINED"})),
                {{"nand_bandwidth", "Aggregate NAND read bandwidth, naive (tR exposed) vs pipelined",
                  {"--figure", "nand_bw", "--x", "stream.read_mode"}}}};
  paper.experiments.push_back(bw);

  paper.missing.emplace_back("KV tile size sweep", "the tile (tokens per page) follows from the page size and the "
                                                   "model's KV shape; there is no tile-size parameter to sweep yet");
  paper.missing.emplace_back("KV quantization (8-bit, 4-bit)", "the shape-only generator writes FP16 KV only "
                                                               "(no KV precision setting in `trace gen`)");
  paper.missing.emplace_back("KV eviction methods", "no KV eviction policy is modelled");
  paper.missing.emplace_back("GPU and PCIe/NAND utilisation over time",
                             "not drawn as a figure; every run's timeline is available with `ispsim run --timeline F` "
                             "(Chrome trace-event JSON, open in Perfetto)");
  return paper;
}

// The request paper 1 evaluates (Sec. 5): decode steps of Llama-3.1-8B over
// 1K, 64K and 256K tokens of context; 32 steps = U, so the batch pursuit is
// amortised exactly. `reproduce cim --model/--contexts/--steps` change it.
struct CimRequest {
  std::string model = "Llama-3.1-8B";
  std::vector<std::string> contexts = {"1024", "65536", "262144"};
  std::string steps = "32";
};

// Integer-only inference on compute-in-flash (paper 1), SPEC.md Sec. 5.
Paper cim_paper(const CimRequest& request) {
  Paper paper;
  paper.title = "Integer-only LLM inference on compute-in-flash (paper 1)";
  // Paper 1's platforms, in its order (their platform files' group), and their display names.
  const std::vector<std::string> present = schema::platforms_in_group("paper1");
  std::vector<std::string> systems;
  for (const std::string& name : present) systems.push_back(schema::load_platform(name).platform.name());
  if (present.empty()) paper.missing.emplace_back("paper 1's systems", "no platform file of group \"paper1\"");
  const std::string contexts = join(request.contexts, ", ");
  const std::string decode_request = axis("trace.model", {request.model}) + axis("trace.steps", {request.steps});
  const std::string by_context = "trace.context_tokens";
  const std::vector<std::string> stages = {"weights", "kv_write", "kv_read_attention", "pursuit", "nonlinear",
                                           "transfers"};
  auto stage_metrics = [&stages](const std::string& prefix, const std::string& suffix) {
    std::vector<std::string> names;
    for (const std::string& s : stages) names.push_back(prefix + s + suffix);
    return join(names, ",");
  };
  auto table = [&](const std::string& y, const std::string& columns, const std::vector<std::string>& shown) {
    return std::vector<std::string>{"--figure", "table", "--y", y, "--rows", by_context, "--columns", columns,
                                    "--systems", join(shown, ",")};
  };
  if (!present.empty()) {
    Experiment e{"cim-decode",
                 "Decode time between tokens and energy per token of " + join(systems, "/") + " on " + request.model +
                     " (" + request.steps + " decode steps after " + contexts + " context tokens)",
                 sweep_text("cim-decode", "paper 1's platforms over the context",
                            decode_request + axis("platform", present) + axis(by_context, request.contexts)),
                 {}};
    const std::vector<std::string> bars = {"--group", by_context};
    auto with = [&bars](std::vector<std::string> args) {
      args.insert(args.end(), bars.begin(), bars.end());
      return args;
    };
    e.figures = {
        {"cim_tbt", "Time between tokens per context length (simulated; S1 out of controller SRAM is marked OOM)",
         with({"--figure", "bars", "--y", "tbt_s"})},
        {"cim_energy", "Energy per token per context length", with({"--figure", "bars", "--y", "energy_per_token_j"})},
        {"cim_stage_time", "Stage breakdown of the time between tokens (ms per token)",
         with({"--figure", "stack", "--parts", stage_metrics("stage.", "_s"), "--y-label", "time per token (ms)"})},
        {"cim_stage_energy", "Stage breakdown of the energy per token (J per token)",
         with({"--figure", "stack", "--parts", stage_metrics("stage_energy.", "_j"), "--y-label",
               "energy per token (J)"})},
        {"cim_tbt_table", "Time between tokens, simulated (ms)", table("tbt_s", "platform", systems)},
        {"cim_tbt_eq4_table", "Time between tokens with paper 1's eq. (4) model (ms)",
         table("tbt_eq4_s", "platform", systems)},
        {"cim_energy_table", "Energy per token (J)", table("energy_per_token_j", "platform", systems)},
    };
    if (has_platform("b1")) {
      e.figures.push_back({"cim_speedup", "Speedup of the time between tokens over B1",
                           with({"--figure", "speedup", "--baseline", "B1"})});
      e.figures.push_back({"cim_speedup_table", "Speedup over B1 (x)", table("speedup", "platform", systems)});
      e.figures.back().plot_args.insert(e.figures.back().plot_args.end(), {"--baseline", "B1"});
    }
    paper.experiments.push_back(e);
  }
  std::vector<std::string> ssd, ssd_systems;
  for (size_t i = 0; i < present.size(); ++i)
    if (present[i] == "s1" || present[i] == "s2") {
      ssd.push_back(present[i]);
      ssd_systems.push_back(systems[i]);
    }
  // S1 with a large SRAM, so that the comparison has S1 where S1 itself is out of memory.
  if (has_platform("s1_large_sram")) {
    ssd.push_back("s1_large_sram");
    ssd_systems.push_back(schema::load_platform("s1_large_sram").platform.name());
  }
  if (!ssd.empty()) {
    Experiment e{"cim-nonlinear",
                 "Nonlinear offloading (Appendix B): integer ops on the SSD-CIM controller vs FP32 on the host NPU (" +
                     join(ssd_systems, ", ") + ", " + request.model + ", " + contexts + " context tokens)",
                 sweep_text("cim-nonlinear", "nonlinear ops on the controller or the NPU",
                            decode_request + axis("platform", ssd) +
                                axis("cim.nonlinear_device", {"CONTROLLER", "NPU"}) + axis(by_context, request.contexts)),
                 {}};
    e.figures = {
        {"nonlinear_share", "Share of the time between tokens spent in nonlinear ops (%), per placement",
         table("stage_share.nonlinear", "cim.nonlinear_device", ssd_systems)},
        {"nonlinear_tbt", "Time between tokens (ms), per placement of the nonlinear ops",
         table("tbt_s", "cim.nonlinear_device", ssd_systems)},
        {"nonlinear_energy", "Energy per token (J), per placement of the nonlinear ops",
         table("energy_per_token_j", "cim.nonlinear_device", ssd_systems)},
    };
    paper.experiments.push_back(e);
  } else {
    paper.missing.emplace_back("nonlinear offloading (NPU) vs integer ops on the controller", "needs S1 or S2");
  }
  paper.missing.emplace_back("the engine's cumulative accuracy ablation",
                             "not a simulation: run `ispsim engine ppl --text assets/brown-llama/heldout.txt --quant all` "
                             "(about 11 CPU-minutes; figures in README.md)");
  paper.missing.emplace_back("Sec. 5.5 and Appendix B of paper 1",
                             "not in the reference text this project has (reference/paper1-integer-dictionary-cim.md); "
                             "B2's pursuit on the CPU and the nonlinear offloading follow the issue's description of them "
                             "(models/cim/README.md)");
  return paper;
}

// The command as it pastes into a POSIX shell run from the data root (the
// repository root, or an install's share/ispsim): paths inside it relative to
// it (no absolute path of the machine that wrote it), every word that is not
// plain single-quoted ('\'' for a quote).
std::string shell_words(const std::vector<std::string>& argv) {
  const std::string root = data_dir() + "/";
  std::string out;
  for (std::string a : argv) {
    if (a.rfind(root, 0) == 0) a = a.substr(root.size());
    const bool plain = a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=,:+") ==
                       std::string::npos && !a.empty();
    std::string quoted = "'";
    for (const char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += (out.empty() ? "" : " ") + (plain ? a : quoted + "'");
  }
  return out;
}

// An experiment's sweep, checked, and its number of runs. A bad --model,
// --contexts or --steps shows as a bad value of its axis; the message names the
// option instead.
size_t checked_runs(const Experiment& e) {
  static const std::pair<const char*, const char*> options[] = {
      {"trace.context_tokens: ", "--contexts"}, {"trace.steps: ", "--steps"}, {"trace.model: ", "--model"}};
  try {
    return sweep::sweep_from_text(e.sweep, "sweep " + e.name).runs.size();
  } catch (const BadInput& error) {
    const std::string what = error.what();
    for (const auto& [axis, option] : options)
      if (const size_t at = what.find(axis); at != std::string::npos)
        throw BadInput(option, what.substr(at + std::strlen(axis)));
    throw;
  }
}

// The folders a reproduce run makes, removed again if it fails before its
// first sweep has results (after that they hold work a rerun resumes).
class MadeFolders {
 public:
  void make(const fs::path& dir) {
    for (fs::path d = dir; !d.empty() && !fs::exists(d); d = d.parent_path()) made_.insert(made_.begin(), d);
    fs::create_directories(dir);
  }
  void keep() { made_.clear(); }
  ~MadeFolders() {
    std::error_code ignored;
    for (auto d = made_.rbegin(); d != made_.rend(); ++d) fs::remove_all(*d, ignored);
  }

 private:
  std::vector<fs::path> made_;  // outermost first
};

}  // namespace

int reproduce(const Args& args) {
  if (!args.empty() && args[0] == "workloads") return reproduce_workloads(Args(args.begin() + 1, args.end()));
  std::string paper_name, out_dir;
  long long jobs_value = std::max(1u, std::thread::hardware_concurrency()), shards_value = 0;
  po::options_description desc("reproduce options");
  desc.add_options()
      ("help,h", "print this help")
      ("paper", po::value(&paper_name), "memllm, cim or workloads (ispsim reproduce workloads --help)")
      ("out,o", po::value(&out_dir), "output folder (default: reproduce-<paper>)")
      ("jobs,j", po::value(&jobs_value), "simulations at once (default: the number of CPUs)")
      ("full", "memllm: the realistic grid, all six models and long contexts (hours; default: two models, short "
               "sweeps); cim runs the paper's grid already")
      ("model", po::value<std::string>(), "cim: model preset (default Llama-3.1-8B)")
      ("contexts", po::value<std::string>(), "cim: context lengths in tokens, comma separated (default 1024,65536,262144)")
      ("steps", po::value<std::string>(), "cim: decode steps per run (default 32 = U, the pursuit amortised exactly)")
      ("slurm", "run every sweep as a Slurm job array (sbatch --wait), then collect")
      ("shards", po::value(&shards_value), "with --slurm: array tasks per sweep (default min(runs, 16))")
      ("list", "print the experiments, figures and missing items; run nothing");
  po::positional_options_description positional;
  positional.add("paper", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: ispsim reproduce memllm|cim|workloads [options]\n" << desc;
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw BadInput("ispsim reproduce", e.what());
  }
  if (paper_name != "memllm" && paper_name != "cim")
    throw BadInput("ispsim reproduce", paper_name.empty() ? "missing the paper (memllm, cim or workloads)"
                                                          : "unknown paper '" + paper_name + "' (memllm, cim or workloads)");
  const unsigned jobs = checked_count(jobs_value, "--jobs", 1, kMaxJobs);
  const unsigned shards = vm.count("shards") ? checked_count(shards_value, "--shards", 1, kMaxShards) : 0;
  if (vm.count("shards") && !vm.count("slurm")) throw BadInput("--shards", "needs --slurm");
  const bool full = vm.count("full"), slurm = vm.count("slurm");
  for (const char* option : {"model", "contexts", "steps"})
    if (vm.count(option) && paper_name != "cim")
      throw BadInput(std::string("--") + option, "is a setting of `reproduce cim` only");
  if (full && paper_name == "cim") throw BadInput("--full", "reproduce cim runs the paper's grid without it");
  CimRequest cim_request;
  if (vm.count("model")) cim_request.model = vm["model"].as<std::string>();
  if (vm.count("contexts")) cim_request.contexts = split_list(vm["contexts"].as<std::string>(), "--contexts");
  if (vm.count("steps")) cim_request.steps = vm["steps"].as<std::string>();
  if (cim_request.contexts.empty()) throw BadInput("--contexts", "no context length given");
  const Paper paper = paper_name == "memllm" ? memllm_paper(full) : cim_paper(cim_request);
  if (out_dir.empty()) out_dir = "reproduce-" + paper_name;
  if (fs::exists(out_dir) && !fs::is_directory(out_dir))
    throw BadInput("--out", out_dir + " exists and is not a directory");

  if (vm.count("list")) {  // a dry run: every sweep expanded and checked, nothing run
    size_t total = 0;
    for (const Experiment& e : paper.experiments) {
      const size_t runs = checked_runs(e);
      total += runs;
      std::cout << e.name << ": " << e.title << " (" << runs << " runs)\n";
      for (const Figure& f : e.figures) std::cout << "  figure " << f.stem << ": " << f.title << "\n";
    }
    for (const auto& [item, why] : paper.missing) std::cout << "missing: " << item << ": " << why << "\n";
    std::cout << "total: " << paper.experiments.size() << " sweeps, " << total << " runs\n";
    return 0;
  }

  const std::string python = "/usr/bin/python3", plot = data_path("tools/plot/ispsim_plot.py");
  if (!paper.experiments.empty() && run_command({python, "-c", "import matplotlib"}) != 0)
    throw BadInput("ispsim reproduce", "figures need Debian's python3-matplotlib for /usr/bin/python3 (bash tools/setup.sh installs it)");
  // Every sweep checked before anything is written (a bad --contexts or --steps: one line, no folder).
  for (const Experiment& e : paper.experiments) checked_runs(e);
  MadeFolders made;
  for (const char* sub : {"sweeps", "figures"}) made.make(fs::path(out_dir) / sub);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string ispsim = fs::read_symlink("/proc/self/exe").string();
  const bool progress = isatty(STDERR_FILENO);

  std::ostringstream index;
  index << "# " << paper.title << "\n\n"
        << "Written by `" << shell_words({"ispsim", "reproduce", paper_name, "--out", out_dir}) << (full ? " --full" : "")
        << (slurm ? " --slurm" : "") << "` with ispsim " << sweep::ispsim_version() << ". "
        << (paper_name == "cim" ? "The paper's request (Sec. 5); `--model`, `--contexts` and `--steps` change it."
            : full ? "Full mode: the realistic grid."
                   : "Short mode (default): two models in the grid and short line sweeps; `--full` runs all six models and long contexts.")
        << " Each figure is a PNG and an SVG in `figures/`; each sweep's tidy results (one row per run, CSV and JSON) are in its folder."
        << " The commands below run from the repository root.\n";
  int failures = 0;
  for (const Experiment& e : paper.experiments) {
    const std::string spec = (fs::path(out_dir) / "sweeps" / (e.name + ".txtpb")).string();
    const std::string results_dir = (fs::path(out_dir) / e.name).string();
    {
      AtomicFile f(spec);
      f.stream() << e.sweep;
      f.commit();
    }
    const sweep::SweepPlan plan = sweep::load_sweep(spec);
    std::vector<std::string> sweep_command = {ispsim, "sweep", spec, "--out", results_dir, "-j", std::to_string(jobs)};
    if (progress) std::cerr << "reproduce " << paper_name << ": sweep " << e.name << " (" << plan.runs.size() << " runs)\n";
    size_t ok = 0, oom = 0, errors = 0;
    if (slurm) {
      sweep::SlurmOptions o;
      o.ispsim = ispsim;
      o.spec = fs::absolute(spec).string();
      o.out_dir = fs::absolute(results_dir).string();
      o.workdir = fs::current_path().string();
      o.shards = shards ? shards : static_cast<unsigned>(std::min<size_t>(plan.runs.size(), 16));
      o.cpus_per_task = 1;
      const std::string script = sweep::write_slurm_script(plan, o);
      sweep::submit_slurm_script(script, true);
      const sweep::CollectReport report = sweep::collect_shards(plan, results_dir, o.shards, command_line());
      if (!report.missing.empty()) {
        std::cerr << "ispsim reproduce: sweep " << e.name << ": " << report.missing.size() << " Slurm shards missing (logs in "
                  << results_dir << "/slurm/logs)\n";
        ++failures;
      }
      sweep_command = {ispsim, "sweep", spec, "--out", results_dir, "--slurm", "--submit", "--wait"};
      for (const sweep::PlannedRun& r : plan.runs) {
        auto res = sweep::load_result(results_dir, r.id);
        (!res ? errors : res->status == "ok" ? ok : res->status == "oom" ? oom : errors)++;
      }
    } else {
      sweep::RunnerOptions o;
      o.command_line = command_line();
      o.out_dir = results_dir;
      o.jobs = jobs;
      o.progress = progress;
      const sweep::SweepOutcome outcome = sweep::run_sweep(plan, o);
      ok = outcome.ok, oom = outcome.oom, errors = outcome.errors;
    }
    made.keep();
    failures += errors > 0;
    index << "\n## " << e.title << "\n\n"
          << "Sweep `sweeps/" << e.name << ".txtpb`: " << plan.runs.size() << " runs, " << ok << " ok, " << oom
          << " out of memory, " << errors << " failed. Results: `" << e.name << "/results.csv`, `" << e.name
          << "/results.json`.\n\n```sh\n" << shell_words(sweep_command) << "\n```\n";
    for (const Figure& f : e.figures) {
      std::vector<std::string> command = {python, plot, results_dir + "/results.json"};
      command.insert(command.end(), f.plot_args.begin(), f.plot_args.end());
      command.push_back("--title");
      command.push_back(f.title);
      command.push_back("--out");
      command.push_back((fs::path(out_dir) / "figures" / f.stem).string());
      const bool drawn = run_command(command) == 0;
      failures += !drawn;
      const bool table = f.plot_args.size() > 1 && f.plot_args[1] == "table";
      index << "\n### " << f.title << "\n\n";
      if (!drawn) index << "**Not drawn: the plot command failed (its error is on the reproduce run's stderr).**\n\n";
      else if (table)  // the table itself, and where it is
        index << read_text_file((fs::path(out_dir) / "figures" / (f.stem + ".md")).string()) << "\n([figures/"
              << f.stem << ".md](figures/" << f.stem << ".md))\n\n";
      else index << "![" << f.title << "](figures/" << f.stem << ".png)  \n[SVG](figures/" << f.stem << ".svg)\n\n";
      index << "```sh\n" << shell_words(command) << "\n```\n";
    }
  }
  index << "\n## Missing\n\n";
  if (paper.missing.empty()) index << "Nothing: every experiment of SPEC.md Sec. 5 for this paper is above.\n";
  for (const auto& [item, why] : paper.missing) index << "- **" << item << "**: " << why << "\n";
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char wall_text[64];
  std::snprintf(wall_text, sizeof wall_text, "%.0f s", wall);
  index << "\nWall time of this reproduce run: " << wall_text << " (" << jobs << " simulations at a time"
        << (slurm ? ", through Slurm" : "") << ").\n";
  {
    AtomicFile f((fs::path(out_dir) / "index.md").string());
    f.stream() << index.str();
    f.commit();
  }
  if (progress) std::cerr << "reproduce " << paper_name << ": " << out_dir << "/index.md (" << wall_text << ")\n";
  if (failures) {
    std::cerr << "ispsim reproduce: " << failures << " sweeps or figures failed; see " << out_dir << "/index.md\n";
    return 1;
  }
  return 0;
}

}  // namespace ispsim::cli
