#include "models/isp/register_all.h"

#include <memory>
#include <mutex>

#include "models/isp/elastic_no_filter.h"
#include "models/isp/elastic_simd.h"
#include "models/isp/systolic_pair.h"

namespace ispsim::isp {

void register_all() {
  static std::once_flag once;
  std::call_once(once, [] {
    PageComputeFactory& f = accelerators();
    f.add("elastic_simd", "MemLLM's Elastic-SIMD with its Stream Filter (broadside GEMV / cascaded thin GEMM)",
          [](const IspConfig& c, const schema::IspParams&, const std::string&) { return std::make_unique<ElasticSimd>(c); });
    f.add("elastic_no_filter", "the Elastic-SIMD without Stream Filter: padded tiles, recomputed entries staged through SRAM",
          [](const IspConfig& c, const schema::IspParams& p, const std::string& where) {
            return std::make_unique<ElasticNoFilter>(c, p, where);
          });
    f.add("systolic_pair", "a decoupled SIMD unit + systolic array: A and P exchanged through SRAM, no Stream Filter",
          [](const IspConfig& c, const schema::IspParams& p, const std::string& where) {
            return std::make_unique<SystolicPair>(c, p, where);
          });
  });
}

}  // namespace ispsim::isp
