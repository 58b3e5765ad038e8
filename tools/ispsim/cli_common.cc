#include "tools/ispsim/cli_common.h"

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "common/error.h"
#include "common/input_file.h"
#include "kernels/model/cpu_isa.h"
#include "kernels/model/parallel.h"
#include "kernels/model/tokenizer.h"

extern char** environ;

namespace ispsim::cli {

namespace po = boost::program_options;

void add_engine_speed_options(po::options_description& d) {
  d.add_options()
      ("threads", po::value<int>()->default_value(1)->notifier([](int n) { model::set_engine_threads(n); }),
       "engine worker threads (decode and prefill; results identical at any count)")
      ("isa", po::value<std::string>()->default_value("best")->notifier([](const std::string& s) {
         model::set_active_isa(model::parse_isa(s, "--isa"));
       }),
       "kernel instruction set: scalar | avx2 | avx512 | amx | best (the highest this CPU and OS support)");
}

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

std::vector<std::string> split_list(const std::string& s, const std::string& option) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) throw BadInput(option, "empty entry in '" + s + "'");
    out.push_back(item);
  }
  if (!s.empty() && s.back() == ',') throw BadInput(option, "empty entry in '" + s + "'");
  return out;
}

unsigned checked_count(long long value, const std::string& option, long long min, long long max) {
  if (value < min || value > max)
    throw BadInput(option, std::to_string(value) + " is not within " + std::to_string(min) + ".." + std::to_string(max));
  return static_cast<unsigned>(value);
}

std::string read_text_file(const std::string& path) { return read_input_file(path); }

void check_outputs_distinct(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  auto is_char_device = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& out = outputs[i];
    if (out.path.empty() || is_char_device(out.path)) continue;
    for (const NamedPath& in : inputs)
      if (!in.path.empty() && same_file(out.path, in.path))
        throw BadInput(out.option, out.path + " is the input of " + in.option + "; refusing to overwrite it");
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].path.empty() && same_file(out.path, outputs[j].path))
        throw BadInput(out.option, out.path + " is also the output of " + outputs[j].option +
                                       "; one of them would be lost");
  }
}

model::Tokenizer load_tokenizer(const std::string& model_dir) {
  model::Tokenizer tok(model_dir + "/tokenizer.json");
  tok.check_fits(model::load_config(model_dir).vocab_size, model_dir + "/config.json");
  return tok;
}

std::vector<int> calibration_tokens(const std::string& model_dir, const std::string& calib_file, int max_tokens) {
  if (max_tokens < 1) throw BadInput("--calib-tokens", "must be >= 1");
  const model::Tokenizer tok = load_tokenizer(model_dir);
  std::vector<int> calib = tok.encode(read_text_file(calib_file), calib_file);
  if (calib.empty()) throw BadInput(calib_file, "calibration text is empty (--calib)");
  if (static_cast<int>(calib.size()) > max_tokens) calib.resize(max_tokens);
  return calib;
}

rag::RagModel make_rag_model(const model::Model& m, const std::string& model_dir, const std::string& quant,
                             const std::string& calib_file, int calib_tokens, integer::IntegerOptions options) {
  const integer::QuantStage stage = integer::parse_stage(quant);
  if (stage == integer::QuantStage::kFp32) return rag::RagModel::fp32(m);
  if (stage != integer::QuantStage::kInt16 && stage != integer::QuantStage::kIntNonlinear)
    throw BadInput("--quant", "'" + quant + "' has no integer-only engine to blend on (fp32, int-nonlinear or int16)");
  if (options.register_bits != 64)
    throw BadInput("--register-bits", "the RAG engine runs 64-bit registers only (32 is for ppl and generate)");
  options.stage = stage;
  return rag::RagModel::integer(m, calibration_tokens(model_dir, calib_file, calib_tokens), stage, options);
}

// Documents of a JSON-lines file: one {"id": "...", "text": "..."} object per
// line (blank lines skipped), each tokenized after BOS when the model has one
// (the demo model was trained with BOS before every document).
std::vector<rag::Document> read_documents(const std::string& path, const model::Tokenizer& tok, int bos) {
  std::istringstream lines(read_text_file(path));
  std::vector<rag::Document> docs;
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(number);
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(line, ec);
    if (ec) throw BadInput(where, "invalid JSON: " + ec.message());
    const boost::json::object* o = v.if_object();
    const boost::json::value* id = o ? o->if_contains("id") : nullptr;
    const boost::json::value* text = o ? o->if_contains("text") : nullptr;
    if (!id || !id->is_string() || !text || !text->is_string())
      throw BadInput(where, "expected an object with string fields \"id\" and \"text\"");
    rag::Document d;
    d.id = std::string(id->as_string());
    if (d.id.empty() || d.id.find(',') != std::string::npos)
      throw BadInput(where, "document id must be non-empty and contain no comma");
    for (const rag::Document& other : docs)
      if (other.id == d.id) throw BadInput(where, "document id '" + d.id + "' appears twice");
    if (bos >= 0) d.tokens.push_back(bos);
    std::vector<int> body = tok.encode(std::string(text->as_string()), where);
    d.tokens.insert(d.tokens.end(), body.begin(), body.end());
    docs.push_back(std::move(d));
  }
  if (docs.empty()) throw BadInput(path, "no documents");
  return docs;
}

// JSON lines {"query": "...", "docs": ["id", ...]}; blank lines are skipped.
std::vector<Query> read_queries(const std::string& path) {
  const std::string text = read_text_file(path);
  std::vector<Query> queries;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(number);
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(line, ec);
    if (ec) throw BadInput(where, "not JSON: " + ec.message());
    if (!v.is_object()) throw BadInput(where, "expected an object {\"query\": ..., \"docs\": [...]}");
    Query q;
    q.where = where;
    for (const auto& [key, value] : v.as_object()) {
      if (key == "query") {
        if (!value.is_string() || value.as_string().empty()) throw BadInput(where, "\"query\" must be a non-empty string");
        q.text = value.as_string().c_str();
      } else if (key == "docs") {
        if (!value.is_array() || value.as_array().empty())
          throw BadInput(where, "\"docs\" must be a non-empty array of document ids");
        for (const boost::json::value& id : value.as_array()) {
          if (!id.is_string() || id.as_string().empty()) throw BadInput(where, "\"docs\" holds a non-string or empty id");
          q.doc_ids.emplace_back(id.as_string().c_str());
        }
      } else {
        throw BadInput(where, "unknown key \"" + std::string(key) + "\" (expected \"query\" and \"docs\")");
      }
    }
    if (q.text.empty()) throw BadInput(where, "missing \"query\"");
    if (q.doc_ids.empty()) throw BadInput(where, "missing \"docs\"");
    queries.push_back(std::move(q));
  }
  if (queries.empty()) throw BadInput(path, "no queries");
  return queries;
}

int run_command(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return 127;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace ispsim::cli
