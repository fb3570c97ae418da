// semi_tma: the semi-stencil family (semi.cu) with its planes staged by Hopper's bulk tensor copy
// engine (TMA, `cp.async.bulk.tensor`) instead of per-thread cp.async, and RY output rows per
// thread. Acoustic isotropic only; sm_90 and newer.
//
// Why. On an H100 `semi` is issue-bound, not bandwidth-bound (Nsight Compute, 512^3: SM throughput
// 87%, DRAM 52%): every thread spends ~10 instructions per plane issuing 4-byte copies and their
// 64-bit addresses, and the halo threads diverge. Here one thread issues three tensor copies per
// plane (the u tile with its j/k halo, and u_prev and (v dt)^2 of the output plane) that complete
// on an mbarrier; the other threads only wait. Each thread then computes RY consecutive rows of
// its column, so the j neighbours it reads from shared memory serve several outputs and the
// per-plane costs (barrier, wait, loop) are shared.
//
// Measured (H100, 1000^3, Minimod's case end to end, bench/results/2026-11-23-h100-session3.md):
// 64x32x32 132.9 GPts/s, the fastest family; its inner kernel at 83% of DRAM peak (Nsight
// Compute, 1000^3), against semi's 52% (512^3). Three families share these kernels, by how a launch
// takes Minimod's layer (LayerMode, at the end): semi_tma, semi_tma_fused, semi_tma_mixed.
//
// Pipeline. A ring of NS stages, one mbarrier each. Plane p of the chunk's [i_begin-4, i_end+4)
// goes to stage (p - first) % NS; thread 0 issues plane p+NS-1 right after the block barrier that
// ends plane p-1 (so nobody still reads that stage), and every thread waits on plane p's mbarrier
// with the parity of its use count. The copies count their whole box in bytes (out-of-bounds
// parts are zero-filled by the copy engine and count too).
//
// The stencil is semi.cu's: output o = laplacian8 with the x offsets -m from a 4-register history
// and +m as -0.0f (forward update, in-plane terms from the stage), plus cx[m-1]*u(o+m) added as
// plane o+m arrives (backward update); the same reordering as `semi`, fp32 rounding only.
//
// Tensor maps (kernels/cuda/tensor_map.cuh): one per array (u, u_next, v2dt2) over the allocation
// with its halo; coordinates are relative to the halo corner. The tiles' k origins are put on
// 128-B boundaries of the allocation (map_origin in tensor_map.cuh: a region starting at k = 27,
// Minimod's inner box, starts its first tile at k = -4 and writes from 27), so output rows cover
// whole sectors and every u box row (from k0 - 4) starts on a 16-B boundary.
#include <cstdint>

#include "kernels/cuda/block_emulation.hpp"
#include "kernels/cuda/block_model.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/emulation.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/tensor_map.cuh"
#include "kernels/cuda/tti_stage.cuh"
#include "physics/error.hpp"
#include "physics/stencil.hpp"
#include "pml/pml_update.hpp"

