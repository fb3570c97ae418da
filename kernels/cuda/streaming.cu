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
// With the CPML layer the same kernel also takes both of the layer's passes slab by slab
// (VtiPass, KernelFamily::launch_tti_cpml_psi and ::launch_tti_cpml_pass2) on the same staged
// lines, their own reads loaded a plane ahead too, in chunks of about 16 planes: H200, 1000^3,
// CPML 43.2 GPts/s vs 40.2 with the point kernels (bench/results/2026-11-29-session27-tti-vti-cpml.md).
// A k face thinner than the tile's TX takes a narrow block instead (8 x 16 or 16 x 8,
// kNarrowCpmlPasses), so that an 8-point layer's k faces do not leave 24 of 32 lanes idle.
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

// What the CPML's pass 2 (kernels/tti_cpml.hpp, tti_cpml_layer_update on a VTI model: the live
// rows only) reads at plane i of the thread's column besides the staged fields, loaded while plane
// i - 1 is computed: V_perp x along i (a register queue), V_perp y with its j halo and V_axis z
// with its k halo (staged like s and p), zeta of the live rows where their axis is damped, and
// axis x's profile at the plane. V is zero where nothing is stored (inner points, beyond the grid).
struct VtiCpmlLoads {
  float v_head;                        // V_perp x at (i + 4, j, k): the queue's new head
  float vy, vz;                        // V_perp y and V_axis z at (i, j, k)
  float vy_lo, vy_hi, vz_lo, vz_hi;    // the halo this thread stages
  float zeta_x, zeta_y, zeta_z;        // zeta_perp x, zeta_perp y, zeta_axis z (zero where not damped)
  float a_x, b_x, eta_x;               // axis x's CPML profile and the sponge's eta at plane i
};

struct VtiCpmlColumn {
  const VtiColumn& col;
  const CpmlSlab& cs;
  int j, k;
  bool damped_y, damped_z;  // b of axes y and z at (j, k) not zero: zeta of those rows is kept

  /// V field f, row e at the point m steps along axis A from (i, j, k), whose compact index is x
  /// where the thread writes (its point lies in the slab), else looked up.
  template <int A>
  __device__ MM_FORCE_INLINE float v_along(int f, int e, int i, std::int64_t x, int m) const {
    const std::int64_t y = col.writes ? cs.c.along<A>(cs.slab, i, j, k, x, m)
                                      : cs.c.index(i + (A == 0 ? m : 0), j + (A == 1 ? m : 0), k + (A == 2 ? m : 0));
    return y < 0 ? 0.0f : __ldg(&cs.c.at(f, e, y));
  }
  /// The loads of plane i, whose compact index at the thread's point is x (where it writes).
  __device__ MM_FORCE_INLINE VtiCpmlLoads load(const TtiStepArgs& g, int i, std::int64_t x) const {
    VtiCpmlLoads l{};
    if (col.writes) {
      l.v_head = v_along<0>(kVPerp, 0, i, x, R);
      l.vy = __ldg(&cs.c.at(kVPerp, 1, x));
      l.vz = __ldg(&cs.c.at(kVAxis, 2, x));
      l.a_x = __ldg(cs.c.a[0] + i);
      l.b_x = __ldg(cs.c.b[0] + i);
      l.eta_x = __ldg(g.eta[0] + i + 1);
      if (l.b_x != 0.0f) l.zeta_x = cs.c.at(kZetaPerp, 0, x);
      if (damped_y) l.zeta_y = cs.c.at(kZetaPerp, 1, x);
      if (damped_z) l.zeta_z = cs.c.at(kZetaAxis, 2, x);
    } else if (col.has_col) {  // beyond the region: the halo of the threads that write
      l.vy = v_along<1>(kVPerp, 1, i, x, 0);
      l.vz = v_along<2>(kVAxis, 2, i, x, 0);
    }
    if (col.jlo) l.vy_lo = v_along<1>(kVPerp, 1, i, x, -R);
    if (col.jhi) l.vy_hi = v_along<1>(kVPerp, 1, i, x, R);
    if (col.klo) l.vz_lo = v_along<2>(kVAxis, 2, i, x, -R);
    if (col.khi) l.vz_hi = v_along<2>(kVAxis, 2, i, x, R);
    return l;
  }
};

