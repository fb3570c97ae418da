// pml_tma: Minimod's damped update on the PML slabs (pml/pml_update.hpp, the CPU reference's
// formulas and order) with every plane staged by Hopper's tensor copy engine (TMA); sm_90 and
// newer. launch_pml (pml.cu) runs it where the GPU has the engine, else pml_stream.
//
// Why. pml_stream loads its column queue and halo cells thread by thread: ~238 instructions a
// layer point (Nsight Compute, H100, 1000^3, bench/results/2026-11-24-h100-session9.md §2), most
// of them the loads' predicates and 64-bit addresses, two block barriers a plane and the block's
// index split, for 25 FP a point of stencil. The layer (15% of Minimod's points) took ~26% of a
// step. Here thread 0 issues a plane's copies and the other threads only wait, read shared memory
// and compute, as in semi_tma.
//
// How. A block of TK x TJ threads owns a (k, j) tile of one slab and a chunk of its i planes
// [i_begin, i_end), one output point per thread and plane. It streams the u planes p = i_begin-4
// .. i_end+3, each with its j/k halo of 4, into a ring of NU = 9 + D slots (output plane c = p-4
// reads planes c-4 .. c+4; D more are in flight), each on its slot's mbarrier; a point's own
// u_prev, (v dt)^2 and aux are loaded by its thread one plane ahead. The plane loop is unrolled
// NU times, so every slot a point reads sits at an immediate offset. One block barrier a plane:
// after it, thread 0 refills the slot of plane p-8. Every slab of a step goes into one launch (kMaxSlabs). The tile's k origin is put on
// a 128-B boundary of the rows where a slab is wider than a tile (stores cover whole sectors);
// a thin slab (a z face) gets one tile from the 16-B boundary at or below its first k.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/cuda/block_emulation.hpp"
#include "kernels/cuda/block_model.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/emulation.hpp"
#include "kernels/cuda/pml_kernel.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/tensor_map.cuh"
#include "kernels/cuda/tti_stage.cuh"
#include "kernels/tti_point.hpp"
#include "physics/error.hpp"
#include "physics/stencil.hpp"
#include "pml/pml_update.hpp"

namespace minimod::kernels::cuda {
namespace {

constexpr int R = physics::kRadius;
constexpr int kMaxSlabs = 8;  // slabs per launch (Minimod's six faces)

constexpr int round_128(int bytes) { return (bytes + 127) / 128 * 128; }

/// Shared memory of a block: NU u slots and their mbarriers.
template <int TK, int TJ, int D>
struct LayerStage {
  static_assert(D >= 1, "at least one plane in flight");
  static constexpr int NU = 2 * R + 1 + D;
  static constexpr int UX = TK + 2 * R, UY = TJ + 2 * R;  // u with its j/k halo
  static constexpr int kUBytes = UX * UY * 4;
  static constexpr int kUSlot = round_128(kUBytes);
  static constexpr int kBarOffset = NU * kUSlot;
  static constexpr int smem_bytes = kBarOffset + NU * 8 + 128;  // + 128: the emulation aligns its base
  static constexpr int threads = TK * TJ;
  static_assert(smem_bytes <= 227 * 1024, "more shared memory than an H100 block may have");
};

/// One slab cut into (k, j) tiles and i chunks; blocks [first_block, next slab's first_block),
/// k tiles fastest, then j tiles, then chunks.
struct LayerTile {
  physics::Box3 box;
  int k0;  // k of the first tile's column 0 (<= box.lo.k)
  int chunk;
  int tiles_k, tiles_j;
  int first_block;
};

struct LayerTiles {
  LayerTile t[kMaxSlabs];
  int count;
  int blocks;
};

/// The tensor map of a launch (CUtensorMap on the GPU, HostTensorMap in the emulation): u with the
/// halo box.
template <class Map>
struct LayerMaps {
  Map u;
};

/// The map for tile TK x TJ, made by `make(view, box_x, box_y)`.
template <int TK, int TJ, class Make>
auto layer_maps(const PmlStepArgs& a, const Make& make) {
  return LayerMaps<decltype(make(a.u, 1, 1))>{make(a.u, TK + 2 * R, TJ + 2 * R)};
}

/// Calls f(integral_constant<int, I>) for I = 0 .. N-1 in order (the plane loop's phases).
template <class F, int... I>
MM_HOST_DEVICE MM_FORCE_INLINE void each_phase(const F& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>()), ...);
}