namespace minimod::kernels::cuda {
namespace {

constexpr int R = physics::kRadius;

template <int TX, int TY>
struct StageLayout {
  static constexpr int SX = TX + 2 * R, SY = TY + 2 * R;
  static constexpr int kTileBytes = SX * SY * 4;                   // u plane with its j/k halo
  static constexpr int kUBytes = (kTileBytes + 127) / 128 * 128;   // next part 128-B aligned
  static constexpr int kOwnBytes = TX * TY * 4;                    // u_prev or v2dt2 of the output plane
  static constexpr int kStageBytes = kUBytes + 2 * kOwnBytes;
};

/// Dynamic shared memory of NS stages, their barriers, and slack to align the base to 128 B.
template <int TX, int TY, int NS>
constexpr int shared_bytes() {
  return NS * StageLayout<TX, TY>::kStageBytes + NS * 8 + 128;
}

/// Issued by thread 0: plane p into its stage, the u tile with its j/k halo and, when p-4 is an
/// output plane of the chunk, that plane's u_prev and v2dt2; all complete on the stage's mbarrier.
#pragma nv_exec_check_disable
template <int TX, int TY, int NS, class Block, class Map>
MM_HOST_DEVICE MM_FORCE_INLINE void stage_plane(const Block& blk, int p, int first, int i_begin, int k0, int j0,
                                                const MapOrigin& origin, unsigned char* base, std::uint64_t* bar,
                                                const Map& map_u, const Map& map_prev, const Map& map_v2dt2) {
  using L = StageLayout<TX, TY>;
  const int slot = (p - first) % NS;
  unsigned char* st = base + slot * L::kStageBytes;
  const bool own = p - R >= i_begin;
  blk.expect_bytes(bar + slot, L::kTileBytes + (own ? 2 * L::kOwnBytes : 0));
  blk.copy_3d(st, map_u, k0 - R - origin.k, j0 - R - origin.j, p - origin.i, bar + slot);
  if (own) {
    blk.copy_3d(st + L::kUBytes, map_prev, k0 - origin.k, j0 - origin.j, p - R - origin.i, bar + slot);
    blk.copy_3d(st + L::kUBytes + L::kOwnBytes, map_v2dt2, k0 - origin.k, j0 - origin.j, p - R - origin.i,
                bar + slot);
  }
}

/// One block's work: the body of semi_tma_iso, written against the execution model of
/// block_model.cuh (DeviceBlock on the GPU, HostBlock in the emulation) with `raw` its dynamic
/// shared memory and Map its tensor-map type.
#pragma nv_exec_check_disable
template <int TX, int TY, int RY, int NS, bool kLayer, class Block, class Map>
MM_HOST_DEVICE MM_FORCE_INLINE void semi_tma_block(const Block& blk, const IsoStepArgs& a, const Map& map_u,
                                                   const Map& map_prev, const Map& map_v2dt2, MapOrigin origin,
                                                   int chunk, unsigned char* raw) {
  static_assert(TY % RY == 0, "RY rows per thread must divide the tile's rows");
  using L = StageLayout<TX, TY>;
  constexpr int SX = L::SX;
  // The aligned base rebuilt from an integer (a generic pointer: LD/ST, not LDS/STS): with
  // align_128 (LDS/STS, 64 registers instead of 72) the family ran slower on an H100 at 1000^3
  // (128x16x64 139.3 -> 129.6 GPts/s, 64x32x128 139.4 -> 122.1; bench/results/2026-11-24-h100-session6.md).
  unsigned char* const base = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(raw) + 127) & ~static_cast<std::uintptr_t>(127));
  std::uint64_t* const bar = reinterpret_cast<std::uint64_t*>(base + NS * L::kStageBytes);

  const int tx = blk.tx, ty = blk.ty, tid = ty * TX + tx;
  const physics::Index3 hi = a.region.hi();
  const int k0 = a.region.lo.k - origin.shift + blk.bx * TX;
  const int j0 = a.region.lo.j + blk.by * TY;
  const int i_begin = a.region.lo.i + blk.bz * chunk;
  const int i_end = i_begin + chunk < hi.i ? i_begin + chunk : hi.i;
  const int first = i_begin - R, last = i_end + R;  // planes streamed: [first, last)
  const int k = k0 + tx;

  if (tid == 0) {
    for (int s = 0; s < NS; ++s) blk.mbarrier_init(bar + s, 1);
    blk.fence_init();  // visible to the copy engine
  }
  blk.sync();
  if (tid == 0)
    for (int s = 0; s < NS - 1 && first + s < last; ++s)
      stage_plane<TX, TY, NS>(blk, first + s, first, i_begin, k0, j0, origin, base, bar, map_u, map_prev, map_v2dt2);

  float h[RY][R + 1] = {};  // h[r][m-1] = u(p-m) of row r (m = 5: the layer's u(o-1))
  float P[RY][R] = {};      // P[r][d] = partial Laplacian of output p-4+d of row r
  float* out[RY];           // u_next of row r at the next output plane
  bool writes[RY];
#pragma unroll
  for (int r = 0; r < RY; ++r) {
    const int j = j0 + ty * RY + r;
    writes[r] = k >= a.region.lo.k && k < hi.k && j < hi.j;
    out[r] = a.u_next.ptr(i_begin, j, k);
  }
  const std::int64_t sx = a.u_next.sx;

