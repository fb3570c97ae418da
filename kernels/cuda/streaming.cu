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
//
// acoustic_tti on VTI models only (TtiStepArgs::vti: the axis vertical over the whole model; the
// launch refuses others, so `kernel: auto` skips it there): the VTI form physics::vti_rhs25 by the
// same streaming. It reads s = p + q along the x and y lines and p and 1/a along the z line, so
// each thread keeps s(i-4 .. i+4) of its column in a register queue, and the current plane holds
// s with its j halo and p and 1/a with their k halo in shared memory (no corner or cross halo).
// Everything plane i reads at the thread's column (the queue's head, p and 1/a, the halo it stages,
// q, b, v2dt2 and the previous p and q) is loaded while plane i - 1 is computed (VtiPlaneLoads), so
// a warp waits on one plane's memory at most once; inside g.inner the leapfrog uses those values,
// in the layer tti_update_from_rhs (sponge or CPML) reads what it needs. __launch_bounds__ asks for
// 1024 threads per SM (64 registers): H200, 1000^3, sponge 53.1 GPts/s vs 40.3 loading in place
// (bench/results/2026-11-28-session26-tti-vti-ahead.md).
#include <string>

#include "kernels/cuda/column_queue.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/tti_cpml.hpp"
#include "kernels/tti_point.hpp"
#include "physics/error.hpp"
#include "physics/stencil.hpp"
#include "physics/tti.hpp"

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

// What plane i of streaming_vti reads at the thread's column, loaded while plane i - 1 is computed.
struct VtiPlaneLoads {
  float s_head;                                // s(i + 4): the queue's new head
  float p, inv_a;                              // the plane's p and 1/a at (j, k)
  float s_lo, s_hi, p_lo, a_lo, p_hi, a_hi;    // the halo this thread stages (zero where it stages none)
  float q, b, v2dt2, p_prev, q_prev;           // the point update's own reads (zero where it writes none)
};

struct VtiColumn {
  bool writes, has_col, jlo, jhi, klo, khi;
  std::int64_t sx, sy4;
  /// s = p + q at offset `at`.
  static __device__ MM_FORCE_INLINE float s_at(const TtiStepArgs& g, std::int64_t at) {
    return __ldg(g.p.origin + at) + __ldg(g.q.origin + at);
  }
  __device__ MM_FORCE_INLINE VtiPlaneLoads load(const TtiStepArgs& g, std::int64_t o) const {
    VtiPlaneLoads l{};
    if (has_col) {
      l.s_head = s_at(g, o + R * sx);
      l.p = __ldg(g.p.origin + o);
      l.inv_a = __ldg(g.inv_a.origin + o);
    }
    if (jlo) l.s_lo = s_at(g, o - sy4);
    if (jhi) l.s_hi = s_at(g, o + sy4);
    if (klo) {
      l.p_lo = __ldg(g.p.origin + o - R);
      l.a_lo = __ldg(g.inv_a.origin + o - R);
    }
    if (khi) {
      l.p_hi = __ldg(g.p.origin + o + R);
      l.a_hi = __ldg(g.inv_a.origin + o + R);
    }
    if (writes) {
      l.q = __ldg(g.q.origin + o);
      l.b = __ldg(g.b.origin + o);
      l.v2dt2 = __ldg(g.v2dt2.origin + o);
      l.p_prev = g.p_next.origin[o];
      l.q_prev = g.q_next.origin[o];
    }
    return l;
  }
};

/// The CPML layer's slab that a CPML launch of streaming_vti covers (its region a box of it): the
/// slab's box and first compact index (kernels/tti_cpml.hpp, LayerIndex).
struct CpmlSlab {
  TtiCpmlArgs c;
  physics::Box3 slab;
  std::int64_t start = 0;
};

