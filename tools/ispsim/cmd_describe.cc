// ispsim describe [PLATFORM|MODULE] [--set path=value]...
//
// No argument: lists the platforms on the search path and the modules (the
// parameter groups of a platform). A platform (name or file): every parameter
// with its full path, value, unit, where the value came from, default, range,
// meaning and source. A module (e.g. "nand" or "NandParams"): its parameters
// with unit, default, range, meaning and source. A role (a field of
// ModuleSelection, e.g. "isp_accelerator"): its registered implementations,
// each with the parameters it reads. Everything is read from the schema's
// field options and the role's factory, so this output cannot drift from the
// code.
#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "common/error.h"
#include "models/isp/page_compute.h"
#include "models/isp/register_all.h"
#include "schema/defaults.h"
#include "schema/field_text.h"
#include "schema/overrides.h"
#include "schema/hardware_presets.h"
#include "schema/parameter_table.h"
#include "platforms/systems/metrics.h"
#include "platforms/systems/system_registry.h"
#include "schema/platform_loader.h"
#include "tools/ispsim/cli.h"

namespace ispsim::cli {

namespace {

namespace po = boost::program_options;
using google::protobuf::FieldDescriptor;
using schema::ParameterRow;

const char* kUsage =
    "usage: ispsim describe [PLATFORM|MODULE|ROLE|metrics] [--set path=value]... [--format F]\n"
    "  (none)     list the platforms and the modules\n"
    "  metrics    the metrics of the result files: name, SI unit, meaning and the\n"
    "             statistic each reads (--format text, csv or json)\n"
    "  PLATFORM   a platform name (see the list) or a .textproto file: every parameter\n"
    "             with value, unit, origin (file, default or --set), default, range,\n"
    "             meaning and source (long text values are abbreviated in the table)\n"
    "  MODULE     a parameter group, e.g. nand (or its message name, NandParams)\n"
    "  ROLE       a pluggable role, e.g. isp_accelerator: its implementations and\n"
    "             the parameters each reads\n";

// The platform's parameter groups: fields of Platform that are messages.
std::vector<const FieldDescriptor*> modules() {
  std::vector<const FieldDescriptor*> groups;
  const auto* platform = schema::Platform::descriptor();
  for (int i = 0; i < platform->field_count(); ++i) {
    const FieldDescriptor* field = platform->field(i);
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) groups.push_back(field);
  }
  return groups;
}

const FieldDescriptor* find_module(const std::string& name) {
  for (const FieldDescriptor* field : modules()) {
    if (field->name() == name || field->message_type()->name() == name) return field;
  }
  return nullptr;
}

// The pluggable roles: fields of ModuleSelection. Only the ISP accelerator has
// implementations registered so far (models/isp register_all()).
const FieldDescriptor* find_role(const std::string& name) {
  const FieldDescriptor* field = schema::ModuleSelection::descriptor()->FindFieldByName(name);
  return field != nullptr && name == "isp_accelerator" ? field : nullptr;
}

std::string joined(const std::vector<std::string>& names, const std::string& prefix = "") {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + prefix + n;
  return out;
}

std::string default_text(const ParameterRow& row, bool is_string);
bool is_string_field(const std::string& path);

// Every implementation of the ISP accelerator role with its description, its
// power budget at the defaults and the IspParams it reads (the engine's own
// scratchpad parameters included).
int describe_isp_accelerators(const FieldDescriptor& role) {
  isp::register_all();
  const schema::ParameterDoc doc = schema::parameter_doc(role);
  std::cout << "role " << role.name() << ": " << doc.doc << "\n"
            << "chosen in a platform file as: modules { " << role.name() << ": \"<name>\" }, or on the command line "
            << "as: --set modules." << role.name() << "=<name> (default \"" << doc.default_value << "\")\n";
  schema::IspParams defaults;
  schema::apply_defaults(defaults);
  const isp::IspConfig config = isp::IspConfig::from_params(defaults, "isp");
  for (const std::string& name : isp::accelerators().names()) {
    const auto accelerator = isp::accelerators().create(name, config, defaults, "isp");
    const std::vector<std::string> read = isp::parameters_read_by(name);
    std::vector<std::string> modes;
    for (const isp::ModeInfo& mode : accelerator->modes()) modes.push_back(mode.name);
    char power[96];
    std::snprintf(power, sizeof power, "%.3f W peak (%.3f W static)", accelerator->peak_power_w(),
                  accelerator->static_power_w());
    std::cout << "\n" << name << ": " << isp::accelerators().description(name) << "\n"
              << "modes: " << joined(modes) << "; power budget at the defaults: " << power << "\n";
    std::vector<std::vector<std::string>> rows = {{"PARAMETER", "UNIT", "DEFAULT", "RANGE", "MEANING", "SOURCE"}};
    for (const ParameterRow& row : schema::parameter_rows(*schema::IspParams::descriptor(), nullptr, "isp.")) {
      const std::string field = row.path.substr(4, row.path.find('.', 4) - 4);
      if (std::find(read.begin(), read.end(), field) == read.end()) continue;
      rows.push_back({row.path, row.doc.unit, default_text(row, is_string_field(row.path)),
                      schema::range_text(row.doc), row.doc.doc, row.doc.source});
    }
    std::cout << schema::aligned_table(rows);
  }
  return 0;
}

std::string default_text(const ParameterRow& row, bool is_string) {
  if (row.doc.required) return "(required)";
  return is_string ? "\"" + row.doc.default_value + "\"" : row.doc.default_value;
}

bool is_string_field(const std::string& path) {
  std::string problem;
  const FieldDescriptor* field =
      schema::find_parameter(*schema::Platform::descriptor(), path, &problem);
  return field && field->cpp_type() == FieldDescriptor::CPPTYPE_STRING;
}

// Long text values (a platform's description) would widen the whole table; the
// header above it prints them in full.
std::string table_value(const std::string& value) {
  constexpr std::size_t kMaxWidth = 40;
  return value.size() <= kMaxWidth ? value : value.substr(0, kMaxWidth - 3) + "...";
}

int list_all() {
  std::vector<std::vector<std::string>> rows = {{"NAME", "PROGRAM", "DISPLAY NAME", "DESCRIPTION"}};
  std::string first_error;
  for (const schema::PlatformFile& entry : schema::list_platform_files()) {
    try {
      const schema::Platform p = schema::load_platform_file(entry.file).platform;
      rows.push_back({entry.name, schema::Platform::Program_Name(p.program()), p.name(),
                      p.description()});
    } catch (const BadInput& e) {
      rows.push_back({entry.name, "-", "-", std::string("INVALID: ") + e.what()});
      if (first_error.empty()) first_error = e.what();
    }
  }
  std::string search_path;
  for (const std::string& dir : schema::platform_search_path()) {
    search_path += (search_path.empty() ? "" : ":") + dir;
  }
  std::cout << "Platforms (ispsim describe NAME; search path " << search_path << "):\n"
            << schema::aligned_table(rows);

  rows = {{"MODULE", "MESSAGE", "PARAMETERS", "MEANING"}};
  for (const FieldDescriptor* field : modules()) {
    const auto count = schema::parameter_rows(*field->message_type(), nullptr).size();
    rows.push_back({field->name(), field->message_type()->name(), std::to_string(count),
                    schema::parameter_doc(*field).doc});
  }
  std::cout << "\nModules (ispsim describe MODULE):\n" << schema::aligned_table(rows);

  rows = {{"PRESET", "KIND", "HARDWARE"}};
  for (const schema::HardwarePreset& p : schema::list_hardware_presets())
    rows.push_back({p.name, p.kind, p.description});
  std::cout << "\nHardware presets (--set host_preset=NAME or ssd_preset=NAME; platforms/hardware/NAME.textproto, "
               "sources in the file):\n"
            << schema::aligned_table(rows);

  isp::register_all();
  rows = {{"ROLE", "IMPLEMENTATIONS", "DEFAULT", "MEANING"}};
  const FieldDescriptor& role = *find_role("isp_accelerator");
  rows.push_back({role.name(), joined(isp::accelerators().names()), schema::parameter_doc(role).default_value,
                  schema::parameter_doc(role).doc});
  std::cout << "\nRoles (modules.ROLE; ispsim describe ROLE):\n" << schema::aligned_table(rows);
  std::cout.flush();
  // A broken platform file is bad input even when listing: say so after the list.
  if (!first_error.empty()) throw BadInput("", first_error);
  return 0;
}

int describe_module(const FieldDescriptor& module) {
  std::cout << "module " << module.name() << " (" << module.message_type()->full_name()
            << "): " << schema::parameter_doc(module).doc << "\n"
            << "set in a platform file as: " << module.name() << " { <parameter>: <value> }, "
            << "or on the command line as: --set " << module.name() << ".<parameter>=<value>\n\n";
  std::vector<std::vector<std::string>> rows = {
      {"PARAMETER", "UNIT", "DEFAULT", "RANGE", "MEANING", "SOURCE"}};
  for (const ParameterRow& row : schema::parameter_rows(*module.message_type(), nullptr)) {
    rows.push_back({row.path, row.doc.unit,
                    default_text(row, is_string_field(module.name() + "." + row.path)),
                    schema::range_text(row.doc), row.doc.doc, row.doc.source});
  }
  std::cout << schema::aligned_table(rows);
  return 0;
}

int describe_platform(const std::string& name_or_path, const std::vector<std::string>& sets) {
  const schema::LoadedPlatform loaded = schema::load_platform(name_or_path, sets);
  const schema::Platform& p = loaded.platform;
  // Only what `run` accepts: the platform's system checks it the same way.
  if (p.program() != schema::Platform::MICROBENCHMARK) {
    const systems::SystemKind& system = systems::system_for(loaded);
    system.check(loaded);
  }
  std::cout << "platform " << p.name() << " (" << loaded.file << ")\n";
  if (!p.description().empty()) std::cout << p.description() << "\n";
  std::cout << "runs the trace program " << schema::Platform::Program_Name(p.program())
            << "\n\n";
  std::vector<std::vector<std::string>> rows = {
      {"PARAMETER", "VALUE", "UNIT", "FROM", "DEFAULT", "RANGE", "MEANING", "SOURCE"}};
  for (const ParameterRow& row : schema::parameter_rows(*p.GetDescriptor(), &p)) {
    rows.push_back({row.path, table_value(row.value), row.doc.unit, loaded.origin(row.path),
                    default_text(row, is_string_field(row.path)), schema::range_text(row.doc),
                    row.doc.doc, row.doc.source});
  }
  std::cout << schema::aligned_table(rows);
  return 0;
}

}  // namespace

