// What the CLI commands share: option parsing (all of them), reading a text
// file and building the engine of --quant (the engine commands).
#pragma once

#include <boost/program_options.hpp>

#include <string>
#include <vector>

#include "kernels/int/quantized_lm.h"
#include "kernels/model/model.h"
#include "kernels/model/tokenizer.h"
#include "kernels/rag/blend.h"
#include "kernels/rag/rag_model.h"
#include "tools/ispsim/cli.h"

namespace ispsim::cli {

// --threads N and --isa LEVEL of the engine subcommands: worker threads of the
// engine's kernels (results are identical at any N) and the instruction-set
// level (kernels/model/cpu_isa.h; default the best this machine supports).
void add_engine_speed_options(boost::program_options::options_description& d);


// Parses `args` into `d`'s variables (and into `vm` if given). On --help prints
// "usage: ispsim <command> [options]" and the options and returns false; a
// parse error is BadInput.
bool parse_options(const Args& args, const std::string& command, boost::program_options::options_description& d,
                   boost::program_options::variables_map* vm = nullptr);

// The whole file; BadInput for anything but a readable regular file (a FIFO or
// /dev/zero cannot hang or exhaust memory) or a file over kMaxTextInputBytes.
std::string read_text_file(const std::string& path);

// A count option, parsed signed (so that -1 is not read as 4294967295) and
// checked against [min, max]: BadInput naming `option` otherwise.
unsigned checked_count(long long value, const std::string& option, long long min, long long max);
// The most simulations at once (-j) and shards (--shards) a command takes.
constexpr long long kMaxJobs = 1024, kMaxShards = 10000;

// Runs argv (argv[0] a path), waits; returns the exit code (127 if it could not start).
int run_command(const std::vector<std::string>& argv);

// The items of a comma-separated list given to `option`; an empty entry ("a,,b",
// a trailing comma) is a typo, not something to skip: BadInput(option, ...).
std::vector<std::string> split_list(const std::string& s, const std::string& option);

// A file given on the command line and the option that gave it.
struct NamedPath {
  std::string option;
  std::string path;
};
// Checked before any work: two outputs naming the same file (one would be lost)
// and an output naming an input (it would be overwritten) are BadInput naming
// the option. Empty paths are skipped; character devices (/dev/null) may repeat.
void check_outputs_distinct(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// <model_dir>/tokenizer.json, checked against the vocabulary of <model_dir>/config.json.
model::Tokenizer load_tokenizer(const std::string& model_dir);

// Calibration of the integer engine: the first `max_tokens` tokens of `calib_file`.
std::vector<int> calibration_tokens(const std::string& model_dir, const std::string& calib_file, int max_tokens);

// The CacheBlend engine of --quant: fp32, or the integer engine (int16,
// int-nonlinear) calibrated as above. The model must outlive it.
rag::RagModel make_rag_model(const model::Model& m, const std::string& model_dir, const std::string& quant,
                             const std::string& calib_file, int calib_tokens, integer::IntegerOptions options);

// Documents of a JSON-lines file: one {"id": "...", "text": "..."} object per
// line (blank lines skipped), each tokenized after BOS when bos >= 0.
std::vector<rag::Document> read_documents(const std::string& path, const model::Tokenizer& tok, int bos);

// A RAG query and the ids of its retrieved documents, in rank order.
struct Query {
  std::string text;
  std::vector<std::string> doc_ids;
  std::string where;  // "file:line", for errors found after parsing
};

// JSON lines {"query": "...", "docs": ["id", ...]}; blank lines are skipped.
std::vector<Query> read_queries(const std::string& path);

}  // namespace ispsim::cli
