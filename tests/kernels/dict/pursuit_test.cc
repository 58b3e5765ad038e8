// Projection pursuit, OMP and the integer pursuit against goldens from an
// independent NumPy implementation (tools/train/make_dict_fixtures.py).
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/dict/int_pursuit.h"
#include "kernels/dict/pursuit.h"

namespace ispsim::dict {
namespace {

// The fixture file: records "<name> <count> <values...>", in order; names repeat.
std::vector<std::pair<std::string, std::vector<double>>> read_goldens() {
  std::ifstream in(std::string(ISPSIM_SOURCE_DIR) + "/tests/fixtures/dict/pursuit_goldens.txt");
  EXPECT_TRUE(in.good());
  std::vector<std::pair<std::string, std::vector<double>>> records;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string name;
    size_t n = 0;
    s >> name >> n;
    std::vector<double> values(n);
    for (double& v : values) s >> v;
    records.emplace_back(name, values);
  }
  return records;
}

const std::vector<double>& field(const std::vector<std::pair<std::string, std::vector<double>>>& r, size_t& at,
                                 const std::string& name) {
  EXPECT_LT(at, r.size());
  EXPECT_EQ(r[at].first, name);
  return r[at++].second;
}

TEST(DictPursuit, FloatPursuitAndOmpMatchNumpy) {
  const auto records = read_goldens();
  size_t at = 0;
  const std::vector<double>& dict = field(records, at, "float_dictionary");
  Dictionary d;
  d.atoms = static_cast<int>(dict[0]);
  d.dim = static_cast<int>(dict[1]);
  for (size_t i = 2; i < dict.size(); ++i) d.data.push_back(static_cast<float>(dict[i]));
  const int k = static_cast<int>(field(records, at, "float_k")[0]);
  PursuitScratch scratch;
  int vectors = 0;
  while (at < records.size() && records[at].first == "x") {
    std::vector<float> x;
    for (double v : field(records, at, "x")) x.push_back(static_cast<float>(v));
    for (const char* method : {"pursuit", "omp"}) {
      SparseCode code;
      std::vector<float> residual(d.dim), rebuilt(d.dim);
      if (std::string(method) == "pursuit")
        projection_pursuit(d, x.data(), k, code, scratch, residual.data());
      else
        omp(d, x.data(), k, code, scratch, residual.data());
      const auto& index = field(records, at, std::string(method) + "_index");
      const auto& coef = field(records, at, std::string(method) + "_coef");
      const auto& res = field(records, at, std::string(method) + "_residual");
      ASSERT_EQ(code.size(), k) << method;
      for (int p = 0; p < k; ++p) {
        EXPECT_EQ(code.index[p], static_cast<int>(index[p])) << method << " step " << p;
        EXPECT_NEAR(code.coef[p], coef[p], 2e-5 * (1.0 + std::fabs(coef[p]))) << method << " step " << p;
      }
      reconstruct(d, code, k, rebuilt.data());
      for (int i = 0; i < d.dim; ++i) {
        EXPECT_NEAR(residual[i], res[i], 5e-5) << method;
        EXPECT_NEAR(x[i] - rebuilt[i], res[i], 5e-5) << method;
      }
    }
    ++vectors;
  }
  EXPECT_EQ(vectors, 6);
}

TEST(DictPursuit, IntegerPursuitMatchesNumpyExactly) {
  const auto records = read_goldens();
  size_t at = 0;
  while (records[at].first != "int_dictionary") ++at;
  const std::vector<double>& dict = field(records, at, "int_dictionary");
  std::vector<int8_t> q;
  for (size_t i = 2; i < dict.size(); ++i) q.push_back(static_cast<int8_t>(dict[i]));
  const std::vector<double>& sq = field(records, at, "int_scale_sq");
  IntDictionaryView view;
  view.q = q.data();
  view.atoms = static_cast<int>(dict[0]);
  view.dim = static_cast<int>(dict[1]);
  view.scale_sq.mult = static_cast<int32_t>(sq[0]);
  view.scale_sq.shift = static_cast<int32_t>(sq[1]);
  const int k = static_cast<int>(field(records, at, "int_k")[0]);
  IntPursuitScratch scratch;
  int vectors = 0;
  while (at < records.size()) {
    std::vector<int32_t> x;
    for (double v : field(records, at, "int_x")) x.push_back(static_cast<int32_t>(v));
    IntSparseCode code;
    std::vector<int32_t> residual(view.dim);
    int_projection_pursuit(view, x.data(), k, code, scratch, residual.data());
    const auto& index = field(records, at, "int_index");
    const auto& coef = field(records, at, "int_coef");
    const auto& res = field(records, at, "int_residual");
    ASSERT_EQ(static_cast<int>(code.index.size()), k);
    for (int p = 0; p < k; ++p) {
      EXPECT_EQ(code.index[p], static_cast<int>(index[p]));
      EXPECT_EQ(code.coef[p], static_cast<int64_t>(coef[p]));
    }
    for (int i = 0; i < view.dim; ++i) EXPECT_EQ(residual[i], static_cast<int32_t>(res[i]));
    ++vectors;
  }
  EXPECT_EQ(vectors, 6);
}

// The pursuit's residual only shrinks (each step removes c_j^2 of the squared
// norm, unit atoms); OMP's residual is orthogonal to every selected atom.
TEST(DictPursuit, ResidualShrinksAndOmpResidualIsOrthogonal) {
  const auto records = read_goldens();
  size_t at = 0;
  const std::vector<double>& dict = field(records, at, "float_dictionary");
  Dictionary d;
  d.atoms = static_cast<int>(dict[0]);
  d.dim = static_cast<int>(dict[1]);
  for (size_t i = 2; i < dict.size(); ++i) d.data.push_back(static_cast<float>(dict[i]));
  std::vector<float> x(records[2].second.begin(), records[2].second.end());
  PursuitScratch s;
  double last = 1e30;
  for (int k = 1; k <= 12; ++k) {
    SparseCode p, o;
    std::vector<float> rp(d.dim), ro(d.dim);
    projection_pursuit(d, x.data(), k, p, s, rp.data());
    omp(d, x.data(), k, o, s, ro.data());
    double np = 0;
    for (int i = 0; i < d.dim; ++i) np += rp[i] * rp[i];
    EXPECT_LE(np, last + 1e-9);
    last = np;
    for (int j : o.index) {
      double dot = 0;
      for (int i = 0; i < d.dim; ++i) dot += d.atom(j)[i] * ro[i];
      EXPECT_NEAR(dot, 0.0, 1e-4) << "k " << k;
    }
  }
}

}  // namespace
}  // namespace ispsim::dict
