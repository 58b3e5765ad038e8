#include "tools/ispsim/cli_common.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/error.h"
#include "kernels/model/tokenizer.h"

namespace ispsim::cli {

namespace po = boost::program_options;

bool parse_options(const Args& args, const std::string& command, po::options_description& d,
                   po::variables_map* vm_out) {
  po::variables_map local;
  po::variables_map& vm = vm_out ? *vm_out : local;
  try {
    po::store(po::command_line_parser(args).options(d).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: ispsim " << command << " [options]\n" << d;
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw BadInput("ispsim " + command, e.what());
  }
  return true;
}

std::string read_text_file(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw BadInput(path, "is a directory, not a text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(path, "cannot open file");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<int> calibration_tokens(const std::string& model_dir, const std::string& calib_file, int max_tokens) {
  if (max_tokens < 1) throw BadInput("--calib-tokens", "must be >= 1");
  model::Tokenizer tok(model_dir + "/tokenizer.json");
  std::vector<int> calib = tok.encode(read_text_file(calib_file), calib_file);
  if (static_cast<int>(calib.size()) > max_tokens) calib.resize(max_tokens);
  return calib;
}

rag::RagModel make_rag_model(const model::Model& m, const std::string& model_dir, const std::string& quant,
                             const std::string& calib_file, int calib_tokens, integer::IntegerOptions options) {
  const integer::QuantStage stage = integer::parse_stage(quant);
  if (stage == integer::QuantStage::kFp32) return rag::RagModel::fp32(m);
  if (stage != integer::QuantStage::kInt16 && stage != integer::QuantStage::kIntNonlinear)
    throw BadInput("--quant", "'" + quant + "' has no integer-only engine to blend on (fp32, int-nonlinear or int16)");
  options.stage = stage;
  return rag::RagModel::integer(m, calibration_tokens(model_dir, calib_file, calib_tokens), stage, options);
}

}  // namespace ispsim::cli
