// swic: sliding-window 2D shared-memory caching with an output register queue (SWiC: "An
// Efficient GPU Implementation Technique for Higher-Order 3D Stencils", §IV, Fig. 5-6,
// Algorithm 1; notes/swic-digest.md §2 and §6).
//
// Idea. A 2D block (TX, TY) covers a (k, j) tile and streams planes p = i_begin-4 .. i_end+3 of a
// chunk of `tile.z` output planes [i_begin, i_end) (the paper streams the whole axis; chunks give
// enough blocks for 132 SMs at the price of 8 warm-up/drain planes per chunk).
//  * Shared memory holds only the current plane u(p, ., .) with its j/k halo of 4 (edge corners
//    not needed for the star), s[TY+8][TX+8]; its values (the thread's own point and the halo
//    strips of the edge threads) are prefetched into registers one plane ahead, two barriers per
//    plane. Planes outside [i_begin, i_end) need only the thread's own point (no halo, no star).
//  * Each thread keeps an output register queue A[9]: A[4+d] is the partial Laplacian of output
//    p+d of its column. Plane p scatters:
//      - its whole in-plane star (centre + j/k pairs) into A[4] (output p), evaluated with
//        physics::laplacian8 through an accessor whose x offsets return 0 (the x-direction part
//        arrives through the scatter); and
//      - cx[m-1]*u(p) into A[4-m] and A[4+m] (outputs p-m and p+m), m = 1..4.
//    Output p-4 (A[0]) is then complete: it is written with u(p-4) (a 4-register history of the
//    centre values), u_prev and v2dt2 (prefetched one plane ahead), and the queue shifts.
//    All queue indices are compile-time (shifts by moves).
//  * What is reordered relative to laplacian8 (the CPU reference): for output o the sum is
//      [c0*u(o) + Σ_m (cx*(0+0) + cy*pair + cz*pair)]  (in-plane part, laplacian8's order)
//      accumulated after cx[3]*u(o-4) + cx[2]*u(o-3) + cx[1]*u(o-2) + cx[0]*u(o-1), and before
//      cx[0]*u(o+1) + ... + cx[3]*u(o+4); i.e. each x pair cx*(u(o+m)+u(o-m)) is split into two
//      products added in streaming order. Same coefficient table; fp32 rounding differences only.
// Bytes per point: ~16 B plus 4*8/tile.z for the chunk overlap; halo reads hit L2.
// Boundaries: as streaming.cu: columns read only where (j, k) < hi + 4, halo strips only where
// readable, outputs written only for (j, k) < hi and o in [i_begin, i_end); planes streamed stay in
// [lo.i-4, hi.i+4).
// Limits: TX, TY >= 4, compile-time per tunable; tile.z (chunk) any value >= 1.
#include <string>

#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/thread_point.cuh"
#include "kernels/cuda/tti_stage.cuh"
#include "physics/error.hpp"
#include "physics/stencil.hpp"

