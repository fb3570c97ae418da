// How long the L2 should keep the lines of a tensor copy (block_model.cuh's copy_3d with a
// policy): as usual, ahead of other lines (they are read again soon), or before them (read for
// the last time). Host and device, so that the block bodies' host emulation takes it too.
#pragma once

namespace minimod::kernels::cuda {

enum class L2Hint { normal, keep, drop };

}  // namespace minimod::kernels::cuda