  // Minimod's layer (IsoStepArgs::layer), when the region reaches into it: per row the eta
  // profiles of its (j, k) and whether the row lies inside the inner box in j and k; G[r][d] the
  // in-plane part of grad(eta).grad(u) of output p-4+d, taken while its plane is staged.
  const MinimodLayer& lay = a.layer;
  const bool layer = kLayer && lay.aux.origin != nullptr;  // kLayer false: none of its registers
  const std::int64_t aux_delta = layer ? lay.aux.origin - a.u_next.origin : 0;  // one layout
  float ey_j[RY] = {}, ey_p[RY] = {}, ey_m[RY] = {}, G[RY][R] = {};
  float ez_k = 0.0f, ez_p = 0.0f, ez_m = 0.0f;
  bool inner_jk[RY];
  const physics::Index3 in_lo = lay.inner.lo, in_hi = lay.inner.hi();
  const bool inner_k = k >= in_lo.k && k < in_hi.k;
#pragma unroll
  for (int r = 0; r < RY; ++r) {
    const int j = j0 + ty * RY + r;
    inner_jk[r] = !layer || (inner_k && j >= in_lo.j && j < in_hi.j);
    if (layer && writes[r]) {
      const float* ey = lay.eta[1] + 1;
      ey_j[r] = ey[j], ey_p[r] = ey[j + 1], ey_m[r] = ey[j - 1];
    }
  }
  if (layer && k >= a.region.lo.k && k < hi.k) {
    const float* ez = lay.eta[2] + 1;
    ez_k = ez[k], ez_p = ez[k + 1], ez_m = ez[k - 1];
  }
  const auto inner_i = [&](int i) { return !layer || (i >= in_lo.i && i < in_hi.i); };

  for (int p = first; p < last; ++p) {
    const int n = p - first, slot = n % NS;
    blk.sync();  // everyone is done with plane p-1: its stage may be refilled
    if (tid == 0 && p + NS - 1 < last) {
      blk.fence_proxy();  // the generic reads of that stage before the copy engine's writes
      stage_plane<TX, TY, NS>(blk, p + NS - 1, first, i_begin, k0, j0, origin, base, bar, map_u, map_prev,
                              map_v2dt2);
    }
    blk.wait(bar + slot, static_cast<unsigned>(n / NS) & 1u);

    const float* su = reinterpret_cast<const float*>(base + slot * L::kStageBytes);
    const float* sprev = reinterpret_cast<const float*>(base + slot * L::kStageBytes + L::kUBytes);
    const float* sv = sprev + TX * TY;
    // The column of this thread's rows with their j halo: rows ty*RY - 4 .. ty*RY + RY + 3.
    float col[RY + 2 * R];
#pragma unroll
    for (int m = 0; m < RY + 2 * R; ++m) col[m] = su[(ty * RY + m) * SX + tx + R];
    const bool forward = p >= i_begin && p < i_end;
    const bool completes = p - R >= i_begin;
    const bool inner_out = inner_i(p - R), inner_fwd = inner_i(p);
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      const float c = col[r + R];
      // Backward update: u(p) = u(o+m) for the pending outputs o = p-m.
#pragma unroll
      for (int m = 1; m <= R; ++m) P[r][R - m] += a.laplacian.cx[m - 1] * c;
      if (completes && writes[r]) {  // output o = p-4 is complete
        const int e = (ty * RY + r) * TX + tx;
        if (inner_out && inner_jk[r]) {
          *out[r] = physics::leapfrog(sprev[e], h[r][R - 1], sv[e], P[r][0]);
        } else {  // Minimod's damped update, eta rebuilt in the CPU's order (ex + ey) + ez
          const int o = p - R;
          const float* ex = lay.eta[0] + 1;
          const float eta = ex[o] + ey_j[r] + ez_k;
          float* aux = out[r] + aux_delta;
          const float aux0 = *aux;
          *out[r] = pml::pml_u_next(sprev[e], h[r][R - 1], sv[e], P[r][0], aux0, eta);
          const float grad = pml::pml_gradient_term(ex[o + 1], ex[o - 1], h[r][R - 2], h[r][R], lay.inv_4h2[0]) + G[r][0];
          *aux = pml::pml_aux_next(aux0, eta, grad);
        }
      }
      if (completes) out[r] += sx;
      float F = 0.0f, g = 0.0f;
      if (forward) {
        const float* row = su + (ty * RY + r + R) * SX + tx + R;
        const auto at = [&h, &col, row, c, r](int di, int dj, int dk) {
          if (di < 0) return h[r][-di - 1];
          if (di > 0) return -0.0f;  // the right half arrives through the backward updates
          if (dj != 0) return col[r + R + dj];
          return dk == 0 ? c : row[dk];
        };
        F = physics::laplacian8(at, a.laplacian);
        if (!(inner_fwd && inner_jk[r]) && writes[r])
          g = pml::pml_gradient_term(ey_p[r], ey_m[r], col[r + R + 1], col[r + R - 1], lay.inv_4h2[1]) +
              pml::pml_gradient_term(ez_p, ez_m, row[1], row[-1], lay.inv_4h2[2]);
      }
#pragma unroll
      for (int d = 0; d < R - 1; ++d) {
        P[r][d] = P[r][d + 1];
        G[r][d] = G[r][d + 1];
      }
      P[r][R - 1] = F;
      G[r][R - 1] = g;
#pragma unroll
      for (int m = R; m > 0; --m) h[r][m] = h[r][m - 1];
      h[r][0] = c;
    }
  }
}