// Cpml: the region lies in the CPML layer's slab `cpml`, and every point takes the CPML's pass 2
// (tti_cpml_layer_update) with the rows from the same staged plane; the register bound is loosened
// to 6 blocks of 128 threads (79 registers, ptxas sm_90; 52 B spilled at 64).
template <int TX, int TY, bool Cpml>
__global__ void __launch_bounds__(TX* TY, (Cpml ? 768 : 1024) / (TX * TY))
    streaming_vti(TtiStepArgs g, physics::Box3 region, int chunk, CpmlSlab cpml) {
  static_assert(TX >= R && TY >= R, "halo loading needs at least R threads per axis");
  __shared__ float ss[TY + 2 * R][TX];                  // s = p + q, j halo
  __shared__ float sp[TY][TX + 2 * R], sa[TY][TX + 2 * R];  // p and 1/a, k halo

  const int tx = threadIdx.x, ty = threadIdx.y;
  const physics::Index3 hi = region.hi();
  const int k = region.lo.k + static_cast<int>(blockIdx.x) * TX + tx;
  const int j = region.lo.j + static_cast<int>(blockIdx.y) * TY + ty;
  const int i_begin = region.lo.i + static_cast<int>(blockIdx.z) * chunk;
  const int i_end = min(i_begin + chunk, hi.i);

  const VtiColumn col{k < hi.k && j < hi.j,                  // owns outputs
                      k < hi.k + R && j < hi.j + R,          // its column is read by the block
                      ty < R && k < hi.k,                    // s(j-4, k)
                      ty >= TY - R && k < hi.k && j < hi.j,  // s(j+4, k)
                      tx < R && j < hi.j,                    // p, 1/a (j, k-4)
                      tx >= TX - R && k < hi.k && j < hi.j,  // p, 1/a (j, k+4)
                      g.p.sx, R * g.p.sy};                   // every array shares p's layout
  std::int64_t o = g.p.offset(i_begin, j, k);
  float q[2 * R + 1];  // s(i-4 .. i+4) of the column
  q[0] = 0.0f;
#pragma unroll
  for (int d = 0; d < 2 * R; ++d)
    q[d + 1] = col.has_col ? VtiColumn::s_at(g, o + (d - R) * col.sx) : 0.0f;
  VtiPlaneLoads next = col.load(g, o);

  for (int i = i_begin; i < i_end; ++i, o += col.sx) {
    const VtiPlaneLoads l = next;
    if (i + 1 < i_end) next = col.load(g, o + col.sx);  // block-uniform condition
#pragma unroll
    for (int d = 0; d < 2 * R; ++d) q[d] = q[d + 1];
    q[2 * R] = l.s_head;
    __syncthreads();  // everyone is done reading the previous plane
    ss[ty + R][tx] = q[R];
    sp[ty][tx + R] = l.p;
    sa[ty][tx + R] = l.inv_a;
    if (col.jlo) ss[ty][tx] = l.s_lo;
    if (col.jhi) ss[ty + 2 * R][tx] = l.s_hi;
    if (col.klo) {
      sp[ty][tx] = l.p_lo;
      sa[ty][tx] = l.a_lo;
    }
    if (col.khi) {
      sp[ty][tx + 2 * R] = l.p_hi;
      sa[ty][tx + 2 * R] = l.a_hi;
    }
    __syncthreads();
    if (!col.writes) continue;
    // vti_rhs25 reads s on the x line (the queue) and the y line, p and 1/a on the z line.
    const auto field = [&](int di, int dj, int dk) {
      if (dj == 0 && dk == 0) return physics::TtiFieldPoint{q[R + di], di == 0 ? l.p : 0.0f};
      if (dk == 0) return physics::TtiFieldPoint{ss[ty + R + dj][tx], 0.0f};
      return physics::TtiFieldPoint{0.0f, sp[ty][tx + R + dk]};
    };
    const auto medium = [&](int, int, int dk) { return physics::TtiMediumPoint{0.0f, 0.0f, 1.0f, sa[ty][tx + R + dk]}; };
    if constexpr (Cpml) {
      tti_cpml_layer_update<true>(g, cpml.c, cpml.slab, i, j, k, cpml.start + cpml.slab.position(i, j, k),
                                  physics::vti_rows25(field, medium, g.stencil));
      continue;
    }
    const physics::TtiRhs r = physics::vti_rhs25(field, medium, l.b, g.stencil);
    if (g.inner.contains(i, j, k)) {  // tti_leapfrog from the values loaded a plane early
      g.p_next.origin[o] = physics::leapfrog(l.p_prev, l.p, l.v2dt2, r.p);
      g.q_next.origin[o] = physics::leapfrog(l.q_prev, l.q, l.v2dt2, r.q);
    } else {
      tti_update_from_rhs(g, i, j, k, o, r);
    }
  }
}

struct Variant {
  int x, y;
  void (*kernel)(IsoStepArgs, int);
  void (*vti)(TtiStepArgs, physics::Box3, int, CpmlSlab);
  void (*vti_cpml)(TtiStepArgs, physics::Box3, int, CpmlSlab);
};

template <int TX, int TY>
constexpr Variant variant() {
  return {TX, TY, &streaming_iso<TX, TY>, &streaming_vti<TX, TY, false>, &streaming_vti<TX, TY, true>};
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

void launch_tti(const TtiStepArgs& g, const physics::Box3& region, const Tile& t, cudaStream_t s) {
  const Variant& v = find(t);
  if (!g.vti)
    throw Error("streaming runs acoustic_tti only where the model is VTI (theta = 0 everywhere); this model's "
                "axis is tilted: choose another execution.kernel");
  if (region.empty()) return;
  const dim3 grid(ceil_div(region.n.k, t.x), ceil_div(region.n.j, t.y), ceil_div(region.n.i, t.z));
  v.vti<<<grid, dim3(t.x, t.y, 1), 0, s>>>(g, region, t.z, CpmlSlab{});
}

void launch_tti_cpml_pass2(const TtiStepArgs& g, const TtiCpmlArgs& c, int slab, const physics::Box3& region,
                           const Tile& t, cudaStream_t s) {
  const Variant& v = find(t);
  if (region.empty()) return;
  const dim3 grid(ceil_div(region.n.k, t.x), ceil_div(region.n.j, t.y), ceil_div(region.n.i, t.z));
  v.vti_cpml<<<grid, dim3(t.x, t.y, 1), 0, s>>>(g, region, t.z, CpmlSlab{c, c.layer.slab(slab), c.layer.start[slab]});
}

cudaFuncAttributes tti_attributes(const Tile& t) {
  cudaFuncAttributes attr{};
  cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(find(t).vti));
  return attr;
}

KernelFamily family() {
  KernelFamily f;
  f.name = "streaming";
  f.propagators = {PropagatorKind::acoustic_iso, PropagatorKind::acoustic_tti};
  f.tunables = {{32, 8, 64}, {32, 16, 64}, {64, 8, 32}, {32, 4, 128}};
  f.launch = &launch;
  f.description = "2.5D: stream i in chunks of z planes, u(i-4..i+4) register queue, (k,j) plane in smem "
                  "(acoustic_tti: VTI models only)";
  f.attributes = &attributes;  // no dynamic shared memory
  f.launch_tti = &launch_tti;
  f.tti_tunables = {{32, 4, 128}, {32, 8, 64}, {32, 16, 64}, {64, 8, 32}};
  f.tti_attributes = &tti_attributes;
  f.launch_tti_cpml_pass2 = &launch_tti_cpml_pass2;
  f.tti_vti_only = true;
  return f;
}

const bool kRegistered = register_family(family());

}  // namespace
}  // namespace minimod::kernels::cuda
