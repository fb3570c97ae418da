// temporal_tma: two time steps per sweep (temporal.cu's scheme) with every plane staged by Hopper's
// tensor copy engine (TMA). Acoustic isotropic only; sm_90 and newer.
//
// Why. `temporal` moves 10 B per point and step instead of semi_tma's 16, but issues 503
// instructions a point for its two steps (Nsight Compute, H100, 512^3; semi_tma 104 a step): ~204
// of them index arithmetic and predicates of its per-thread loads, ~89 register moves, three
// barriers a plane (bench/results/2026-11-24-h100-session7.md §10). Here thread 0 issues the
// plane's copies; the other threads wait, read shared memory and compute (250-290 instructions a
// point and pair, bench/results/2026-11-24-h100-session8.md).
//
// How. A block of (TK+8) x (TJ+8)/RY threads covers a TK x TJ (k, j) output tile plus the ring of
// 4 whose u^{n+1} the tile's u^{n+2} stencils read; each thread owns one k column and RY
// consecutive j rows, the tile's threads first (whole warps, which do both steps), then the
// ring's (the first step only; `ring_point`). It streams planes p from i_begin-8 to i_end+7. Three
// rings of shared memory (PairStage): u^n planes with the ring's halo, (TK+16) x (TJ+16), for
// planes c = p-4 .. p and D more in flight; head stages (u_prev, (v dt)^2 and, where the box does
// not reach, u1 of plane c over the ring; (v dt)^2 of plane c2 = p-8 over the tile); 5 planes of
// u^{n+1} over the ring. At plane p each thread
//  * takes u^n(p) of its rows into a 9-deep register queue (u^n(c-4 .. c+4));
//  * first step at c: u^{n+1}(c) = leapfrog with the in-plane neighbours from the u^n plane c,
//    into a second queue (u^{n+1}(c-8 .. c)), the u^{n+1} ring and, for the tile's points of the
//    chunk, u1. Ring points outside the box (edge blocks, planes past its i faces) are not
//    computed: their u^{n+1} is the propagator's (its PML update put it in u1), as in `temporal`;
//  * second step at c2 (the tile's threads): u^{n+2}(c2) = leapfrog of u^{n+1} with the in-plane
//    neighbours from the ring's plane c2 (written 4 planes earlier), u^n(c2) from the first queue,
//    written to u2.
// The queues' registers are renamed, not shifted (the loop is unrolled 9 times), and the block
// synchronises through per-plane mbarriers, not __syncthreads (below). Nothing is reordered:
// laplacian8 through accessors and leapfrog, as the CPU. Single steps (several subdomains, the
// CPML, free surfaces) are semi_tma's.
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/block_emulation.hpp"
#include "kernels/cuda/block_model.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/emulation.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/tensor_map.cuh"
#include "kernels/cuda/tti_stage.cuh"
#include "physics/error.hpp"
#include "physics/stencil.hpp"

