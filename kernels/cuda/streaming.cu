// streaming: 2.5D blocking with a register queue along the streaming axis (Micikevicius 2009;
// Sai et al. 2020 §III-C "st_reg_shft"/"st_reg_fixed"; notes/sai2020-digest.md §3.5-3.6;
// zhang-thesis-digest §8.2 "register queue + shared plane").
//
// Idea. A 2D block (TX, TY) covers a (k, j) tile; it walks along i (the slowest axis) through a
// chunk of `tile.z` planes [i_begin, i_end) of the region (grid.z = ceil(n.i / tile.z) chunks, so
// that a 1000^3 grid still gives tens of thousands of blocks for 132 SMs).
//  * Each thread keeps u(i-4 .. i+4, j, k) of its own column in a register queue q[9]; the queue
//    is shifted by one per plane (moves; all indices compile-time) and its head u(i+4) is
//    prefetched one plane ahead. The i-direction terms and the centre of the stencil read q.
//  * The current plane u(i, ., .) with its j/k halo of 4 lives in shared memory s[TY+8][TX+8]:
//    each thread stores its q[4]; threads with tx < 4 / tx >= TX-4 also load the k halo on their
//    side, threads with ty < 4 / ty >= TY-4 the j halo (edge corners are never needed). Those
//    halo values, u_prev and v2dt2 are prefetched into registers one plane ahead.
//  * Two barriers per plane (before overwriting the plane, after storing it).
//  * Each chunk re-reads 8 planes of u (4 below, 4 above): 8/tile.z extra u reads.
// Bytes per point: ~16 B (u once, u_prev, v2dt2, u_next) plus 4*8/tile.z for the chunk overlap;
// halo reads of neighbouring tiles are L2 hits.
// Boundaries: threads whose (j, k) lies in [lo, hi + 4) load their column (halo included);
// beyond that nothing is read and 0 is stored. Outputs are written only for (j, k) < hi and
// i in [i_begin, i_end). Prefetches for plane i+1 are issued only if i+1 < i_end, so no read
// goes past hi.i + 3.
// Nothing is reordered: laplacian8 is evaluated through an accessor (x offsets -> queue,
// j/k offsets -> shared plane) exactly as in the CPU reference.
// Limits: TX, TY >= 4 (halo loading), compile-time per tunable; tile.z (chunk) any value >= 1.
#include <string>

#include "kernels/cuda/column_queue.hpp"
#include "kernels/cuda/registry.hpp"
#include "physics/error.hpp"
#include "physics/stencil.hpp"

namespace minimod::kernels::cuda {
namespace {

constexpr int R = physics::kRadius;

template <int TX, int TY>
__global__ void __launch_bounds__(TX* TY) streaming_iso(IsoStepArgs a, int chunk) {
  static_assert(TX >= R && TY >= R, "halo loading needs at least R threads per axis");
  constexpr int SX = TX + 2 * R, SY = TY + 2 * R;
  __shared__ float s[SY][SX];

  const int tx = threadIdx.x, ty = threadIdx.y;
  const physics::Index3 hi = a.region.hi();
  const int k = a.region.lo.k + static_cast<int>(blockIdx.x) * TX + tx;
  const int j = a.region.lo.j + static_cast<int>(blockIdx.y) * TY + ty;
  const int i_begin = a.region.lo.i + static_cast<int>(blockIdx.z) * chunk;
  const int i_end = min(i_begin + chunk, hi.i);

  const bool writes = k < hi.k && j < hi.j;               // owns outputs
  const bool has_u = k < hi.k + R && j < hi.j + R;        // its column is readable
  const bool klo = tx < R && j < hi.j + R;                // u(j, k-4)
  const bool khi = tx >= TX - R && k < hi.k && j < hi.j + R;  // u(j, k+4)
  const bool jlo = ty < R && k < hi.k + R;                // u(j-4, k)
  const bool jhi = ty >= TY - R && j < hi.j && k < hi.k + R;  // u(j+4, k)

  const std::int64_t sx = a.u.sx, sy4 = R * a.u.sy;
  const std::int64_t o = a.u.offset(i_begin, j, k);  // all views share one layout
  const float* pu = a.u.origin + o;                  // u(i, j, k) of the current plane
  float* pn = a.u_next.origin + o;
  const float* pv = a.v2dt2.origin + o;

  ColumnQueue col{has_u, klo, khi, jlo, jhi, sx, sy4};  // u(i-4 .. i+4) and the halo cells
  col.fill(pu);
  float nup = writes ? *pn : 0.0f, nvv = writes ? __ldg(pv) : 0.0f;

  for (int i = i_begin; i < i_end; ++i) {
    col.advance();
    const float up = nup, vv = nvv;
    if (i + 1 < i_end) {  // prefetch plane i+1 (block-uniform condition)
      col.prefetch(pu + sx);
      nup = writes ? pn[sx] : 0.0f;
      nvv = writes ? __ldg(pv + sx) : 0.0f;
    }
    __syncthreads();  // everyone is done reading the previous plane
    col.stage(&s[ty + R][tx + R], SX);  // (a cell without its column is never read)
    __syncthreads();
    if (writes) {
      const auto at = [&col, tx, ty](int di, int dj, int dk) {
        return (dj == 0 && dk == 0) ? col.q[R + di] : s[ty + R + dj][tx + R + dk];
      };
      *pn = physics::leapfrog(up, col.q[R], vv, physics::laplacian8(at, a.laplacian));
    }
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
  return {TX, TY, &streaming_iso<TX, TY>};
}

const Variant kVariants[] = {variant<32, 8>(), variant<32, 16>(), variant<64, 8>(),
                             variant<32, 4>()};

const Variant& find(const Tile& t) { return find_chunked_variant(kVariants, t, "streaming"); }

void launch(const IsoStepArgs& a, const Tile& t, cudaStream_t s) {
  const Variant& v = find(t);
  if (a.region.empty()) return;
  if (!shares_layout(a))
    throw Error("streaming: u, u_next and v2dt2 must share one layout");
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

KernelFamily family() {
  KernelFamily f;
  f.name = "streaming";
  f.propagators = {PropagatorKind::acoustic_iso};
  f.tunables = {{32, 8, 64}, {32, 16, 64}, {64, 8, 32}, {32, 4, 128}};
  f.launch = &launch;
  f.description = "2.5D: stream i in chunks of z planes, u(i-4..i+4) register queue, (k,j) plane in smem";
  f.attributes = &attributes;  // no dynamic shared memory
  return f;
}

const bool kRegistered = register_family(family());

}  // namespace
}  // namespace minimod::kernels::cuda
