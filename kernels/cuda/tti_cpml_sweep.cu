// The TTI CPML's layer sweep: pass 2 (kernels/tti_cpml.hpp) with the operator's rows formed in
// the same kernel, streamed along i over a box of one slab of the layer, on a model of one axis
// (TtiStepArgs::constant_axis). The point kernels take the rows from a launch of their own
// (swic_split_tma's CPML launch writes them, pass 2 reads them back: 48 B a point and 4 of the
// layer's 14 launches) and gather V along each axis from global memory; here a block of TX (k) x
// TY (j) threads keeps, in shared memory,
//  * a ring of NF planes of s = p + q, p and r = p / a over the tile and its halo of 4 (the
//    constant-axis form's staged point, physics::TtiAxisStaged), so that each output's 72
//    neighbours come from shared memory: the rows by groups (physics::tti_axis_rows73_by_groups);
//  * V_y and V_z (both tensors) of the output plane over the halo along their axis, and each
//    thread V_x of its column for the planes i - 4 .. i + 4 in registers: the flux derivatives
//    by the point kernel's formula on the same V, bitwise its d_c V_c.
// Every staged value is copied with `cp.async` (`__pipeline_memcpy_async`) D planes ahead, into
// the ring's free slot, so that no register holds a prefetch (session 39: a prefetch into
// registers cost more occupancy than it gained); a thread converts the points it copied (p, q,
// 1 / a into s, p, r) once its own copies have landed, then one barrier a plane. Pass 1 (psi and V)
// must be done at every slab before it.
//
// The block body is written against block_model.cuh, so that tests/gpu/swic_split_emulation_test.cpp
// runs it on host threads (copies done at once there) against the plain layer kernel.
#include <cuda_runtime.h>
#if defined(__CUDACC__)
#include <cuda_pipeline.h>
#endif

#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "kernels/cuda/block_emulation.hpp"
#include "kernels/cuda/block_model.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/emulation.hpp"
#include "kernels/cuda/tti_cpml_sweep.hpp"
#include "kernels/cuda/tti_stage.cuh"
#include "kernels/tti_cpml.hpp"
#include "physics/error.hpp"
#include "physics/tti.hpp"

