// semi / semi_sync: 2.5D streaming along i with the semi-stencil on the streaming axis and an
// asynchronous multi-stage prefetch of the plane tiles (Sai, Mellor-Crummey, Meng, Araya-Polo,
// "Using the Semi-Stencil Algorithm to Accelerate High-Order Stencils on GPUs", §III-A/B/C and
// §IV-C "+b+a"; de la Cruz & Araya-Polo, ACM TOMS 40(3) 2014; notes/semi-stencil-tti-digest.md §2).
//
// Idea. A 2D block (TX, TY) covers a (k, j) tile and walks planes p = i_begin-4 .. i_end+3 of a
// chunk of `tile.z` output planes [i_begin, i_end).
//  * Staging (semi): a ring of NS shared-memory stages. Stage p holds the plane tile u(p, ., .)
//    with its j/k halo of 4 (edge corners are not loaded), plus u_prev and v2dt2 of output plane
//    p-4 (the one completed at plane p). Everything is copied global -> shared with 4-byte
//    `cp.async` (`__pipeline_memcpy_async`), one commit group per plane, NS-1 planes ahead; a
//    thread waits for its own group (`__pipeline_wait_prior(NS-2)`), then one barrier per plane
//    makes every thread's copies visible and frees the slot of plane p-1, into which plane
//    p+NS-1 is issued right after the barrier. Each plane of u is read from global memory once.
//    Stage size (TY+8)(TX+8) + 2 TX TY floats; where NS stages exceed 48 KB the dynamic limit is
//    raised with cudaFuncSetAttribute once per device before the first launch.
//  * Staging (semi_sync): the same kernel with one stage and synchronous loads (global ->
//    register -> shared, two barriers per plane, u_prev/v2dt2 read at write time); the benchmark
//    shows the effect of the asynchronous copies by comparing the two.
//  * Semi-stencil along i: the centre c = u(p) of the thread's column is read from the stage once.
//    - forward update (left half + centre + in-plane j/k terms) for output p:
//        F(p) = laplacian8(at) with at(-m,0,0) = u(p-m) from a 4-register history h,
//               at(+m,0,0) = -0.0f (so the x pair sums reduce exactly to u(p-m)), and the j/k
//               offsets from the shared plane;
//    - backward update (right half): c contributes cx[m-1]*c to the pending partial sums of
//      outputs p-m, m = 1..4 (registers P[0..3]); output p-4 is complete after that and written
//      with u(p-4) = h[3], u_prev and v2dt2 from the stage.
//    Registers: history h[4] + partials P[4] (+ the new F), all with compile-time indices.
//  * What is reordered relative to laplacian8 (the CPU reference): for output o the sum is
//      c0*u + Σ_{m=1..4} [cx*u(o-m) + cy*(pair) + cz*(pair)]   (laplacian8's order, right x
//      half omitted) + cx[0]*u(o+1) + cx[1]*u(o+2) + cx[2]*u(o+3) + cx[3]*u(o+4);
//    i.e. the x pair cx*(u(o+m) + u(o-m)) is split into two products. Same coefficient table.
//    Results differ from the reference by fp32 rounding only (~1e-7 relative).
// Boundaries: copies are issued only for points inside [lo-4, hi+4) in j and k; a thread's own
// (j, k) column is copied if readable, halo strips by the threads at the tile edges; i ranges
// over [i_begin-4, i_end+4) which is inside the field's halo. Stale shared memory left by skipped
// copies feeds only outputs outside the region, which are never written. Outputs are written only
// for (j, k) < hi and o in [i_begin, i_end).
// Limits: TX, TY >= 4; NS >= 2 for the async variant; tile.z any value >= 1 (8 planes of
// warm-up/drain per chunk: 8/tile.z extra u reads).
#include <cuda_pipeline.h>

#include <atomic>
#include <string>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/thread_point.cuh"
#include "kernels/cuda/tti_stage.cuh"
#include "physics/error.hpp"
#include "physics/stencil.hpp"