namespace minimod::kernels::cuda {
namespace {

constexpr int R = physics::kRadius;

template <int TX, int TY>
__global__ void __launch_bounds__(TX* TY) swic_iso(IsoStepArgs a, int chunk) {
  static_assert(TX >= R && TY >= R, "halo loading needs at least R threads per axis");
  constexpr int SX = TX + 2 * R, SY = TY + 2 * R;
  __shared__ float s[SY][SX];

  const int tx = threadIdx.x, ty = threadIdx.y;
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
  const float* pu = a.u.origin + o0;                  // u(p, j, k)
  float* pn = a.u_next.origin + o0 - R * sx;          // u_next(p-4, j, k): the output of plane p
  const float* pv = a.v2dt2.origin + o0 - R * sx;

  // Loads for plane p (given pu at plane p): own point, halo strips (star planes only), and
  // u_prev/v2dt2 of output p-4 (when it is one of ours).
  float nc, nkl = 0, nkh = 0, njl = 0, njh = 0, nup = 0, nvv = 0;
  const auto fetch = [&](int p, const float* src, const float* srcn, const float* srcv) {
    nc = has_u ? __ldg(src) : 0.0f;
    if (p >= i_begin && p < i_end) {
      nkl = klo ? __ldg(src - R) : 0.0f;
      nkh = khi ? __ldg(src + R) : 0.0f;
      njl = jlo ? __ldg(src - sy4) : 0.0f;
      njh = jhi ? __ldg(src + sy4) : 0.0f;
    }
    if (writes && p - R >= i_begin) {
      nup = *srcn;
      nvv = __ldg(srcv);
    }
  };
  fetch(p_first, pu, pn, pv);

  float A[2 * R + 1] = {};  // A[R + d] = partial Laplacian of output p + d
  float h[R] = {};          // h[m-1] = u(p-m)

  for (int p = p_first; p < p_last; ++p) {
    const float c = nc, hkl = nkl, hkh = nkh, hjl = njl, hjh = njh, up = nup, vv = nvv;
    if (p + 1 < p_last) fetch(p + 1, pu + sx, pn + sx, pv + sx);  // prefetch (uniform branch)

    // In-plane star of plane p -> output p (only if p is one of this chunk's outputs; the
    // condition is block-uniform, so the barriers inside are safe).
    float star = 0.0f;
    if (p >= i_begin && p < i_end) {
      __syncthreads();  // everyone is done reading the previous plane
      s[ty + R][tx + R] = c;
      if (klo) s[ty + R][tx] = hkl;
      if (khi) s[ty + R][tx + 2 * R] = hkh;
      if (jlo) s[ty][tx + R] = hjl;
      if (jhi) s[ty + 2 * R][tx + R] = hjh;
      __syncthreads();
      const auto at = [c, tx, ty](int di, int dj, int dk) {
        if (di != 0) return 0.0f;  // x-direction terms are scattered below
        return (dj == 0 && dk == 0) ? c : s[ty + R + dj][tx + R + dk];
      };
      star = physics::laplacian8(at, a.laplacian);
    }
    A[R] += star;
    // Scatter the x-direction weight of u(p) to outputs p-m and p+m.
#pragma unroll
    for (int m = 1; m <= R; ++m) {
      const float w = a.laplacian.cx[m - 1] * c;
      A[R - m] += w;
      A[R + m] += w;
    }
    // Output p-4 is complete.
    if (writes && p - R >= i_begin) *pn = physics::leapfrog(up, h[R - 1], vv, A[0]);
#pragma unroll
    for (int d = 0; d < 2 * R; ++d) A[d] = A[d + 1];
    A[2 * R] = 0.0f;
#pragma unroll
    for (int m = R - 1; m > 0; --m) h[m] = h[m - 1];
    h[0] = c;
    pu += sx;
    pn += sx;
    pv += sx;
  }
}

struct Variant {
  int x, y;
  void (*kernel)(IsoStepArgs, int);
};

template <int TX, int TY>
constexpr Variant variant() {
  return {TX, TY, &swic_iso<TX, TY>};
}

const Variant kVariants[] = {variant<32, 8>(), variant<32, 16>(), variant<64, 8>(),
                             variant<32, 4>()};

const Variant& find(const Tile& t) { return find_chunked_variant(kVariants, t, "swic"); }

void launch(const IsoStepArgs& a, const Tile& t, cudaStream_t s) {
  const Variant& v = find(t);
  if (a.region.empty()) return;
  if (!shares_layout(a))
    throw Error("swic: u, u_next and v2dt2 must share one layout");
  const dim3 block(t.x, t.y, 1);
  const dim3 grid(ceil_div(a.region.n.k, t.x), ceil_div(a.region.n.j, t.y),
                  ceil_div(a.region.n.i, t.z));
  v.kernel<<<grid, block, 0, s>>>(a, t.z);
}

cudaFuncAttributes attributes(const Tile& t) {
  cudaFuncAttributes attr{};
  cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(find(t).kernel));
  return attr;
}

// --- acoustic_tti -------------------------------------------------------------------------------
// SWiC for the 73-point TTI operator. Every stencil pair of an output o couples o with a point in
// plane o + di, |di| <= 4, and every neighbour in another plane lies on the cross (j +- m, k),
// (j, k +- m) or at (j, k) of that plane. So one plane in shared memory serves nine outputs:
//  * the block streams planes c = i_begin-4 .. i_end+3 through a double-buffered plane tile
//    (TX+8)(TY+8) of staged 24-B points (kernels/cuda/tti_stage.cuh), plane c+1 copied in with
//    cp.async while plane c is used: 2 x 15 KB for 32x8, so several blocks share an SM;
//  * each thread keeps its column's outputs o = c-4 .. c+4 in registers: the output's own values
//    W (p + q, p and the pair sums of C_perp and C_axis for the xx, xy, xz components, loaded
//    from global memory one plane ahead of use) and its two partial sums A (C_perp, C_axis);
//  * plane c adds to output c its in-plane pairs (y, z lines, yz diagonals: 32 neighbours), to
//    outputs c -+ m its xy and xz diagonal pairs with (c, j +- m, k), (c, j, k +- m) and its x-line
//    pair with (c, j, k): 33 shared points per plane, each read once and used up to three times;
//  * output c-4 is then complete and written; the queue shifts (register moves).
// The pair terms and weights are physics::tti_rhs73's; only the summation order differs (pairs
// are added plane by plane), so results differ from the CPU reference by fp32 rounding.

struct TtiOwn {
  float s, p, cp[3], inv_a;  // p + q, p, C_perp pair sums for xx, xy, xz, 1 / a
  /// C_axis pair sum of component u (xx, xy, xz): n n^T / a = (2 delta_u - cp) / a.
  __device__ __forceinline__ float ca(int u) const { return ((u == 0 ? 2.0f : 0.0f) - cp[u]) * inv_a; }
};
struct TtiAcc {
  float perp, axis;
};
struct TtiNeighbour {
  float s, p;
  physics::TtiMediumPoint m;
};

__device__ __forceinline__ TtiNeighbour neighbour(const TtiStage& st, int e) {
  const float2 f = st.field[e];
  const float4 m = st.medium[e];
  return {f.x + f.y, f.x, {m.x, m.y, m.z, m.w}};
}

/// One pair of direction t between an output (its s, p and pair sums cp, ca for t) and
/// neighbour n, added with sign sg (+-1, compile-time) to a group sum that is weighted once.
__device__ __forceinline__ void add_pair(TtiAcc& acc, float s0, float p0, float cp, float ca, int t,
                                         const TtiNeighbour& n, float sg) {
  const float nn = physics::nn_component(n.m, t);
  acc.perp = fmaf(sg * (cp - nn), n.s - s0, acc.perp);
  acc.axis = fmaf(sg * fmaf(nn, n.m.inv_a, ca), n.p - p0, acc.axis);
}
__device__ __forceinline__ void add_pair(TtiAcc& acc, const TtiOwn& o, int u, float ca, int t,
                                         const TtiNeighbour& n, float sg) {
  add_pair(acc, o.s, o.p, o.cp[u], ca, t, n, sg);
}
/// acc += w * group.
__device__ __forceinline__ void add_group(TtiAcc& acc, float w, const TtiAcc& group) {
  acc.perp = fmaf(w, group.perp, acc.perp);
  acc.axis = fmaf(w, group.axis, acc.axis);
}

__device__ __forceinline__ TtiOwn own_point(const physics::TtiMediumPoint& m, float p, float q) {
  TtiOwn w;
  w.s = p + q;
  w.p = p;
  const int comps[3] = {physics::kXX, physics::kXY, physics::kXZ};
#pragma unroll
  for (int u = 0; u < 3; ++u) w.cp[u] = (u == 0 ? 2.0f : 0.0f) - physics::nn_component(m, comps[u]);
  w.inv_a = m.inv_a;
  return w;
}

template <int TX, int TY>
struct TtiPlane {
  static constexpr int SX = TX + 2 * R, SY = TY + 2 * R, kPoints = SX * SY;
  static constexpr int kBytes = 2 * kPoints * kTtiStagedBytes;
};

/// Blocks per SM the register budget is set for: 128-thread tiles keep their ~180 registers at 3
/// blocks, 256-thread tiles spill a little at 128.
template <int TX, int TY>
constexpr int kTtiMinBlocks = TX == 16 ? 4 : (TX * TY <= 128 ? 3 : 2);

template <int TX, int TY>
__global__ void __launch_bounds__(TX* TY, kTtiMinBlocks<TX, TY>) swic_tti(TtiStepArgs g, physics::Box3 region,
                                                                          int chunk) {
  using G = TtiPlane<TX, TY>;
  constexpr int SX = G::SX;
  extern __shared__ __align__(16) unsigned char swic_tti_raw[];
  const TtiStage st = TtiStage::carve(swic_tti_raw, 2 * G::kPoints);
  const physics::Index3 hi = region.hi();
  const StreamBlock blk = stream_block(region, TX, TY, chunk);
  const int k0 = blk.k0, j0 = blk.j0, i_begin = blk.i_begin, i_end = blk.i_end;
  const int t = threadIdx.x + TX * threadIdx.y;
  const int j = j0 + static_cast<int>(threadIdx.y), k = k0 + static_cast<int>(threadIdx.x);
  const bool writes = j < hi.j && k < hi.k;
  const auto stage_plane = [&](int c) {
    const int slot = (c - i_begin + R) & 1;
    for (int e = t; e < G::kPoints; e += TX * TY) {
      const int jj = j0 - R + e / SX, kk = k0 - R + e % SX;
      if (jj < hi.j + R && kk < hi.k + R) stage_tti_point_async(g, g.p.offset(c, jj, kk), st, slot * G::kPoints + e);
    }
    __pipeline_commit();
  };
  // The column's own values of output o (zero outside the chunk: those outputs are not written).
  struct Raw {
    float nx, ny, nz, inv_a, p, q;
  };
  const auto load_own = [&](int o) {
    Raw r{0, 0, 0, 1, 0, 0};
    if (writes && o >= i_begin && o < i_end) {
      const std::int64_t off = g.p.offset(o, j, k);
      r = {__ldg(g.nx.origin + off), __ldg(g.ny.origin + off), __ldg(g.nz.origin + off),
           __ldg(g.inv_a.origin + off), __ldg(g.p.origin + off), __ldg(g.q.origin + off)};
    }
    return r;
  };
  TtiOwn W[2 * R + 1];
  TtiAcc A[2 * R + 1];
#pragma unroll
  for (int d = 0; d <= 2 * R; ++d) {
    W[d] = own_point({0, 0, 0, 1}, 0, 0);
    A[d] = {0, 0};
  }
  const physics::TtiStencil& sw = g.stencil;
  const int e = (threadIdx.y + R) * SX + threadIdx.x + R;
  Raw next = load_own(i_begin - R + R);  // own values of output c + 4 for the first plane c
  stage_plane(i_begin - R);
  for (int c = i_begin - R; c < i_end + R; ++c) {
    {
      const physics::TtiMediumPoint m{next.nx, next.ny, next.nz, next.inv_a};
      W[2 * R] = own_point(m, next.p, next.q);
    }
    next = load_own(c + R + 1);
    // What the update of output c - 4 reads besides its sums, loaded now so that the loads
    // travel while this plane is computed.
    const int o = c - R;
    const bool out = writes && o >= i_begin && o < i_end;
    const std::int64_t off = g.p.offset(o, j, k);
    float v2 = 0, bo = 0, inv_a = 1, p_now = 0, q_now = 0, p_old = 0, q_old = 0;
    if (out) {
      v2 = __ldg(g.v2dt2.origin + off);
      bo = __ldg(g.b.origin + off);
      inv_a = __ldg(g.inv_a.origin + off);
      p_now = __ldg(g.p.origin + off);
      q_now = __ldg(g.q.origin + off);
      p_old = g.p_next.origin[off];
      q_old = g.q_next.origin[off];
    }
    __pipeline_wait_prior(0);
    __syncthreads();  // plane c has landed; everyone is done with plane c - 1
    if (c + 1 < i_end + R) stage_plane(c + 1);
    const TtiStage plane{st.medium + ((c - i_begin + R) & 1) * G::kPoints,
                         st.field + ((c - i_begin + R) & 1) * G::kPoints};
    const TtiNeighbour ctr = neighbour(plane, e);
    float cp_in[3], ca_in[3];  // the centre's pair sums for yy, zz, yz
    {
      const int comps[3] = {physics::kYY, physics::kZZ, physics::kYZ};
#pragma unroll
      for (int u = 0; u < 3; ++u) {
        const float nn = physics::nn_component(ctr.m, comps[u]);
        cp_in[u] = (u < 2 ? 2.0f : 0.0f) - nn;
        ca_in[u] = nn * ctr.m.inv_a;
      }
    }
#pragma unroll
    for (int m = 1; m <= R; ++m) {
      const float wx = sw.c[0][m - 1], wy = sw.c[1][m - 1], wz = sw.c[2][m - 1];
      const float wxy = 2.0f * sw.cxy[m - 1], wxz = 2.0f * sw.cxz[m - 1], wyz = 2.0f * sw.cyz[m - 1];
      const TtiNeighbour jp = neighbour(plane, e + m * SX), jm = neighbour(plane, e - m * SX);
      const TtiNeighbour kp = neighbour(plane, e + m), km = neighbour(plane, e - m);
      TtiAcc& in = A[R];
      TtiAcc g{0, 0};
      add_pair(g, ctr.s, ctr.p, cp_in[0], ca_in[0], physics::kYY, jp, 1.0f);
      add_pair(g, ctr.s, ctr.p, cp_in[0], ca_in[0], physics::kYY, jm, 1.0f);
      add_group(in, wy, g);
      g = {0, 0};
      add_pair(g, ctr.s, ctr.p, cp_in[1], ca_in[1], physics::kZZ, kp, 1.0f);
      add_pair(g, ctr.s, ctr.p, cp_in[1], ca_in[1], physics::kZZ, km, 1.0f);
      add_group(in, wz, g);
      g = {0, 0};
      add_pair(g, ctr.s, ctr.p, cp_in[2], ca_in[2], physics::kYZ, neighbour(plane, e + m * SX + m), 1.0f);
      add_pair(g, ctr.s, ctr.p, cp_in[2], ca_in[2], physics::kYZ, neighbour(plane, e - m * SX - m), 1.0f);
      add_pair(g, ctr.s, ctr.p, cp_in[2], ca_in[2], physics::kYZ, neighbour(plane, e + m * SX - m), -1.0f);
      add_pair(g, ctr.s, ctr.p, cp_in[2], ca_in[2], physics::kYZ, neighbour(plane, e - m * SX + m), -1.0f);
      add_group(in, wyz, g);
      // Output c - m sees plane c at di = +m; output c + m at di = -m.
      TtiAcc& back = A[R - m];
      const TtiOwn& wb = W[R - m];
      g = {0, 0};
      add_pair(g, wb, 0, wb.ca(0), physics::kXX, ctr, 1.0f);
      add_group(back, wx, g);
      g = {0, 0};
      const float cab = wb.ca(1);
      add_pair(g, wb, 1, cab, physics::kXY, jp, 1.0f);
      add_pair(g, wb, 1, cab, physics::kXY, jm, -1.0f);
      add_group(back, wxy, g);
      g = {0, 0};
      const float cab2 = wb.ca(2);
      add_pair(g, wb, 2, cab2, physics::kXZ, kp, 1.0f);
      add_pair(g, wb, 2, cab2, physics::kXZ, km, -1.0f);
      add_group(back, wxz, g);
      TtiAcc& fwd = A[R + m];
      const TtiOwn& wf = W[R + m];
      g = {0, 0};
      add_pair(g, wf, 0, wf.ca(0), physics::kXX, ctr, 1.0f);
      add_group(fwd, wx, g);
      g = {0, 0};
      const float caf = wf.ca(1);
      add_pair(g, wf, 1, caf, physics::kXY, jp, -1.0f);
      add_pair(g, wf, 1, caf, physics::kXY, jm, 1.0f);
      add_group(fwd, wxy, g);
      g = {0, 0};
      const float caf2 = wf.ca(2);
      add_pair(g, wf, 2, caf2, physics::kXZ, kp, -1.0f);
      add_pair(g, wf, 2, caf2, physics::kXZ, km, 1.0f);
      add_group(fwd, wxz, g);
    }
    if (out) {  // output c - 4 is complete
      const float perp = 0.5f * A[0].perp, axis = 0.5f * A[0].axis;
      const physics::TtiRhs r{(1.0f / inv_a) * (perp + axis), bo * perp};
      if (g.inner.contains(o, j, k)) {
        g.p_next.origin[off] = physics::leapfrog(p_old, p_now, v2, r.p);
        g.q_next.origin[off] = physics::leapfrog(q_old, q_now, v2, r.q);
      } else {
        tti_update_from_rhs(g, o, j, k, off, r);
      }
    }
#pragma unroll
    for (int d = 0; d < 2 * R; ++d) {
      W[d] = W[d + 1];
      A[d] = A[d + 1];
    }
    A[2 * R] = {0, 0};
  }
  __pipeline_wait_prior(0);  // no copy may outlive the block
}

struct TtiVariant {
  int x, y;
  const void* kernel;
  void (*launch)(const TtiStepArgs&, const physics::Box3&, int, cudaStream_t);
};

template <int TX, int TY>
void launch_tti_variant(const TtiStepArgs& g, const physics::Box3& region, int chunk, cudaStream_t s) {
  constexpr int bytes = TtiPlane<TX, TY>::kBytes;
  ensure_smem_limit<&swic_tti<TX, TY>>(bytes);
  const dim3 grid(ceil_div(region.n.k, TX), ceil_div(region.n.j, TY), ceil_div(region.n.i, chunk));
  swic_tti<TX, TY><<<grid, dim3(TX, TY, 1), bytes, s>>>(g, region, chunk);
}

template <int TX, int TY>
constexpr TtiVariant tti_variant() {
  return {TX, TY, reinterpret_cast<const void*>(&swic_tti<TX, TY>), &launch_tti_variant<TX, TY>};
}

const TtiVariant kTtiVariants[] = {tti_variant<32, 8>(), tti_variant<32, 4>(), tti_variant<64, 4>(),
                                   tti_variant<16, 8>()};

const TtiVariant& find_tti(const Tile& t) {
  return find_chunked_variant(kTtiVariants, t, "swic (acoustic_tti)");
}

void launch_tti(const TtiStepArgs& g, const physics::Box3& region, const Tile& t, cudaStream_t s) {
  const TtiVariant& v = find_tti(t);
  if (!region.empty()) v.launch(g, region, t.z, s);
}

cudaFuncAttributes tti_attributes(const Tile& t) {
  cudaFuncAttributes attr{};
  cudaFuncGetAttributes(&attr, find_tti(t).kernel);
  return attr;
}

int tti_dynamic_smem(const Tile& t) { return 2 * (t.x + 2 * R) * (t.y + 2 * R) * kTtiStagedBytes; }

KernelFamily family() {
  KernelFamily f;
  f.name = "swic";
  f.propagators = {PropagatorKind::acoustic_iso, PropagatorKind::acoustic_tti};
  f.tunables = {{32, 8, 64}, {32, 16, 64}, {64, 8, 64}, {32, 4, 128}};
  f.launch = &launch;
  f.description = "2.5D SWiC: current (k,j) plane in smem, output register queue of 9 partial sums";
  f.attributes = &attributes;  // no dynamic shared memory for acoustic_iso
  f.launch_tti = &launch_tti;
  f.tti_tunables = {{32, 8, 64}, {32, 4, 64}, {64, 4, 64}, {16, 8, 64}, {32, 8, 128}};
  f.tti_attributes = &tti_attributes;
  f.tti_dynamic_smem = &tti_dynamic_smem;
  return f;
}

const bool kRegistered = register_family(family());

}  // namespace
}  // namespace minimod::kernels::cuda