int describe(const Args& args) {
  po::options_description options("options");
  options.add_options()
      ("help,h", "print this help")
      ("set", po::value<std::vector<std::string>>()->composing(),
       "override a platform parameter, e.g. --set nand.t_read_us=20 (repeatable)")
      ("format", po::value<std::string>(), "for metrics: text, csv or json (default text)")
      ("target", po::value<std::string>(), "platform or module");
  po::positional_options_description positional;
  positional.add("target", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw BadInput("describe", e.what());
  }
  if (vm.count("help")) {
    std::cout << kUsage << "options:\n"
              << "  --set path=value  override a platform parameter (repeatable)\n"
              << "  --format F        for metrics: text, csv or json (default text)\n";
    return 0;
  }
  const std::vector<std::string> sets =
      vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (!vm.count("target")) {
    if (!sets.empty()) throw BadInput("describe", "--set needs a platform to apply to");
    return list_all();
  }
  const std::string target = vm["target"].as<std::string>();
  if (target == "metrics" && sets.empty()) {
    systems::write_metric_list(std::cout, systems::parse_format(vm.count("format") ? vm["format"].as<std::string>() : "text"));
    return 0;
  }
  if (vm.count("format")) throw BadInput("--format", "applies to describe metrics only");
  // Module names are a small fixed set; a platform of the same name is still
  // reachable by its file path.
  if (!schema::looks_like_path(target)) {
    if (const FieldDescriptor* module = find_module(target)) {
      if (!sets.empty()) throw BadInput("describe", "--set applies to platforms, not modules");
      return describe_module(*module);
    }
    if (const FieldDescriptor* role = find_role(target)) {
      if (!sets.empty()) throw BadInput("describe", "--set applies to platforms, not roles");
      return describe_isp_accelerators(*role);
    }
    // A bare name that is no platform may be a mistyped module: name both lists.
    try {
      schema::find_platform_file(target);
    } catch (const BadInput& e) {
      std::string names;
      for (const FieldDescriptor* field : modules()) names += (names.empty() ? "" : ", ") + field->name();
      throw BadInput("", std::string(e.what()) + "; nor a module (known: " + names + ")");
    }
  }
  return describe_platform(target, sets);
}

}  // namespace ispsim::cli