namespace minimod::kernels::cuda {
namespace {

constexpr int R = physics::kRadius;
constexpr int kThreads = 256;
constexpr int kAhead = 2;  // planes whose copies are in flight beyond the one in use

/// The shared memory of a TX x TY tile: the ring of NF staged planes (s, p, r over kH rows of kP
/// points) and NV buffers of V_y (perp, axis; kH rows of TX) and V_z (perp, axis; TY rows of kP).
template <int TX, int TY>
struct SweepTile {
  static constexpr int kP = TX + 2 * R, kH = TY + 2 * R, kPoints = kP * kH;
  static constexpr int NF = 2 * R + 1 + kAhead, NV = kAhead + 1;
  static constexpr int kVy = kH * TX, kVz = TY * kP, kV = 2 * kVy + 2 * kVz;
  static constexpr int kFloats = NF * 3 * kPoints + NV * kV;
  static constexpr int kBytes = kFloats * 4;
};

/// cp.async of one float on the GPU; a plain copy in the emulation (done at once).
MM_HOST_DEVICE MM_FORCE_INLINE void copy_async(float* dst, const float* src) {
#if defined(__CUDA_ARCH__)
  __pipeline_memcpy_async(dst, src, 4);
#else
  *dst = *src;
#endif
}
MM_HOST_DEVICE MM_FORCE_INLINE void commit_copies() {
#if defined(__CUDA_ARCH__)
  __pipeline_commit();
#endif
}
/// Until all but the last `Prior` groups of this thread's copies have landed.
template <int Prior>
MM_HOST_DEVICE MM_FORCE_INLINE void wait_copies() {
#if defined(__CUDA_ARCH__)
  __pipeline_wait_prior(Prior);
#endif
}

/// The compact index of V at grid point (i, j, k): by the slab's position inside `slab` (first
/// index `start`), else looked up (another slab, or -1 where nothing is stored: V is zero there),
/// as every path of tti_flux_derivatives reaches it.
MM_HOST_DEVICE MM_FORCE_INLINE std::int64_t flux_index(const TtiCpmlArgs& c, const physics::Box3& slab,
                                                      std::int64_t start, int i, int j, int k) {
  return slab.contains(i, j, k) ? start + slab.position(i, j, k) : c.index(i, j, k);
}

#pragma nv_exec_check_disable
template <int TX, int TY, class Block>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_cpml_sweep_block(const Block& blk, const TtiStepArgs& g, const TtiCpmlArgs& c,
                                                         const physics::Box3& slab, const physics::Box3& part,
                                                         std::int64_t start, int chunk, float* smem) {
  using T = SweepTile<TX, TY>;
  constexpr int kP = T::kP;
  const physics::Index3 hi = part.hi();
  const int k0 = part.lo.k + blk.bx * TX, j0 = part.lo.j + blk.by * TY;  // the tile's corner
  const int k = k0 + blk.tx, j = j0 + blk.ty;
  const int i_begin = part.lo.i + blk.bz * chunk;
  const int i_end = i_begin + chunk < hi.i ? i_begin + chunk : hi.i;
  const int c_first = i_begin - R, c_end = i_end + R;  // planes streamed: [c_first, c_end)
  const bool mine = j < hi.j && k < hi.k;
  const int me = blk.ty * TX + blk.tx;
  // Slot base of plane c in the ring (s, p, r arrays one after another) and of output o's V.
  const auto plane = [&](int pc) { return smem + ((pc - c_first) % T::NF) * (3 * T::kPoints); };
  float* const v_base = smem + T::NF * 3 * T::kPoints;
  const auto v_slot = [&](int o) { return v_base + ((o - i_begin) % T::NV) * T::kV; };

  // Copies of plane pc (p into the p array, q into s, 1 / a into r: converted once landed) and,
  // where pc - R is an output, that output's V_y and V_z; one commit group either way.
  const auto issue = [&](int pc) {
    if (pc < c_end) {
      float* const f = plane(pc);
      for (int e = me; e < T::kPoints; e += kThreads) {
        const int jj = j0 - R + e / kP, kk = k0 - R + e % kP;
        if (jj >= hi.j + R || kk >= hi.k + R) continue;  // no output of the tile reads it
        const std::int64_t o = g.p.offset(pc, jj, kk);
        copy_async(f + e, g.q.origin + o);
        copy_async(f + T::kPoints + e, g.p.origin + o);
        copy_async(f + 2 * T::kPoints + e, g.inv_a.origin + o);
      }
      const int out = pc - R;
      if (out >= i_begin) {
        float* const v = v_slot(out);
        for (int e = me; e < T::kVy; e += kThreads) {  // V_y: kH rows of TX
          const int jj = j0 - R + e / TX, kk = k0 + e % TX;
          if (jj >= hi.j + R || kk >= hi.k) continue;
          const std::int64_t x = flux_index(c, slab, start, out, jj, kk);
          if (x < 0) {
            v[e] = v[T::kVy + e] = 0.0f;
          } else {
            copy_async(v + e, &c.at(kVPerp, 1, x));
            copy_async(v + T::kVy + e, &c.at(kVAxis, 1, x));
          }
        }
        float* const vz = v + 2 * T::kVy;
        for (int e = me; e < T::kVz; e += kThreads) {  // V_z: TY rows of kP
          const int jj = j0 + e / kP, kk = k0 - R + e % kP;
          if (jj >= hi.j || kk >= hi.k + R) continue;
          const std::int64_t x = flux_index(c, slab, start, out, jj, kk);
          if (x < 0) {
            vz[e] = vz[T::kVz + e] = 0.0f;
          } else {
            copy_async(vz + e, &c.at(kVPerp, 2, x));
            copy_async(vz + T::kVz + e, &c.at(kVAxis, 2, x));
          }
        }
      }
    }
    commit_copies();
  };
  // V_x (perp, axis) of the own column at plane pc, zero where nothing is stored.
  const auto flux_x = [&](int pc, float& perp, float& axis) {
    perp = axis = 0.0f;
    if (!mine) return;
    const std::int64_t x = flux_index(c, slab, start, pc, j, k);
    if (x < 0) return;
    perp = load(&c.at(kVPerp, 0, x));
    axis = load(&c.at(kVAxis, 0, x));
  };

  float ring[2][2 * R + 1];  // V_x of planes o - R .. o + R for output o = pc - R
  MM_UNROLL
  for (int m = 0; m <= 2 * R; ++m) ring[0][m] = ring[1][m] = 0.0f;
  float next_perp, next_axis;
  flux_x(c_first, next_perp, next_axis);
  MM_UNROLL
  for (int a = 0; a < kAhead; ++a) issue(c_first + a);

#pragma unroll 1
  for (int pc = c_first; pc < c_end; ++pc) {
    wait_copies<kAhead - 1>();  // this thread's copies of plane pc (and of output pc - R's V)
    {
      float* const f = plane(pc);
      for (int e = me; e < T::kPoints; e += kThreads) {
        const float p = f[T::kPoints + e];
        f[e] = p + f[e];                             // s = p + q
        f[2 * T::kPoints + e] = p * f[2 * T::kPoints + e];  // r = p / a
      }
    }
    MM_UNROLL
    for (int m = 0; m < 2 * R; ++m) {
      ring[0][m] = ring[0][m + 1];
      ring[1][m] = ring[1][m + 1];
    }
    ring[0][2 * R] = next_perp;
    ring[1][2 * R] = next_axis;
    if (pc + 1 < c_end) flux_x(pc + 1, next_perp, next_axis);
    blk.sync();  // plane pc and output pc - R's V are in; every thread is past output pc - R - 1
    issue(pc + kAhead);
    const int o = pc - R;
    if (o < i_begin || !mine) continue;
    const float* base[2 * R + 1];  // planes o - R .. o + R
    MM_UNROLL
    for (int d = 0; d <= 2 * R; ++d) base[d] = plane(o - R + d) + (blk.ty + R) * kP + blk.tx + R;
    const auto at = [&](int di, int dj, int dk) {
      const float* f = base[di + R] + dj * kP + dk;
      return physics::TtiAxisStaged{f[0], f[T::kPoints], f[2 * T::kPoints]};
    };
    const std::int64_t x = start + slab.position(o, j, k);
    const std::int64_t off = g.p.offset(o, j, k);
    const physics::TtiRows rows = physics::tti_axis_rows73_by_groups(
        at, g.axis_weights, load(g.inv_a.origin + off), load_by_rows<physics::TtiRowCentres>(c.row_centres, c, x));
    const float* const v = v_slot(o);
    float dv_perp[3], dv_axis[3];
    tti_flux_derivatives_of<0, false>(
        c, [&](int f, int m) { return ring[f == kVPerp ? 0 : 1][m + R]; }, dv_perp[0], dv_axis[0]);
    tti_flux_derivatives_of<1, false>(
        c, [&](int f, int m) { return v[(f == kVPerp ? 0 : T::kVy) + (blk.ty + R + m) * TX + blk.tx]; }, dv_perp[1],
        dv_axis[1]);
    const float* const vz = v + 2 * T::kVy;
    tti_flux_derivatives_of<2, false>(
        c, [&](int f, int m) { return vz[(f == kVPerp ? 0 : T::kVz) + blk.ty * kP + blk.tx + R + m]; }, dv_perp[2],
        dv_axis[2]);
    tti_cpml_finish<true>(g, c, o, j, k, x, rows, dv_perp, dv_axis);
  }
  wait_copies<0>();  // no copy outlives the block
}

template <int TX, int TY>
__global__ void __launch_bounds__(kThreads, 2) tti_cpml_sweep(TtiStepArgs g, TtiCpmlArgs c, physics::Box3 slab,
                                                             physics::Box3 part, std::int64_t start, int chunk) {
  extern __shared__ float4 sweep_smem[];
  tti_cpml_sweep_block<TX, TY>(DeviceBlock(), g, c, slab, part, start, chunk, reinterpret_cast<float*>(sweep_smem));
}

/// f(TX) for the box's tile width along k: 32, or 8 where the box is thinner than 32 (a k face).
template <class F>
void with_sweep_tile(const physics::Box3& part, const F& f) {
  if (part.n.k >= 32) return f(std::integral_constant<int, 32>{});
  return f(std::integral_constant<int, 8>{});
}

/// Output planes a block streams: MINIMOD_TTI_SWEEP_CHUNK (read once), else 16.
int sweep_chunk() {
  static const int chunk = [] {
    const char* v = std::getenv("MINIMOD_TTI_SWEEP_CHUNK");
    const int n = v == nullptr ? 0 : std::atoi(v);
    return n > 0 ? n : 16;
  }();
  return chunk;
}

template <int TX, int TY>
void sweep_grid(const physics::Box3& part, int chunk, int (&grid)[3]) {
  grid[0] = (part.n.k + TX - 1) / TX;
  grid[1] = (part.n.j + TY - 1) / TY;
  grid[2] = (part.n.i + chunk - 1) / chunk;
}

void check_sweep(const TtiStepArgs& g, const TtiCpmlArgs& c, const physics::Box3& slab, const physics::Box3& part) {
  if (!tti_cpml_sweep_applies(g, c)) throw Error("tti_cpml_sweep: needs a non-VTI model of one axis on one rank");
  if (!(physics::intersect(part, slab) == part)) throw Error("tti_cpml_sweep: the box must lie in the slab");
}

}  // namespace

bool tti_cpml_sweep_applies(const TtiStepArgs& g, const TtiCpmlArgs& c) {
  return g.constant_axis && !g.vti && c.halo.count == 0 && c.row_centres != nullptr;
}

void launch_tti_cpml_sweep(const TtiStepArgs& g, const TtiCpmlArgs& c, const physics::Box3& slab,
                           const physics::Box3& part, std::int64_t start, cudaStream_t s) {
  check_sweep(g, c, slab, part);
  if (part.empty()) return;
  with_sweep_tile(part, [&](auto width) {
    constexpr int TX = decltype(width)::value, TY = kThreads / TX;
    using T = SweepTile<TX, TY>;
    ensure_smem_limit<tti_cpml_sweep<TX, TY>>(T::kBytes);
    const int chunk = sweep_chunk();
    int grid[3];
    sweep_grid<TX, TY>(part, chunk, grid);
    tti_cpml_sweep<TX, TY><<<dim3(grid[0], grid[1], grid[2]), dim3(TX, TY), T::kBytes, s>>>(g, c, slab, part, start,
                                                                                          chunk);
  });
  MM_CUDA_CHECK_LAUNCH("tti_cpml_sweep");
}

void emulate_tti_cpml_sweep(const TtiStepArgs& g, const TtiCpmlArgs& c, const physics::Box3& slab,
                            const physics::Box3& part, std::int64_t start, int chunk) {
  check_sweep(g, c, slab, part);
  if (part.empty()) return;
  with_sweep_tile(part, [&](auto width) {
    constexpr int TX = decltype(width)::value, TY = kThreads / TX;
    int grid[3];
    sweep_grid<TX, TY>(part, chunk, grid);
    emulate_grid(grid, TX, TY, SweepTile<TX, TY>::kBytes, [&](HostBlock& blk, unsigned char* raw) {
      tti_cpml_sweep_block<TX, TY>(blk, g, c, slab, part, start, chunk, reinterpret_cast<float*>(raw));
    });
  });
}

}  // namespace minimod::kernels::cuda
