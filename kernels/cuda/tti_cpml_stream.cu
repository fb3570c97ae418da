// The TTI CPML's pass 2 with the rows given (kernels/tti_cpml.hpp, tti_cpml_layer_update: what
// tti_cpml_layer_rows does one thread a point) streamed along i over a box of one slab of the
// layer: each thread keeps its column's V_x (both tensors) for the planes i - 4 .. i + 4 in
// registers, and each plane's V_y and V_z of the tile and its halo along y and z are staged in
// shared memory once, so that the 48 neighbour values of d_c V_c come from registers and shared
// memory instead of 48 gathers from global memory; the next plane's values are loaded into
// registers while the current one is computed. Nsight Compute on the point kernel (1000^3,
// 8-point layer, H200, session 39): 792 instructions a point, mostly 64-bit index arithmetic and
// lookups, L2 at 75% of its throughput (L1 hit 49%), warps stalled on loads 77% of the time, and
// spills. The same formula (tti_flux_derivatives_of, tti_cpml_finish) on the same operands: the
// results are those of the point kernel bit for bit (tests/gpu/swic_split_emulation_test.cpp).
//
// The block body is written against block_model.cuh, so that the test runs it on host threads.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "kernels/cuda/block_emulation.hpp"
#include "kernels/cuda/block_model.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/emulation.hpp"
#include "kernels/cuda/tti_cpml_stream.hpp"
#include "kernels/tti_cpml.hpp"
#include "physics/error.hpp"

