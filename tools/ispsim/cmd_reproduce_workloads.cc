// `ispsim reproduce workloads`: request streams on the MemLLM-study systems,
// two dataset profiles. Three passes, every serve in its own process:
//   1. unloaded: each system serves the stream back to back (one closed-loop
//      user, no think time): service time, TTFT and energy per request;
//   2. the knee: Poisson arrivals at fractions of the fastest system's
//      capacity (1 / its mean service time), the same requests at every rate;
//   3. throughput at the SLO: per system, the highest Poisson rate whose p99
//      TTFT stays within the SLO (kSloFactor below), by bisection
//      (systems::search_slo), with its bracket.
// A system that cannot hold a request of a dataset's stream (workload serve's
// exit 3) is marked out of memory in every table of that dataset and left out
// of its figures' lines.
// tools/plot/workload_plot.py then draws the figures and the table, and
// DIR/index.md lists them with their commands.
#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

#include "common/atomic_file.h"
#include "common/data_dir.h"
#include "common/error.h"
#include "platforms/systems/child_process.h"
#include "platforms/systems/serving_blend.h"
#include "platforms/systems/slo_search.h"
#include "schema/platform_loader.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/cli_common.h"
#include "traces/workload/stream_gen.h"
#include "traces/workload/workload_file.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace ispsim::cli {
namespace {

// Loads (fractions of the fastest system's capacity) the knee is drawn at;
// the CDFs are those at kCdfLoad. The SLO is kSloFactor x the fastest
// system's mean service time (a request arriving during another's service
// waits up to one; with a few hundred requests the p99 sees such collisions
// at any rate); each system's search brackets [kSloLow, kSloHigh] x its own
// capacity.
const std::vector<double> kLoads = {0.2, 0.4, 0.6, 0.8, 0.9, 1.0, 1.1};
constexpr double kCdfLoad = 0.6;
constexpr double kSloFactor = 3, kSloLow = 0.05, kSloHigh = 1.2;
constexpr unsigned kSloSteps = 5;

struct Settings {
  std::string out = "reproduce-workloads", model = "SmolLM2-1.7B";
  std::vector<std::string> datasets = {"hpt", "tat"}, platforms;
  uint64_t requests = 200;
  unsigned jobs = 1;
};

const char* kStatsHeader =
    "status,requests,throughput_per_s,queueing_mean_s,ttft_mean_s,ttft_p50_s,ttft_p99_s,tbt_p50_s,tbt_p99_s,"
    "latency_mean_s,latency_p50_s,latency_p99_s,energy_mean_j,nand_read_mean_bytes,nand_written_mean_bytes,"
    "pcie_host_to_device_mean_bytes,pcie_device_to_host_mean_bytes";

// The status of a system that cannot hold the stream's requests.
const char* kOutOfMemory = "out of memory";

// `status` then as many empty cells as `header` has columns after it.
std::string status_only(const std::string& status, const char* header) {
  return status + std::string(std::count(header, header + std::strlen(header), ','), ',');
}

bool served(const std::string& cells) { return cells.rfind(kOutOfMemory, 0) != 0; }

// A stream's statistics as the cells of kStatsHeader (SI units).
std::string stats_cells(const systems::ServingStatistics& s) {
  if (!s.out_of_memory.empty()) return status_only(kOutOfMemory, kStatsHeader);
  std::ostringstream o;
  o.precision(9);
  const auto sec = [](double ns) { return ns * 1e-9; };
  o << "served," << s.requests << ',' << s.throughput_per_s() << ',' << sec(s.queueing.mean()) << ','
    << sec(s.ttft.mean()) << ',' << sec(s.ttft.quantile(0.5)) << ',' << sec(s.ttft.quantile(0.99)) << ',' << sec(s.tbt.quantile(0.5)) << ','
    << sec(s.tbt.quantile(0.99)) << ',' << sec(s.latency.mean()) << ',' << sec(s.latency.quantile(0.5)) << ','
    << sec(s.latency.quantile(0.99)) << ',' << s.energy.mean() << ',' << s.nand_read.mean() << ','
    << s.nand_written.mean() << ',' << s.pcie_host_to_device.mean() << ',' << s.pcie_device_to_host.mean();
  return o.str();
}

// Column `name` of kStatsHeader in `cells`.
double stat(const std::string& cells, const std::string& name) {
  std::istringstream names(kStatsHeader), values(cells);
  for (std::string n, v; std::getline(names, n, ',') && std::getline(values, v, ',');)
    if (n == name) return std::stod(v);
  throw std::logic_error("reproduce workloads: no statistic " + name);
}

// One serve: a stream on a platform, and where its per-request CSV goes ("" none).
struct ServeTask {
  std::string stream, platform, requests_csv;
};

// Runs every task in its own process, `jobs` at a time; returns each one's
// stats_cells (a system out of memory is a status, not a failure). A failed
// serve ends the command (its error line, exit 2 or 1).
std::vector<std::string> serve_all(const std::vector<ServeTask>& tasks, unsigned jobs) {
  std::vector<std::function<std::string()>> work;
  for (const ServeTask& t : tasks)
    work.push_back([t] {
      systems::ServeOptions o;
      o.requests_csv = t.requests_csv;
      return stats_cells(systems::serve_blend_stream(schema::load_platform(t.platform), t.stream, o));
    });
  std::vector<std::string> cells;
  for (const systems::ChildResult& r : systems::run_in_children(work, jobs)) {
    if (r.exit_code == 2) throw BadInput("ispsim reproduce workloads", r.output);
    if (r.exit_code != 0) throw std::runtime_error(r.output);
    cells.push_back(r.output);
  }
  return cells;
}

// The workload of `dataset`, written to DIR/workloads (each pass sets the arrivals).
workload::Workload dataset_workload(const Settings& s, const std::string& dataset) {
  const std::string path = (fs::path(s.out) / "workloads" / (dataset + ".txtpb")).string();
  AtomicFile f(path);
  f.stream() << "# Written by `ispsim reproduce workloads`; each pass sets its own arrivals.\n"
             << "model: \"" << s.model << "\"\ndataset: \"" << dataset << "\"\ndocuments: 1000\nrequests: "
             << s.requests << "\npoisson { rate_per_s: 1 }\n";
  f.commit();
  return workload::load_workload(path);
}

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

std::string rate_text(double rate_per_s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", rate_per_s);
  return text;
}

// The stream of `w` at `rate_per_s` as DIR/streams/NAME_RATE.stream (0: back
// to back, one closed-loop user without think time).
std::string write_stream(const Settings& s, workload::Workload w, const std::string& name, double rate_per_s) {
  if (rate_per_s > 0)
    w.mutable_poisson()->set_rate_per_s(rate_per_s);
  else
    w.mutable_closed_loop()->set_users(1);
  const std::string file = name + (rate_per_s > 0 ? "_" + rate_text(rate_per_s) + "_per_s" : "_back_to_back");
  const std::string path = (fs::path(s.out) / "streams" / (file + ".stream")).string();
  workload::generate_stream(w, "", path);
  return path;
}

// Per dataset and system: what the passes found.
struct SystemResult {
  std::string dataset, platform, system;
  std::string unloaded;  // stats_cells of the back-to-back run
  std::string slo;       // the search's outcome (slo_cells)
};

using Workloads = std::map<std::string, workload::Workload>;  // by dataset

std::string system_name(const std::string& platform) { return schema::load_platform(platform).platform.name(); }

// Pass 1: every system back to back on every dataset; DIR/unloaded.csv.
std::vector<SystemResult> unloaded_pass(const Settings& s, const Workloads& workloads) {
  std::vector<SystemResult> results;
  std::vector<ServeTask> tasks;
  for (const std::string& d : s.datasets) {
    const std::string stream = write_stream(s, workloads.at(d), d, 0);
    for (const std::string& p : s.platforms) {
      results.push_back({d, p, system_name(p), "", ""});
      tasks.push_back({stream, p, ""});
    }
  }
  const std::vector<std::string> cells = serve_all(tasks, s.jobs);
  AtomicFile csv((fs::path(s.out) / "unloaded.csv").string());
  csv.stream() << "dataset,platform,system," << kStatsHeader << '\n';
  for (size_t i = 0; i < results.size(); ++i) {
    results[i].unloaded = cells[i];
    csv.stream() << results[i].dataset << ',' << results[i].platform << ',' << results[i].system << ',' << cells[i]
                 << '\n';
  }
  csv.commit();
  return results;
}

// The fastest system's capacity on `dataset`, requests/s (1 / its mean service
// time); BadInput when every system is out of memory there.
double best_capacity(const std::vector<SystemResult>& results, const std::string& dataset) {
  double best = 0;
  for (const SystemResult& r : results)
    if (r.dataset == dataset && served(r.unloaded)) best = std::max(best, 1 / stat(r.unloaded, "latency_mean_s"));
  if (best == 0) throw BadInput("--datasets", dataset + ": every system is out of memory on its stream");
  return best;
}

// The SLO on `dataset`: kSloFactor x the fastest system's mean service time, s.
double slo_s(const std::vector<SystemResult>& results, const std::string& dataset) {
  return kSloFactor / best_capacity(results, dataset);
}

// Pass 2: the knee, every system at every load; DIR/knee.csv and, at
// kCdfLoad, each run's per-request CSV in DIR/requests.
void knee_pass(const Settings& s, const Workloads& workloads, const std::vector<SystemResult>& results) {
  std::vector<ServeTask> tasks;
  std::vector<std::string> rows, cells;  // cells: a system's out-of-memory row, or "" until served
  for (const std::string& d : s.datasets)
    for (const double load : kLoads) {
      const double rate = load * best_capacity(results, d);
      const std::string stream = write_stream(s, workloads.at(d), d, rate);
      for (const SystemResult& r : results) {
        if (r.dataset != d) continue;
        rows.push_back(d + ',' + r.platform + ',' + r.system + ',' + rate_text(load) + ',' + rate_text(rate));
        cells.push_back(served(r.unloaded) ? "" : r.unloaded);
        const fs::path csv = fs::path(s.out) / "requests" / (d + "_" + r.platform + ".csv");
        if (served(r.unloaded)) tasks.push_back({stream, r.platform, load == kCdfLoad ? csv.string() : ""});
      }
    }
  const std::vector<std::string> served_cells = serve_all(tasks, s.jobs);
  AtomicFile csv((fs::path(s.out) / "knee.csv").string());
  csv.stream() << "dataset,platform,system,load,rate_per_s," << kStatsHeader << '\n';
  for (size_t i = 0, next = 0; i < rows.size(); ++i)
    csv.stream() << rows[i] << ',' << (cells[i].empty() ? served_cells[next++] : cells[i]) << '\n';
  csv.commit();
}

const char* kSloHeader = "bracket,slo_ttft_p99_s,low_per_s,high_per_s,met_rate_per_s,missed_rate_per_s,probes";

// One system's SLO search (its probes serve in their own processes) as the cells of kSloHeader.
std::string search_one(const Settings& s, const workload::Workload& w, const SystemResult& r, double slo) {
  const double capacity = 1 / stat(r.unloaded, "latency_mean_s");
  const double low = kSloLow * capacity, high = kSloHigh * capacity;
  const systems::SloResult found = systems::search_slo(low, high, kSloSteps, slo * 1e9, [&](double rate) {
    const std::string stream = write_stream(s, w, r.dataset + "_" + r.platform, rate);
    const double p99_s = stat(serve_all({{stream, r.platform, ""}}, 1)[0], "ttft_p99_s");
    fs::remove(stream);
    return p99_s * 1e9;
  });
  const char* bracket = found.fails_at_low ? "below low" : found.meets_at_high ? "at least high" : "between";
  std::ostringstream o;
  o.precision(9);
  o << bracket << ',' << slo << ',' << low << ',' << high << ',' << found.met_rate_per_s << ','
    << found.missed_rate_per_s << ',' << found.probes.size();
  return o.str();
}

// Pass 3: every system's SLO search, `jobs` searches at a time; DIR/slo.csv
// with each system's unloaded energy per request.
void slo_pass(const Settings& s, const Workloads& workloads, std::vector<SystemResult>& results) {
  std::vector<std::function<std::string()>> searches;
  for (const SystemResult& r : results)
    searches.push_back([&s, &workloads, &results, r] {
      if (!served(r.unloaded)) return status_only(kOutOfMemory, kSloHeader);
      return search_one(s, workloads.at(r.dataset), r, slo_s(results, r.dataset));
    });
  const std::vector<systems::ChildResult> found = systems::run_in_children(searches, s.jobs);
  AtomicFile csv((fs::path(s.out) / "slo.csv").string());
  csv.stream().precision(9);  // as stats_cells
  csv.stream() << "dataset,platform,system," << kSloHeader << ",capacity_per_s,energy_mean_j\n";
  for (size_t i = 0; i < results.size(); ++i) {
    if (found[i].exit_code == 2) throw BadInput("ispsim reproduce workloads", found[i].output);
    if (found[i].exit_code != 0) throw std::runtime_error(found[i].output);
    results[i].slo = found[i].output;
    const SystemResult& r = results[i];
    csv.stream() << r.dataset << ',' << r.platform << ',' << r.system << ',' << r.slo << ',';
    if (served(r.unloaded))
      csv.stream() << 1 / stat(r.unloaded, "latency_mean_s") << ',' << stat(r.unloaded, "energy_mean_j") << '\n';
    else
      csv.stream() << ",\n";
  }
  csv.commit();
}

std::vector<std::string> loads_text() {
  std::vector<std::string> out;
  for (const double load : kLoads) out.push_back(rate_text(load));
  return out;
}

Settings parse_settings(const Args& args, bool& help) {
  Settings s;
  long long jobs = 1, requests = static_cast<long long>(s.requests);
  std::string datasets, platforms;
  po::options_description desc("reproduce workloads options");
  desc.add_options()("help,h", "print this help")
      ("out,o", po::value(&s.out), "output folder (default reproduce-workloads)")
      ("jobs,j", po::value(&jobs), "simulations at once (default 1)")
      ("requests", po::value(&requests), "requests per stream (default 200)")
      ("datasets", po::value(&datasets), "dataset profiles, comma separated (default hpt,tat)")
      ("platforms", po::value(&platforms), "platforms, comma separated (default the MemLLM-study group)")
      ("model", po::value(&s.model), "model preset (default SmolLM2-1.7B)");
  help = !parse_options(args, "reproduce workloads", desc);
  if (help) return s;
  s.jobs = checked_count(jobs, "--jobs", 1, kMaxJobs);
  s.requests = checked_count(requests, "--requests", 1, 1000000);
  if (!datasets.empty()) s.datasets = split_list(datasets, "--datasets");
  s.platforms = platforms.empty() ? schema::platforms_in_group("memllm_study") : split_list(platforms, "--platforms");
  if (s.platforms.empty()) throw BadInput("--platforms", "no platform (and no platform file of group memllm_study)");
  for (const std::string& p : s.platforms) systems::check_serves_streams(schema::load_platform(p));
  if (fs::exists(s.out) && !fs::is_directory(s.out)) throw BadInput("--out", s.out + " exists and is not a directory");
  return s;
}

// DIR/index.md: the settings, each figure and table with the commands behind it.
void write_index(const Settings& s, const std::string& plot_command, double wall_s) {
  std::ostringstream o;
  o << "# Request streams on the MemLLM-study systems\n\n"
    << "Written by `ispsim reproduce workloads` (" << s.requests << " requests per stream, " << s.model
    << ", datasets " << join_list(s.datasets) << ", " << s.jobs << " simulations at a time; " << wall_s
    << " s wall). Each dataset's workload file is in `workloads/`; every stream drawn from it (`streams/`) holds the "
       "same requests, only their arrivals differ.\n\n"
    << "1. **Unloaded** (`unloaded.csv`): each system serves the stream back to back (one closed-loop user, no think "
       "time); its capacity is 1 / its mean service time.\n"
    << "2. **The knee** (`knee.csv`): Poisson arrivals at " << join_list(loads_text()) << " x the fastest "
    << "system's capacity.\n"
    << "3. **Throughput at the SLO** (`slo.csv`): the highest Poisson rate whose p99 TTFT stays within " << kSloFactor
    << " x the fastest system's mean service time, by bisection between " << kSloLow << " and " << kSloHigh
    << " x the system's own capacity (" << kSloSteps << " steps after the two ends), with its bracket.\n\n"
    << "One point by hand (rate R requests/s set in the workload file):\n\n```sh\n"
    << "ispsim workload gen --workload " << s.out << "/workloads/DATASET.txtpb --out S.stream\n"
    << "ispsim workload serve --platform PLATFORM --stream S.stream --requests R.csv\n```\n\n"
    << "Figures and table:\n\n```sh\n" << plot_command << "\n```\n\n"
    << "## The knee\n\n![knee](figures/knee.png)  \n[SVG](figures/knee.svg)\n\n"
    << "## TTFT and TBT at " << kCdfLoad << " x the fastest capacity\n\n"
    << "![cdf](figures/cdf.png)  \n[SVG](figures/cdf.svg)\n\n"
    << "## Throughput at the SLO and energy per request\n\n![slo](figures/slo_energy.png)  \n"
    << "[SVG](figures/slo_energy.svg)\n\n" << read_text_file((fs::path(s.out) / "figures" / "slo_energy.md").string())
    << "\nEnergy per request: the unloaded run's mean (dynamic and static energy from the start of a request's "
       "service until its background writes drained or the next request started).\n";
  AtomicFile f((fs::path(s.out) / "index.md").string());
  f.stream() << o.str();
  f.commit();
}

}  // namespace