// What the CPML's pass 1 reads at plane i of the thread's column besides the staged fields, loaded
// while plane i - 1 is computed: psi of the live rows where their axis is damped (zero elsewhere)
// and axis x's profile at the plane.
struct VtiPsiLoads {
  float psi_x, psi_y, psi_z;  // psi_s x, psi_s y, psi_p z
  float a_x, b_x;
};

struct VtiPsiColumn {
  const VtiColumn& col;
  const CpmlSlab& cs;
  bool damped_y, damped_z;
  __device__ MM_FORCE_INLINE VtiPsiLoads load(int i, std::int64_t x) const {
    VtiPsiLoads l{};
    if (!col.writes) return l;
    l.a_x = __ldg(cs.c.a[0] + i);
    l.b_x = __ldg(cs.c.b[0] + i);
    if (l.b_x != 0.0f) l.psi_x = cs.c.at(kPsiS, 0, x);
    if (damped_y) l.psi_y = cs.c.at(kPsiS, 1, x);
    if (damped_z) l.psi_z = cs.c.at(kPsiP, 2, x);
    return l;
  }
};

/// What a launch of streaming_vti computes at the points of its region: the step's update (the
/// sponge's or the plain leapfrog), or, the region lying in the CPML layer's slab (CpmlSlab), the
/// CPML's pass 1 or pass 2 there (kernels/tti_cpml.hpp), on the same staged lines.
enum class VtiPass { step, cpml_psi, cpml_layer };

