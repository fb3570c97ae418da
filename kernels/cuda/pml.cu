// PML regions on the GPU. Minimod's damped update (pml/pml_update.hpp) streams along i: a block
// covers a (k, j) tile of one slab and walks through a chunk of i planes (8: launch_pml), as the
// `streaming` family does (Micikevicius 2009; notes/sai2020-digest.md §3.5): u(i-4 .. i+4) of the
// thread's column in a register queue (ColumnQueue, column_queue.hpp, shared with streaming and the
// CPML passes), the u plane with its j/k halo in shared memory, u_prev, v2dt2 and
// aux prefetched one plane ahead; eta_y, eta_z (and their differences) are read once per thread,
// eta_x once per plane. So a PML point moves its 24 B (u, u_prev, v2dt2, aux read; u_next, aux
// written) plus the chunks' overlap, and the stencil's other reads are shared-memory hits.
// Tiles are rows of 32 threads (a warp) along k starting on a 32-B sector, a thin slab (z faces,
// 27 points) one tile wide, and as many j rows as fill 256 threads; blocks are 1D and map their
// threads onto (tx, ty) at run time. Every slab of a step can go into one launch.
// Both CPML passes stream along i the same way (see "CPML, streaming along i" below; checked
// against the CPU reference on an H100); MINIMOD_CPML_POINT=1 selects the one-thread-per-point
// kernels, for benchmarks.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kernels/cuda/block_emulation.hpp"
#include "kernels/cuda/block_model.cuh"
#include "kernels/cuda/column_queue.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/emulation.hpp"
#include "kernels/cuda/fast_div.hpp"
#include "kernels/cuda/pml_kernel.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/thread_point.cuh"
#include "kernels/tti_point.hpp"
#include "physics/error.hpp"
#include "pml/pml_update.hpp"