int reproduce_workloads(const Args& args) {
  bool help = false;
  Settings s = parse_settings(args, help);
  if (help) return 0;
  const std::string python = "/usr/bin/python3", plot = data_path("tools/plot/workload_plot.py");
  if (run_command({python, "-c", "import matplotlib"}) != 0)
    throw BadInput("ispsim reproduce workloads",
                   "figures need Debian's python3-matplotlib for /usr/bin/python3 (bash tools/setup.sh installs it)");
  const bool created = !fs::exists(s.out);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    for (const char* sub : {"workloads", "streams", "requests", "figures"})
      fs::create_directories(fs::path(s.out) / sub);
    Workloads workloads;
    for (const std::string& d : s.datasets) workloads[d] = dataset_workload(s, d);
    std::vector<SystemResult> results = unloaded_pass(s, workloads);
    knee_pass(s, workloads, results);
    slo_pass(s, workloads, results);
    if (run_command({python, plot, s.out}) != 0)
      throw std::runtime_error("reproduce workloads: " + plot + " failed (its error is above)");
    write_index(s, "/usr/bin/python3 tools/plot/workload_plot.py " + s.out,
                std::round(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
  } catch (...) {
    if (created) fs::remove_all(s.out);
    throw;
  }
  std::cout << "wrote " << s.out << "/index.md\n";
  return 0;
}

}  // namespace ispsim::cli