/// Issued by thread 0: u plane n of the block's stream (p = i_begin - R + n) into its slot,
/// completing on the slot's mbarrier.
#pragma nv_exec_check_disable
template <int TK, int TJ, int D, class Block, class Map>
MM_HOST_DEVICE MM_FORCE_INLINE void stage_layer_plane(const Block& blk, const LayerMaps<Map>& maps, int n, int i_begin,
                                                      int k0, int j0, const physics::Index3& o, unsigned char* base) {
  using S = LayerStage<TK, TJ, D>;
  std::uint64_t* bar = reinterpret_cast<std::uint64_t*>(base + S::kBarOffset) + n % S::NU;
  const int p = i_begin - R + n;
  blk.expect_bytes(bar, S::kUBytes);
  blk.copy_3d(base + (n % S::NU) * S::kUSlot, maps.u, k0 - R - o.k, j0 - R - o.j, p - o.i, bar);
}

/// One block's sweep, written against block_model.cuh (DeviceBlock on the GPU, HostBlock in the
/// emulation); `raw` its dynamic shared memory (LayerStage::smem_bytes), `o` the allocation's
/// corner (tensor coordinates are relative to it).
// The plane loop is a generic lambda (the phase as a compile-time constant), which inherits the
// host-device attribute but not nv_exec_check_disable: the two warnings that the HostBlock
// instantiation (host code only) calls host functions are silenced here and restored below.
#pragma nv_diag_suppress 20011, 20014
#pragma nv_exec_check_disable
template <int TK, int TJ, int D, class Block, class Map>
MM_HOST_DEVICE MM_FORCE_INLINE void layer_tma_block(const Block& blk, const PmlStepArgs& a, const LayerTiles& tiles,
                                                    const LayerMaps<Map>& maps, physics::Index3 o,
                                                    unsigned char* raw) {
  using S = LayerStage<TK, TJ, D>;
#ifdef __CUDA_ARCH__
  unsigned char* const base = raw;  // the kernel's shared array (128-B aligned, checked at launch)
#else
  unsigned char* const base = align_128(raw);  // the emulation's buffer
#endif
  std::uint64_t* const bar = reinterpret_cast<std::uint64_t*>(base + S::kBarOffset);
  const int tid = blk.tx;

  int slab = 0;
  for (int b = 1; b < tiles.count; ++b)
    if (blk.bx >= tiles.t[b].first_block) slab = b;
  const LayerTile& t = tiles.t[slab];
  const int rest = blk.bx - t.first_block;
  const int bk = rest % t.tiles_k, bj = rest / t.tiles_k % t.tiles_j, bi = rest / t.tiles_k / t.tiles_j;
  const physics::Index3 lo = t.box.lo, hi = t.box.hi();
  const int k0 = t.k0 + bk * TK, j0 = lo.j + bj * TJ;
  const int i_begin = lo.i + bi * t.chunk;
  const int i_end = i_begin + t.chunk < hi.i ? i_begin + t.chunk : hi.i;
  const int count = i_end - i_begin + 2 * R;  // u planes streamed

  const int tx = tid % TK, ty = tid / TK;
  const int k = k0 + tx, j = j0 + ty;
  const bool writes = k >= lo.k && k < hi.k && j < hi.j;

  if (tid == 0) {
    for (int s = 0; s < S::NU; ++s) blk.mbarrier_init(bar + s, 1);
    blk.fence_init();
  }
  blk.sync();
  if (tid == 0)
    for (int n = 0; n <= D && n < count; ++n) stage_layer_plane<TK, TJ, D>(blk, maps, n, i_begin, k0, j0, o, base);

  const float* ex = a.eta_x + 1;
  float ey_j = 0.0f, ey_p = 0.0f, ey_m = 0.0f, ez_k = 0.0f, ez_p = 0.0f, ez_m = 0.0f;
  if (writes) {
    const float* ey = a.eta_y + 1;
    const float* ez = a.eta_z + 1;
    ey_j = load(ey + j), ey_p = load(ey + j + 1), ey_m = load(ey + j - 1);
    ez_k = load(ez + k), ez_p = load(ez + k + 1), ez_m = load(ez + k - 1);
  }
  float ex_m = load(ex + i_begin - 1), ex_c = load(ex + i_begin);  // eta_x(c-1), eta_x(c), rolled
  // The point's own fields at output plane c, one layout (checked at launch): u_prev (u_next's
  // array where the update runs in place), (v dt)^2 and aux loaded one plane ahead, as
  // pml_stream does (tensor copies of them over the tile read the tiles' overhang as well:
  // 3.68 GB a step instead of 2.97 on an H100, 2026-11-24).
  const std::int64_t o_begin = a.u_next.offset(i_begin, j, k), sx = a.u_next.sx;
  float* out = a.u_next.origin + o_begin;
  const float* prev = (a.u_prev.origin ? a.u_prev.origin : a.u_next.origin) + o_begin;
  const float* vel = a.v2dt2.origin + o_begin;
  float* aux_at = a.aux.origin + o_begin;
  float next_prev = writes ? *prev : 0.0f, next_vel = writes ? load(vel) : 0.0f, next_aux = writes ? *aux_at : 0.0f;
  const int e_u = (ty + R) * S::UX + tx + R;
  unsigned parity = 0;

  const auto plane = [&](auto phase, int n) {
    constexpr int PH = decltype(phase)::value;  // n % NU
    blk.wait(bar + PH, parity);
    if (n >= 2 * R) {  // output plane c (block-uniform)
      const int c = i_begin + n - 2 * R;
      const float ex_p = load(ex + c + 1);
      const float u_prev = next_prev, v2dt2 = next_vel, aux = next_aux;
      if (writes && c + 1 < i_end) {  // plane c + 1's
        next_prev = prev[sx], next_vel = load(vel + sx), next_aux = aux_at[sx];
      }
      if (writes) {
        const auto at = [base, e_u](int di, int dj, int dk) {
          const int slot = (PH - R + di + 2 * S::NU) % S::NU;  // plane c + di
          return reinterpret_cast<const float*>(base + slot * S::kUSlot)[e_u + dj * S::UX + dk];
        };
        const float eta = ex_c + ey_j + ez_k;  // the CPU's order: (ex + ey) + ez
        const float u_next = pml::pml_u_next(u_prev, at(0, 0, 0), v2dt2, physics::laplacian8(at, a.laplacian), aux, eta);
        const float grad = pml::pml_gradient_term(ex_p, ex_m, at(1, 0, 0), at(-1, 0, 0), a.inv_4h2[0]) +
                           pml::pml_gradient_term(ey_p, ey_m, at(0, 1, 0), at(0, -1, 0), a.inv_4h2[1]) +
                           pml::pml_gradient_term(ez_p, ez_m, at(0, 0, 1), at(0, 0, -1), a.inv_4h2[2]);
        const float aux_next = pml::pml_aux_next(aux, eta, grad);
        *out = u_next;  // after every shared read (a generic store might alias them)
        *aux_at = aux_next;
      }
      out += sx, prev += sx, vel += sx, aux_at += sx;
      ex_m = ex_c;
      ex_c = ex_p;
    }
    blk.sync();  // everyone is done with plane n: the slot of plane n - 8 is free
    if (tid == 0 && n + D + 1 < count) {
      blk.fence_proxy();  // the generic reads of those before the copy engine's writes
      stage_layer_plane<TK, TJ, D>(blk, maps, n + D + 1, i_begin, k0, j0, o, base);
    }
  };
  for (int n0 = 0; n0 < count; n0 += S::NU) {  // NU planes a round, slot PH at phase PH
    each_phase(
        [&](auto phase) {
          if (n0 + decltype(phase)::value < count) plane(phase, n0 + decltype(phase)::value);
        },
        std::make_integer_sequence<int, S::NU>());
    parity ^= 1u;
  }
}
#pragma nv_diag_default 20011, 20014