/// How a launch treats Minimod's layer (IsoStepArgs::layer): `none` (no layer, or not this
/// launch's), `fused` (every block runs the body with the damped branch), `by_block` (only the
/// blocks whose outputs meet the layer do; the others run the lean body).
enum class LayerMode { none, fused, by_block };

/// Whether any output of block (bx, by, bz) lies outside layer.inner (so it needs the damped branch).
MM_HOST_DEVICE MM_FORCE_INLINE bool block_meets_layer(const IsoStepArgs& a, const MapOrigin& origin, int chunk,
                                                      int tx, int ty, int bx, int by, int bz) {
  const physics::Index3 hi = a.region.hi(), in_lo = a.layer.inner.lo, in_hi = a.layer.inner.hi();
  const int k0 = a.region.lo.k - origin.shift + bx * tx;
  const int k_lo = k0 > a.region.lo.k ? k0 : a.region.lo.k, k_hi = k0 + tx < hi.k ? k0 + tx : hi.k;
  const int j_lo = a.region.lo.j + by * ty, j_hi = j_lo + ty < hi.j ? j_lo + ty : hi.j;
  const int i_lo = a.region.lo.i + bz * chunk, i_hi = i_lo + chunk < hi.i ? i_lo + chunk : hi.i;
  return k_lo < in_lo.k || k_hi > in_hi.k || j_lo < in_lo.j || j_hi > in_hi.j || i_lo < in_lo.i || i_hi > in_hi.i;
}

/// One block under `kMode` (the body's instantiations above).
#pragma nv_exec_check_disable
template <int TX, int TY, int RY, int NS, LayerMode kMode, class Block, class Map>
MM_HOST_DEVICE MM_FORCE_INLINE void semi_tma_mode(const Block& blk, const IsoStepArgs& a, const Map& map_u,
                                                  const Map& map_prev, const Map& map_v2dt2, MapOrigin origin,
                                                  int chunk, unsigned char* raw) {
  if constexpr (kMode == LayerMode::by_block) {
    if (block_meets_layer(a, origin, chunk, TX, TY, blk.bx, blk.by, blk.bz))  // block-uniform
      semi_tma_block<TX, TY, RY, NS, true>(blk, a, map_u, map_prev, map_v2dt2, origin, chunk, raw);
    else
      semi_tma_block<TX, TY, RY, NS, false>(blk, a, map_u, map_prev, map_v2dt2, origin, chunk, raw);
  } else {
    semi_tma_block<TX, TY, RY, NS, kMode == LayerMode::fused>(blk, a, map_u, map_prev, map_v2dt2, origin, chunk,
                                                              raw);
  }
}

template <int TX, int TY, int RY, int NS, LayerMode kMode>
__global__ void __launch_bounds__(TX * TY / RY)
    semi_tma_iso(IsoStepArgs a, const __grid_constant__ CUtensorMap map_u,
                 const __grid_constant__ CUtensorMap map_prev, const __grid_constant__ CUtensorMap map_v2dt2,
                 MapOrigin origin, int chunk) {
  extern __shared__ unsigned char semi_tma_raw[];
  semi_tma_mode<TX, TY, RY, NS, kMode>(DeviceBlock(), a, map_u, map_prev, map_v2dt2, origin, chunk, semi_tma_raw);
}

