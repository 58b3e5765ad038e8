// The integer instantiation of the CacheBlend steps (float-free, checked).
#include "kernels/rag/blend_steps.h"
#include "kernels/rag/int_backend.h"

namespace ispsim::rag {

template void document_kv<IntBackend>(IntBackend&, const std::vector<int>&, PerLayer<int32_t>&, PerLayer<int32_t>&);
template BlendRun<IntBackend> cache_blend<IntBackend>(IntBackend&, const std::vector<int>&, const std::vector<int>&,
                                                      const PerLayer<int32_t>&, const PerLayer<int32_t>&, int, int);

}  // namespace ispsim::rag