template <int TK, int TJ, int D>
__global__ void __launch_bounds__(LayerStage<TK, TJ, D>::threads)
    pml_tma(const __grid_constant__ LayerMaps<CUtensorMap> maps, PmlStepArgs a, LayerTiles tiles, physics::Index3 o) {
  extern __shared__ __align__(128) unsigned char pml_tma_raw[];
  if ((smem_address(pml_tma_raw) & 127u) != 0) __trap();  // layer_tma_block's base
  layer_tma_block<TK, TJ, D>(DeviceBlock(), a, tiles, maps, o, pml_tma_raw);
}

// --- host side ----------------------------------------------------------------------------------

/// The launches over `boxes` for tile TK x TJ and `chunk` i planes a block: run(tiles) issues
/// one (or emulates it), at most kMaxSlabs slabs each.
template <int TK, int TJ, class Run>
void plan_layer(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes, int chunk, const Run& run) {
  LayerTiles tiles{};
  const auto flush = [&] {
    if (tiles.count > 0) run(tiles);
    tiles = LayerTiles{};
  };
  for (const auto& b : boxes) {
    if (b.empty()) continue;
    LayerTile t{};
    t.box = b;
    // Box rows must start on 16 B (the copy engine faults otherwise): a thin slab's one tile
    // starts up to 3 points below its first k; wider slabs' tiles on 128-B boundaries.
    const int row_shift = tile_row_shift(b, a.u.box);  // to the 128-B boundary at or below lo.k
    const int shift = b.n.k + row_shift % 4 <= TK ? row_shift % 4 : row_shift;
    t.k0 = b.lo.k - shift;
    t.tiles_k = static_cast<int>(ceil_div(b.n.k + shift, TK));
    t.tiles_j = static_cast<int>(ceil_div(b.n.j, TJ));
    const int chunks = static_cast<int>(ceil_div(b.n.i, std::max(1, chunk)));
    t.chunk = static_cast<int>(ceil_div(b.n.i, chunks));
    const std::int64_t blocks =
        static_cast<std::int64_t>(t.tiles_k) * t.tiles_j * static_cast<int>(ceil_div(b.n.i, t.chunk));
    if (tiles.count == kMaxSlabs || tiles.blocks + blocks > (1ll << 30)) flush();
    if (blocks > (1ll << 30)) throw Error("pml_tma: a slab of " + std::to_string(blocks) + " blocks");
    t.first_block = tiles.blocks;
    tiles.t[tiles.count++] = t;
    tiles.blocks += static_cast<int>(blocks);
  }
  flush();
}