namespace minimod::kernels::cuda {
namespace {

constexpr int R = physics::kRadius;
constexpr int kRing = R + 1;  // shared planes of u^{n+1}: written at plane c, read 4 planes later
constexpr int kQ = 2 * R + 1;  // a column's register queue: 9 planes

constexpr int round_128(int bytes) { return (bytes + 127) / 128 * 128; }

/// Shared memory of a block: three rings, one mbarrier per plane of the first.
///  * NU = 5 + D planes of u^n over the ring with its halo (U): planes c .. p are read at plane p,
///    D more are in flight;
///  * NH = D + 1 head stages: u_prev, (v dt)^2 and u1 of plane c over the ring (the first step's),
///    and (v dt)^2 of plane c2 over the tile (the second step's), read at plane p only;
///  * 5 planes of u^{n+1} over the ring: written at c, read at c + 4.
template <int TK, int TJ, int RY, int D>
struct PairStage {
  static_assert(R % RY == 0, "a thread's rows must not straddle the tile's edge");
  static_assert(TJ % RY == 0 && TK * TJ / RY % 32 == 0, "the tile's threads fill whole warps");
  static_assert(D >= 1, "at least one plane in flight");
  static constexpr int NU = kRing + D, NH = D + 1;
  static constexpr int BX = TK + 2 * R, BY = TJ + 2 * R;  // the first step's points (the ring)
  static constexpr int UX = BX + 2 * R, UY = BY + 2 * R;  // u^n with the ring's halo
  static constexpr int kUBytes = UX * UY * 4;
  static constexpr int kRingBytes = BX * BY * 4;  // one plane over the ring
  static constexpr int kTileBytes = TK * TJ * 4;
  static constexpr int kUSlot = round_128(kUBytes);
  static constexpr int kPrev = 0, kVel = round_128(kRingBytes), kU1 = 2 * kVel, kVel2 = 3 * kVel;
  static constexpr int kHSlot = kVel2 + round_128(kTileBytes);
  static constexpr int kNextSlot = round_128(kRingBytes);
  static constexpr int kHOffset = NU * kUSlot, kNextOffset = kHOffset + NH * kHSlot,
                       kBarOffset = kNextOffset + kRing * kNextSlot;
  static constexpr int smem_bytes = kBarOffset + (NU + 2) * 8 + 128;  // full (NU) and done (2) barriers
  static constexpr int threads = BX * BY / RY;
  static_assert(smem_bytes <= 227 * 1024, "more shared memory than an H100 block may have");
};

/// The five tensor maps a block copies from (CUtensorMap on the GPU, HostTensorMap in the
/// emulation): u^n with the ring's halo, u_prev, (v dt)^2 and u1 over the ring, (v dt)^2 over the
/// tile (the second step's).
template <class Map>
struct PairMaps {
  Map u, prev, v2dt2, u1, vel2;
};

/// The maps of a launch with PairStage S (output tile TK x TJ), each made by
/// `make(view, box_x, box_y)`.
template <int TK, int TJ, class S, class Make>
auto pair_maps(const IsoPairArgs& a, const Make& make) {
  using Map = decltype(make(a.u, 1, 1));
  return PairMaps<Map>{make(a.u, S::UX, S::UY), make(a.u_prev, S::BX, S::BY), make(a.v2dt2, S::BX, S::BY),
                       make(a.u1, S::BX, S::BY), make(a.v2dt2, TK, TJ)};
}

/// Whether plane c of the first step has points outside the box that the block must take from
/// u1: always for an edge block (its ring leaves the box in j or k), else past the box's i faces.
MM_HOST_DEVICE MM_FORCE_INLINE bool takes_u1(bool edge, int c, const physics::Box3& box) {
  return edge || c < box.lo.i || c >= box.hi().i;
}

/// Issued by thread 0: plane p (n = p - first) into its U slot and head stage: u^n(p); with
/// c = p - R a first-step plane, u_prev, (v dt)^2 and, where needed, u1 of plane c; with c2 =
/// p - 2R an output plane, (v dt)^2 of plane c2 over the tile. All complete on the U slot's mbarrier.
#pragma nv_exec_check_disable
template <int TK, int TJ, int RY, int D, class Block, class Map>
MM_HOST_DEVICE MM_FORCE_INLINE void stage_pair_plane(const Block& blk, const IsoPairArgs& a, int p, int n,
                                                     int i_begin, int k0, int j0, bool edge, const MapOrigin& o,
                                                     unsigned char* base, const PairMaps<Map>& maps) {
  using S = PairStage<TK, TJ, RY, D>;
  std::uint64_t* bar = reinterpret_cast<std::uint64_t*>(base + S::kBarOffset) + n % S::NU;
  unsigned char* u = base + (n % S::NU) * S::kUSlot;
  unsigned char* h = base + S::kHOffset + (n % S::NH) * S::kHSlot;
  const int c = p - R, c2 = c - R;
  const bool first_step = c >= i_begin - R, second_step = c2 >= i_begin;
  const bool u1 = first_step && takes_u1(edge, c, a.box);
  blk.expect_bytes(bar, S::kUBytes + (first_step ? 2 * S::kRingBytes : 0) + (u1 ? S::kRingBytes : 0) +
                            (second_step ? S::kTileBytes : 0));
  blk.copy_3d(u, maps.u, k0 - 2 * R - o.k, j0 - 2 * R - o.j, p - o.i, bar);
  if (first_step) {
    blk.copy_3d(h + S::kPrev, maps.prev, k0 - R - o.k, j0 - R - o.j, c - o.i, bar);
    blk.copy_3d(h + S::kVel, maps.v2dt2, k0 - R - o.k, j0 - R - o.j, c - o.i, bar);
  }
  if (u1) blk.copy_3d(h + S::kU1, maps.u1, k0 - R - o.k, j0 - R - o.j, c - o.i, bar);
  if (second_step) blk.copy_3d(h + S::kVel2, maps.vel2, k0 - o.k, j0 - o.j, c2 - o.i, bar);
}

/// The Laplacian's weights held in registers for the whole sweep where the block leaves room for
/// them (`pin`): on the GPU each passes through an opaque move, so the compiler cannot reload it
/// from the constant bank at every use (~27 uniform loads a point and pair at 5ac1d46).
MM_HOST_DEVICE MM_FORCE_INLINE physics::LaplacianCoeffs weights_in_registers(physics::LaplacianCoeffs c, bool pin) {
#ifdef __CUDA_ARCH__
  const auto keep = [](float& x) { asm volatile("mov.b32 %0, %0;" : "+f"(x)); };
  if (pin) {
    keep(c.c0);
    for (int m = 0; m < R; ++m) {
      keep(c.cx[m]);
      keep(c.cy[m]);
      keep(c.cz[m]);
    }
  }
#else
  (void)pin;
#endif
  return c;
}

/// Where thread `t` of a block works, in ring coordinates: column `cx` (0 .. BX-1) and its first
/// row `jr0` (RY rows from there). The tile's points come first, TK columns by TJ/RY row groups, so
/// the second step runs in whole warps; then the ring's: its top and bottom strips (TK columns,
/// R/RY row groups each), then its left and right strips (R columns each, every row group).
struct RingPoint {
  int cx, jr0;
  bool tile;
};
template <int TK, int TJ, int RY>
MM_HOST_DEVICE MM_FORCE_INLINE RingPoint ring_point(int t) {
  constexpr int BX = TK + 2 * R, BY = TJ + 2 * R, NT = TK * TJ / RY, NS = 2 * TK * R / RY;
  if (t < NT) return {R + t % TK, R + t / TK * RY, true};
  const int q = t - NT;
  if (q < NS) {  // top (row groups 0 .. R/RY-1) and bottom strips
    const int g = q / TK;
    return {R + q % TK, g < R / RY ? g * RY : BY - R + (g - R / RY) * RY, false};
  }
  const int q2 = q - NS, side = q2 % (2 * R);  // left and right strips
  return {side < R ? side : BX - 2 * R + side, q2 / (2 * R) * RY, false};
}

/// `x + 1` modulo `n` (x < n): the rings' slots advance by one a plane.
MM_HOST_DEVICE MM_FORCE_INLINE int next_slot(int x, int n) { return x + 1 == n ? 0 : x + 1; }

/// One block's sweep, written against block_model.cuh (DeviceBlock on the GPU, HostBlock in the
/// emulation); `raw` its dynamic shared memory (PairStage::smem_bytes).
// Its plane loop is a generic lambda (the phase as a compile-time constant), which inherits the
// host-device attribute but not nv_exec_check_disable: the HostBlock instantiation (host code
// only) would warn that a host function is called from a host-device one. The two warnings are
// silenced here and restored after the function.
#pragma nv_diag_suppress 20011, 20014
#pragma nv_exec_check_disable
template <int TK, int TJ, int RY, int D, class Block, class Map>
MM_HOST_DEVICE MM_FORCE_INLINE void pair_tma_block(const Block& blk, const IsoPairArgs& a, const PairMaps<Map>& maps,
                                                   MapOrigin o, int chunk, unsigned char* raw) {
  using S = PairStage<TK, TJ, RY, D>;
#ifdef __CUDA_ARCH__
  // The kernel's shared array itself (128-B aligned, checked at launch): offsets from it fold into
  // the shared loads' immediates. align_128 on the GPU was recomputed from the generic window each
  // plane (~25 uniform instructions a warp and plane, Nsight Compute's SASS counts at 7e43627).
  unsigned char* const base = raw;
#else
  unsigned char* const base = align_128(raw);  // the emulation's buffer
#endif
  std::uint64_t* const bar = reinterpret_cast<std::uint64_t*>(base + S::kBarOffset);

  const int tid = blk.tx;  // a one-dimensional block of S::threads
  const physics::Index3 lo = a.box.lo, hi = a.box.hi();
  const int k0 = lo.k - o.shift + blk.bx * TK, j0 = lo.j + blk.by * TJ;  // the output tile's corner
  const int i_begin = lo.i + blk.bz * chunk;
  const int i_end = i_begin + chunk < hi.i ? i_begin + chunk : hi.i;
  const int first = i_begin - 2 * R, last = i_end + 2 * R;  // u^n planes streamed: [first, last)
  const bool edge = k0 - R < lo.k || k0 + TK + R > hi.k || j0 - R < lo.j || j0 + TJ + R > hi.j;

  // This thread's column k and rows j = j0 - R + jr, jr = jr0 + r (ring coordinates).
  const RingPoint place = ring_point<TK, TJ, RY>(tid);
  const int cx = place.cx, jr0 = place.jr0;
  const bool tile = place.tile;
  const int k = k0 - R + cx;
  const bool k_in = k >= lo.k && k < hi.k;
  bool col_in[RY], writes[RY];
#pragma unroll
  for (int r = 0; r < RY; ++r) {
    const int j = j0 - R + jr0 + r;
    col_in[r] = k_in && j >= lo.j && j < hi.j;
    writes[r] = tile && col_in[r];
  }
  // The outputs' addresses: this thread's column (plane 0, first row) plus a block-uniform offset
  // (plane and row), one 64-bit add per store instead of the offset formula per store.
  const std::int64_t col_offset = a.u1.offset(0, j0 - R + jr0, k), sx = a.u1.sx, sy = a.u1.sy;
  float* const u1_col = a.u1.origin + col_offset;
  float* const u2_col = a.u2.origin + col_offset;
  const physics::LaplacianCoeffs lap = weights_in_registers(a.laplacian, S::threads <= 640);  // <= 96 registers

  std::uint64_t* const done = bar + S::NU;  // plane n's: every thread arrives when it is done with it
  if (tid == 0) {
    for (int s = 0; s < S::NU; ++s) blk.mbarrier_init(bar + s, 1);
    for (int s = 0; s < 2; ++s) blk.mbarrier_init(done + s, S::threads);
    blk.fence_init();
  }
  blk.sync();
  if (tid == 0)
    for (int q = first; q < first + D && q < last; ++q)
      stage_pair_plane<TK, TJ, RY, D>(blk, a, q, q - first, i_begin, k0, j0, edge, o, base, maps);

  // Slots of plane p (U and head), of plane c (U) and of c, c2 in the u^{n+1} ring.
  int us = 0, hs = 0, ms = S::NU - R, rc = kRing - R;
  unsigned parity = 0;
  // The queues u^n(c-4 .. c+4) and u^{n+1}(c-8 .. c) of each row, kQ values each, with rotating
  // names instead of shifts: at phase PH (= plane count mod kQ) logical entry m (0 the oldest) is
  // register (m + PH) % kQ, so the plane loop is unrolled kQ times and no value moves (the shifts
  // were ~70 register moves a point and pair, Nsight Compute at 7e43627; AN5D's fixed register
  // allocation, notes/an5d-digest.md).
  float qa[RY][kQ] = {}, qb[RY][kQ] = {};
  std::int64_t plane_offset = static_cast<std::int64_t>(first - R) * sx;
  const std::int64_t sx4 = R * sx;  // c2 = c - 4
  // No block barrier: each thread arrives on `done` when it is through with plane n (n even and
  // odd alternate between two mbarriers) and, at plane n, waits for plane n-1's completion only
  // after its first step's loads and arithmetic: before it writes the ring slot that plane n-1's
  // second step read, and before thread 0 refills the U slot and head stage plane n-1 read. A
  // plane's writes to the ring are read 4 planes later, after 3 such waits. Threads may thus run
  // up to a plane's first step apart (with __syncthreads the block barrier took 15% of the warp
  // samples, Nsight Compute at 5ac1d46).
  const auto plane = [&](auto phase, int p) {
    constexpr int PH = decltype(phase)::value;
    const auto at_q = [](int m) { return (m + PH) % kQ; };
    const int n = p - first, c = p - R, c2 = c - R;
    const std::int64_t off_c = plane_offset;  // c * sx, kept by addition
    plane_offset += sx;
    blk.wait(bar + us, parity);  // plane p's copies have landed
    const float* u_head = reinterpret_cast<const float*>(base + us * S::kUSlot);
    const float* u_mid = reinterpret_cast<const float*>(base + ms * S::kUSlot);  // plane c
    const unsigned char* h = base + S::kHOffset + hs * S::kHSlot;
    float* const ring_c = reinterpret_cast<float*>(base + S::kNextOffset + rc * S::kNextSlot);
    const int rc2 = next_slot(rc, kRing);  // c2 = c - 4: the slot after c's (and the next plane's)
    const float* ring_c2 = reinterpret_cast<const float*>(base + S::kNextOffset + rc2 * S::kNextSlot);
    us = next_slot(us, S::NU);
    parity ^= us == 0 ? 1u : 0u;
    ms = next_slot(ms, S::NU);
    hs = next_slot(hs, S::NH);
    rc = rc2;
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      qa[r][at_q(2 * R)] = u_head[(jr0 + r + R) * S::UX + cx + R];
      qb[r][at_q(2 * R)] = 0.0f;  // u^{n+1}(c), set below once c is a first-step plane
    }
    const bool first_step = c >= i_begin - R;  // block-uniform; before: the queue is still filling

    // First step at plane c, every thread (into registers; the ring is written below).
    if (first_step) {
      const float* prev = reinterpret_cast<const float*>(h + S::kPrev);
      const float* vel = reinterpret_cast<const float*>(h + S::kVel);
      const float* u1_given = reinterpret_cast<const float*>(h + S::kU1);
      const bool computed_plane = c >= lo.i && c < hi.i;
      const bool given = takes_u1(edge, c, a.box);
      const bool own_plane = c >= i_begin && c < i_end;
      float col[RY + 2 * R];  // u^n(c) of this column, rows jr0 - 4 .. jr0 + RY + 3
#pragma unroll
      for (int m = 0; m < RY + 2 * R; ++m) col[m] = u_mid[(jr0 + m) * S::UX + cx + R];
#pragma unroll
      for (int r = 0; r < RY; ++r) {
        // Computed at every point without a branch; where the box does not reach (edge blocks,
        // planes past its i faces) the staged u1 replaces it (`given` holds there).
        const int e = (jr0 + r) * S::BX + cx;
        const float* row = u_mid + (jr0 + r + R) * S::UX + cx + R;
        const auto at_n = [&qa, &col, &at_q, row, r](int di, int dj, int dk) {
          if (di != 0) return qa[r][at_q(R + di)];
          if (dj != 0) return col[r + R + dj];
          return row[dk];
        };
        const float u1 = physics::leapfrog(prev[e], qa[r][at_q(R)], vel[e], physics::laplacian8(at_n, lap));
        const bool computed = computed_plane && col_in[r];
        if (computed && writes[r] && own_plane) u1_col[off_c + r * sy] = u1;
        qb[r][at_q(2 * R)] = computed || !given ? u1 : u1_given[e];
      }
    }

    if (n > 0) blk.wait(done + ((n - 1) & 1), static_cast<unsigned>((n - 1) >> 1) & 1u);  // plane n-1 done
    if (tid == 0 && p + D < last) {  // into the U slot of plane p-5 and the head stage of p-1
      blk.fence_proxy();
      stage_pair_plane<TK, TJ, RY, D>(blk, a, p + D, n + D, i_begin, k0, j0, edge, o, base, maps);
    }
    if (first_step) {
#pragma unroll
      for (int r = 0; r < RY; ++r) ring_c[(jr0 + r) * S::BX + cx] = qb[r][at_q(2 * R)];
    }

    // Second step at plane c2, the tile's threads.
    if (c2 >= i_begin && tile) {
      const float* vel2 = reinterpret_cast<const float*>(h + S::kVel2);
      float col1[RY + 2 * R];  // u^{n+1}(c2) of this column, rows jr0 - 4 .. jr0 + RY + 3
#pragma unroll
      for (int m = 0; m < RY + 2 * R; ++m) col1[m] = ring_c2[(jr0 + m - R) * S::BX + cx];
#pragma unroll
      for (int r = 0; r < RY; ++r) {
        const int e = (jr0 + r) * S::BX + cx;
        const auto at_n1 = [&qb, &at_q, &col1, ring_c2, e, r](int di, int dj, int dk) {
          if (di != 0) return qb[r][at_q(R + di)];
          if (dj != 0) return col1[r + R + dj];
          return ring_c2[e + dk];
        };
        const float v = vel2[(jr0 + r - R) * TK + cx - R];
        const float u2 = physics::leapfrog(qa[r][at_q(0)], qb[r][at_q(R)], v, physics::laplacian8(at_n1, lap));
        if (writes[r]) u2_col[off_c - sx4 + r * sy] = u2;
      }
    }
    blk.arrive(done + (n & 1));
  };
  for (int p = first; p < last; p += kQ) {  // kQ planes with the names of phases 0 .. kQ-1
    plane(std::integral_constant<int, 0>(), p);
    if (p + 1 < last) plane(std::integral_constant<int, 1>(), p + 1);
    if (p + 2 < last) plane(std::integral_constant<int, 2>(), p + 2);
    if (p + 3 < last) plane(std::integral_constant<int, 3>(), p + 3);
    if (p + 4 < last) plane(std::integral_constant<int, 4>(), p + 4);
    if (p + 5 < last) plane(std::integral_constant<int, 5>(), p + 5);
    if (p + 6 < last) plane(std::integral_constant<int, 6>(), p + 6);
    if (p + 7 < last) plane(std::integral_constant<int, 7>(), p + 7);
    if (p + 8 < last) plane(std::integral_constant<int, 8>(), p + 8);
  }
  static_assert(kQ == 9, "the loop above names kQ phases");
}
#pragma nv_diag_default 20011, 20014

template <int TK, int TJ, int RY, int D>
__global__ void __launch_bounds__(PairStage<TK, TJ, RY, D>::threads, 1)
    temporal_tma_iso(IsoPairArgs a, const __grid_constant__ PairMaps<CUtensorMap> maps, MapOrigin o, int chunk) {
  extern __shared__ __align__(128) unsigned char temporal_tma_raw[];
  if ((smem_address(temporal_tma_raw) & 127u) != 0) __trap();  // pair_tma_block's base
  pair_tma_block<TK, TJ, RY, D>(DeviceBlock(), a, maps, o, chunk, temporal_tma_raw);
}

// --- host side ----------------------------------------------------------------------------------

struct Variant {
  int x, y;
  const void* kernel;
  void (*launch)(const IsoPairArgs&, int, cudaStream_t);
  void (*emulate)(const IsoPairArgs&, int);
  int smem_bytes;
};

template <int TK, int TJ>
dim3 pair_grid(const IsoPairArgs& a, const MapOrigin& o, int chunk) {
  return dim3(ceil_div(a.box.n.k + o.shift, TK), ceil_div(a.box.n.j, TJ), ceil_div(a.box.n.i, chunk));
}

template <int TK, int TJ, int RY, int D>
void launch_kernel(const IsoPairArgs& a, int chunk, cudaStream_t s) {
  using S = PairStage<TK, TJ, RY, D>;
  constexpr auto kernel = &temporal_tma_iso<TK, TJ, RY, D>;
  ensure_smem_limit<kernel>(S::smem_bytes);
  const MapOrigin o = map_origin(a.box, a.u.box);
  const auto maps = pair_maps<TK, TJ, S>(a, [](const auto& v, int bx, int by) { return tensor_map(v, bx, by); });
  kernel<<<pair_grid<TK, TJ>(a, o, chunk), dim3(S::threads, 1, 1), S::smem_bytes, s>>>(a, maps, o, chunk);
}

/// The same block body on host threads over host arrays (block_emulation.hpp), with the grid,
/// shared memory and tensor-map boxes of launch_kernel.
template <int TK, int TJ, int RY, int D>
void emulate_kernel(const IsoPairArgs& a, int chunk) {
  using S = PairStage<TK, TJ, RY, D>;
  const MapOrigin o = map_origin(a.box, a.u.box);
  const auto maps = pair_maps<TK, TJ, S>(a, [](const auto& v, int bx, int by) { return HostTensorMap::of(v, bx, by); });
  const dim3 g = pair_grid<TK, TJ>(a, o, chunk);
  const int grid[3] = {static_cast<int>(g.x), static_cast<int>(g.y), static_cast<int>(g.z)};
  emulate_grid(grid, S::threads, 1, S::smem_bytes, [&](HostBlock& blk, unsigned char* raw) {
    pair_tma_block<TK, TJ, RY, D>(blk, a, maps, o, chunk, raw);
  });
}

template <int TK, int TJ, int RY, int D>
constexpr Variant variant() {
  return {TK, TJ, reinterpret_cast<const void*>(&temporal_tma_iso<TK, TJ, RY, D>), &launch_kernel<TK, TJ, RY, D>,
          &emulate_kernel<TK, TJ, RY, D>, PairStage<TK, TJ, RY, D>::smem_bytes};
}

// (k, j) output tiles; RY rows per thread; D planes in flight (as many as the shared memory allows).
const Variant kVariants[] = {variant<32, 16, 1, 4>(), variant<32, 8, 1, 4>(), variant<32, 24, 2, 4>(),
                             variant<64, 16, 2, 3>(), variant<32, 32, 4, 3>(), variant<48, 24, 2, 3>()};

const Variant& find(const Tile& t) { return find_chunked_variant(kVariants, t, "temporal_tma"); }

void launch_pair(const IsoPairArgs& a, const Tile& t, cudaStream_t s) {
  const Variant& v = find(t);
  if (a.box.empty()) return;
  if (!shares_layout(a)) throw Error("temporal_tma: u_prev, u, u1, u2 and v2dt2 must share one layout");
  if (!has_tensor_copies()) throw Error("temporal_tma: needs the tensor copy engine of sm_90 (Hopper) or newer");
  v.launch(a, t.z, s);
}

cudaFuncAttributes attributes(const Tile& t) { return kernel_attributes(find(t).kernel); }

int dynamic_smem(const Tile& t) { return find(t).smem_bytes; }

KernelFamily family() {
  KernelFamily f;
  f.name = "temporal_tma";
  f.propagators = {PropagatorKind::acoustic_iso};
  // (k, j) tile and chunk: on an H100 at 1000^3 with the pair box on whole DRAM lines
  // (bench/results/2026-11-24-h100-session11.md §6-7) 48x24x128 150.9-151.0 GPts/s end to end
  // (150.4 over 1000 steps), 48x24x96 150.5 (150.0); before that (session9 §11) 48x24x64 141.1
  // against 143.1 for 96 (its ring 1.56x the outputs, 28 warps); 32x24x128 137.6-138.1, 64x16x128
  // 136.8-136.9 (session8 §8, §10: 32x32x192 136.1, 64x16x96 136.3, 32x32x128 135.3); smaller tiles
  // recompute more of the ring (32x16 109.7, 32x8 82.1). Tried and dropped: 56x24 (2 planes in
  // flight, 64 registers: 132.5), 40x32 (4 rows: 137.9); chunks of 158-237 (slower: session11 §3).
  f.tunables = {{48, 24, 128}, {48, 24, 96},  {48, 24, 64},  {32, 24, 128}, {64, 16, 128}, {32, 32, 192},
                {64, 16, 96},  {32, 24, 64},  {32, 32, 128}, {32, 16, 128}, {32, 8, 128}};
  f.launch = &launch_single_by_semi_tma;
  f.launch_pair = &launch_pair;
  f.description = "2 time steps per sweep, planes staged by tensor copies (TMA), ring recomputed; sm_90+";
  f.attributes = &attributes;
  f.dynamic_smem = &dynamic_smem;
  // Checked on an H100: every gpu test, every tile (the pairs against single CPU steps with
  // sources everywhere), bench/results/2026-11-24-h100-session8.md.
  return f;
}

const bool kRegistered = register_family(family());

}  // namespace

void emulate_temporal_tma(const IsoPairArgs& a, const Tile& t) {
  const Variant& v = find(t);
  if (!a.box.empty()) v.emulate(a, t.z);
}

}  // namespace minimod::kernels::cuda