// cpml_psi: psi of the damped axes' live rows (psi_s x, y from s on the x and y lines, psi_p z
// from p on the z line) and V, as tti_cpml_psi_point<true>. cpml_layer: pass 2 with the rows from
// the staged plane (physics::vti_rows25) and the flux derivatives from V staged the same way
// (VtiCpmlLoads), as tti_cpml_layer_update<true>. The same formula functions (CudaTti.VtiModels...
// against the CPU). pass 2 takes 121 registers (0 spill; 296 B spilled at 80).
template <int TX, int TY, VtiPass Pass>
__global__ void __launch_bounds__(TX* TY, (Pass == VtiPass::cpml_layer ? 512 : 1024) / (TX * TY))
    streaming_vti(TtiStepArgs g, physics::Box3 region, int chunk, CpmlSlab cpml) {
  constexpr bool Cpml = Pass == VtiPass::cpml_layer, Psi = Pass == VtiPass::cpml_psi;
  static_assert(TX >= R && TY >= R, "halo loading needs at least R threads per axis");
  __shared__ float ss[TY + 2 * R][TX];                  // s = p + q, j halo
  __shared__ float sp[TY][TX + 2 * R], sa[TY][TX + 2 * R];  // p and 1/a, k halo
  constexpr int CY = Cpml ? TY + 2 * R : 1, CX = Cpml ? TX + 2 * R : 1;
  __shared__ float svy[CY][TX], svz[Cpml ? TY : 1][CX];  // Cpml: V_perp y, j halo; V_axis z, k halo

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

  // The CPML passes: the compact index x of the thread's point (where it writes), the profiles of
  // axes y and z at the column; pass 2: V_perp x (i-4 .. i+4) of the column in vq.
  const physics::Box3& slab = cpml.slab;
  const std::int64_t sx_layer = slab_stride<0>(slab);
  std::int64_t x = col.writes && Pass != VtiPass::step ? cpml.start + slab.position(i_begin, j, k) : -1;
  float vq[Cpml ? 2 * R + 1 : 1];
  float a_y = 0, b_y = 0, a_z = 0, b_z = 0, eta_y = 0, eta_z = 0;
  if (Pass != VtiPass::step && col.writes) {
    a_y = __ldg(cpml.c.a[1] + j), b_y = __ldg(cpml.c.b[1] + j);
    a_z = __ldg(cpml.c.a[2] + k), b_z = __ldg(cpml.c.b[2] + k);
  }
  VtiCpmlLoads vnext{};
  VtiPsiLoads pnext{};
  if constexpr (Psi) pnext = VtiPsiColumn{col, cpml, b_y != 0.0f, b_z != 0.0f}.load(i_begin, x);
  if constexpr (Cpml) {
    if (col.writes) eta_y = __ldg(g.eta[1] + j + 1), eta_z = __ldg(g.eta[2] + k + 1);
    const VtiCpmlColumn vcol{col, cpml, j, k, b_y != 0.0f, b_z != 0.0f};
    vq[0] = 0.0f;
#pragma unroll
    for (int d = 0; d < 2 * R; ++d) vq[d + 1] = col.writes ? vcol.v_along<0>(kVPerp, 0, i_begin, x, d - R) : 0.0f;
    vnext = vcol.load(g, i_begin, x);
  }

  for (int i = i_begin; i < i_end; ++i, o += col.sx, x += sx_layer) {
    const VtiPlaneLoads l = next;
    if (i + 1 < i_end) next = col.load(g, o + col.sx);  // block-uniform condition
#pragma unroll
    for (int d = 0; d < 2 * R; ++d) q[d] = q[d + 1];
    q[2 * R] = l.s_head;
    VtiCpmlLoads v{};
    VtiPsiLoads ps{};
    if constexpr (Psi) {
      ps = pnext;
      if (i + 1 < i_end) pnext = VtiPsiColumn{col, cpml, b_y != 0.0f, b_z != 0.0f}.load(i + 1, x + sx_layer);
    }
    if constexpr (Cpml) {
      v = vnext;
      if (i + 1 < i_end) vnext = VtiCpmlColumn{col, cpml, j, k, b_y != 0.0f, b_z != 0.0f}.load(g, i + 1, x + sx_layer);
#pragma unroll
      for (int d = 0; d < 2 * R; ++d) vq[d] = vq[d + 1];
      vq[2 * R] = v.v_head;
    }
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
    if constexpr (Cpml) {
      svy[ty + R][tx] = v.vy;
      svz[ty][tx + R] = v.vz;
      if (col.jlo) svy[ty][tx] = v.vy_lo;
      if (col.jhi) svy[ty + 2 * R][tx] = v.vy_hi;
      if (col.klo) svz[ty][tx] = v.vz_lo;
      if (col.khi) svz[ty][tx + 2 * R] = v.vz_hi;
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
    if constexpr (Psi) {
      // tti_cpml_psi_point<true>: psi of the live rows where their axis is damped, then V.
      // tti_cpml_psi_axis<E, true> updates and stores the live rows' psi (s on x and y, p on z).
      float psi_s[3] = {ps.psi_x, ps.psi_y, 0.0f}, psi_p[3] = {0.0f, 0.0f, ps.psi_z};
      if (ps.b_x != 0.0f)
        tti_cpml_psi_axis<0, true>(cpml.c, x, ps.a_x, ps.b_x, [&](int di, int, int) {
          return physics::TtiFieldPoint{q[R + di], 0.0f}; }, psi_s[0], psi_p[0]);
      if (b_y != 0.0f)
        tti_cpml_psi_axis<1, true>(cpml.c, x, a_y, b_y, [&](int, int dj, int) {
          return physics::TtiFieldPoint{ss[ty + R + dj][tx], 0.0f}; }, psi_s[1], psi_p[1]);
      if (b_z != 0.0f)
        tti_cpml_psi_axis<2, true>(cpml.c, x, a_z, b_z, [&](int, int, int dk) {
          return physics::TtiFieldPoint{0.0f, sp[ty][tx + R + dk]}; }, psi_s[2], psi_p[2]);
      tti_cpml_fluxes<true>(cpml.c, x, physics::TtiMediumPoint{0.0f, 0.0f, 1.0f, l.inv_a}, psi_s, psi_p);
      continue;
    }
    if constexpr (Cpml) {
      // tti_cpml_layer_update's formulas: d_c V_c of the live rows, the stretched operators with
      // zeta (kept where the row's axis is damped), the update; from the values loaded ahead.
      const float dv_perp[3] = {pml::first_derivative8<0>([&](int di, int, int) { return vq[R + di]; }, cpml.c.d1),
                                pml::first_derivative8<1>([&](int, int dj, int) { return svy[ty + R + dj][tx]; }, cpml.c.d1),
                                0.0f};
      const float dv_axis[3] = {0.0f, 0.0f,
                                pml::first_derivative8<2>([&](int, int, int dk) { return svz[ty][tx + R + dk]; }, cpml.c.d1)};
      const float a[3] = {v.a_x, a_y, a_z}, b[3] = {v.b_x, b_y, b_z};
      float zeta_perp[3] = {v.zeta_x, v.zeta_y, 0.0f}, zeta_axis[3] = {0.0f, 0.0f, v.zeta_z};
      const TtiStretched op = tti_stretched_operators(physics::vti_rows25(field, medium, g.stencil), dv_perp, dv_axis,
                                                      a, b, zeta_perp, zeta_axis);
      if (v.b_x != 0.0f) cpml.c.at(kZetaPerp, 0, x) = zeta_perp[0];
      if (b_y != 0.0f) cpml.c.at(kZetaPerp, 1, x) = zeta_perp[1];
      if (b_z != 0.0f) cpml.c.at(kZetaAxis, 2, x) = zeta_axis[2];
      float p_next = l.p_prev, q_next = l.q_prev;
      tti_cpml_update(op, l.p, l.q, l.v2dt2, l.inv_a, l.b, v.eta_x + eta_y + eta_z, &p_next, &q_next);
      g.p_next.origin[o] = p_next;
      g.q_next.origin[o] = q_next;
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

using VtiKernel = void (*)(TtiStepArgs, physics::Box3, int, CpmlSlab);

/// The CPML's two passes on one (TX, TY).
struct CpmlPasses {
  int x, y;
  VtiKernel psi, layer;
};

template <int TX, int TY>
constexpr CpmlPasses cpml_passes() {
  return {TX, TY, &streaming_vti<TX, TY, VtiPass::cpml_psi>, &streaming_vti<TX, TY, VtiPass::cpml_layer>};
}

struct Variant {
  int x, y;
  void (*kernel)(IsoStepArgs, int);
  VtiKernel vti;
  CpmlPasses cpml;
};

template <int TX, int TY>
constexpr Variant variant() {
  return {TX, TY, &streaming_iso<TX, TY>, &streaming_vti<TX, TY, VtiPass::step>, cpml_passes<TX, TY>()};
}

const Variant kVariants[] = {variant<32, 8>(), variant<32, 16>(), variant<64, 8>(),
                             variant<32, 4>()};

// The CPML passes' narrow blocks for thin k faces (thin_k_width).
const CpmlPasses kNarrowCpmlPasses[] = {cpml_passes<8, 16>(), cpml_passes<16, 8>()};

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

/// A CPML pass over `region`, a box of the layer's slab `slab`: the tile's block, or on a k face
/// thinner than the tile one of kNarrowCpmlPasses (thin_k_width).
void launch_cpml_pass(VtiKernel CpmlPasses::*pass, const TtiStepArgs& g, const TtiCpmlArgs& c, int slab,
                      const physics::Box3& region, const Tile& t, cudaStream_t s) {
  if (region.empty()) return;
  CpmlPasses passes = find(t).cpml;
  for (const CpmlPasses& narrow : kNarrowCpmlPasses)
    if (narrow.x == thin_k_width(region.n.k, passes.x)) passes = narrow;
  // Chunks of about kCpmlChunk planes, as even as they come: a slab is thin along one axis, and
  // chunks of the inner box's length left too few blocks (320 on a j face at 512^3).
  constexpr int kCpmlChunk = 16;
  const int chunk = static_cast<int>(ceil_div(region.n.i, ceil_div(region.n.i, kCpmlChunk)));
  const dim3 grid(ceil_div(region.n.k, passes.x), ceil_div(region.n.j, passes.y), ceil_div(region.n.i, chunk));
  (passes.*pass)<<<grid, dim3(passes.x, passes.y, 1), 0, s>>>(g, region, chunk,
                                                             CpmlSlab{c, c.layer.slab(slab), c.layer.start[slab]});
}

void launch_tti_cpml_psi(const TtiStepArgs& g, const TtiCpmlArgs& c, int slab, const physics::Box3& region,
                         const Tile& t, cudaStream_t s) {
  launch_cpml_pass(&CpmlPasses::psi, g, c, slab, region, t, s);
}

void launch_tti_cpml_pass2(const TtiStepArgs& g, const TtiCpmlArgs& c, int slab, const physics::Box3& region,
                           const Tile& t, cudaStream_t s) {
  launch_cpml_pass(&CpmlPasses::layer, g, c, slab, region, t, s);
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
  f.launch_tti_cpml_psi = &launch_tti_cpml_psi;
  f.launch_tti_cpml_pass2 = &launch_tti_cpml_pass2;
  f.tti_vti_only = true;
  return f;
}

const bool kRegistered = register_family(family());

}  // namespace
}  // namespace minimod::kernels::cuda