template <int TK, int TJ, int D>
void launch_variant(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes, int chunk, cudaStream_t s) {
  using S = LayerStage<TK, TJ, D>;
  constexpr auto kernel = &pml_tma<TK, TJ, D>;
  ensure_smem_limit<kernel>(S::smem_bytes);
  // MINIMOD_PML_TMA_L2 = 0, 64, 128 or 256: the copies' L2 promotion (benchmark switch, read once).
  static const CUtensorMapL2promotion promotion = [] {
    const char* e = std::getenv("MINIMOD_PML_TMA_L2");
    const int b = e && *e ? std::atoi(e) : 0;
    return b == 256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
           : b == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
           : b == 64 ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
                     : CU_TENSOR_MAP_L2_PROMOTION_NONE;
  }();
  const auto maps =
      layer_maps<TK, TJ>(a, [](const auto& v, int bx, int by) { return tensor_map(v, bx, by, promotion); });
  plan_layer<TK, TJ>(a, boxes, chunk, [&](const LayerTiles& tiles) {
    kernel<<<tiles.blocks, S::threads, S::smem_bytes, s>>>(maps, a, tiles, a.u.box.lo);
    MM_CUDA_CHECK_LAUNCH("pml_tma");
  });
}

template <int TK, int TJ, int D>
void emulate_variant(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes, int chunk) {
  using S = LayerStage<TK, TJ, D>;
  const auto maps =
      layer_maps<TK, TJ>(a, [](const auto& v, int bx, int by) { return HostTensorMap::of(v, bx, by); });
  plan_layer<TK, TJ>(a, boxes, chunk, [&](const LayerTiles& tiles) {
    const int grid[3] = {tiles.blocks, 1, 1};
    emulate_grid(grid, S::threads, 1, S::smem_bytes, [&](HostBlock& blk, unsigned char* raw) {
      layer_tma_block<TK, TJ, D>(blk, a, tiles, maps, a.u.box.lo, raw);
    });
  });
}

struct Variant {
  int tk, tj, d;
  void (*launch)(const PmlStepArgs&, const std::vector<physics::Box3>&, int, cudaStream_t);
  void (*emulate)(const PmlStepArgs&, const std::vector<physics::Box3>&, int);
};

template <int TK, int TJ, int D>
constexpr Variant variant() {
  return {TK, TJ, D, &launch_variant<TK, TJ, D>, &emulate_variant<TK, TJ, D>};
}

const Variant kVariants[] = {variant<32, 8, 2>(), variant<32, 16, 2>(), variant<32, 8, 4>(), variant<32, 16, 4>()};

const Variant& find(const LayerTma& v) {
  for (const auto& x : kVariants)
    if (x.tk == v.tk && x.tj == v.tj && x.d == v.d) return x;
  throw Error("pml_tma: no variant " + std::to_string(v.tk) + "x" + std::to_string(v.tj) + " with " +
              std::to_string(v.d) + " planes in flight");
}

void check_layout(const PmlStepArgs& a) {
  const auto same = [&](const auto& v) { return v.sx == a.u.sx && v.sy == a.u.sy && v.box == a.u.box; };
  if (!same(a.u_next) || !same(a.v2dt2) || !same(a.aux) || (a.u_prev.origin && !same(a.u_prev)))
    throw Error("pml_tma: u, u_prev, u_next, v2dt2 and pml_aux must share one layout");
}

}  // namespace

void launch_pml_tma(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes, const LayerTma& v,
                    cudaStream_t s) {
  check_layout(a);
  find(v).launch(a, boxes, v.chunk, s);
}

void emulate_pml_tma(const PmlStepArgs& a, const std::vector<physics::Box3>& boxes, const LayerTma& v) {
  check_layout(a);
  find(v).emulate(a, boxes, v.chunk);
}

}  // namespace minimod::kernels::cuda