namespace minimod::kernels::cuda {
namespace {

constexpr int kBx = 32, kBy = 4, kBz = 2;
constexpr int R = physics::kRadius;

// --- Minimod PML, streaming along i ---

constexpr int kThreads = 256;     // block size; a tile uses tx * ty <= kThreads of them
constexpr int kMaxBoxes = 8;      // slabs per launch (6 PML faces)
constexpr int kMaxBlocks = 1 << 24;  // per launch: FastDiv splits block indices below it
constexpr int kTileK = 32;        // threads per tile along k: a warp a row (make_tile)
constexpr int kPitch = kTileK + 32;  // shared row pitch: cell (ty, tx) sits at bank (thread index + const) % 32
constexpr int kSmemFloats = 2600;  // >= (ty + 8) * kPitch for every tile shape make_tile picks

/// One slab cut into (k, j) tiles and i chunks; blocks [first_block, next box's first_block).
struct PmlTile {
  physics::Box3 box;
  int k0;      // k of the first tile's first thread (<= box.lo.k: sector-aligned rows)
  int ty;      // threads per tile along j (kTileK along k)
  int chunk;   // i planes per block
  int tiles_k, tiles_j, tiles_i;
  int order[3];  // axes (0 k, 1 j, 2 i) from the fastest-varying block index to the slowest
  int first_block;
  int n0, n1;           // tiles along order[0] and order[1]
  FastDiv by_n0, by_n1;
};

struct PmlTiles {
  PmlTile t[kMaxBoxes];
  int count;
  int blocks;
};

/// The tiling of one slab: k tiles of 32 threads (a warp a row) from the sector boundary at or
/// below lo.k, also where the slab is thinner (a z face: one tile, its spare lanes stage halo cells
/// or idle; rows as wide as the slab, 28 threads on Minimod's z+ face, ran that face in 405 us
/// instead of 381 and the case 0.3-0.5% slower end to end: H100, 1000^3,
/// bench/results/2026-11-24-h100-session10.md §5), the block filled up with j rows; j rows and i
/// planes split evenly over their tiles and chunks. The launch order runs fastest along the axis
/// with the fewest tiles, then the next (an x face: i chunks, k, j; a y face: j, k, i; a z face:
/// i, j), so that a block's neighbours along every axis run at about the same time and read its
/// halo cells from L2: H100, 1000^3, semi_tma 64x32x128 inside, 138.3 -> 139.1 GPts/s, the layer's
/// DRAM reads 3.11 -> 2.93 GB a step (bench/results/2026-11-24-h100-session5.md).
PmlTile make_tile(const physics::Box3& box, const float* u_lo, int chunk) {
  PmlTile t{};
  t.box = box;
  const int misalign = static_cast<int>((reinterpret_cast<std::uintptr_t>(u_lo) / 4) % 8);
  t.k0 = box.lo.k - misalign;
  const int span = box.hi().k - t.k0;
  t.tiles_k = static_cast<int>(ceil_div(span, kTileK));
  const int ty_max = std::max(R, std::min(kThreads / kTileK, 64));
  t.tiles_j = static_cast<int>(ceil_div(box.n.j, ty_max));
  t.ty = std::max(R, static_cast<int>(ceil_div(box.n.j, t.tiles_j)));
  const int chunks = static_cast<int>(ceil_div(box.n.i, std::max(1, chunk)));
  t.chunk = static_cast<int>(ceil_div(box.n.i, chunks));
  t.tiles_i = static_cast<int>(ceil_div(box.n.i, t.chunk));
  const int n[3] = {t.tiles_k, t.tiles_j, t.tiles_i};
  t.order[0] = 0, t.order[1] = 1, t.order[2] = 2;
  std::stable_sort(t.order, t.order + 3, [&n](int x, int y) { return n[x] < n[y]; });
  t.n0 = n[t.order[0]], t.n1 = n[t.order[1]];
  t.by_n0 = fast_div_by(t.n0), t.by_n1 = fast_div_by(t.n1);
  return t;
}

/// An integer environment variable (benchmark switches), `fallback` when unset.
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

__global__ void __launch_bounds__(kBx* kBy* kBz) pml_iso(PmlStepArgs a) {
  int i, j, k;
  if (!thread_point(a.region, i, j, k)) return;
  const float* p = a.u.ptr(i, j, k);
  const std::int64_t sx = a.u.sx, sy = a.u.sy;
  const auto at = [p, sx, sy](int di, int dj, int dk) { return __ldg(p + di * sx + dj * sy + dk); };
  if (a.undamped.contains(i, j, k)) {  // an inner point given to this kernel
    float* out = a.u_next.ptr(i, j, k);
    const float u_prev = a.u_prev.origin ? *a.u_prev.ptr(i, j, k) : *out;
    *out = physics::leapfrog(u_prev, at(0, 0, 0), __ldg(a.v2dt2.ptr(i, j, k)), physics::laplacian8(at, a.laplacian));
    return;
  }
  const float* ex = a.eta_x + 1;
  const float* ey = a.eta_y + 1;
  const float* ez = a.eta_z + 1;
  const float eta = ex[i] + ey[j] + ez[k];
  const float lap = physics::laplacian8(at, a.laplacian);
  float* aux = a.aux.ptr(i, j, k);
  const float aux_old = *aux;
  float* out = a.u_next.ptr(i, j, k);
  const float u_prev = a.u_prev.origin ? *a.u_prev.ptr(i, j, k) : *out;
  *out = pml::pml_u_next(u_prev, at(0, 0, 0), __ldg(a.v2dt2.ptr(i, j, k)), lap, aux_old, eta);
  const float grad = pml::pml_gradient_term(ex[i + 1], ex[i - 1], at(1, 0, 0), at(-1, 0, 0), a.inv_4h2[0]) +
                     pml::pml_gradient_term(ey[j + 1], ey[j - 1], at(0, 1, 0), at(0, -1, 0), a.inv_4h2[1]) +
                     pml::pml_gradient_term(ez[k + 1], ez[k - 1], at(0, 0, 1), at(0, 0, -1), a.inv_4h2[2]);
  *aux = pml::pml_aux_next(aux_old, eta, grad);
}

template <int A>
__device__ MM_FORCE_INLINE void psi_axis(const PmlStepArgs& a, int i, int j, int k, int along,
                                         const float* p, std::int64_t sx, std::int64_t sy) {
  const float b = a.b[A][along];
  if (b == 0.0f) return;  // psi_A stays 0 outside axis A's PML
  const auto at = [p, sx, sy](int di, int dj, int dk) { return __ldg(p + di * sx + dj * sy + dk); };
  float* psi = a.psi[A].ptr(i, j, k);
  *psi = pml::cpml_psi_next<A>(*psi, a.a[A][along], b, at, a.derivatives);
}

__global__ void __launch_bounds__(kBx* kBy* kBz) cpml_psi(PmlStepArgs a) {
  int i, j, k;
  if (!thread_point(a.region, i, j, k)) return;
  const float* p = a.u.ptr(i, j, k);
  psi_axis<0>(a, i, j, k, i, p, a.u.sx, a.u.sy);
  psi_axis<1>(a, i, j, k, j, p, a.u.sx, a.u.sy);
  psi_axis<2>(a, i, j, k, k, p, a.u.sx, a.u.sy);
}

template <int A, class AtU>
__device__ MM_FORCE_INLINE float cpml_term(const PmlStepArgs& a, const AtU& at_u, int i, int j,
                                           int k, int along) {
  const float b = a.b[A][along];
  if (b == 0.0f) return pml::second_derivative8<A>(at_u, a.derivatives);  // = the CPU's result
  const float* q = a.psi[A].ptr(i, j, k);
  const std::int64_t sx = a.u.sx, sy = a.u.sy;
  const auto at_psi = [q, sx, sy](int di, int dj, int dk) { return q[di * sx + dj * sy + dk]; };
  float* zeta = a.zeta[A].ptr(i, j, k);
  float z = *zeta;
  const float term = pml::cpml_axis_term<A>(at_u, at_psi, a.a[A][along], b, z, a.derivatives);
  *zeta = z;
  return term;
}

__global__ void __launch_bounds__(kBx* kBy* kBz) cpml_update(PmlStepArgs a) {
  int i, j, k;
  if (!thread_point(a.region, i, j, k)) return;
  const float* p = a.u.ptr(i, j, k);
  const std::int64_t sx = a.u.sx, sy = a.u.sy;
  const auto at = [p, sx, sy](int di, int dj, int dk) { return __ldg(p + di * sx + dj * sy + dk); };
  float* out = a.u_next.ptr(i, j, k);
  if (a.undamped.contains(i, j, k)) {  // an inner point given to this kernel
    *out = physics::leapfrog(*out, at(0, 0, 0), __ldg(a.v2dt2.ptr(i, j, k)), physics::laplacian8(at, a.laplacian));
    return;
  }
  const float lap = cpml_term<0>(a, at, i, j, k, i) + cpml_term<1>(a, at, i, j, k, j) +
                    cpml_term<2>(a, at, i, j, k, k);
  *out = physics::leapfrog(*out, at(0, 0, 0), __ldg(a.v2dt2.ptr(i, j, k)), lap);
}

dim3 pml_grid(const PmlStepArgs& a) {
  return dim3(ceil_div(a.region.n.k, kBx), ceil_div(a.region.n.j, kBy), ceil_div(a.region.n.i, kBz));
}

// --- CPML, streaming along i (the default; MINIMOD_CPML_POINT=1: the point kernels) ---
//
// Both passes use pml_stream's tiling (make_tile) and thread mapping: a block walks a chunk of i
// planes of one (k, j) tile, u(i-4 .. i+4) of its column in a register queue, the u plane with its
// j/k halo in shared memory, every slab in one launch. The first pass reads u and each damped
// axis's psi; the second also keeps psi_x(i-4 .. i+4) in a register queue and stages psi_y (j
// halo) and psi_z (k halo) in two more shared planes. A psi cell is read from memory only if an
// output's derivative reaches it from a point where that axis is damped (read_by_damped), zeta_d
// only where axis d is damped: a y or z slab away from the x faces moves no psi_x or zeta_x. The
// formulas are pml/cpml.hpp's in cpml_update's order, so the results equal the point kernels'.
// The bodies are written against block_model.cuh, so that emulate_cpml_psi_stream and
// emulate_cpml_stream run them on host threads (tests/gpu/cpml_stream_emulation_test.cpp).

constexpr int kCpmlSmemFloats = 3 * kSmemFloats;  // u, psi_y, psi_z planes, each as pml_stream's
constexpr int kCpmlChunk = 64;                    // pml_stream's old chunk (it runs 8 now); untimed here

/// A thread's column in a streamed slab launch, as pml_stream maps it: its tile, (j, k), i chunk
/// and the u cells it stages (its own and, at the tile's edges, one halo cell R away).
struct StreamColumn {
  int tile, tx, ty, j, k, i_begin, i_end;
  bool writes, has_u, klo, khi, jlo, jhi;
};

MM_HOST_DEVICE MM_FORCE_INLINE StreamColumn stream_column(const PmlTiles& tiles, int thread,
                                                          int block) {
  StreamColumn c{};
  for (int b = 1; b < tiles.count; ++b)
    if (block >= tiles.t[b].first_block) c.tile = b;
  const PmlTile& t = tiles.t[c.tile];
  // The block's tile along the fastest axis, the next and the slowest (unsigned, by FastDiv).
  const unsigned rest = static_cast<unsigned>(block - t.first_block);
  const unsigned q0 = t.by_n0(rest), q1 = t.by_n1(q0);
  const int b0 = static_cast<int>(rest - q0 * static_cast<unsigned>(t.n0));
  const int b1 = static_cast<int>(q0 - q1 * static_cast<unsigned>(t.n1)), b2 = static_cast<int>(q1);
  // selects, not an indexed array (which would live in local memory)
  const auto along = [&t, b0, b1, b2](int axis) { return t.order[0] == axis ? b0 : t.order[1] == axis ? b1 : b2; };
  const int bk = along(0), bj = along(1), bi = along(2);
  c.ty = thread / kTileK;
  c.tx = thread % kTileK;
  const bool active = c.ty < t.ty;  // spare threads of the block only take part in the barriers
  const physics::Index3 lo = t.box.lo, hi = t.box.hi();
  c.k = t.k0 + bk * kTileK + c.tx;
  c.j = lo.j + bj * t.ty + c.ty;
  c.i_begin = lo.i + bi * t.chunk;
  c.i_end = c.i_begin + t.chunk < hi.i ? c.i_begin + t.chunk : hi.i;
  // A plane cell is staged only if some output's stencil reaches it (the halo is R wide).
  const auto needed = [&](int jj, int kk) {
    return active && jj >= lo.j - R && jj < hi.j + R && kk >= lo.k - R && kk < hi.k + R;
  };
  c.writes = active && c.k >= lo.k && c.k < hi.k && c.j < hi.j;
  c.has_u = needed(c.j, c.k);
  c.klo = c.tx < R && needed(c.j, c.k - R);
  c.khi = c.tx >= kTileK - R && needed(c.j, c.k + R);
  c.jlo = c.ty < R && needed(c.j - R, c.k);
  c.jhi = c.ty >= t.ty - R && needed(c.j + R, c.k);
  return c;
}

/// What a streamed column writes besides its layer points: `undamped_jk`, its (j, k) lies in
/// a.undamped (the inner points given to the kernel, at the planes in that box's i range:
/// `undamped(a.undamped, i)`), and `halo_zero`, it is a k halo cell of a row the slab writes
/// (zeros with a.zero_k_halo).
struct ColumnExtras {
  bool undamped_jk, halo_zero;
  MM_HOST_DEVICE MM_FORCE_INLINE bool undamped(const physics::Box3& und, int i) const {
    return undamped_jk && i >= und.lo.i && i < und.hi().i;
  }
};
MM_HOST_DEVICE MM_FORCE_INLINE ColumnExtras column_extras(const PmlStepArgs& a, const StreamColumn& c,
                                                          const physics::Box3& slab) {
  const physics::Box3& und = a.undamped;
  const int grid_lo_k = a.u.box.lo.k + R, grid_hi_k = a.u.box.hi().k - R;
  return {c.j >= und.lo.j && c.j < und.hi().j && c.k >= und.lo.k && c.k < und.hi().k,
          a.zero_k_halo && !c.writes && c.has_u && c.j >= slab.lo.j && c.j < slab.hi().j &&
              (c.k < grid_lo_k || c.k >= grid_hi_k) && c.k >= a.u.box.lo.k && c.k < a.u.box.hi().k};
}

/// Minimod's damped update on the slabs of `tiles`, streamed along i (the scheme at the top of
/// this file), `s` kSmemFloats of shared memory. Written against block_model.cuh, so that
/// emulate_pml_stream runs it on host threads (tests/gpu/pml_stream_emulation_test.cpp).
#pragma nv_exec_check_disable
template <class Block>
MM_HOST_DEVICE MM_FORCE_INLINE void pml_stream_block(const Block& blk, const PmlStepArgs& a, const PmlTiles& tiles,
                                                     float* s) {
  const StreamColumn c = stream_column(tiles, blk.tx, blk.bx);
  const int j = c.j, k = c.k, i_begin = c.i_begin, i_end = c.i_end;
  const bool writes = c.writes;
  const ColumnExtras extra = column_extras(a, c, tiles.t[c.tile].box);
  const std::int64_t sx = a.u.sx, sy4 = R * a.u.sy;
  const std::int64_t o = a.u.offset(i_begin, j, k);  // all fields share one layout (launch_pml)
  const float* pu = a.u.origin + o;
  float* pn = a.u_next.origin + o;
  const float* pp = a.u_prev.origin ? a.u_prev.origin + o : pn;  // u_prev (pn itself when in place)
  const float* pv = a.v2dt2.origin + o;
  float* pa = a.aux.origin + o;

  const float* ex = a.eta_x + 1;
  const float* ey = a.eta_y + 1;
  const float* ez = a.eta_z + 1;
  float ey_j = 0.0f, ey_p = 0.0f, ey_m = 0.0f, ez_k = 0.0f, ez_p = 0.0f, ez_m = 0.0f;
  if (writes) {
    ey_j = load(ey + j), ey_p = load(ey + j + 1), ey_m = load(ey + j - 1);
    ez_k = load(ez + k), ez_p = load(ez + k + 1), ez_m = load(ez + k - 1);
  }

  constexpr int S = kPitch;
  float* const own = s + (c.ty + R) * S + c.tx + R;

  ColumnQueue col{c.has_u, c.klo, c.khi, c.jlo, c.jhi, sx, sy4};  // u(i-4 .. i+4), halo cells
  col.fill(pu);
  float nup = writes ? *pp : 0.0f, nvv = writes ? load(pv) : 0.0f, nax = writes ? *pa : 0.0f;
  float ex_m = load(ex + i_begin - 1), ex_c = load(ex + i_begin);  // eta_x(i-1), eta_x(i), rolled

  for (int i = i_begin; i < i_end; ++i) {
    col.advance();
    const float up = nup, vv = nvv, ax = nax;
    if (i + 1 < i_end) {  // prefetch plane i+1 (block-uniform condition)
      col.prefetch(pu + sx);
      nup = writes ? pp[sx] : 0.0f;
      nvv = writes ? load(pv + sx) : 0.0f;
      nax = writes ? pa[sx] : 0.0f;
    }
    const float ex_p = load(ex + i + 1);
    blk.sync();  // everyone is done reading the previous plane
    col.stage(own, S);
    blk.sync();
    if (writes) {
      const float* const q = col.q;
      const auto at = [q, own, S](int di, int dj, int dk) {
        return (dj == 0 && dk == 0) ? q[R + di] : own[dj * S + dk];
      };
      const float lap = physics::laplacian8(at, a.laplacian);
      if (extra.undamped(a.undamped, i)) {  // an inner point: aux stays
        *pn = physics::leapfrog(up, q[R], vv, lap);
      } else {
        const float eta = ex_c + ey_j + ez_k;  // the CPU's order: (ex + ey) + ez
        *pn = pml::pml_u_next(up, q[R], vv, lap, ax, eta);
        const float grad =
            pml::pml_gradient_term(ex_p, ex_m, at(1, 0, 0), at(-1, 0, 0), a.inv_4h2[0]) +
            pml::pml_gradient_term(ey_p, ey_m, at(0, 1, 0), at(0, -1, 0), a.inv_4h2[1]) +
            pml::pml_gradient_term(ez_p, ez_m, at(0, 0, 1), at(0, 0, -1), a.inv_4h2[2]);
        *pa = pml::pml_aux_next(ax, eta, grad);
      }
    } else if (extra.halo_zero) {
      *pn = 0.0f;
      *pa = 0.0f;
    }
    pu += sx;
    pn += sx;
    pp += sx;
    pv += sx;
    pa += sx;
    ex_m = ex_c;
    ex_c = ex_p;
  }
}


/// At most 48 registers (48 used, no spills since FastDiv splits the indices; 55 without the
/// cap): five of its 256-thread blocks fit on an SM (four at 56), and two beside one 512-thread,
/// 72-register block of semi_tma running on the other stream. H100, 1000^3
/// (bench/results/2026-11-24-h100-session9.md): the layer's six slabs 1.95 -> 1.85 ms (Nsight
/// Compute), end to end semi_tma 128x16x64 139.70 / 139.45 and temporal_tma 32x24x128 137.12 /
/// 137.86 GPts/s at 56 / 48; 40 registers spill (36 B) and ran at 132.7 / 129.9.
__global__ void __maxnreg__(48) pml_stream(PmlStepArgs a, PmlTiles tiles) {
  __shared__ float s[kSmemFloats];
  pml_stream_block(DeviceBlock(), a, tiles, s);
}

/// Whether the first derivative of some output in [lo, hi) with b != 0 reads cell c along that
/// axis (it reaches c - R .. c + R, skipping its centre).
MM_HOST_DEVICE MM_FORCE_INLINE bool read_by_damped(const float* b, int c, int lo, int hi) {
  const int o0 = c - R > lo ? c - R : lo, o1 = c + R + 1 < hi ? c + R + 1 : hi;
  bool any = false;
  for (int o = o0; o < o1; ++o) any = any || (o != c && load(b + o) != 0.0f);
  return any;
}

/// Axis A's part of the PML Laplacian as cpml_update computes it: the plain second derivative
/// where A is undamped (psi_A, zeta_A untouched), else cpml_axis_term (zeta updated in place).
template <int A, class AtU, class AtPsi>
MM_HOST_DEVICE MM_FORCE_INLINE float cpml_stream_term(const AtU& at_u, const AtPsi& at_psi, float a,
                                                      float b, float& zeta,
                                                      const pml::AxisDerivatives& w) {
  if (b == 0.0f) return pml::second_derivative8<A>(at_u, w);
  return pml::cpml_axis_term<A>(at_u, at_psi, a, b, zeta, w);
}

/// CPML first pass on every slab of `tiles`: psi_d <- a_d psi_d + b_d du/dx_d where b_d != 0.
/// `s` holds kSmemFloats floats.
#pragma nv_exec_check_disable
template <class Block>
MM_HOST_DEVICE MM_FORCE_INLINE void cpml_psi_block(const Block& blk, const PmlStepArgs& a,
                                                   const PmlTiles& tiles, float* s) {
  const StreamColumn c = stream_column(tiles, blk.tx, blk.bx);
  const int j = c.j, k = c.k;
  const std::int64_t sx = a.u.sx, sy4 = R * a.u.sy;
  std::int64_t o = a.u.offset(c.i_begin, j, k);  // all fields share one layout (plan_cpml)
  const float* const u = a.u.origin;
  float* const psi_x = a.psi[0].origin;
  float* const psi_y = a.psi[1].origin;
  float* const psi_z = a.psi[2].origin;

  float ay = 0.0f, by = 0.0f, az = 0.0f, bz = 0.0f;
  if (c.writes) {
    ay = load(a.a[1] + j), by = load(a.b[1] + j);
    az = load(a.a[2] + k), bz = load(a.b[2] + k);
  }
  constexpr int S = kPitch;
  float* const own = s + (c.ty + R) * S + c.tx + R;

  ColumnQueue col{c.has_u, c.klo, c.khi, c.jlo, c.jhi, sx, sy4};  // u(i-4 .. i+4), halo cells
  col.fill(u + o);
  float nax = load(a.a[0] + c.i_begin), nbx = load(a.b[0] + c.i_begin);
  float npx = c.writes && nbx != 0.0f ? psi_x[o] : 0.0f;
  float npy = c.writes && by != 0.0f ? psi_y[o] : 0.0f;
  float npz = c.writes && bz != 0.0f ? psi_z[o] : 0.0f;

  for (int i = c.i_begin; i < c.i_end; ++i) {
    col.advance();
    const float ax = nax, bx = nbx, px = npx, py = npy, pz = npz;
    if (i + 1 < c.i_end) {  // prefetch plane i+1 (block-uniform condition)
      const std::int64_t o1 = o + sx;
      col.prefetch(u + o1);
      nax = load(a.a[0] + i + 1), nbx = load(a.b[0] + i + 1);
      npx = c.writes && nbx != 0.0f ? psi_x[o1] : 0.0f;
      npy = c.writes && by != 0.0f ? psi_y[o1] : 0.0f;
      npz = c.writes && bz != 0.0f ? psi_z[o1] : 0.0f;
    }
    blk.sync();  // everyone is done reading the previous plane
    col.stage(own, S);
    blk.sync();
    if (c.writes) {
      const float* const q = col.q;
      const auto at = [q, own, S](int di, int dj, int dk) {
        return (dj == 0 && dk == 0) ? q[R + di] : own[dj * S + dk];
      };
      if (bx != 0.0f) psi_x[o] = pml::cpml_psi_next<0>(px, ax, bx, at, a.derivatives);
      if (by != 0.0f) psi_y[o] = pml::cpml_psi_next<1>(py, ay, by, at, a.derivatives);
      if (bz != 0.0f) psi_z[o] = pml::cpml_psi_next<2>(pz, az, bz, at, a.derivatives);
    }
    o += sx;
  }
}

/// CPML second pass on every slab of `tiles` (after the first pass on all of them): u_next and
/// zeta_d. `s` holds kCpmlSmemFloats floats.
#pragma nv_exec_check_disable
template <class Block>
MM_HOST_DEVICE MM_FORCE_INLINE void cpml_update_block(const Block& blk, const PmlStepArgs& a,
                                                      const PmlTiles& tiles, float* s) {
  const StreamColumn c = stream_column(tiles, blk.tx, blk.bx);
  const PmlTile& t = tiles.t[c.tile];
  const physics::Index3 lo = t.box.lo, hi = t.box.hi();
  const int j = c.j, k = c.k;
  const std::int64_t sx = a.u.sx, sy4 = R * a.u.sy;
  std::int64_t o = a.u.offset(c.i_begin, j, k);  // all fields share one layout (plan_cpml)
  const float* const u = a.u.origin;
  float* const un = a.u_next.origin;
  const float* const v2dt2 = a.v2dt2.origin;
  const float* const psi_x = a.psi[0].origin;
  const float* const psi_y = a.psi[1].origin;
  const float* const psi_z = a.psi[2].origin;
  float* const zeta_x = a.zeta[0].origin;
  float* const zeta_y = a.zeta[1].origin;
  float* const zeta_z = a.zeta[2].origin;

  // psi_y is read along j only and psi_z along k only: their planes need the j or the k halo.
  const bool in_j = j >= lo.j && j < hi.j, in_k = k >= lo.k && k < hi.k;
  const bool py = c.has_u && in_k && read_by_damped(a.b[1], j, lo.j, hi.j);
  const bool py_lo = c.jlo && in_k && read_by_damped(a.b[1], j - R, lo.j, hi.j);
  const bool py_hi = c.jhi && in_k && read_by_damped(a.b[1], j + R, lo.j, hi.j);
  const bool pz = c.has_u && in_j && read_by_damped(a.b[2], k, lo.k, hi.k);
  const bool pz_lo = c.klo && in_j && read_by_damped(a.b[2], k - R, lo.k, hi.k);
  const bool pz_hi = c.khi && in_j && read_by_damped(a.b[2], k + R, lo.k, hi.k);
  float ay = 0.0f, by = 0.0f, az = 0.0f, bz = 0.0f;
  if (c.writes) {
    ay = load(a.a[1] + j), by = load(a.b[1] + j);
    az = load(a.a[2] + k), bz = load(a.b[2] + k);
  }
  const ColumnExtras extra = column_extras(a, c, t.box);
  constexpr int S = kPitch;
  float* const own = s + (c.ty + R) * S + c.tx + R;
  float* const own_py = own + kSmemFloats;
  float* const own_pz = own + 2 * kSmemFloats;

  // psi_x(p) enters the queue only if an output plane of this chunk within R of p is damped along
  // x: bit m of `damped` says whether output plane p - R + m is, for the p loaded next.
  const auto damped_x = [&a, &c](int p) {
    return p >= c.i_begin && p < c.i_end && load(a.b[0] + p) != 0.0f ? 1u : 0u;
  };
  constexpr unsigned kOthers = ~(1u << R);
  unsigned damped = 0;
#pragma unroll
  for (int m = 0; m <= 2 * R; ++m) damped |= damped_x(c.i_begin - 2 * R + m) << m;

  ColumnQueue col{c.has_u, c.klo, c.khi, c.jlo, c.jhi, sx, sy4};  // u(i-4 .. i+4), halo cells
  col.fill(u + o);
  float pq[2 * R + 1];  // pq[R + d] = psi_x(i + d) where read, else 0
  pq[0] = 0.0f;
#pragma unroll
  for (int m = 1; m <= 2 * R; ++m) {
    pq[m] = c.writes && (damped & kOthers) ? load(psi_x + o + (m - R - 1) * sx) : 0.0f;
    damped = (damped >> 1) | damped_x(c.i_begin + m) << (2 * R);
  }
  float npq = c.writes && (damped & kOthers) ? load(psi_x + o + R * sx) : 0.0f;
  float npy = py ? load(psi_y + o) : 0.0f;
  float npy_lo = py_lo ? load(psi_y + o - sy4) : 0.0f,
        npy_hi = py_hi ? load(psi_y + o + sy4) : 0.0f;
  float npz = pz ? load(psi_z + o) : 0.0f;
  float npz_lo = pz_lo ? load(psi_z + o - R) : 0.0f, npz_hi = pz_hi ? load(psi_z + o + R) : 0.0f;
  float nax = load(a.a[0] + c.i_begin), nbx = load(a.b[0] + c.i_begin);
  float nup = c.writes ? un[o] : 0.0f, nvv = c.writes ? load(v2dt2 + o) : 0.0f;
  float nzx = c.writes && nbx != 0.0f ? zeta_x[o] : 0.0f;
  float nzy = c.writes && by != 0.0f ? zeta_y[o] : 0.0f;
  float nzz = c.writes && bz != 0.0f ? zeta_z[o] : 0.0f;

  for (int i = c.i_begin; i < c.i_end; ++i) {
    col.advance();
#pragma unroll
    for (int m = 0; m < 2 * R; ++m) pq[m] = pq[m + 1];
    pq[2 * R] = npq;
    const float hpy = npy, hpy_lo = npy_lo, hpy_hi = npy_hi, hpz = npz, hpz_lo = npz_lo,
                hpz_hi = npz_hi;
    const float ax = nax, bx = nbx, up = nup, vv = nvv;
    float zx = nzx, zy = nzy, zz = nzz;
    if (i + 1 < c.i_end) {  // prefetch plane i+1 (block-uniform condition)
      const std::int64_t o1 = o + sx;
      damped = (damped >> 1) | damped_x(i + 1 + 2 * R) << (2 * R);
      col.prefetch(u + o1);
      npq = c.writes && (damped & kOthers) ? load(psi_x + o1 + R * sx) : 0.0f;
      npy = py ? load(psi_y + o1) : 0.0f;
      npy_lo = py_lo ? load(psi_y + o1 - sy4) : 0.0f;
      npy_hi = py_hi ? load(psi_y + o1 + sy4) : 0.0f;
      npz = pz ? load(psi_z + o1) : 0.0f;
      npz_lo = pz_lo ? load(psi_z + o1 - R) : 0.0f;
      npz_hi = pz_hi ? load(psi_z + o1 + R) : 0.0f;
      nax = load(a.a[0] + i + 1), nbx = load(a.b[0] + i + 1);
      nup = c.writes ? un[o1] : 0.0f;
      nvv = c.writes ? load(v2dt2 + o1) : 0.0f;
      nzx = c.writes && nbx != 0.0f ? zeta_x[o1] : 0.0f;
      nzy = c.writes && by != 0.0f ? zeta_y[o1] : 0.0f;
      nzz = c.writes && bz != 0.0f ? zeta_z[o1] : 0.0f;
    }
    blk.sync();  // everyone is done reading the previous planes
    col.stage(own, S);
    if (py) own_py[0] = hpy;
    if (py_lo) own_py[-R * S] = hpy_lo;
    if (py_hi) own_py[R * S] = hpy_hi;
    if (pz) own_pz[0] = hpz;
    if (pz_lo) own_pz[-R] = hpz_lo;
    if (pz_hi) own_pz[R] = hpz_hi;
    blk.sync();
    if (c.writes) {
      const float* const q = col.q;
      const auto at = [q, own, S](int di, int dj, int dk) {
        return (dj == 0 && dk == 0) ? q[R + di] : own[dj * S + dk];
      };
      const auto at_px = [&pq](int di, int, int) { return pq[R + di]; };
      const auto at_py = [own_py, S](int, int dj, int) { return own_py[dj * S]; };
      const auto at_pz = [own_pz](int, int, int dk) { return own_pz[dk]; };
      if (extra.undamped(a.undamped, i)) {  // the inner update, no zeta
        un[o] = physics::leapfrog(up, q[R], vv, physics::laplacian8(at, a.laplacian));
      } else {
        const float lap = cpml_stream_term<0>(at, at_px, ax, bx, zx, a.derivatives) +
                          cpml_stream_term<1>(at, at_py, ay, by, zy, a.derivatives) +
                          cpml_stream_term<2>(at, at_pz, az, bz, zz, a.derivatives);
        un[o] = physics::leapfrog(up, q[R], vv, lap);
        if (bx != 0.0f) zeta_x[o] = zx;
        if (by != 0.0f) zeta_y[o] = zy;
        if (bz != 0.0f) zeta_z[o] = zz;
      }
    } else if (extra.halo_zero) {
      un[o] = 0.0f;
    }
    o += sx;
  }
}

__global__ void __launch_bounds__(kThreads) cpml_psi_stream(PmlStepArgs a, PmlTiles tiles) {
  __shared__ float s[kSmemFloats];
  cpml_psi_block(DeviceBlock(), a, tiles, s);
}

__global__ void __launch_bounds__(kThreads) cpml_stream(PmlStepArgs a, PmlTiles tiles) {
  __shared__ float s[kCpmlSmemFloats];
  cpml_update_block(DeviceBlock(), a, tiles, s);
}

/// The launches of a streamed slab kernel over `boxes` (make_tile's tiles, at most kMaxBoxes
/// slabs and INT32_MAX blocks each): run(tiles) issues one (or emulates it); `per_slab`: one
/// launch per slab (profiling). `what` names the kernel in errors.
template <class Run>
void plan_slabs(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes, int chunk, bool per_slab,
                const char* what, const Run& run) {
  PmlTiles tiles{};
  const auto flush = [&] {
    if (tiles.count == 0) return;
    run(tiles);
    tiles = PmlTiles{};
  };
  for (const auto& b : boxes) {
    if (b.empty()) continue;
    PmlTile t = make_tile(b, a.u.ptr(b.lo.i, b.lo.j, b.lo.k), chunk);
    if ((t.ty + 2 * R) * kPitch > kSmemFloats)
      throw Error(std::string(what) + ": tile " + std::to_string(kTileK) + "x" + std::to_string(t.ty) +
                  " does not fit the shared plane");
    const std::int64_t blocks = static_cast<std::int64_t>(t.tiles_k) * t.tiles_j * t.tiles_i;
    if (tiles.count == kMaxBoxes || static_cast<std::int64_t>(tiles.blocks) + blocks > kMaxBlocks)
      flush();
    if (blocks > kMaxBlocks) throw Error(std::string(what) + ": a slab of " + std::to_string(blocks) + " blocks");
    t.first_block = tiles.blocks;
    tiles.t[tiles.count++] = t;
    tiles.blocks += static_cast<int>(blocks);
    if (per_slab) flush();
  }
  flush();
}

/// Whether the views have u's strides: the streamed kernels index every field with one offset.
template <class... Views>
bool share_u_layout(const PmlStepArgs& a, const Views&... v) {
  return ((v.sx == a.u.sx && v.sy == a.u.sy) && ...);
}

/// The streamed CPML passes' launches over `boxes` (plan_slabs), after the layout check.
template <class Run>
void plan_cpml(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes, int chunk,
               const Run& run) {
  if (!share_u_layout(a, a.u_next, a.v2dt2, a.psi[0], a.psi[1], a.psi[2], a.zeta[0], a.zeta[1], a.zeta[2]))
    throw Error("cpml: u, u_next, v2dt2, psi and zeta must share one layout");
  plan_slabs(a, boxes, chunk, false, "cpml", run);
}

/// Runs a block body over `tiles` on host threads (block_emulation.hpp), launch's block shape.
template <class Body>
void emulate_tiles(const PmlTiles& tiles, int smem_floats, const Body& body) {
  const int grid[3] = {tiles.blocks, 1, 1};
  emulate_grid(grid, kThreads, 1, smem_floats * 4, [&](HostBlock& blk, unsigned char* raw) {
    body(blk, reinterpret_cast<float*>(raw));
  });
}

}  // namespace

void launch_cpml_psi(const PmlStepArgs& a, cudaStream_t s) {
  cpml_psi<<<pml_grid(a), dim3(kBx, kBy, kBz), 0, s>>>(a);
}

void launch_cpml(const PmlStepArgs& a, cudaStream_t s) {
  cpml_update<<<pml_grid(a), dim3(kBx, kBy, kBz), 0, s>>>(a);
}

/// The streamed CPML passes unless MINIMOD_CPML_POINT=1 (read once, not at every step's launch).
static bool cpml_streamed() {
  static const bool on = env_int("MINIMOD_CPML_POINT", 0) == 0;
  return on;
}

void launch_cpml_psi(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes,
                     cudaStream_t s) {
  if (cpml_streamed()) {
    plan_cpml(a, boxes, kCpmlChunk, [&](const PmlTiles& tiles) {
      cpml_psi_stream<<<tiles.blocks, kThreads, 0, s>>>(a, tiles);
      MM_CUDA_CHECK_LAUNCH("cpml_psi");
    });
    return;
  }
  for (const auto& b : boxes) {  // the one-thread-per-point kernel: the default until timed
    if (b.empty()) continue;
    PmlStepArgs one = a;
    one.region = b;
    launch_cpml_psi(one, s);
    MM_CUDA_CHECK_LAUNCH("cpml_psi");
  }
}

void launch_cpml(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes, cudaStream_t s) {
  if (cpml_streamed()) {
    plan_cpml(a, boxes, kCpmlChunk, [&](const PmlTiles& tiles) {
      cpml_stream<<<tiles.blocks, kThreads, 0, s>>>(a, tiles);
      MM_CUDA_CHECK_LAUNCH("cpml");
    });
    return;
  }
  for (const auto& b : boxes) {
    if (b.empty()) continue;
    PmlStepArgs one = a;
    one.region = b;
    launch_cpml(one, s);
    MM_CUDA_CHECK_LAUNCH("cpml");
  }
}

void emulate_cpml_psi_stream(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes,
                             int chunk) {
  plan_cpml(a, boxes, chunk, [&](const PmlTiles& tiles) {
    emulate_tiles(tiles, kSmemFloats,
                  [&](HostBlock& blk, float* s) { cpml_psi_block(blk, a, tiles, s); });
  });
}

void emulate_cpml_stream(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes, int chunk) {
  plan_cpml(a, boxes, chunk, [&](const PmlTiles& tiles) {
    emulate_tiles(tiles, kCpmlSmemFloats,
                  [&](HostBlock& blk, float* s) { cpml_update_block(blk, a, tiles, s); });
  });
}

void launch_pml(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes, cudaStream_t s) {
  static const bool point = env_int("MINIMOD_PML_POINT", 0) != 0;  // read once, not every step
  if (point) {  // the one-thread-per-point kernel, for benchmarks
    for (const auto& b : boxes) {
      PmlStepArgs one = a;
      one.region = b;
      if (b.empty()) continue;
      pml_iso<<<pml_grid(one), dim3(kBx, kBy, kBz), 0, s>>>(one);
      MM_CUDA_CHECK_LAUNCH("pml");
    }
    return;
  }
  if (!share_u_layout(a, a.u_next, a.v2dt2, a.aux) || (a.u_prev.origin && !share_u_layout(a, a.u_prev)))
    throw Error("pml: u, u_prev, u_next, v2dt2 and pml_aux must share one layout");
  // Planes per block, measured on an H100 (bench/results/2026-11-24-h100-session4.md, semi_tma
  // 64x32x64 inside, 1000^3 / 512^3): 4: 136.8 / 116.5, 6: 138.0 / 117.4, 8: 138.3 / 117.8,
  // 12: 137.8 / 116.5, 16: 136.8 / 115.7, 64: 134.9 / 113.9 GPts/s. Short chunks re-read more u
  // planes (8 per chunk) but give the latency-bound kernel ~8x the blocks.
  constexpr int chunk = 8;  // 16: 136.0 / 134.5 GPts/s against 139.5 / 137.9 at 48 registers (session 9)
  // MINIMOD_PML_PER_SLAB=1: one launch per slab, so that a profiler times each face (benchmarks).
  static const bool per_slab = env_int("MINIMOD_PML_PER_SLAB", 0) != 0;
  plan_slabs(a, boxes, chunk, per_slab, "pml", [&](const PmlTiles& tiles) {
    pml_stream<<<tiles.blocks, kThreads, 0, s>>>(a, tiles);
    MM_CUDA_CHECK_LAUNCH("pml");
  });
}

void emulate_pml_stream(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes, int chunk) {
  plan_slabs(a, boxes, chunk, false, "pml", [&](const PmlTiles& tiles) {
    emulate_tiles(tiles, kSmemFloats, [&](HostBlock& blk, float* sm) { pml_stream_block(blk, a, tiles, sm); });
  });
}

void launch_pml(const PmlStepArgs& a, cudaStream_t s) { launch_pml(a, {a.region}, s); }

}  // namespace minimod::kernels::cuda
