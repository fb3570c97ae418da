// The TTI CPML's pass 2 with the rows given, streamed along i (tti_cpml_stream.cu).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/tti_cpml.hpp"

namespace minimod::kernels::cuda {

/// Pass 2 (tti_cpml_layer_update with the rows of TtiCpmlArgs::rows) at the points of `part`, a
/// box of the own layer's slab box `slab` whose first compact index is `start`, on stream s.
void launch_tti_cpml_stream(const TtiStepArgs& g, const TtiCpmlArgs& c, const physics::Box3& slab,
                            const physics::Box3& part, std::int64_t start, cudaStream_t s);

}  // namespace minimod::kernels::cuda
