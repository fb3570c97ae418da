// The TTI CPML's layer sweep (tti_cpml_sweep.cu): pass 2 with the operator's rows formed in the
// same kernel, one slab box at a time, streamed along i.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/tti_cpml.hpp"

namespace minimod::kernels::cuda {

/// Whether the sweep can take the layer of this step: a model of one axis that is not VTI
/// (TtiStepArgs::constant_axis, !vti), one rank (no halo faces), the rows' centre weights stored.
bool tti_cpml_sweep_applies(const TtiStepArgs& g, const TtiCpmlArgs& c);

/// Pass 2 (the rows by physics::tti_axis_rows73_by_groups, the flux derivatives, zeta and the
/// update: tti_cpml_finish) at the points of `part`, a box of the own layer's slab box `slab`
/// whose first compact index is `start`, on stream s; psi and V of every slab must be done.
void launch_tti_cpml_sweep(const TtiStepArgs& g, const TtiCpmlArgs& c, const physics::Box3& slab,
                           const physics::Box3& part, std::int64_t start, cudaStream_t s);

}  // namespace minimod::kernels::cuda