// --- host side ----------------------------------------------------------------------------------

/// A tile's kernels, launches and emulations, indexed by LayerMode.
struct Variant {
  int x, y, ry, stages;
  const void* kernel[3];
  void (*launch[3])(const IsoStepArgs&, int, cudaStream_t);
  void (*emulate[3])(const IsoStepArgs&, int);
  int smem_bytes;
};

/// The kernel of one LayerMode: the inner-only and CPML launches (none) keep the smaller register
/// footprint.
template <int TX, int TY, int RY, int NS, LayerMode kMode>
void launch_kernel(const IsoStepArgs& a, int chunk, cudaStream_t s) {
  constexpr auto kernel = &semi_tma_iso<TX, TY, RY, NS, kMode>;
  constexpr int bytes = shared_bytes<TX, TY, NS>();
  ensure_smem_limit<kernel>(bytes);
  const MapOrigin origin = map_origin(a.region, a.u.box);
  const CUtensorMap mu = tensor_map(a.u, TX + 2 * R, TY + 2 * R);
  const CUtensorMap mp = tensor_map(a.u_next, TX, TY);
  const CUtensorMap mv = tensor_map(a.v2dt2, TX, TY);
  const dim3 block(TX, TY / RY, 1);
  const dim3 grid(ceil_div(a.region.n.k + origin.shift, TX), ceil_div(a.region.n.j, TY),
                  ceil_div(a.region.n.i, chunk));
  kernel<<<grid, block, bytes, s>>>(a, mu, mp, mv, origin, chunk);
}

/// The same block body on host threads over host arrays (block_emulation.hpp): the same grid,
/// shared-memory size and tensor-map boxes as launch_kernel.
template <int TX, int TY, int RY, int NS, LayerMode kMode>
void emulate_kernel(const IsoStepArgs& a, int chunk) {
  const MapOrigin origin = map_origin(a.region, a.u.box);
  const HostTensorMap mu = HostTensorMap::of(a.u, TX + 2 * R, TY + 2 * R);
  const HostTensorMap mp = HostTensorMap::of(a.u_next, TX, TY);
  const HostTensorMap mv = HostTensorMap::of(a.v2dt2, TX, TY);
  const int grid[3] = {static_cast<int>(ceil_div(a.region.n.k + origin.shift, TX)),
                       static_cast<int>(ceil_div(a.region.n.j, TY)),
                       static_cast<int>(ceil_div(a.region.n.i, chunk))};
  emulate_grid(grid, TX, TY / RY, shared_bytes<TX, TY, NS>(), [&](HostBlock& blk, unsigned char* raw) {
    semi_tma_mode<TX, TY, RY, NS, kMode>(blk, a, mu, mp, mv, origin, chunk, raw);
  });
}

template <int TX, int TY, int RY, int NS>
constexpr Variant variant() {
  using M = LayerMode;
  return {TX,
          TY,
          RY,
          NS,
          {reinterpret_cast<const void*>(&semi_tma_iso<TX, TY, RY, NS, M::none>),
           reinterpret_cast<const void*>(&semi_tma_iso<TX, TY, RY, NS, M::fused>),
           reinterpret_cast<const void*>(&semi_tma_iso<TX, TY, RY, NS, M::by_block>)},
          {&launch_kernel<TX, TY, RY, NS, M::none>, &launch_kernel<TX, TY, RY, NS, M::fused>,
           &launch_kernel<TX, TY, RY, NS, M::by_block>},
          {&emulate_kernel<TX, TY, RY, NS, M::none>, &emulate_kernel<TX, TY, RY, NS, M::fused>,
           &emulate_kernel<TX, TY, RY, NS, M::by_block>},
          shared_bytes<TX, TY, NS>()};
}

// (k, j) output tiles: x = TX, y = TY; RY rows per thread, so TX * TY / RY threads.
const Variant kVariants[] = {variant<64, 8, 1, 4>(), variant<32, 16, 2, 4>(), variant<64, 16, 2, 4>(),
                             variant<32, 32, 4, 4>(), variant<64, 32, 4, 3>(), variant<128, 16, 4, 3>()};

