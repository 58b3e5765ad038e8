// `ispsim engine kv-quality | kv-trace | dict-train` from the command line: bad
// input is one stderr line and exit 2; a one-sequence quality run prints the
// four rows; the trace command writes a readable trace.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "common/error.h"
#include "kernels/dict/dictionary.h"
#include "kernels/int/quantize.h"
#include "tests/support/cli.h"
#include "traces/trace_io.h"

namespace {

using ispsim::testing::run_cli;

TEST(DictCli, BadSettingsAreOneLineAndExitTwo) {
  for (const std::string args :
       {"engine kv-quality --unit 200", "engine kv-quality --dict /nonexistent.safetensors",
        "engine kv-quality --prompt-tokens 256", "engine kv-quality --index-bits 0",
        "engine kv-trace --docs nosuchdoc --query hello --out /tmp/never.trace",
        "engine kv-trace --docs ca10-1 --query hello --encoder lasso --out /tmp/never.trace",
        "engine dict-train --atoms 0 --out /tmp/never.safetensors"}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1) << args << ": " << r.err;
  }
}

// A dictionary whose scale is not a unit-norm atom's (infinite, huge, zero)
// is refused by the loader, naming the file and the tensor, before any kernel
// turns it into a fixed-point multiplier; the commands then exit 2.
TEST(DictCli, ADictionaryScaleOutsideItsRangeIsBadInput) {
  ispsim::dict::KvDictionaries d;
  d.layers = 1;
  d.atoms = 2;
  d.dim = 2;
  ispsim::dict::Int8Dictionary x;
  x.atoms = 2;
  x.dim = 2;
  x.q = {127, 0, 0, 127};
  for (const float scale : {std::numeric_limits<float>::infinity(), 1e30f, 0.0f, std::nanf(""), 0.5f}) {
    SCOPED_TRACE(scale);
    x.scale = scale;
    d.dicts = {x, x};
    const std::string path = ::testing::TempDir() + "bad_scale.safetensors";
    ispsim::dict::save(d, path);
    try {
      ispsim::dict::load(path);
      ADD_FAILURE() << "accepted";
    } catch (const ispsim::BadInput& e) {
      EXPECT_NE(std::string(e.what()).find("layers.0.k.scale"), std::string::npos) << e.what();
    }
    const auto r = run_cli("engine kv-quality --windows 1 --docs '' --dict " + path);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find("layers.0.k.scale"), std::string::npos) << r.err;
  }
  x.scale = 1.0f / 127;
  d.dicts = {x, x};
  const std::string path = ::testing::TempDir() + "good_scale.safetensors";
  ispsim::dict::save(d, path);
  EXPECT_NO_THROW(ispsim::dict::load(path));
}

TEST(Dyadic, ValuesItCannotRepresentAreRefused) {
  using ispsim::integer::to_dyadic;
  EXPECT_THROW(to_dyadic(std::numeric_limits<double>::infinity(), 31), std::domain_error);
  EXPECT_THROW(to_dyadic(1e60, 31), std::domain_error);
  EXPECT_THROW(to_dyadic(1e-60, 31), std::domain_error);
  const auto d = to_dyadic(0.75, 31);
  EXPECT_DOUBLE_EQ(std::ldexp(double(d.mult), -d.shift), 0.75);
}

TEST(DictCli, KvQualityPrintsTheFourRows) {
  const auto r = run_cli("engine kv-quality --windows 1 --docs ''");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* row : {"| held-out | dense |", "| held-out | OMP K=16 |", "| held-out | pursuit K=16 |",
                          "| held-out | pursuit + hierarchical |"})
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
  EXPECT_NE(r.out.find("| 1.00x |"), std::string::npos);  // the dense row loads what it stores
  EXPECT_NE(r.out.find("ratio = "), std::string::npos);   // the formula is printed
}

TEST(DictCli, KvTraceWritesAValidTrace) {
  const std::string path = ::testing::TempDir() + "kv_cli.trace";
  const auto r = run_cli("engine kv-trace --docs ca10-1,ca10-2,ca20-1,ca20-2,cb06-1 --query 'Who is the district attorney?'"
                         " --tokens 3 --out " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ispsim::trace::TraceReader reader(path);
  EXPECT_EQ(reader.header().request().kv_format(), ispsim::trace::KV_DICTIONARY);
  ispsim::trace::Op op;
  int dict_attention = 0;
  while (reader.next(op)) dict_attention += op.has_dict_attention() ? 1 : 0;
  EXPECT_EQ(dict_attention, 3 * 4);  // 3 steps x 4 layers
}

}  // namespace