namespace minimod::kernels::cuda {
namespace {

constexpr int R = physics::kRadius;
constexpr int kThreads = 256;
constexpr int kChunk = 16;  // output planes a block streams (fewer where the box is thinner)

/// A block of TX (k) x TY (j) threads: the shared memory of one plane, V_y (perp, axis) of rows
/// j - R .. j + TY + R - 1 and V_z (perp, axis) of columns k - R .. k + TX + R - 1.
template <int TX, int TY>
struct StreamTile {
  static constexpr int kYRows = TY + 2 * R, kZCols = TX + 2 * R;
  static constexpr int kYFloats = kYRows * TX, kZFloats = TY * kZCols;
  static constexpr int kFloats = 2 * kYFloats + 2 * kZFloats;
};

/// V_a of field f (kVPerp, kVAxis) at grid point (i, j, k): by the slab's compact index inside
/// `slab` (first index `start`), else looked up (TtiCpmlArgs::index: another slab, a halo face, or
/// nothing stored: zero), as every path of tti_flux_derivatives reads it.
MM_HOST_DEVICE MM_FORCE_INLINE float flux_at(const TtiCpmlArgs& c, const physics::Box3& slab, std::int64_t start,
                                             int f, int a, int i, int j, int k) {
  const std::int64_t x = slab.contains(i, j, k) ? start + slab.position(i, j, k) : c.index(i, j, k);
  return c.at_or_zero(f, a, x);
}

#pragma nv_exec_check_disable
template <int TX, int TY, class Block>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_cpml_stream_block(const Block& blk, const TtiStepArgs& g,
                                                          const TtiCpmlArgs& c, const physics::Box3& slab,
                                                          const physics::Box3& part, std::int64_t start, int chunk,
                                                          float* smem) {
  using T = StreamTile<TX, TY>;
  const int k0 = part.lo.k + blk.bx * TX, j0 = part.lo.j + blk.by * TY;  // the tile's corner
  const int k = k0 + blk.tx, j = j0 + blk.ty;
  const int i_begin = part.lo.i + blk.bz * chunk;
  const int i_end = i_begin + chunk < part.hi().i ? i_begin + chunk : part.hi().i;
  const bool mine = j < part.hi().j && k < part.hi().k;
  const int me = blk.ty * TX + blk.tx;
  float* const vy = smem;                  // [field][row][col]: field 0 perp, 1 axis
  float* const vz = smem + 2 * T::kYFloats;
  // V_x of the own column at planes i - R .. i + R (ring[.][m + R]); the slot of plane i + R is
  // filled at the top of each plane.
  float ring[2][2 * R + 1];
#pragma unroll
  for (int m = 0; m <= 2 * R; ++m) ring[0][m] = ring[1][m] = 0.0f;
#pragma unroll
  for (int m = -R; m < R; ++m)
    if (mine) {
      ring[0][m + R + 1] = flux_at(c, slab, start, kVPerp, 0, i_begin + m, j, k);
      ring[1][m + R + 1] = flux_at(c, slab, start, kVAxis, 0, i_begin + m, j, k);
    }
  // The next plane's staged values and V_x, loaded while the current plane is computed: a
  // block's loads would otherwise stand alone between its barriers.
  constexpr int kYPer = (T::kYFloats + TX * TY - 1) / (TX * TY), kZPer = (T::kZFloats + TX * TY - 1) / (TX * TY);
  float y_next[2][kYPer], z_next[2][kZPer], x_next[2] = {0.0f, 0.0f};
  const auto fetch = [&](int i) {
#pragma unroll
    for (int q = 0; q < kYPer; ++q) {
      const int e = me + q * TX * TY;
      y_next[0][q] = y_next[1][q] = 0.0f;
      if (e < T::kYFloats) {
        const int jj = j0 + e / TX - R, kk = k0 + e % TX;
        y_next[0][q] = flux_at(c, slab, start, kVPerp, 1, i, jj, kk);
        y_next[1][q] = flux_at(c, slab, start, kVAxis, 1, i, jj, kk);
      }
    }
#pragma unroll
    for (int q = 0; q < kZPer; ++q) {
      const int e = me + q * TX * TY;
      z_next[0][q] = z_next[1][q] = 0.0f;
      if (e < T::kZFloats) {
        const int jj = j0 + e / T::kZCols, kk = k0 + e % T::kZCols - R;
        z_next[0][q] = flux_at(c, slab, start, kVPerp, 2, i, jj, kk);
        z_next[1][q] = flux_at(c, slab, start, kVAxis, 2, i, jj, kk);
      }
    }
    if (mine) {
      x_next[0] = flux_at(c, slab, start, kVPerp, 0, i + R, j, k);
      x_next[1] = flux_at(c, slab, start, kVAxis, 0, i + R, j, k);
    }
  };
  fetch(i_begin);
#pragma unroll 1
  for (int i = i_begin; i < i_end; ++i) {
#pragma unroll
    for (int m = 0; m < 2 * R; ++m) {
      ring[0][m] = ring[0][m + 1];
      ring[1][m] = ring[1][m + 1];
    }
    ring[0][2 * R] = x_next[0];
    ring[1][2 * R] = x_next[1];
#pragma unroll
    for (int q = 0; q < kYPer; ++q) {
      const int e = me + q * TX * TY;
      if (e < T::kYFloats) {
        vy[e] = y_next[0][q];
        vy[T::kYFloats + e] = y_next[1][q];
      }
    }
#pragma unroll
    for (int q = 0; q < kZPer; ++q) {
      const int e = me + q * TX * TY;
      if (e < T::kZFloats) {
        vz[e] = z_next[0][q];
        vz[T::kZFloats + e] = z_next[1][q];
      }
    }
    if (i + 1 < i_end) fetch(i + 1);
    const std::int64_t x = start + slab.position(i, j, k);
    physics::TtiRows rows{};
    if (mine) rows = load_by_rows<physics::TtiRows>(c.rows, c, x);
    blk.sync();
    if (mine) {
      float dv_perp[3], dv_axis[3];
      tti_flux_derivatives_of<0, false>(
          c, [&](int f, int m) { return ring[f == kVPerp ? 0 : 1][m + R]; }, dv_perp[0], dv_axis[0]);
      tti_flux_derivatives_of<1, false>(
          c, [&](int f, int m) { return vy[(f == kVPerp ? 0 : T::kYFloats) + (blk.ty + R + m) * TX + blk.tx]; },
          dv_perp[1], dv_axis[1]);
      tti_flux_derivatives_of<2, false>(
          c, [&](int f, int m) { return vz[(f == kVPerp ? 0 : T::kZFloats) + blk.ty * T::kZCols + blk.tx + R + m]; },
          dv_perp[2], dv_axis[2]);
      tti_cpml_finish<true>(g, c, i, j, k, x, rows, dv_perp, dv_axis);
    }
    blk.sync();  // the plane's V_y and V_z are read before the next plane overwrites them
  }
}

template <int TX, int TY, int MinBlocks>
__global__ void __launch_bounds__(kThreads, MinBlocks) tti_cpml_stream(TtiStepArgs g, TtiCpmlArgs c, physics::Box3 slab,
                                                              physics::Box3 part, std::int64_t start, int chunk) {
  __shared__ float smem[StreamTile<TX, TY>::kFloats];
  tti_cpml_stream_block<TX, TY>(DeviceBlock(), g, c, slab, part, start, chunk, smem);
}

/// f(TX) for the box's tile width along k: of 32, 16 and 8 the one that wastes fewest threads
/// (the widest where equal), so a k face, as deep as the layer, takes 8.
template <class F>
void with_stream_tile(const physics::Box3& part, const F& f) {
  const auto waste = [&](int w) { return (part.n.k + w - 1) / w * w - part.n.k; };
  int width = 32;
  for (const int w : {16, 8})
    if (waste(w) < waste(width)) width = w;
  if (width == 32) return f(std::integral_constant<int, 32>{});
  if (width == 16) return f(std::integral_constant<int, 16>{});
  return f(std::integral_constant<int, 8>{});
}

/// The blocks over `part` with tile TX x TY and `chunk` planes a block: k tiles, j tiles, chunks.
template <int TX, int TY>
void stream_grid(const physics::Box3& part, int chunk, int (&grid)[3]) {
  grid[0] = (part.n.k + TX - 1) / TX;
  grid[1] = (part.n.j + TY - 1) / TY;
  grid[2] = (part.n.i + chunk - 1) / chunk;
}

void check_stream(const TtiCpmlArgs& c, const physics::Box3& slab, const physics::Box3& part) {
  if (c.rows == nullptr) throw Error("tti_cpml_stream: needs the rows (TtiCpmlArgs::rows)");
  if (!(physics::intersect(part, slab) == part)) throw Error("tti_cpml_stream: the box must lie in the slab");
}

}  // namespace

void launch_tti_cpml_stream(const TtiStepArgs& g, const TtiCpmlArgs& c, const physics::Box3& slab,
                            const physics::Box3& part, std::int64_t start, cudaStream_t s) {
  check_stream(c, slab, part);
  if (part.empty()) return;
  with_stream_tile(part, [&](auto width) {
    constexpr int TX = decltype(width)::value, TY = kThreads / TX;
    // For A/B timing (read once): MINIMOD_TTI_PASS2_STREAM_BLOCKS=2 (128 registers, else 3 blocks
    // an SM at 80) and MINIMOD_TTI_PASS2_STREAM_CHUNK (planes a block, default kChunk).
    static const int blocks = [] {
      const char* v = std::getenv("MINIMOD_TTI_PASS2_STREAM_BLOCKS");
      return v != nullptr && std::atoi(v) == 2 ? 2 : 3;
    }();
    static const int chunk = [] {
      const char* v = std::getenv("MINIMOD_TTI_PASS2_STREAM_CHUNK");
      const int n = v != nullptr ? std::atoi(v) : 0;
      return n > 0 ? n : kChunk;
    }();
    int grid[3];
    stream_grid<TX, TY>(part, chunk, grid);
    const dim3 blocks3(grid[0], grid[1], grid[2]), threads(TX, TY);
    if (blocks == 2)
      tti_cpml_stream<TX, TY, 2><<<blocks3, threads, 0, s>>>(g, c, slab, part, start, chunk);
    else
      tti_cpml_stream<TX, TY, 3><<<blocks3, threads, 0, s>>>(g, c, slab, part, start, chunk);
  });
  MM_CUDA_CHECK_LAUNCH("tti_cpml_stream");
}

void emulate_tti_cpml_stream(const TtiStepArgs& g, const TtiCpmlArgs& c, const physics::Box3& slab,
                             const physics::Box3& part, std::int64_t start, int chunk) {
  check_stream(c, slab, part);
  if (part.empty()) return;
  with_stream_tile(part, [&](auto width) {
    constexpr int TX = decltype(width)::value, TY = kThreads / TX;
    int grid[3];
    stream_grid<TX, TY>(part, chunk, grid);
    emulate_grid(grid, TX, TY, StreamTile<TX, TY>::kFloats * 4, [&](HostBlock& blk, unsigned char* raw) {
      tti_cpml_stream_block<TX, TY>(blk, g, c, slab, part, start, chunk, reinterpret_cast<float*>(raw));
    });
  });
}

}  // namespace minimod::kernels::cuda