/// The three families of these kernels, by how they take Minimod's layer (LayerMode):
/// `semi_tma` leaves it to pml.cu's kernel (on its own stream, beside the inner launch),
/// `semi_tma_fused` runs every block with the damped branch over the whole grid, `semi_tma_mixed`
/// only the blocks that meet the layer (the others run semi_tma's lean body). Fused or separate
/// wins depending on the tile (H100, 1000^3, 107b087: 64x16x64 124.2 GPts/s separate vs 97.6
/// fused, 32x16x64 95.4 vs 117.6); `auto` times them.
const char* name(LayerMode m) {
  return m == LayerMode::none ? "semi_tma" : m == LayerMode::fused ? "semi_tma_fused" : "semi_tma_mixed";
}

const Variant& find(const Tile& t, LayerMode m) { return find_chunked_variant(kVariants, t, name(m)); }

/// The mode of a launch of family `kFamily`: none without a layer in the arguments.
template <LayerMode kFamily>
LayerMode mode_of(const IsoStepArgs& a) {
  return a.layer.aux.origin == nullptr ? LayerMode::none : kFamily;
}

template <LayerMode kFamily>
void launch(const IsoStepArgs& a, const Tile& t, cudaStream_t s) {
  const Variant& v = find(t, kFamily);
  if (a.region.empty()) return;
  if (!shares_layout(a)) throw Error("semi_tma: u, u_next and v2dt2 must share one layout");
  if (!has_tensor_copies()) throw Error("semi_tma: needs the tensor copy engine of sm_90 (Hopper) or newer");
  v.launch[static_cast<int>(mode_of<kFamily>(a))](a, t.z, s);
}

template <LayerMode kFamily>
cudaFuncAttributes attributes(const Tile& t) {
  cudaFuncAttributes attr{};
  cudaFuncGetAttributes(&attr, find(t, kFamily).kernel[static_cast<int>(kFamily)]);
  return attr;
}

template <LayerMode kFamily>
int dynamic_smem(const Tile& t) { return find(t, kFamily).smem_bytes; }

template <LayerMode kFamily>
KernelFamily family() {
  KernelFamily f;
  f.name = name(kFamily);
  f.propagators = {PropagatorKind::acoustic_iso};
  // x = 32, 64 or 128 along k, y rows along j (2 or 4 per thread on the taller tiles), z planes per
  // chunk. 128x16 (H100, bench/results/2026-11-24-h100-session5.md): 139.3 GPts/s at 1000^3, 131.5
  // at 1200x800x600, 118.3 at 512^3 against 64x32's 138.9 / 126.7 / 115.0; taller or wider tiles
  // (64x64 and 128x32 at 8 rows per thread, 128x24, 96x32, 192x16, 128x8, 192x8) were slower.
  f.tunables = {{64, 8, 64},  {32, 16, 64}, {64, 16, 64},  {32, 32, 64},  {64, 32, 64},
                {64, 32, 32}, {64, 16, 128}, {128, 16, 64}, {128, 16, 128}};
  f.launch = &launch<kFamily>;
  f.description =
      kFamily == LayerMode::none ? "semi with tensor-copy (TMA) plane staging on an mbarrier ring, several rows per thread; sm_90+"
      : kFamily == LayerMode::fused
          ? "semi_tma with Minimod's layer in the same launch (whole grid); sm_90+"
          : "semi_tma with Minimod's layer in the same launch, the damped branch only in blocks that meet it; sm_90+";
  f.attributes = &attributes<kFamily>;
  f.dynamic_smem = &dynamic_smem<kFamily>;
  f.fuses_minimod_layer = kFamily != LayerMode::none;
  // semi_tma_mixed: all gpu tests pass on an H100 (57483c9); 110-111 GPts/s at 1000^3 against
  // semi_tma's 131-132: the damped branch's 116 registers apply to every block.
  return f;
}

const bool kRegistered = register_family(family<LayerMode::none>()) && register_family(family<LayerMode::fused>()) &&
                         register_family(family<LayerMode::by_block>());

}  // namespace

void emulate_semi_tma(const IsoStepArgs& a, const Tile& t, bool by_block) {
  const LayerMode m = by_block ? mode_of<LayerMode::by_block>(a) : mode_of<LayerMode::fused>(a);
  const Variant& v = find(t, m);
  if (!a.region.empty()) v.emulate[static_cast<int>(m)](a, t.z);
}

}  // namespace minimod::kernels::cuda
