// The CPML's pass 2 (kernels/tti_cpml.hpp) by tiles, for the families that give the rows
// (TtiCpmlArgs::rows): a block of kI x kJ x kK points of one slab of the layer first stages V_x,
// V_y and V_z of both tensors at its points and, along each one's own axis, R points beyond (the
// line its derivative d_c V_c reads) into shared memory, every value read from global memory
// once a block; then each thread finishes its point from the tiles. One thread a point, as
// tti_cpml_layer_rows, whose 48 gathers of V a point through L1 made it L2-bound (~290 B a
// point through L2, half its loads missing L1; bench/results/2026-12-03-session42-gathers-and-
// layer-l1.md §3). A staged value is what tti_flux_derivatives reads there (by the slab's
// strides inside the slab, else TtiCpmlArgs::index, zero where nothing is stored), in the same
// formula (tti_flux_derivatives_of), so the result is the same bit for bit. Written against the
// block model (block_model.cuh: one dimension of threads, blk.tx) so that the host can run it
// (emulate_tti_cpml_pass2_tiles).
#pragma once
#include <cstdint>

#include "kernels/tti_cpml.hpp"
#include "physics/box3.hpp"
#include "physics/host_device.hpp"

namespace minimod::kernels::cuda {

/// A block of 512 threads, one a point: kK along k (the slab's depth where a k face is thinner
/// than 32: cpml_tile_width), kJ = 128 / kK along j, 4 along i.
template <int TK>
struct CpmlTile {
  static constexpr int R = physics::kRadius;
  static constexpr int kK = TK, kJ = 128 / TK, kI = 4, kThreads = kI * kJ * kK;
  /// The extents of the tile of component A: the block's, grown by R on both sides along A.
  static constexpr int extent(int A, int axis) {
    return (axis == 0 ? kI : (axis == 1 ? kJ : kK)) + (axis == A ? 2 * R : 0);
  }
  static constexpr int floats_of(int A) { return extent(A, 0) * extent(A, 1) * extent(A, 2); }
  /// The first float of component A's tile of tensor t (0: perp, 1: axis).
  static constexpr int base(int A, int t) {
    return 2 * (A >= 1 ? floats_of(0) : 0) + 2 * (A >= 2 ? floats_of(1) : 0) + t * floats_of(A);
  }
  static constexpr int kFloats = 2 * (floats_of(0) + floats_of(1) + floats_of(2));
  /// Point (ti, tj, tk) of component A's tile (its coordinates along A from 0 at R before the block).
  template <int A>
  MM_HOST_DEVICE static constexpr int at(int ti, int tj, int tk) {
    return (ti * extent(A, 1) + tj) * extent(A, 2) + tk;
  }
  static_assert(kJ * kK == 128, "kK is 8, 16 or 32");
};

/// Component A of V of both tensors along the line through the thread's point `own` (own slab
/// point x when `in_slab`), staged by the kI, kJ or kK threads of that line: the block's points
/// and R beyond on both sides, each as tti_flux_derivatives would read it.
template <int TK, int A>
MM_HOST_DEVICE MM_FORCE_INLINE void stage_flux_line(const TtiCpmlArgs& c, const physics::Box3& slab, const int (&own)[3],
                                                    const int (&t)[3], bool in_slab, std::int64_t x, float* tile) {
  using T = CpmlTile<TK>;
  constexpr int n = A == 0 ? T::kI : (A == 1 ? T::kJ : T::kK), R = T::R;
  const std::int64_t stride = slab_stride<A>(slab);
  for (int q = t[A]; q < n + 2 * R; q += n) {
    int at[3] = {own[0], own[1], own[2]};
    at[A] = own[A] - t[A] + q - R;
    std::int64_t y;
    if (in_slab && at[A] >= slab.lo[A] && at[A] < slab.lo[A] + slab.n[A])
      y = x + (at[A] - own[A]) * stride;
    else
      y = c.index(at[0], at[1], at[2]);
    int tt[3] = {t[0], t[1], t[2]};
    tt[A] = q;
    const int e = T::template at<A>(tt[0], tt[1], tt[2]);
    tile[T::base(A, 0) + e] = c.at_or_zero(kVPerp, A, y);
    tile[T::base(A, 1) + e] = c.at_or_zero(kVAxis, A, y);
  }
}

/// d V_A / dx_A of both tensors at the thread's point from component A's tiles.
template <int TK, int A>
MM_HOST_DEVICE MM_FORCE_INLINE void flux_derivatives_of_tile(const TtiCpmlArgs& c, const int (&t)[3], const float* tile,
                                                             float& dv_perp, float& dv_axis) {
  using T = CpmlTile<TK>;
  int tt[3] = {t[0], t[1], t[2]};
  tt[A] += T::R;
  const int e = T::template at<A>(tt[0], tt[1], tt[2]);
  constexpr int step = A == 0 ? T::extent(A, 1) * T::extent(A, 2) : (A == 1 ? T::extent(A, 2) : 1);
  tti_flux_derivatives_of<A, false>(
      c, [&](int field, int m) { return tile[T::base(A, field == kVPerp ? 0 : 1) + e + m * step]; }, dv_perp,
      dv_axis);
}

/// One block of the tiled pass 2 over `part`, a box of the own layer's slab box `slab` (grid
/// coordinates), the blocks i fastest (bx), then k (by), then j (bz), as slab_grid orders them;
/// `tile` holds CpmlTile<TK>::kFloats floats. The update of each point of `part` is
/// tti_cpml_layer_rows's: tti_cpml_finish from the given rows.
#pragma nv_exec_check_disable
template <int TK, class Block>
MM_HOST_DEVICE void tti_cpml_pass2_tile(const Block& blk, const TtiStepArgs& g, const TtiCpmlArgs& c,
                                        const physics::Box3& slab, const physics::Box3& part, std::int64_t start,
                                        float* tile) {
  using T = CpmlTile<TK>;
  const int t[3] = {blk.tx / (T::kK * T::kJ), (blk.tx / T::kK) % T::kJ, blk.tx % T::kK};
  const int own[3] = {part.lo.i + blk.bx * T::kI + t[0], part.lo.j + blk.bz * T::kJ + t[1],
                      part.lo.k + blk.by * T::kK + t[2]};
  const bool in_slab = slab.contains(own[0], own[1], own[2]);
  const std::int64_t x = in_slab ? start + slab.position(own[0], own[1], own[2]) : -1;
  stage_flux_line<TK, 0>(c, slab, own, t, in_slab, x, tile);
  stage_flux_line<TK, 1>(c, slab, own, t, in_slab, x, tile);
  stage_flux_line<TK, 2>(c, slab, own, t, in_slab, x, tile);
  blk.sync();
  if (!part.contains(own[0], own[1], own[2])) return;
  float dv_perp[3], dv_axis[3];
  flux_derivatives_of_tile<TK, 0>(c, t, tile, dv_perp[0], dv_axis[0]);
  flux_derivatives_of_tile<TK, 1>(c, t, tile, dv_perp[1], dv_axis[1]);
  flux_derivatives_of_tile<TK, 2>(c, t, tile, dv_perp[2], dv_axis[2]);
  tti_cpml_finish<true, false>(g, c, own[0], own[1], own[2], x, load_by_rows<physics::TtiRows>(c.rows, c, x), dv_perp,
                               dv_axis);
}

/// The tile width along k for a part of a slab `depth` points deep along k: 32 where it is that
/// deep, else the width of 8 or 16 that wastes fewest threads (as slab_block chooses).
inline int cpml_tile_width(int depth) {
  int w = 32;
  for (const int v : {16, 8})
    if ((depth + v - 1) / v * v < (depth + w - 1) / w * w) w = v;
  return w;
}

}  // namespace minimod::kernels::cuda
