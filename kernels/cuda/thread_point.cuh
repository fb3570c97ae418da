// The grid point of a thread in a one-thread-per-point launch over a region (x along k, y along
// j, z along i), shared by the gmem family and the PML kernels.
#pragma once
#include "physics/box3.hpp"

namespace minimod::kernels::cuda {

/// Sets (i, j, k) for this thread; false if it lies past the region's end (partial blocks).
__device__ __forceinline__ bool thread_point(const physics::Box3& r, int& i, int& j, int& k) {
  k = r.lo.k + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  j = r.lo.j + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  i = r.lo.i + static_cast<int>(blockIdx.z * blockDim.z + threadIdx.z);
  return k < r.lo.k + r.n.k && j < r.lo.j + r.n.j && i < r.lo.i + r.n.i;
}

/// A 2.5D streaming block: the (k, j) tile of (tx, ty) columns from (k0, j0) and the chunk of
/// output planes [i_begin, i_end) along i (blockIdx.z counts chunks of `chunk` planes).
struct StreamBlock {
  int k0, j0, i_begin, i_end;
};
__device__ __forceinline__ StreamBlock stream_block(const physics::Box3& r, int tx, int ty, int chunk) {
  const int i_begin = r.lo.i + static_cast<int>(blockIdx.z) * chunk;
  return {r.lo.k + static_cast<int>(blockIdx.x) * tx, r.lo.j + static_cast<int>(blockIdx.y) * ty, i_begin,
          min(i_begin + chunk, r.lo.i + r.n.i)};
}

}  // namespace minimod::kernels::cuda
