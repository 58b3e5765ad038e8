// The FP32 instantiation of the CacheBlend steps.
#include "kernels/rag/blend_steps.h"
#include "kernels/rag/fp32_backend.h"

namespace ispsim::rag {

template void document_kv<Fp32Backend>(Fp32Backend&, const std::vector<int>&, PerLayer<float>&, PerLayer<float>&);
template BlendRun<Fp32Backend> cache_blend<Fp32Backend>(Fp32Backend&, const std::vector<int>&, const std::vector<int>&,
                                                        const PerLayer<float>&, const PerLayer<float>&, int, int);

}  // namespace ispsim::rag
