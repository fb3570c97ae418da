// Host emulations of CUDA kernels (kernels/cuda/block_emulation.hpp): the kernel's own block body
// run by host threads over host arrays, for tests of its indexing and pipeline without a GPU.
#pragma once
#include <vector>

#include "kernels/cuda/pml_kernel.hpp"
#include "kernels/cuda/registry.hpp"

namespace minimod::kernels::cuda {

/// One semi_tma update of a.region (tile t), emulated: the views point to host memory. With a
/// layer in `a`, every block takes the damped branch (semi_tma_fused) or, with `by_block`, only
/// the blocks that meet the layer (semi_tma_mixed).
void emulate_semi_tma(const IsoStepArgs& a, const Tile& t, bool by_block = false);

/// One temporal launch (two steps of a.box, tile t), emulated: the views point to host memory.
void emulate_temporal(const IsoPairArgs& a, const Tile& t);

/// One temporal_tma launch (two steps of a.box, tile t), emulated: the views point to host memory.
void emulate_temporal_tma(const IsoPairArgs& a, const Tile& t);

/// One swic_split update of `region` (tile t), emulated: the views point to host memory, the
/// centre weights kappa_perp, kappa_axis included; `tensor`: swic_split_tma's (tensor copies).
void emulate_swic_split(const TtiStepArgs& g, const physics::Box3& region, const Tile& t, bool tensor = false);

/// swic_split_tma's CPML launch (KernelFamily::launch_tti_cpml_layer: the rows into c.rows) over
/// `region`, a box of the layer's slab `slab`, `chunk` output planes a block, emulated.
void emulate_swic_split_cpml(const TtiStepArgs& g, const TtiCpmlArgs& c, int slab, const physics::Box3& region,
                             int chunk);

/// The streamed CPML passes (pml.cu, the default) on every box of `boxes`, emulated,
/// `chunk` i planes per block: the first pass (psi), then after it on all boxes, the second.
void emulate_cpml_psi_stream(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes,
                             int chunk);
void emulate_cpml_stream(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes, int chunk);

/// Minimod's damped update (pml.cu's pml_stream) on every box of `boxes`, emulated, `chunk` i
/// planes per block.
void emulate_pml_stream(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes, int chunk);

}  // namespace minimod::kernels::cuda
