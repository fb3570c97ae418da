// Field operations both CPU propagators share: strided reads, dense box copies, the free-surface
// mirror and receiver sampling (the CUDA counterparts are in kernels/cuda/field_kernels.cuh).
#pragma once
#include <array>
#include <cstring>
#include <vector>

#include "kernels/propagator.hpp"
#include "physics/stencil.hpp"
#include "physics/view3.hpp"

namespace minimod::kernels::cpu {

/// A strided box of a field into a dense [i][j][k] array.
inline void read_strided(const physics::View3<float>& f, const physics::Box3& box,
                         const physics::Index3& stride, float* out) {
  std::int64_t o = 0;
  for (int i = box.lo.i; i < box.hi().i; i += stride.i)
    for (int j = box.lo.j; j < box.hi().j; j += stride.j)
      for (int k = box.lo.k; k < box.hi().k; k += stride.k) out[o++] = f(i, j, k);
}

/// Between a box of a field (halo points allowed) and a dense [i][j][k] array: pack or unpack.
inline void copy_box(const physics::View3<float>& f, const physics::Box3& b, float* dense, bool to_dense) {
#pragma omp parallel for collapse(2) schedule(static)
  for (int i = 0; i < b.n.i; ++i)
    for (int j = 0; j < b.n.j; ++j) {
      float* row = f.ptr(b.lo.i + i, b.lo.j + j, b.lo.k);
      float* d = dense + (static_cast<std::int64_t>(i) * b.n.j + j) * b.n.k;
      if (to_dense) std::memcpy(d, row, sizeof(float) * static_cast<size_t>(b.n.k));
      else std::memcpy(row, d, sizeof(float) * static_cast<size_t>(b.n.k));
    }
}

/// Pressure-release surface on every face marked in `faces` of a grid of `n` points: the field is
/// 0 on the face's first plane and the halo holds its odd mirror image, over the columns of `span`.
inline void apply_free_surfaces(const physics::View3<float>& f, const physics::Index3& n,
                                const std::array<bool, 6>& faces, const physics::Box3& span) {
  for (int face = 0; face < 6; ++face) {
    if (!faces[static_cast<size_t>(face)]) continue;
    const int axis = face / 2, a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
    const bool hi = face % 2;
    const int s = hi ? n[axis] - 1 : 0;  // surface plane
    const int dir = hi ? 1 : -1;          // towards the halo
    for (int x1 = span.lo[a1]; x1 < span.hi()[a1]; ++x1)
      for (int x2 = span.lo[a2]; x2 < span.hi()[a2]; ++x2) physics::mirror_free_surface(f, axis, x1, x2, s, dir);
  }
}

/// One time step's receiver samples appended to `traces` ([sample][receiver], `count` receivers).
inline void record_samples(const physics::View3<float>& f, const std::vector<NodeWeight>& nodes, int count,
                           std::vector<float>& traces) {
  if (count == 0) return;
  const size_t base = traces.size();
  traces.resize(base + static_cast<size_t>(count), 0.0f);
  for (const auto& r : nodes) {
    float& acc = traces[base + static_cast<size_t>(r.point)];
    acc = accumulate_sample(acc, r.weight, f(r.node.i, r.node.j, r.node.k));
  }
}

}  // namespace minimod::kernels::cpu
