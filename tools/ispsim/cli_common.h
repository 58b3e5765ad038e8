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

// Parses `args` into `d`'s variables (and into `vm` if given). On --help prints
// "usage: ispsim <command> [options]" and the options and returns false; a
// parse error is BadInput.
bool parse_options(const Args& args, const std::string& command, boost::program_options::options_description& d,
                   boost::program_options::variables_map* vm = nullptr);

// The whole file; BadInput for a directory or an unreadable path.
std::string read_text_file(const std::string& path);

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
};

// JSON lines {"query": "...", "docs": ["id", ...]}; blank lines are skipped.
std::vector<Query> read_queries(const std::string& path);

}  // namespace ispsim::cli