namespace minimod::kernels::cuda {
namespace {

constexpr int R = physics::kRadius;

template <int TX, int TY>
struct Geometry {
  static constexpr int SX = TX + 2 * R, SY = TY + 2 * R;
  static constexpr int kPlane = SX * SY;               // floats of the u tile
  static constexpr int kStage = kPlane + 2 * TX * TY;  // + u_prev, v2dt2 of the output plane
};

template <int TX, int TY, int NS, bool kAsync>
__global__ void __launch_bounds__(TX* TY) semi_iso(IsoStepArgs a, int chunk) {
  static_assert(TX >= R && TY >= R, "halo loading needs at least R threads per axis");
  static_assert(!kAsync || NS >= 2, "the async pipeline needs at least 2 stages");
  using G = Geometry<TX, TY>;
  constexpr int SX = G::SX;
  extern __shared__ float smem[];

  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TX + tx;
  const physics::Index3 hi = a.region.hi();
  const int k = a.region.lo.k + static_cast<int>(blockIdx.x) * TX + tx;
  const int j = a.region.lo.j + static_cast<int>(blockIdx.y) * TY + ty;
  const int i_begin = a.region.lo.i + static_cast<int>(blockIdx.z) * chunk;
  const int i_end = min(i_begin + chunk, hi.i);
  const int p_first = i_begin - R, p_last = i_end + R;  // planes streamed: [p_first, p_last)

  const bool writes = k < hi.k && j < hi.j;
  const bool has_u = k < hi.k + R && j < hi.j + R;
  const bool klo = tx < R && j < hi.j + R;
  const bool khi = tx >= TX - R && k < hi.k && j < hi.j + R;
  const bool jlo = ty < R && k < hi.k + R;
  const bool jhi = ty >= TY - R && j < hi.j && k < hi.k + R;

  const std::int64_t sx = a.u.sx, sy4 = R * a.u.sy;
  const std::int64_t o0 = a.u.offset(p_first, j, k);  // all views share one layout
  const float* const u0 = a.u.origin + o0;            // u(p_first, j, k)
  float* const n0 = a.u_next.origin + o0;
  const float* const v0 = a.v2dt2.origin + o0;

  // Shared-memory offsets (floats) within a stage.
  const int s_c = (ty + R) * SX + tx + R;
  const int s_own = G::kPlane + tid;

  // Copies of plane p into stage `st` (async) or through registers (sync).
  const auto copy_plane = [&](int p, float* st) {
    const std::int64_t d = static_cast<std::int64_t>(p - p_first) * sx;
    const float* src = u0 + d;
    const bool star = p >= i_begin && p < i_end;  // its j/k star feeds an output of this chunk
    if constexpr (kAsync) {
      if (has_u) __pipeline_memcpy_async(st + s_c, src, 4);
      if (star) {
        if (klo) __pipeline_memcpy_async(st + s_c - R, src - R, 4);
        if (khi) __pipeline_memcpy_async(st + s_c + R, src + R, 4);
        if (jlo) __pipeline_memcpy_async(st + s_c - R * SX, src - sy4, 4);
        if (jhi) __pipeline_memcpy_async(st + s_c + R * SX, src + sy4, 4);
      }
      if (writes && p - R >= i_begin) {  // u_prev, v2dt2 of output p-4
        const std::int64_t e = d - static_cast<std::int64_t>(R) * sx;
        __pipeline_memcpy_async(st + s_own, n0 + e, 4);
        __pipeline_memcpy_async(st + s_own + TX * TY, v0 + e, 4);
      }
    } else {
      const float c = has_u ? __ldg(src) : 0.0f;
      float hkl = 0, hkh = 0, hjl = 0, hjh = 0;
      if (star) {
        if (klo) hkl = __ldg(src - R);
        if (khi) hkh = __ldg(src + R);
        if (jlo) hjl = __ldg(src - sy4);
        if (jhi) hjh = __ldg(src + sy4);
      }
      st[s_c] = c;
      if (star) {
        if (klo) st[s_c - R] = hkl;
        if (khi) st[s_c + R] = hkh;
        if (jlo) st[s_c - R * SX] = hjl;
        if (jhi) st[s_c + R * SX] = hjh;
      }
    }
  };

  float h[R] = {};  // h[m-1] = u(p-m)
  float P[R] = {};  // P[d] = partial Laplacian of output p-4+d (d = 0..3)

  int slot = 0;  // stage of plane p
  if constexpr (kAsync) {
#pragma unroll
    for (int s = 0; s < NS - 1; ++s) {
      if (p_first + s < p_last) copy_plane(p_first + s, smem + s * G::kStage);
      __pipeline_commit();  // always commit (possibly empty) so that group counting is uniform
    }
  }

  for (int p = p_first; p < p_last; ++p) {
    float* st = smem + slot * G::kStage;
    if constexpr (kAsync) {
      __pipeline_wait_prior(NS - 2);  // this thread's copies of plane p have landed
      __syncthreads();                // everyone's have; everyone is done with plane p-1
      const int ahead = p + NS - 1;
      const int aslot = slot == 0 ? NS - 1 : slot - 1;  // slot of plane p-1 = slot of p+NS-1
      if (ahead < p_last) copy_plane(ahead, smem + aslot * G::kStage);
      __pipeline_commit();
    } else {
      __syncthreads();  // everyone is done with plane p-1
      copy_plane(p, st);
      __syncthreads();
    }

    const float c = st[s_c];
    // Backward update: u(p) = u(o+m) for the pending outputs o = p-m.
#pragma unroll
    for (int m = 1; m <= R; ++m) P[R - m] += a.laplacian.cx[m - 1] * c;
    // Output p-4 is complete.
    const int out_i = p - R;
    if (writes && out_i >= i_begin) {
      const std::int64_t e = static_cast<std::int64_t>(out_i - p_first) * sx;
      float up, vv;
      if constexpr (kAsync) {
        up = st[s_own];
        vv = st[s_own + TX * TY];
      } else {
        up = n0[e];
        vv = __ldg(v0 + e);
      }
      n0[e] = physics::leapfrog(up, h[R - 1], vv, P[0]);
    }
    // Forward update for output p (left half, centre and in-plane terms), if it is one of ours.
    float F = 0.0f;
    if (p >= i_begin && p < i_end) {
      const auto at = [&h, st, s_c, c](int di, int dj, int dk) {
        if (di < 0) return h[-di - 1];
        if (di > 0) return -0.0f;  // the right half arrives through the backward updates
        return (dj == 0 && dk == 0) ? c : st[s_c + dj * SX + dk];
      };
      F = physics::laplacian8(at, a.laplacian);
    }
#pragma unroll
    for (int d = 0; d < R - 1; ++d) P[d] = P[d + 1];
    P[R - 1] = F;
#pragma unroll
    for (int m = R - 1; m > 0; --m) h[m] = h[m - 1];
    h[0] = c;
    slot = slot + 1 == NS ? 0 : slot + 1;
  }
  if constexpr (kAsync) __pipeline_wait_prior(0);  // no copy may outlive the block
}

struct Variant {
  int x, y, stages;
  const void* kernel;
  void (*launch)(const IsoStepArgs&, int, cudaStream_t);
  int smem_bytes;
};

template <int TX, int TY, int NS, bool kAsync>
void launch_variant(const IsoStepArgs& a, int chunk, cudaStream_t s) {
  constexpr int bytes = NS * Geometry<TX, TY>::kStage * 4;
  ensure_smem_limit<&semi_iso<TX, TY, NS, kAsync>>(bytes);
  const dim3 block(TX, TY, 1);
  const dim3 grid(ceil_div(a.region.n.k, TX), ceil_div(a.region.n.j, TY),
                  ceil_div(a.region.n.i, chunk));
  semi_iso<TX, TY, NS, kAsync><<<grid, block, bytes, s>>>(a, chunk);
}

template <int TX, int TY, int NS, bool kAsync>
constexpr Variant variant() {
  return {TX, TY, NS, reinterpret_cast<const void*>(&semi_iso<TX, TY, NS, kAsync>),
          &launch_variant<TX, TY, NS, kAsync>, NS * Geometry<TX, TY>::kStage * 4};
}

// Stages per (k, j) shape: 3 (4 for the largest, which then needs > 48 KB of shared memory).
const Variant kAsyncVariants[] = {variant<32, 16, 3, true>(), variant<32, 8, 4, true>(),
                                  variant<64, 8, 3, true>(), variant<64, 16, 4, true>()};
const Variant kSyncVariants[] = {variant<32, 16, 1, false>(), variant<32, 8, 1, false>(),
                                 variant<64, 8, 1, false>(), variant<64, 16, 1, false>()};

template <bool kAsync>
const Variant& find(const Tile& t) {
  return kAsync ? find_chunked_variant(kAsyncVariants, t, "semi") : find_chunked_variant(kSyncVariants, t, "semi_sync");
}

template <bool kAsync>
void launch(const IsoStepArgs& a, const Tile& t, cudaStream_t s) {
  const Variant& v = find<kAsync>(t);
  if (a.region.empty()) return;
  if (!shares_layout(a))
    throw Error("semi: u, u_next and v2dt2 must share one layout");
  v.launch(a, t.z, s);
}

template <bool kAsync>
cudaFuncAttributes attributes(const Tile& t) {
  cudaFuncAttributes attr{};
  cudaFuncGetAttributes(&attr, find<kAsync>(t).kernel);
  return attr;
}

template <bool kAsync>
int dynamic_smem(const Tile& t) {
  return find<kAsync>(t).smem_bytes;
}

// --- acoustic_tti -------------------------------------------------------------------------------
// 2.5D streaming along i for the 73-point TTI operator with the same asynchronous plane prefetch:
// a ring of NS plane tiles (TX+8)(TY+8) of staged 24-B points (kernels/cuda/tti_stage.cuh);
// output plane c reads planes c-4 .. c+4 from the ring while plane c+5 is copied in with cp.async
// (semi: NS = 10, one barrier per plane) or loaded synchronously after it (semi_sync: NS = 9,
// two barriers per plane). Each output point evaluates physics::tti_rhs73 exactly as the CPU
// reference does. The pair (self-adjoint) form weighs the medium at both ends of every pair, so
// the iso family's forward/backward split of the x line does not carry over: the x line is read
// from the ring like the other neighbours. Shared memory NS (TX+8)(TY+8) x 24 B (115 KB for
// 32x4 with the async ring). tile.z = output planes per block (8 planes of warm-up each).

template <int TX, int TY, bool kAsync>
struct TtiRing {
  static constexpr int SX = TX + 2 * R, SY = TY + 2 * R, kPlane = SX * SY;
  static constexpr int NS = kAsync ? 2 * R + 2 : 2 * R + 1;
  static constexpr int kPoints = NS * kPlane, kBytes = kPoints * kTtiStagedBytes;
};

template <int TX, int TY, bool kAsync>
__global__ void __launch_bounds__(TX* TY) semi_tti(TtiStepArgs g, physics::Box3 region, int chunk) {
  using G = TtiRing<TX, TY, kAsync>;
  extern __shared__ __align__(16) unsigned char semi_tti_raw[];
  const TtiStage st = TtiStage::carve(semi_tti_raw, G::kPoints);
  const physics::Index3 hi = region.hi();
  const StreamBlock blk = stream_block(region, TX, TY, chunk);
  const int k0 = blk.k0, j0 = blk.j0, i_begin = blk.i_begin, i_end = blk.i_end;
  const int t = threadIdx.x + TX * threadIdx.y;
  const int first = i_begin - R;  // plane in slot 0
  const auto stage_plane = [&](int p) {
    const int slot = (p - first) % G::NS;
    for (int e = t; e < G::kPlane; e += TX * TY) {
      const int j = j0 - R + e / G::SX, k = k0 - R + e % G::SX;
      if (j >= hi.j + R || k >= hi.k + R) continue;
      const std::int64_t o = g.p.offset(p, j, k);
      if constexpr (kAsync)
        stage_tti_point_async(g, o, st, slot * G::kPlane + e);
      else
        stage_tti_point(g, o, st, slot * G::kPlane + e);
    }
  };
  for (int p = first; p <= i_begin + R; ++p) stage_plane(p);
  if constexpr (kAsync) {
    __pipeline_commit();
    __pipeline_wait_prior(0);
  }
  __syncthreads();
  const int j = j0 + static_cast<int>(threadIdx.y), k = k0 + static_cast<int>(threadIdx.x);
  const bool writes = j < hi.j && k < hi.k;
  const int e = (threadIdx.y + R) * G::SX + threadIdx.x + R;
  for (int c = i_begin; c < i_end; ++c) {
    const int ahead = c + R + 1;  // needed from output c + 1 on
    if constexpr (kAsync) {
      if (ahead < i_end + R) stage_plane(ahead);
      __pipeline_commit();
    }
    if (writes) {
      int base[2 * R + 1];
#pragma unroll
      for (int d = 0; d <= 2 * R; ++d) base[d] = ((c - R + d - first) % G::NS) * G::kPlane + e;
      const auto index = [&base](int di, int dj, int dk) { return base[di + R] + dj * G::SX + dk; };
      const std::int64_t o = g.p.offset(c, j, k);
      tti_update_from_rhs(g, c, j, k, o, staged_tti_rhs(st, index, __ldg(g.b.origin + o), g.stencil));
    }
    if constexpr (kAsync) {
      __pipeline_wait_prior(0);
    } else {
      __syncthreads();  // everyone is done with plane c - 4
      if (ahead < i_end + R) stage_plane(ahead);
    }
    __syncthreads();
  }
}

struct TtiVariant {
  int x, y;
  const void* kernel;
  void (*launch)(const TtiStepArgs&, const physics::Box3&, int, cudaStream_t);
  int smem_bytes;
};

template <int TX, int TY, bool kAsync>
void launch_tti_variant(const TtiStepArgs& g, const physics::Box3& region, int chunk, cudaStream_t s) {
  constexpr int bytes = TtiRing<TX, TY, kAsync>::kBytes;
  ensure_smem_limit<&semi_tti<TX, TY, kAsync>>(bytes);
  const dim3 grid(ceil_div(region.n.k, TX), ceil_div(region.n.j, TY), ceil_div(region.n.i, chunk));
  semi_tti<TX, TY, kAsync><<<grid, dim3(TX, TY, 1), bytes, s>>>(g, region, chunk);
}

template <int TX, int TY, bool kAsync>
constexpr TtiVariant tti_variant() {
  return {TX, TY, reinterpret_cast<const void*>(&semi_tti<TX, TY, kAsync>), &launch_tti_variant<TX, TY, kAsync>,
          TtiRing<TX, TY, kAsync>::kBytes};
}

const TtiVariant kTtiAsync[] = {tti_variant<32, 4, true>(), tti_variant<32, 8, true>(), tti_variant<16, 8, true>()};
const TtiVariant kTtiSync[] = {tti_variant<32, 4, false>(), tti_variant<32, 8, false>(), tti_variant<16, 8, false>()};

template <bool kAsync>
const TtiVariant& find_tti(const Tile& t) {
  return kAsync ? find_chunked_variant(kTtiAsync, t, "semi (acoustic_tti)")
                : find_chunked_variant(kTtiSync, t, "semi_sync (acoustic_tti)");
}

template <bool kAsync>
void launch_tti(const TtiStepArgs& g, const physics::Box3& region, const Tile& t, cudaStream_t s) {
  const TtiVariant& v = find_tti<kAsync>(t);
  if (!region.empty()) v.launch(g, region, t.z, s);
}

template <bool kAsync>
cudaFuncAttributes tti_attributes(const Tile& t) {
  cudaFuncAttributes attr{};
  cudaFuncGetAttributes(&attr, find_tti<kAsync>(t).kernel);
  return attr;
}

template <bool kAsync>
int tti_dynamic_smem(const Tile& t) {
  return find_tti<kAsync>(t).smem_bytes;
}

const std::vector<Tile> kTunables = {{32, 16, 64}, {32, 8, 64}, {64, 8, 64}, {64, 16, 64}};
const std::vector<Tile> kTtiTunables = {{32, 4, 64}, {32, 8, 64}, {16, 8, 64}};

template <bool kAsync>
KernelFamily family() {
  KernelFamily f;
  f.name = kAsync ? "semi" : "semi_sync";
  f.propagators = {PropagatorKind::acoustic_iso, PropagatorKind::acoustic_tti};
  f.tunables = kTunables;
  f.launch = &launch<kAsync>;
  f.description = kAsync ? "2.5D semi-stencil along i, cp.async multi-stage plane prefetch into shared memory"
                         : "semi without asynchronous copies (synchronous plane loads, for comparison)";
  f.attributes = &attributes<kAsync>;
  f.dynamic_smem = &dynamic_smem<kAsync>;
  f.launch_tti = &launch_tti<kAsync>;
  f.tti_tunables = kTtiTunables;
  f.tti_attributes = &tti_attributes<kAsync>;
  f.tti_dynamic_smem = &tti_dynamic_smem<kAsync>;
  return f;
}

const bool kRegistered = register_family(family<true>());
const bool kRegisteredSync = register_family(family<false>());

}  // namespace
}  // namespace minimod::kernels::cuda
