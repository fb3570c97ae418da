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

const Variant& find(const Tile& t) {
  std::string valid;
  for (const auto& v : kVariants) {
    if (v.x == t.x && v.y == t.y && t.z >= 1) return v;
    valid += " " + std::to_string(v.x) + "x" + std::to_string(v.y) + "xN";
  }
  throw ConfigError("config error: execution.kernel: swic has no tile " + std::to_string(t.x) +
                    "x" + std::to_string(t.y) + "x" + std::to_string(t.z) + "; valid tiles:" +
                    valid + " (N = planes per chunk along i, >= 1)");
}

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

const bool kRegistered = register_family(
    {"swic",
     {PropagatorKind::acoustic_iso},
     {{32, 8, 64}, {32, 16, 64}, {64, 8, 64}, {32, 4, 128}},
     &launch,
     "2.5D SWiC: current (k,j) plane in smem, output register queue of 9 partial sums",
     &attributes,
     nullptr});  // no dynamic shared memory

}  // namespace
}  // namespace minimod::kernels::cuda
