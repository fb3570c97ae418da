// swic_split: SWiC for the 73-point acoustic-TTI operator in its split form (physics/tti.hpp,
// tti_rhs73_split), acoustic TTI only. A separate family from `swic` (whose TTI kernel evaluates
// the pair form); both equal the CPU reference on an H100 (2026-11-23), and at 1000^3 they run at
// the same speed (14.2 vs 14.0 GPts/s), so `auto` decides. This file also registers
// `swic_split_tma` (sm_90+): the same queue and sums with every global read a tensor copy (its
// section below), and its CPML launch: the same block body with the queue kept by the operator's
// rows (RowSums), which gives the TTI CPML's pass 2 the rows of the layer's points
// (KernelFamily::launch_tti_cpml_layer). Where the model's axis is the same at every point
// (TtiStepArgs::constant_axis) its inner launch takes the constant-axis form instead (AxisSums:
// s, p, p / a staged, three sums an output; physics::tti_rhs73_axis).
//
// The kernel: SWiC for the 73-point TTI operator in its split form (physics/tti.hpp,
// tti_rhs73_split): the pair form's per-neighbour products of the medium move to one product per
// staged point. Every stencil pair of an output o couples o with a point in plane o + di, |di| <=
// 4, and every neighbour in another plane lies on the cross (j +- m, k), (j, k +- m) or at (j, k)
// of that plane. So one plane in shared memory serves nine outputs:
//  * the block streams planes c = i_begin-4 .. i_end+3. When a plane is staged, each of its points
//    is stored as s = p + q, p and the products g_t = nn_t s, h_t = nn_t p / a of the directions
//    it serves: a j-line point (j +- m, k) is a yy neighbour of output c and an xy neighbour of
//    outputs c -+ m, a k-line point likewise zz and xz, a diagonal point yz, so a point holds
//    (s, p) 8 B, (g, h)_yy,xy 16 B, (g, h)_zz,xz 16 B, (g, h)_yz 8 B: 48 B, double-buffered
//    (2 x 30 KB for 32x8). The halo rows carry only what they serve (no zz/xz, no yy/xy for the
//    halo columns). The raw values of plane c + 2 are loaded into registers while plane c is used;
//  * each thread keeps its column's outputs o = c-4 .. c+4 in registers as eight partial sums:
//    D_t s and D_t p for t = xx, xy, xz (multiplied by the output's own medium at the end) and
//    the rest of 2 perp and 2 axis (the product sums, and the in-plane directions already
//    multiplied by the medium of the thread's own point, known when its plane is used);
//  * plane c adds to output c its 32 in-plane neighbours and to outputs c -+ m its x-line point
//    (j, k) (the thread's own staged point, kept in registers) and its xy, xz points, each pair of
//    points read once for both outputs; per neighbour one accumulation of each of s, p, g_t, h_t;
//  * output c - 4 is then complete: with its medium and the static centre weights kappa
//    (TtiStepArgs::kappa_perp/axis) physics::tti_split_rhs gives the right-hand sides; the
//    update is the inner leapfrog or the layer's damped branch (tti_update_from_rhs).
// Per output, shared memory: 640 B read (j and k lines 8 x 24 B each, diagonals 16 x 16 B) and
// ~100 B written; FP ~260 in the neighbour sums plus ~40 for the products of the staged points.
// Results differ from the CPU reference (the pair form) by fp32 rounding only
// (tests/kernels/tti_split_test.cpp; tests/gpu/tti_cuda_test.cpp).
//
// The block body (swic_split_block) is written against the execution model of block_model.cuh, so
// that tests/gpu/swic_split_emulation_test.cpp runs it on host threads (block_emulation.hpp,
// emulate_swic_split) against the CPU reference without a GPU: every tile equals it to fp32
// round-off. That checks the indexing, staging and barriers; the device code itself is checked by
// the gpu tests (tests/gpu/tti_cuda_test.cpp).
#include <type_traits>

#include "kernels/cuda/block_emulation.hpp"
#include "kernels/cuda/block_model.cuh"
#include "kernels/cuda/emulation.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/tensor_map.cuh"
#include "kernels/cuda/tti_stage.cuh"
#include "kernels/tti_cpml.hpp"
#include "physics/error.hpp"
#include "physics/stencil.hpp"
#include "physics/tti.hpp"

namespace minimod::kernels::cuda {
namespace {

constexpr int R = physics::kRadius;

/// One buffer of a staged plane (see above), structure of arrays over the plane's points.
struct SplitPlane {
  float4* yx;  // g_yy, h_yy, g_xy, h_xy
  float4* zx;  // g_zz, h_zz, g_xz, h_xz
  float2* sp;  // s, p
  float2* yz;  // g_yz, h_yz
  static constexpr int kBytes = 48;  // per point
  MM_HOST_DEVICE static SplitPlane carve(unsigned char* raw, int points) {
    return {reinterpret_cast<float4*>(raw), reinterpret_cast<float4*>(raw + 16 * points),
            reinterpret_cast<float2*>(raw + 32 * points), reinterpret_cast<float2*>(raw + 40 * points)};
  }
};

template <int TX, int TY>
struct TtiTile {
  static constexpr int SX = TX + 2 * R, SY = TY + 2 * R, kPoints = SX * SY, kThreads = TX * TY;
  template <class Plane = SplitPlane>
  static constexpr int kBytesOf = 2 * kPoints * Plane::kBytes;  // both buffers of planes of this kind
  // Staged points per thread besides its own: the halo rows (2R x TX, k inside the tile) and the
  // halo columns with the corners (SY x 2R).
  static constexpr int kRowPoints = 2 * R * TX, kColPoints = 2 * R * SY;
  static constexpr int kRowRounds = (kRowPoints + kThreads - 1) / kThreads;
  static constexpr int kColRounds = (kColPoints + kThreads - 1) / kThreads;
  /// A staged point's place in the plane: row (j) and column (k) from the plane's (j0 - R, k0 - R).
  struct Staged {
    int row, col;
    MM_HOST_DEVICE int slot() const { return row * SX + col; }
  };
  /// The r-th halo-row point (r < kRowPoints) and the r-th halo-column point (r < kColPoints).
  MM_HOST_DEVICE static Staged row_point(int r) {
    const int row = r / TX;
    return {row < R ? row : TY + row, R + r % TX};
  }
  MM_HOST_DEVICE static Staged col_point(int r) {
    const int col = r % (2 * R);
    return {r / (2 * R), col < R ? col : TX + col};
  }
};

/// A point's medium and fields as loaded from global memory (zero where nothing is read).
struct RawPoint {
  physics::TtiMediumPoint m;
  float p, q;
};
MM_HOST_DEVICE MM_FORCE_INLINE RawPoint load_raw(const TtiStepArgs& g, std::int64_t o, bool valid) {
  if (!valid) return {{0, 0, 0, 0}, 0, 0};
  return {{load(g.nx.origin + o), load(g.ny.origin + o), load(g.nz.origin + o),
           load(g.inv_a.origin + o)},
          load(g.p.origin + o),
          load(g.q.origin + o)};
}

/// The products of direction t of a staged point: (g_t, h_t).
MM_HOST_DEVICE MM_FORCE_INLINE float2 products(const RawPoint& r, float s, int t) {
  return make_float2(physics::perp_product(r.m, t, s), physics::axis_product(r.m, t, r.p));
}

/// What a thread keeps of its own staged point: the x-line neighbour of outputs c -+ m (s, p,
/// g_xx, h_xx) and the medium that weighs its in-plane derivatives.
struct OwnPoint {
  float s, p, gxx, hxx;
  physics::TtiMediumPoint m;
};

/// Stages a tile point (all directions) and returns what the thread keeps of it.
MM_HOST_DEVICE MM_FORCE_INLINE OwnPoint stage_own(const SplitPlane& pl, int e, const RawPoint& r) {
  const float s = r.p + r.q;
  const float2 yy = products(r, s, physics::kYY), xy = products(r, s, physics::kXY);
  const float2 zz = products(r, s, physics::kZZ), xz = products(r, s, physics::kXZ);
  pl.sp[e] = make_float2(s, r.p);
  pl.yx[e] = make_float4(yy.x, yy.y, xy.x, xy.y);
  pl.zx[e] = make_float4(zz.x, zz.y, xz.x, xz.y);
  pl.yz[e] = products(r, s, physics::kYZ);
  const float2 xx = products(r, s, physics::kXX);
  return {s, r.p, xx.x, xx.y, r.m};
}
/// A halo-row point: a j-line and diagonal neighbour only.
MM_HOST_DEVICE MM_FORCE_INLINE void stage_row(const SplitPlane& pl, int e, const RawPoint& r) {
  const float s = r.p + r.q;
  const float2 yy = products(r, s, physics::kYY), xy = products(r, s, physics::kXY);
  pl.sp[e] = make_float2(s, r.p);
  pl.yx[e] = make_float4(yy.x, yy.y, xy.x, xy.y);
  pl.yz[e] = products(r, s, physics::kYZ);
}
/// A halo-column point: a k-line and diagonal neighbour only.
MM_HOST_DEVICE MM_FORCE_INLINE void stage_col(const SplitPlane& pl, int e, const RawPoint& r) {
  const float s = r.p + r.q;
  const float2 zz = products(r, s, physics::kZZ), xz = products(r, s, physics::kXZ);
  pl.sp[e] = make_float2(s, r.p);
  pl.zx[e] = make_float4(zz.x, zz.y, xz.x, xz.y);
  pl.yz[e] = products(r, s, physics::kYZ);
}

// The constant-axis form (physics::tti_rhs73_axis; TtiStepArgs::constant_axis), swic_split_tma
// only: a staged point carries s, p and r = p / a, 12 B: (s, p) in one 64-bit vector and r in a
// plane of its own, so that a neighbour costs a warp 3 shared-memory wavefronts (a 64-bit load
// takes 2, a 32-bit one 1). As one 128-bit vector with the fourth lane unused it took 4: the
// kernel's shared-memory pipe was its limit, 78% busy (Nsight Compute, 512^3, H200, session 30).
// Clusters of two blocks along j sharing their halo boxes (TMA multicast: 22.5 B a point from L2
// instead of 30) were slower however the blocks waited for each other before a refill: 1000^3,
// 8-point sponge 38.6-39.9 GPts/s against 42.2 alone (session 33, bench/results/
// 2026-11-29-session33-tti-setup-and-clusters.md); removed.

/// One buffer of a staged plane of the constant-axis form: (s, p) and r per point.
struct AxisPlane {
  float2* sp;
  float* r;
  static constexpr int kBytes = 12;  // per point
  MM_HOST_DEVICE static AxisPlane carve(unsigned char* raw, int points) {
    return {reinterpret_cast<float2*>(raw), reinterpret_cast<float*>(raw + 8 * points)};
  }
};

/// A staged point of the constant-axis form; also what a thread keeps of its own staged point,
/// the x-line neighbour of outputs c -+ m.
struct AxisOwn {
  float s, p, r;
};
MM_HOST_DEVICE MM_FORCE_INLINE AxisOwn staged(const AxisPlane& pl, int e) {
  const float2 sp = pl.sp[e];
  return {sp.x, sp.y, pl.r[e]};
}

MM_HOST_DEVICE MM_FORCE_INLINE AxisOwn stage_own(const AxisPlane& pl, int e, const RawPoint& r) {
  const AxisOwn o{r.p + r.q, r.p, r.p * r.m.inv_a};
  pl.sp[e] = make_float2(o.s, o.p);
  pl.r[e] = o.r;
  return o;
}
MM_HOST_DEVICE MM_FORCE_INLINE void stage_row(const AxisPlane& pl, int e, const RawPoint& r) { stage_own(pl, e, r); }
MM_HOST_DEVICE MM_FORCE_INLINE void stage_col(const AxisPlane& pl, int e, const RawPoint& r) { stage_own(pl, e, r); }

/// An output's sums in the constant-axis form (physics::tti_axis_rhs): S of s, A of p, B of r.
struct AxisSums {
  float s, a, r;
};

/// The same sums kept apart by the operator's rows x, y, z, for the CPML's layer points
/// (physics::tti_axis_rows): each group's terms weighed by its share of a row (TtiStepArgs::
/// axis_row_weights) and added to its one or two rows. 9 floats an output where RowSums has 16.
struct AxisRowSums {
  float s[3], a[3], r[3];
};

/// An output's partial sums while its planes stream by: D_t s, D_t p for t = xx, xy, xz, and the
/// rest of 2 perp and 2 axis without the centre term (physics::tti_split_rhs adds it).
struct SplitSums {
  float perp2, axis2, sxx, sxy, sxz, pxx, pxy, pxz;
};

/// The same sums kept apart by the operator's rows, for the CPML's layer points (which filter each
/// row on its own: kernels/tti_cpml.hpp): D_t s, D_t p and the product sums (-D_t g_t, D_t h_t)
/// of t = xx, xy, xz each, and the in-plane groups' whole terms (yy, zz, yz, own medium included)
/// as their shares of rows y and z. 16 floats an output where SplitSums has 8.
struct RowSums {
  float sxx, sxy, sxz, pxx, pxy, pxz;
  float gxx, gxy, gxz, hxx, hxy, hxz;
  float perp_y, perp_z, axis_y, axis_z;
};

/// Group t's product terms wp * xp (of s, into 2 perp) and wa * xa (of p, into 2 axis).
template <int T>
MM_HOST_DEVICE MM_FORCE_INLINE void add_products(SplitSums& o, float wp, float xp, float wa, float xa) {
  o.perp2 = fmaf(wp, xp, o.perp2);
  o.axis2 = fmaf(wa, xa, o.axis2);
}
template <int T>
MM_HOST_DEVICE MM_FORCE_INLINE void add_products(RowSums& o, float wp, float xp, float wa, float xa) {
  if constexpr (T == physics::kXX || T == physics::kXY || T == physics::kXZ) {
    float& g = T == physics::kXX ? o.gxx : (T == physics::kXY ? o.gxy : o.gxz);
    float& h = T == physics::kXX ? o.hxx : (T == physics::kXY ? o.hxy : o.hxz);
    g = fmaf(wp, xp, g);
    h = fmaf(wa, xa, h);
  } else if constexpr (T == physics::kYY) {
    o.perp_y = fmaf(wp, xp, o.perp_y);
    o.axis_y = fmaf(wa, xa, o.axis_y);
  } else if constexpr (T == physics::kZZ) {
    o.perp_z = fmaf(wp, xp, o.perp_z);
    o.axis_z = fmaf(wa, xa, o.axis_z);
  } else {  // yz: half to row y, half to row z (physics::rows_of_groups)
    o.perp_y = fmaf(0.5f * wp, xp, o.perp_y);
    o.perp_z = fmaf(0.5f * wp, xp, o.perp_z);
    o.axis_y = fmaf(0.5f * wa, xa, o.axis_y);
    o.axis_z = fmaf(0.5f * wa, xa, o.axis_z);
  }
}

/// The in-plane groups' terms weighed by the output's own medium m: D_t s (ds_*) and D_t p (dp_*).
MM_HOST_DEVICE MM_FORCE_INLINE void add_in_plane_own(SplitSums& o, const physics::TtiMediumPoint& m, float ds_yy,
                                                     float ds_zz, float ds_yz, float dp_yy, float dp_zz,
                                                     float dp_yz) {
  using namespace physics;
  o.perp2 += perp_own(m, kYY) * ds_yy + perp_own(m, kZZ) * ds_zz + perp_own(m, kYZ) * ds_yz;
  o.axis2 += axis_own(m, kYY) * dp_yy + axis_own(m, kZZ) * dp_zz + axis_own(m, kYZ) * dp_yz;
}
MM_HOST_DEVICE MM_FORCE_INLINE void add_in_plane_own(RowSums& o, const physics::TtiMediumPoint& m, float ds_yy,
                                                     float ds_zz, float ds_yz, float dp_yy, float dp_zz,
                                                     float dp_yz) {
  using namespace physics;
  const float half_perp_yz = 0.5f * perp_own(m, kYZ) * ds_yz, half_axis_yz = 0.5f * axis_own(m, kYZ) * dp_yz;
  o.perp_y += perp_own(m, kYY) * ds_yy + half_perp_yz;
  o.perp_z += perp_own(m, kZZ) * ds_zz + half_perp_yz;
  o.axis_y += axis_own(m, kYY) * dp_yy + half_axis_yz;
  o.axis_z += axis_own(m, kZZ) * dp_zz + half_axis_yz;
}

/// The xy (or xz: group T) corners (+m, +-m), (-m, -+m) of plane c for outputs c - m (`back`) and
/// c + m (`fwd`), with opposite signs: their differences of s, p, g, h weighed by w into the sums
/// S, Pm (D s, D p of that direction) and the product sums.
template <int T, class Sums, float Sums::*S, float Sums::*Pm>
MM_HOST_DEVICE MM_FORCE_INLINE void add_corners(Sums& back, Sums& fwd, float w, float ds, float dp, float dg,
                                                float dh) {
  back.*S = fmaf(w, ds, back.*S);
  fwd.*S = fmaf(-w, ds, fwd.*S);
  back.*Pm = fmaf(w, dp, back.*Pm);
  fwd.*Pm = fmaf(-w, dp, fwd.*Pm);
  add_products<T>(back, -w, dg, w, dh);
  add_products<T>(fwd, w, dg, -w, dh);
}

/// Plane c's part of the queue Q (Q[R + d]: output c + d): to output c (when `in_plane`, block-
/// uniform) its y and z lines and yz diagonals, the in-plane derivatives weighed by the thread's
/// own medium; to outputs c -+ m its x-line point (the thread's own, `own`) and its xy, xz points.
template <int SX, class Sums>
MM_HOST_DEVICE MM_FORCE_INLINE void add_plane(const SplitPlane& pl, int e, const OwnPoint& own, bool in_plane,
                                              const physics::TtiWeights& w, Sums (&Q)[2 * R + 1]) {
  float dyy_s = 0, dyy_p = 0, dzz_s = 0, dzz_p = 0, dyz_s = 0, dyz_p = 0;
#pragma unroll
  for (int m = 1; m <= R; ++m) {
    const int i = m - 1;
    const float2 jp = pl.sp[e + m * SX], jm = pl.sp[e - m * SX], kp = pl.sp[e + m], km = pl.sp[e - m];
    const float4 yxp = pl.yx[e + m * SX], yxm = pl.yx[e - m * SX];
    const float4 zxp = pl.zx[e + m], zxm = pl.zx[e - m];
    if (in_plane) {  // output c: the y and z lines and the yz diagonals
      Sums& o = Q[R];
      dyy_s = fmaf(w.y[i], jp.x + jm.x, dyy_s);
      dyy_p = fmaf(w.y[i], jp.y + jm.y, dyy_p);
      add_products<physics::kYY>(o, -w.y[i], yxp.x + yxm.x, w.y[i], yxp.y + yxm.y);
      dzz_s = fmaf(w.z[i], kp.x + km.x, dzz_s);
      dzz_p = fmaf(w.z[i], kp.y + km.y, dzz_p);
      add_products<physics::kZZ>(o, -w.z[i], zxp.x + zxm.x, w.z[i], zxp.y + zxm.y);
      // Diagonals (+m, +m), (-m, -m) with sign +, (+m, -m), (-m, +m) with sign -.
      const int d1 = e + m * SX + m, d2 = e - m * SX - m, d3 = e + m * SX - m, d4 = e - m * SX + m;
      const float2 a1 = pl.sp[d1], a2 = pl.sp[d2], a3 = pl.sp[d3], a4 = pl.sp[d4];
      const float2 b1 = pl.yz[d1], b2 = pl.yz[d2], b3 = pl.yz[d3], b4 = pl.yz[d4];
      dyz_s = fmaf(w.yz[i], (a1.x + a2.x) - (a3.x + a4.x), dyz_s);
      dyz_p = fmaf(w.yz[i], (a1.y + a2.y) - (a3.y + a4.y), dyz_p);
      add_products<physics::kYZ>(o, -w.yz[i], (b1.x + b2.x) - (b3.x + b4.x), w.yz[i], (b1.y + b2.y) - (b3.y + b4.y));
    }
    // Output c - m sees plane c at di = +m, output c + m at di = -m: the x line with the same
    // sign, the xy and xz corners (+m, +-m) and (-m, -+m) with opposite signs.
    Sums& back = Q[R - m];
    Sums& fwd = Q[R + m];
    back.sxx = fmaf(w.x[i], own.s, back.sxx);
    fwd.sxx = fmaf(w.x[i], own.s, fwd.sxx);
    back.pxx = fmaf(w.x[i], own.p, back.pxx);
    fwd.pxx = fmaf(w.x[i], own.p, fwd.pxx);
    add_products<physics::kXX>(back, -w.x[i], own.gxx, w.x[i], own.hxx);
    add_products<physics::kXX>(fwd, -w.x[i], own.gxx, w.x[i], own.hxx);
    add_corners<physics::kXY, Sums, &Sums::sxy, &Sums::pxy>(back, fwd, w.xy[i], jp.x - jm.x, jp.y - jm.y,
                                                            yxp.z - yxm.z, yxp.w - yxm.w);
    add_corners<physics::kXZ, Sums, &Sums::sxz, &Sums::pxz>(back, fwd, w.xz[i], kp.x - km.x, kp.y - km.y,
                                                            zxp.z - zxm.z, zxp.w - zxm.w);
  }
  // the in-plane derivatives of output c, weighed by its own medium (zeros unless in_plane)
  add_in_plane_own(Q[R], own.m, dyy_s, dzz_s, dyz_s, dyy_p, dzz_p, dyz_p);
}

/// Group T's neighbours x of weight w into the three sums of `o` (the weights wa of p and r); by
/// rows, into each row the group adds to (physics::group_in_row).
template <int T>
MM_HOST_DEVICE MM_FORCE_INLINE void add_axis(AxisSums& o, float ws, float wa, float xs, float xp, float xr) {
  o.s = fmaf(ws, xs, o.s);
  o.a = fmaf(wa, xp, o.a);
  o.r = fmaf(wa, xr, o.r);
}
template <int T>
MM_HOST_DEVICE MM_FORCE_INLINE void add_axis(AxisRowSums& o, float ws, float wa, float xs, float xp, float xr) {
#pragma unroll
  for (int a = 0; a < 3; ++a)
    if (physics::group_in_row(T, a)) {
      o.s[a] = fmaf(ws, xs, o.s[a]);
      o.a[a] = fmaf(wa, xp, o.a[a]);
      o.r[a] = fmaf(wa, xr, o.r[a]);
    }
}

/// add_plane of the constant-axis form: the same neighbours in the same places (output c: its y
/// and z lines and yz diagonals; outputs c -+ m: the thread's own point and the xy, xz corners),
/// each weighed by its direction's constant weight.
template <int SX, class Sums>
MM_HOST_DEVICE MM_FORCE_INLINE void add_plane(const AxisPlane& pl, int e, const AxisOwn& own, bool in_plane,
                                              const physics::TtiAxisWeights& w, Sums (&Q)[2 * R + 1]) {
  using namespace physics;
#pragma unroll
  for (int m = 1; m <= R; ++m) {
    const int i = m - 1;
    const AxisOwn jp = staged(pl, e + m * SX), jm = staged(pl, e - m * SX), kp = staged(pl, e + m),
                  km = staged(pl, e - m);
    if (in_plane) {  // output c: the y and z lines and the yz diagonals
      Sums& o = Q[R];
      add_axis<kYY>(o, w.w[kYY][i].s, w.w[kYY][i].a, jp.s + jm.s, jp.p + jm.p, jp.r + jm.r);
      add_axis<kZZ>(o, w.w[kZZ][i].s, w.w[kZZ][i].a, kp.s + km.s, kp.p + km.p, kp.r + km.r);
      // Diagonals (+m, +m), (-m, -m) with sign +, (+m, -m), (-m, +m) with sign -.
      const AxisOwn a1 = staged(pl, e + m * SX + m), a2 = staged(pl, e - m * SX - m);
      const AxisOwn a3 = staged(pl, e + m * SX - m), a4 = staged(pl, e - m * SX + m);
      add_axis<kYZ>(o, w.w[kYZ][i].s, w.w[kYZ][i].a, (a1.s + a2.s) - (a3.s + a4.s), (a1.p + a2.p) - (a3.p + a4.p),
               (a1.r + a2.r) - (a3.r + a4.r));
    }
    // Output c - m sees plane c at di = +m, output c + m at di = -m: the x line with the same
    // sign, the xy and xz corners with opposite signs.
    Sums& back = Q[R - m];
    Sums& fwd = Q[R + m];
    add_axis<kXX>(back, w.w[kXX][i].s, w.w[kXX][i].a, own.s, own.p, own.r);
    add_axis<kXX>(fwd, w.w[kXX][i].s, w.w[kXX][i].a, own.s, own.p, own.r);
    const float ys = jp.s - jm.s, yp = jp.p - jm.p, yr = jp.r - jm.r;
    add_axis<kXY>(back, w.w[kXY][i].s, w.w[kXY][i].a, ys, yp, yr);
    add_axis<kXY>(fwd, -w.w[kXY][i].s, -w.w[kXY][i].a, ys, yp, yr);
    const float zs = kp.s - km.s, zp = kp.p - km.p, zr = kp.r - km.r;
    add_axis<kXZ>(back, w.w[kXZ][i].s, w.w[kXZ][i].a, zs, zp, zr);
    add_axis<kXZ>(fwd, -w.w[kXZ][i].s, -w.w[kXZ][i].a, zs, zp, zr);
  }
}

/// The CPML's pass 1 (kernels/tti_cpml.hpp) at the thread's point (c, j, k) of plane c, whose
/// medium is m, in a slab of the layer damped along y and z only (TtiCpmlArgs::psi_by_rows): psi
/// of those axes where damped, from the plane's staged s and p, then V.
template <int SX, class Plane>
MM_HOST_DEVICE MM_FORCE_INLINE void plane_psi(const TtiCpmlArgs& cpml, int slab, const Plane& pl, int e,
                                              const physics::TtiMediumPoint& m, int c, int j, int k) {
  const std::int64_t x = cpml.layer.start[slab] + cpml.layer.slab(slab).position(c, j, k);
  const auto field = [&pl, e](int, int dj, int dk) {
    const float2 v = pl.sp[e + dj * SX + dk];
    return physics::TtiFieldPoint{v.x, v.y};
  };
  float psi_s[3] = {}, psi_p[3] = {};
  if (const float b = cpml.b[1][j]; b != 0.0f) {
    psi_s[1] = cpml.at(kPsiS, 1, x);
    psi_p[1] = cpml.at(kPsiP, 1, x);
    tti_cpml_psi_axis<1>(cpml, x, cpml.a[1][j], b, field, psi_s[1], psi_p[1]);
  }
  if (const float b = cpml.b[2][k]; b != 0.0f) {
    psi_s[2] = cpml.at(kPsiS, 2, x);
    psi_p[2] = cpml.at(kPsiP, 2, x);
    tti_cpml_psi_axis<2>(cpml, x, cpml.a[2][k], b, field, psi_s[2], psi_p[2]);
  }
  tti_cpml_fluxes(cpml, x, m, psi_s, psi_p);
}

/// The right-hand sides of a completed output from its sums `a`, its own point and its centre weights.
MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiRhs output_rhs(const SplitSums& a, const RawPoint& ro,
                                                         const physics::TtiCentre& kappa, float b) {
  const float perp2 = a.perp2 + physics::perp_own(ro.m, physics::kXX) * a.sxx +
                      physics::perp_own(ro.m, physics::kXY) * a.sxy + physics::perp_own(ro.m, physics::kXZ) * a.sxz;
  const float axis2 = a.axis2 + physics::axis_own(ro.m, physics::kXX) * a.pxx +
                      physics::axis_own(ro.m, physics::kXY) * a.pxy + physics::axis_own(ro.m, physics::kXZ) * a.pxz;
  return physics::tti_split_rhs(perp2, axis2, {ro.p + ro.q, ro.p}, kappa, ro.m.inv_a, b);
}

/// 1 / x: on the GPU the fast reciprocal (MUFU.RCP, within 1 ulp; x is 1 / a, near 1), without
/// the IEEE division's refinement and slow-path test; on the host the division.
MM_HOST_DEVICE MM_FORCE_INLINE float fast_reciprocal(float x) {
#ifdef __CUDA_ARCH__
  return __fdividef(1.0f, x);
#else
  return 1.0f / x;
#endif
}
MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiRhs output_rhs(const AxisSums& a, const RawPoint& ro,
                                                         const physics::TtiCentre& kappa, float b) {
  return physics::tti_axis_rhs(a.s, a.a, a.r, {ro.p + ro.q, ro.p}, kappa, ro.m.inv_a, fast_reciprocal(ro.m.inv_a), b);
}

/// The rows of a completed layer output (physics::tti_split_rows) from its RowSums, its own point
/// and its row centre weights. The in-plane groups arrive as their shares of rows y and z, which
/// rows_of_groups takes as the yy and zz groups with a zero yz group.
MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiRows output_rows(const RowSums& a, const RawPoint& ro,
                                                           const physics::TtiRowCentres& kappa) {
  using namespace physics;
  const float perp[6] = {fmaf(perp_own(ro.m, kXX), a.sxx, a.gxx), a.perp_y, a.perp_z,
                         fmaf(perp_own(ro.m, kXY), a.sxy, a.gxy), fmaf(perp_own(ro.m, kXZ), a.sxz, a.gxz), 0.0f};
  const float axis[6] = {fmaf(axis_own(ro.m, kXX), a.pxx, a.hxx), a.axis_y, a.axis_z,
                         fmaf(axis_own(ro.m, kXY), a.pxy, a.hxy), fmaf(axis_own(ro.m, kXZ), a.pxz, a.hxz), 0.0f};
  return tti_split_rows(perp, axis, {ro.p + ro.q, ro.p}, kappa);
}
MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiRows output_rows(const AxisRowSums& a, const RawPoint& ro,
                                                           const physics::TtiRowCentres& kappa) {
  return physics::tti_axis_rows(a.s, a.a, a.r, {ro.p + ro.q, ro.p}, ro.m.inv_a, kappa);
}

/// Blocks per SM the register budget is set for: 128-thread tiles fit the queue (72 registers)
/// and the staging at 168 registers and 3 blocks; 256-thread tiles spilled at 2 blocks (128), so
/// they take what they need at one block (8 warps per SM).
template <int TX, int TY>
constexpr int kTtiMinBlocks = TX * TY <= 128 ? 3 : 1;

/// One block's work: the body of swic_tti, written against the execution model of
/// block_model.cuh (DeviceBlock on the GPU, HostBlock in the emulation) with `raw` its dynamic
/// shared memory (16-B aligned). The lambdas below call no Block method: nv_exec_check_disable
/// does not reach into a lambda, so the barriers stay in the body itself.
#pragma nv_exec_check_disable
template <int TX, int TY, class Block>
MM_HOST_DEVICE MM_FORCE_INLINE void swic_split_block(const Block& blk, const TtiStepArgs& g,
                                                     const physics::Box3& region, int chunk,
                                                     unsigned char* raw) {
  using T = TtiTile<TX, TY>;
  constexpr int SX = T::SX;
  const physics::Index3 hi = region.hi();
  // The tile's (k, j) corner and its chunk of output planes [i_begin, i_end) along i.
  const int k0 = region.lo.k + blk.bx * TX, j0 = region.lo.j + blk.by * TY;
  const int i_begin = region.lo.i + blk.bz * chunk;
  const int i_end = i_begin + chunk < hi.i ? i_begin + chunk : hi.i;
  const int c_first = i_begin - R, c_end = i_end + R;  // planes streamed: [c_first, c_end)
  // Buffer of plane c (computed, not indexed: an indexed pair of buffers would live in local memory).
  const auto buffer = [c_first, raw](int c) {
    return SplitPlane::carve(raw + ((c - c_first) & 1) * (T::kPoints * SplitPlane::kBytes),
                             T::kPoints);
  };
  const int tx = blk.tx, ty = blk.ty;
  const int t = tx + TX * ty;
  const int j = j0 + ty, k = k0 + tx;
  const bool writes = j < hi.j && k < hi.k;
  const std::int64_t sx = g.p.sx;
  const auto readable = [&hi](int jj, int kk) { return jj < hi.j + R && kk < hi.k + R; };

  // Staged slots and layout offsets (at plane c_first) of the points this thread stages.
  const int e = (ty + R) * SX + tx + R;
  const std::int64_t own_o = g.p.offset(c_first, j, k);
  const bool own_ok = readable(j, k);
  int row_e[T::kRowRounds], col_e[T::kColRounds];
  std::int64_t row_o[T::kRowRounds], col_o[T::kColRounds];
  bool row_ok[T::kRowRounds], col_ok[T::kColRounds];
#pragma unroll
  for (int n = 0; n < T::kRowRounds; ++n) {
    const int r = t + n * T::kThreads;
    const auto st = T::row_point(r);
    const int jj = j0 - R + st.row, kk = k0 - R + st.col;
    row_e[n] = st.slot();
    row_ok[n] = r < T::kRowPoints && readable(jj, kk);
    row_o[n] = g.p.offset(c_first, jj, kk);
  }
#pragma unroll
  for (int n = 0; n < T::kColRounds; ++n) {
    const int r = t + n * T::kThreads;
    const auto st = T::col_point(r);
    const int jj = j0 - R + st.row, kk = k0 - R + st.col;
    col_e[n] = st.slot();
    col_ok[n] = r < T::kColPoints && readable(jj, kk);
    col_o[n] = g.p.offset(c_first, jj, kk);
  }

  // Raw values of the next plane to stage, loaded one plane ahead of staging.
  RawPoint own_raw, row_raw[T::kRowRounds], col_raw[T::kColRounds];
  const auto load_plane = [&](int c) {
    const std::int64_t d = (c - c_first) * sx;
    own_raw = load_raw(g, own_o + d, own_ok);
#pragma unroll
    for (int n = 0; n < T::kRowRounds; ++n) row_raw[n] = load_raw(g, row_o[n] + d, row_ok[n]);
#pragma unroll
    for (int n = 0; n < T::kColRounds; ++n) col_raw[n] = load_raw(g, col_o[n] + d, col_ok[n]);
  };
  const auto stage_plane = [&](const SplitPlane& pl) {
#pragma unroll
    for (int n = 0; n < T::kRowRounds; ++n)
      if (t + n * T::kThreads < T::kRowPoints) stage_row(pl, row_e[n], row_raw[n]);
#pragma unroll
    for (int n = 0; n < T::kColRounds; ++n)
      if (t + n * T::kThreads < T::kColPoints) stage_col(pl, col_e[n], col_raw[n]);
    return stage_own(pl, e, own_raw);
  };

  SplitSums Q[2 * R + 1];  // Q[R + d]: output c + d
#pragma unroll
  for (int d = 0; d <= 2 * R; ++d) Q[d] = {0, 0, 0, 0, 0, 0, 0, 0};

  load_plane(c_first);
  OwnPoint own = stage_plane(buffer(c_first));
  if (c_first + 1 < c_end) load_plane(c_first + 1);
  blk.sync();
  for (int c = c_first; c < c_end; ++c) {
    add_plane<SX>(buffer(c), e, own, c >= i_begin && c < i_end, g.weights, Q);

    // Stage plane c + 1 (its buffer was last read in plane c - 1, before the barrier) and load
    // plane c + 2.
    if (c + 1 < c_end) {
      own = stage_plane(buffer(c + 1));
      if (c + 2 < c_end) load_plane(c + 2);
    }

    // Output c - 4 is complete. What its update reads besides the sums is loaded only now: held
    // across the plane above it would cost registers the queue needs (other warps cover the wait).
    const int o = c - R;
    const bool out = writes && o >= i_begin && o < i_end;
    if (out) {
      const std::int64_t off = own_o + (c - c_first - R) * sx;
      const RawPoint ro = load_raw(g, off, true);
      const physics::TtiCentre kappa{load(g.kappa_perp.origin + off),
                                     load(g.kappa_axis.origin + off)};
      const float bo = load(g.b.origin + off);
      const physics::TtiRhs r = output_rhs(Q[0], ro, kappa, bo);
      if (g.inner.contains(o, j, k)) {
        const float v2 = load(g.v2dt2.origin + off);
        g.p_next.origin[off] = physics::leapfrog(g.p_next.origin[off], ro.p, v2, r.p);
        g.q_next.origin[off] = physics::leapfrog(g.q_next.origin[off], ro.q, v2, r.q);
      } else {
        tti_update_from_rhs(g, o, j, k, off, r);
      }
    }
    blk.sync();  // plane c + 1 is staged; everyone is done with plane c
#pragma unroll
    for (int d = 0; d < 2 * R; ++d) Q[d] = Q[d + 1];
    Q[2 * R] = {0, 0, 0, 0, 0, 0, 0, 0};
  }
}

template <int TX, int TY>
__global__ void __launch_bounds__(TX* TY, kTtiMinBlocks<TX, TY>)
    swic_tti(TtiStepArgs g, physics::Box3 region, int chunk) {
  extern __shared__ __align__(16) unsigned char swic_tti_raw[];
  swic_split_block<TX, TY>(DeviceBlock(), g, region, chunk, swic_tti_raw);
}

// --- swic_split_tma: the same queue with every global read a tensor copy (sm_90+) ---------------
//
// Nsight Compute on swic_split (512^3, 2026-11-24) put 46% of its warps' stalls on global loads:
// each thread loads the raw values of the ~3.75 points per output it stages one plane ahead, and
// the operands of the output it completes just before using them, with 12 warps per SM to cover
// the wait. Here thread 0 issues tensor copies into two slots in shared memory, each with its
// mbarrier: the halo slot takes the six raw arrays of plane P over the tile and its halo (SX x SY
// points each), the output slot the twelve arrays that output o's update reads at the tile's own
// points (TX x TY each) and, in the planes where the tile meets the layer, what the damped update
// reads besides (aux_p, aux_q, and p, q around the point): no thread waits on a global load
// (+3.6% at 1000^3, bench/results/2026-11-24-h100-session12.md §3). The arrays come by groups,
// one copy each (SplitMaps): 5 copies a plane, not 18 (sponge +3.3%, CPML +2.0% at 1000^3,
// bench/results/2026-11-27-session21-tti-grouped-copies.md §1). Plane P is staged into the
// products at plane P - 1, and output o completes at plane o + 4; a slot is refilled after the
// barrier that ends the plane which used it, so a copy has the next plane's sums to land. Rings
// of two or three slots gave the same or less (bench/results/2026-11-24-h100-session6.md §2, §7).
// The products, the queue and the sums are swic_split's.

/// The arrays of a halo slot (boxes of SX x SY points) and of an output slot (TX x TY), by the
/// groups they are copied in (SplitMaps).
constexpr int kHaloMedium = 4;  // nx, ny, nz, inv_a
constexpr int kOwnMedium = 8;   // nx, ny, nz, inv_a, kappa_perp, kappa_axis, b, v2dt2
constexpr int kHaloArrays = kHaloMedium + 2;     // the medium, p, q
constexpr int kOwnArrays = 2 + kOwnMedium + 2;   // p, q, the medium, p_next, q_next
constexpr int kRowOwnArrays = 2 + kHaloMedium;  // what the CPML launch's outputs read of them: p, q, nx .. inv_a
/// What the layer's damped update reads besides the output slot, copied after it into the same
/// slot only for the output planes where the tile meets the layer: aux_p, aux_q at the tile's
/// points, and p, q around them (planes o - 1 .. o + 1, the tile grown by 1 in j and by R in k,
/// since a box row must start on a 16-B boundary) for the isotropic points' gradient.
constexpr int kLayerOwnArrays = 2;     // aux_p, aux_q
constexpr int kLayerAroundArrays = 2;  // p, q

/// The tensor maps of one launch (Map: CUtensorMap, or HostTensorMap in the emulation), each over
/// a group of arrays that lie equally spaced in one allocation (tensor_map_group; CudaAcousticTti
/// keeps its arrays so), so that one copy lands a box of each: 5 copies a plane instead of 18
/// (each costs the issuing warp ~13 instructions while the others wait at the plane's barrier).
/// In slot order: halo_medium, halo_fields in the halo slot; own_fields, own_medium, own_next in
/// the output slot (the CPML launch's own_medium: its first 4 arrays, and no own_next); the
/// layer's aux and around after them.
template <class Map>
struct SplitMaps {
  Map halo_medium, halo_fields;         // plane P over the tile and its halo
  Map own_fields, own_medium, own_next;  // output o at the tile's points
  Map layer_aux, around;                // the layer's: aux_p, aux_q at the tile's points; p, q around them
};

/// The medium's arrays the constant-axis form (kAxis) leaves out of its copies. It reads no nx,
/// ny, nz (the first three of the medium's groups), so its halo slot takes 1 / a, p and q. Its
/// output slot takes kappa_axis, b, v2dt2, p_next and q_next (the other launches' last five
/// arrays of the slot, from its start): p, q and 1 / a come from the own ring, kappa_perp with
/// the weights (TtiAxisWeights::kappa_perp).
constexpr int skipped_halo_medium(bool axis) { return axis ? 3 : 0; }
constexpr int kAxisOwnSkipped = 5;  // nx, ny, nz, inv_a, kappa_perp
constexpr int kAxisOwnFirst = 2 + kAxisOwnSkipped;  // the first it copies: kappa_axis (after p, q and those)

/// The slots' layout: the halo slots, then the output slots, each with the layer's boxes after it.
/// The constant-axis form (kAxis) keeps two of each, so that a plane's copies are issued two
/// planes before it is staged and an output's two planes before it completes; its slots hold the
/// arrays it copies only (output slot array a, a >= kOwnFirst, at a - kOwnFirst).
template <int TX, int TY, bool kAxis = false>
struct TensorSlots {
  static constexpr int kSlots = kAxis ? 2 : 1;
  static constexpr int kOwnFirst = kAxis ? kAxisOwnFirst : 0;
  static constexpr int kOwnCopied = kOwnArrays - kOwnFirst;  // the arrays an output slot holds
  static constexpr int kHaloBytes = TtiTile<TX, TY>::kPoints * 4;  // one array's box
  static constexpr int kOwnBytes = TX * TY * 4;
  static_assert(kHaloBytes % 128 == 0 && kOwnBytes % 128 == 0, "boxes land on 128-B boundaries");
  static constexpr int kHaloSlot = (kHaloArrays - skipped_halo_medium(kAxis)) * kHaloBytes;
  static constexpr int kOwnSlot = kOwnCopied * kOwnBytes;
  // The layer's boxes, after the output slot: (k, j, i) extents of an `around` box and its bytes
  // (a group copy lands p's and q's back to back).
  static constexpr int kAroundX = TX + 2 * R, kAroundY = TY + 2, kAroundZ = 3;
  static constexpr int kAroundBytes = kAroundX * kAroundY * kAroundZ * 4;  // one array's; both land back to back
  static constexpr int kLayerBytes = kLayerOwnArrays * kOwnBytes + kLayerAroundArrays * kAroundBytes;  // landing
  static constexpr int kLayerSlot = (kLayerBytes + 127) / 128 * 128;
  static constexpr int kOutputSlot = kOwnSlot + kLayerSlot;
  static constexpr int kBytes = kSlots * (kHaloSlot + kOutputSlot);
};

/// The staged planes' kind of a queue of Sums, and the weights its add_plane takes.
template <class Sums>
struct PlaneOf {
  using type = SplitPlane;
};
template <>
struct PlaneOf<AxisSums> {
  using type = AxisPlane;
};
template <>
struct PlaneOf<AxisRowSums> {
  using type = AxisPlane;
};
template <class Sums>
MM_HOST_DEVICE MM_FORCE_INLINE const auto& plane_weights(const TtiStepArgs& g) {
  if constexpr (std::is_same_v<Sums, AxisSums>)
    return g.axis_weights;
  else if constexpr (std::is_same_v<Sums, AxisRowSums>)
    return g.axis_row_weights;
  else
    return g.weights;
}

/// The constant-axis form's ring of own points: p, q and 1 / a at the tile's points of the last
/// kOwnRing staged planes, written when a plane is staged (from its halo slot) and read when its
/// output completes, so that the output slot need not copy them again (12 B a point less from L2,
/// whose throughput Nsight Compute put at 78% of its peak next to the shared memory's 78%;
/// session 30). Plane o is staged at plane o - 1 and output o completes at plane o + 4, after
/// plane o + 5 is staged: six planes live.
constexpr int kOwnRing = 8;
template <int TX, int TY, class Plane>
constexpr int own_ring_bytes() {
  return std::is_same_v<Plane, AxisPlane> ? kOwnRing * 3 * TX * TY * 4 : 0;
}

/// Dynamic shared memory of the slots, the staged planes, the barriers (one a slot), the own ring
/// and slack to align to 128 B.
template <int TX, int TY, class Plane = SplitPlane>
constexpr int tensor_smem_bytes() {
  using L = TensorSlots<TX, TY, std::is_same_v<Plane, AxisPlane>>;
  return L::kBytes + TtiTile<TX, TY>::template kBytesOf<Plane> + 2 * L::kSlots * 8 + own_ring_bytes<TX, TY, Plane>() +
         128;
}


/// A staged point's raw values from a halo slot (arrays `n` floats apart); kAxis: the slot holds
/// 1 / a, p and q only (the axis left 0).
template <bool kAxis = false>
MM_HOST_DEVICE MM_FORCE_INLINE RawPoint slot_point(const float* h, int e, int n) {
  if constexpr (kAxis) return {{0, 0, 0, h[e]}, h[n + e], h[2 * n + e]};
  return {{h[e], h[n + e], h[2 * n + e], h[3 * n + e]}, h[4 * n + e], h[5 * n + e]};
}

/// Where a launch's boxes start: the allocation's halo corner (the maps' coordinate origin) and
/// the tile's (k, j) corner.
struct BoxOrigin {
  physics::Index3 corner;
  int k0, j0;
};

/// Plane P's halo boxes (the tile and its halo) into the halo slot: the medium, then p and q.
#pragma nv_exec_check_disable
template <int TX, int TY, bool kAxis = false, class Block, class Map>
MM_HOST_DEVICE MM_FORCE_INLINE void issue_halo(const Block& blk, const SplitMaps<Map>& maps, int P,
                                               const BoxOrigin& at, unsigned char* slot, std::uint64_t* bar) {
  constexpr int box = TensorSlots<TX, TY>::kHaloBytes, medium = kHaloMedium - skipped_halo_medium(kAxis);
  const int k = at.k0 - R - at.corner.k, j = at.j0 - R - at.corner.j, i = P - at.corner.i;
  blk.expect_bytes(bar, (medium + 2) * box);
  blk.copy_group(slot, maps.halo_medium, k, j, i, bar);
  blk.copy_group(slot + medium * box, maps.halo_fields, k, j, i, bar);
}

/// Output o's boxes (the tile's own points) into the output slot, and the layer's after them when
/// the tile meets the layer in plane o (`layer`); the CPML launch's (kRows) only the first
/// kRowOwnArrays (p, q and the medium).
#pragma nv_exec_check_disable
template <int TX, int TY, bool kRows = false, bool kAxis = false, class Block, class Map>
MM_HOST_DEVICE MM_FORCE_INLINE void issue_output(const Block& blk, const SplitMaps<Map>& maps, int o, bool layer,
                                                 const BoxOrigin& at, unsigned char* slot, std::uint64_t* bar) {
  using L = TensorSlots<TX, TY, kAxis>;
  static_assert(!(kRows && kAxis), "the constant-axis CPML launch copies no output slot");
  constexpr int own = kRows ? kRowOwnArrays : L::kOwnCopied;
  const int k = at.k0 - at.corner.k, j = at.j0 - at.corner.j, i = o - at.corner.i;
  blk.expect_bytes(bar, own * L::kOwnBytes + (layer ? L::kLayerBytes : 0));
  if constexpr (!kAxis) blk.copy_group(slot, maps.own_fields, k, j, i, bar);
  constexpr int medium_at = (kAxis ? kAxisOwnFirst : 2) - L::kOwnFirst, next_at = 2 + kOwnMedium - L::kOwnFirst;
  blk.copy_group(slot + medium_at * L::kOwnBytes, maps.own_medium, k, j, i, bar);
  if constexpr (!kRows) blk.copy_group(slot + next_at * L::kOwnBytes, maps.own_next, k, j, i, bar);
  if (!layer) return;
  unsigned char* const s = slot + L::kOwnSlot;
  blk.copy_group(s, maps.layer_aux, k, j, i, bar);
  blk.copy_group(s + kLayerOwnArrays * L::kOwnBytes, maps.around, k - R, j - 1, i - 1, bar);
}

/// One block's work for swic_split_tma, against the execution model of block_model.cuh. With
/// Sums = RowSums (the CPML launch) `region` lies in slab `slab` of the CPML layer `cpml`: each
/// output's rows go to TtiCpmlArgs::rows, for the CPML's pass 2, instead of an update of its own.
#pragma nv_exec_check_disable
template <int TX, int TY, class Sums, class Block, class Map>
MM_HOST_DEVICE MM_FORCE_INLINE void swic_split_tensor_block(const Block& blk, const TtiStepArgs& g,
                                                            const SplitMaps<Map>& maps, const physics::Box3& region,
                                                            int shift, int chunk, const TtiCpmlArgs& cpml, int slab,
                                                            unsigned char* raw) {
  constexpr bool kRows = std::is_same_v<Sums, RowSums> || std::is_same_v<Sums, AxisRowSums>;
  constexpr bool kAxis = std::is_same_v<Sums, AxisSums> || std::is_same_v<Sums, AxisRowSums>;
  // The constant-axis CPML launch reads nothing of an output slot: p, q and 1 / a from the own ring.
  constexpr bool kOutputSlot = !(kRows && kAxis);
  using T = TtiTile<TX, TY>;
  using L = TensorSlots<TX, TY, kAxis>;
  using Plane = typename PlaneOf<Sums>::type;
  constexpr int SX = T::SX, kOwnPoints = TX * TY, kSlots = L::kSlots;
  unsigned char* const halo_slots = align_128(raw);
  unsigned char* const output_slots = halo_slots + kSlots * L::kHaloSlot;
  unsigned char* const planes = halo_slots + L::kBytes;
  // One barrier a slot: the halo slots', then the output slots'.
  std::uint64_t* const bars = reinterpret_cast<std::uint64_t*>(planes + T::template kBytesOf<Plane>);
  float* const ring = reinterpret_cast<float*>(bars + 2 * kSlots);  // the own ring (kAxis only)
  const physics::Index3 hi = region.hi();
  const BoxOrigin at{g.p.box.lo, region.lo.k - shift + blk.bx * TX, region.lo.j + blk.by * TY};
  const int i_begin = region.lo.i + blk.bz * chunk;
  const int i_end = i_begin + chunk < hi.i ? i_begin + chunk : hi.i;
  const int c_first = i_begin - R, c_end = i_end + R;  // planes streamed: [c_first, c_end)
  const auto buffer = [c_first, planes](int c) {
    return Plane::carve(planes + ((c - c_first) & 1) * (T::kPoints * Plane::kBytes), T::kPoints);
  };
  // Plane P's halo slot, its barrier and the parity of the phase that lands P (each slot's n-th
  // use completes its barrier's n-th phase); output o's likewise.
  const auto halo_turn = [c_first](int P) { return static_cast<unsigned>(P - c_first); };
  const auto halo_slot = [&](int P) { return halo_slots + halo_turn(P) % kSlots * L::kHaloSlot; };
  const auto halo_bar = [&](int P) { return bars + halo_turn(P) % kSlots; };
  const auto halo_parity = [&](int P) { return halo_turn(P) / kSlots & 1u; };
  const auto output_turn = [i_begin](int o) { return static_cast<unsigned>(o - i_begin); };
  const auto output_slot = [&](int o) { return output_slots + output_turn(o) % kSlots * L::kOutputSlot; };
  const auto output_bar = [&](int o) { return bars + kSlots + output_turn(o) % kSlots; };
  const auto output_parity = [&](int o) { return output_turn(o) / kSlots & 1u; };
  const int tx = blk.tx, ty = blk.ty;
  const int t = tx + TX * ty;
  const int j = at.j0 + ty, k = at.k0 + tx;
  const bool writes = j < hi.j && k >= region.lo.k && k < hi.k;
  // Whether the tile's points in plane o meet the layer (block-uniform): its (j, k) footprint in
  // the region reaches outside the inner box, or o lies outside it.
  const physics::Index3 in_hi = g.inner.hi();
  const int tj_end = at.j0 + TY < hi.j ? at.j0 + TY : hi.j;
  const int tk_lo = at.k0 > region.lo.k ? at.k0 : region.lo.k, tk_end = at.k0 + TX < hi.k ? at.k0 + TX : hi.k;
  const bool tile_inner =
      at.j0 >= g.inner.lo.j && tj_end <= in_hi.j && tk_lo >= g.inner.lo.k && tk_end <= in_hi.k;
  // The thread's point in the inner box's (j, k) footprint, and its output's offset, advanced by
  // one plane's stride as each output completes (not formed again from o, j, k: 64-bit products).
  const bool inner_jk = j >= g.inner.lo.j && j < in_hi.j && k >= g.inner.lo.k && k < in_hi.k;
  std::int64_t out_off = g.p.offset(i_begin, j, k);
  // Plane P's slots in the own ring (kAxis): p, q and 1 / a of the thread's point, kOwnPoints apart.
  const auto own_ring = [ring, c_first, t](int P) {
    return ring + ((P - c_first) & (kOwnRing - 1)) * 3 * kOwnPoints + t;
  };
  const auto meets_layer = [&](int o) {  // the sponge's damped update reads more (issue_output)
    return !kRows && (!tile_inner || o < g.inner.lo.i || o >= in_hi.i);
  };

  // Staged slots of the points this thread stages (the same in a halo slot's boxes).
  const int e = (ty + R) * SX + tx + R;
  int row_e[T::kRowRounds], col_e[T::kColRounds];
#pragma unroll
  for (int n = 0; n < T::kRowRounds; ++n) row_e[n] = T::row_point(t + n * T::kThreads).slot();
#pragma unroll
  for (int n = 0; n < T::kColRounds; ++n) col_e[n] = T::col_point(t + n * T::kThreads).slot();
  // Plane P's products from its halo slot into its buffer; returns what the thread keeps of its point.
  const auto stage_plane = [&](int P) {
    const float* h = reinterpret_cast<const float*>(halo_slot(P));
    const Plane pl = buffer(P);
#pragma unroll
    for (int n = 0; n < T::kRowRounds; ++n)
      if (t + n * T::kThreads < T::kRowPoints) stage_row(pl, row_e[n], slot_point<kAxis>(h, row_e[n], T::kPoints));
#pragma unroll
    for (int n = 0; n < T::kColRounds; ++n)
      if (t + n * T::kThreads < T::kColPoints) stage_col(pl, col_e[n], slot_point<kAxis>(h, col_e[n], T::kPoints));
    const RawPoint own_raw = slot_point<kAxis>(h, e, T::kPoints);
    if constexpr (kAxis) {
      float* const r = own_ring(P);
      r[0] = own_raw.p;
      r[kOwnPoints] = own_raw.q;
      r[2 * kOwnPoints] = own_raw.m.inv_a;
    }
    return stage_own(pl, e, own_raw);
  };

  // The thread that inits the barriers and issues the copies: the last warp's first, since the
  // last warp stages the fewest points (the copies' ~40 instructions a plane then delay the
  // barrier at the plane's end less: warps waiting there were 14% of the stalls sampled, H200).
  static_assert(T::kThreads % 32 == 0, "whole warps");
  const bool issuer = t == T::kThreads - 32;
  if (issuer) {
    for (int s = 0; s < 2 * kSlots; ++s) blk.mbarrier_init(bars + s, 1);
    blk.fence_init();  // visible to the copy engine
  }
  blk.sync();
  if (issuer) {
    for (int P = c_first; P < c_first + kSlots; ++P)  // a block has 9 or more planes
      issue_halo<TX, TY, kAxis>(blk, maps, P, at, halo_slot(P), halo_bar(P));
    if constexpr (kOutputSlot)  // and 1 or more outputs
      for (int o = i_begin; o < i_begin + kSlots && o < i_end; ++o)
        issue_output<TX, TY, kRows, kAxis>(blk, maps, o, meets_layer(o), at, output_slot(o), output_bar(o));
  }

  Sums Q[2 * R + 1];  // Q[R + d]: output c + d
#pragma unroll
  for (int d = 0; d <= 2 * R; ++d) Q[d] = Sums{};

  blk.wait(halo_bar(c_first), 0);
  auto own = stage_plane(c_first);
  blk.sync();  // plane c_first is staged and its slot free
  if (issuer && c_first + kSlots < c_end) {
    blk.fence_proxy();  // the generic reads of that slot before the copy engine's writes
    issue_halo<TX, TY, kAxis>(blk, maps, c_first + kSlots, at, halo_slot(c_first), halo_bar(c_first));
  }
  // The constant-axis inner launch streams its planes in three runs, the middle one steady: there
  // plane c has outputs (c >= i_begin + R, c < i_end), the next plane to stage and an output to
  // complete, so that the unrolled runs' copy of the body tests none of them (`steady` is a
  // constant in each copy). The other launches keep one run: with three, the split form's queues
  // spilled (SplitSums 128 registers and 4 B, RowSums 168 and 8 B).
  constexpr int kRuns = kAxis && !kRows ? 3 : 1;
  const int steady_first = i_begin + R, steady_end = steady_first > i_end ? steady_first : i_end;
#pragma unroll
  for (int run = 0; run < kRuns; ++run) {
  const bool steady = kRuns == 3 && run == 1;
  const int run_first = kRuns == 1 || run == 0 ? c_first : (run == 1 ? steady_first : steady_end);
  const int run_end = kRuns == 1 || run == 2 ? c_end : (run == 0 ? steady_first : steady_end);
#pragma unroll 1
  for (int c = run_first; c < run_end; ++c) {
    // The CPML launch's output o = c - 4 reads its rows' centre weights from global memory: loaded
    // here, so that they land while the plane's sums run (with 8 warps an SM, a wait at the
    // output's completion is not hidden).
    physics::TtiRowCentres kappa_rows{};
    std::int64_t row_x = 0;  // the output's compact layer index
    if constexpr (kRows) {
      const int o = c - R;
      if ((steady || (o >= i_begin && o < i_end)) && writes) {
        row_x = cpml.layer.start[slab] + cpml.layer.slab(slab).position(o, j, k);
        kappa_rows = load_by_rows<physics::TtiRowCentres>(cpml.row_centres, cpml, row_x);
      }
    }
    const bool in_plane = steady || (c >= i_begin && c < i_end);  // block-uniform
    add_plane<SX>(buffer(c), e, own, in_plane, plane_weights<Sums>(g), Q);
    if constexpr (kRows) {
      if (cpml.psi_by_rows(slab) && in_plane && writes) {
        if constexpr (kAxis) {  // the model's axis, 1 / a from the own ring
          const float inv_a = own_ring(c)[2 * kOwnPoints];
          plane_psi<SX>(cpml, slab, buffer(c), e, {g.axis.nx, g.axis.ny, g.axis.nz, inv_a}, c, j, k);
        } else {
          plane_psi<SX>(cpml, slab, buffer(c), e, own.m, c, j, k);
        }
      }
    }

    // Stage plane c + 1 (its buffer was last read in plane c - 1, before the barrier) and
    // complete output o = c - 4 from its output slot.
    const int P = c + 1;
    if (steady || P < c_end) {
      blk.wait(halo_bar(P), halo_parity(P));
      own = stage_plane(P);
    }
    const int o = c - R;
    const bool completes = steady || (o >= i_begin && o < i_end);  // block-uniform
    if (kOutputSlot && completes) blk.wait(output_bar(o), output_parity(o));
    if (completes && writes) {
      // array a (a >= L::kOwnFirst) at x[(a - L::kOwnFirst) * kOwnPoints]
      const float* x = reinterpret_cast<const float*>(output_slot(o)) + ty * TX + tx;
      const auto in = [x](int a) { return x[(a - L::kOwnFirst) * kOwnPoints]; };
      // (the constant-axis form: p, q and 1 / a from the own ring, no axis)
      const float* const rg = own_ring(o);
      const RawPoint ro = kAxis ? RawPoint{{0, 0, 0, rg[2 * kOwnPoints]}, rg[0], rg[kOwnPoints]}
                                : RawPoint{{in(2), in(3), in(4), in(5)}, in(0), in(1)};
      if constexpr (kRows) {  // a CPML layer point: its rows, for pass 2 (tti_cpml_layer_rows)
        store_by_rows(cpml.rows, cpml, row_x, output_rows(Q[0], ro, kappa_rows));
      } else {
        const float kappa_perp = kAxis ? g.axis_weights.kappa_perp : in(6);
        const physics::TtiRhs r = output_rhs(Q[0], ro, {kappa_perp, in(7)}, in(8));
        const std::int64_t off = out_off;
        if (inner_jk && o >= g.inner.lo.i && o < in_hi.i) {
          g.p_next.origin[off] = physics::leapfrog(in(10), ro.p, in(9), r.p);
          g.q_next.origin[off] = physics::leapfrog(in(11), ro.q, in(9), r.q);
        } else {  // the damped update with everything from the slot (issue_output)
          const float* lx = reinterpret_cast<const float*>(output_slot(o) + L::kOwnSlot) + ty * TX + tx;
          const TtiLayerPoint pt{in(9), in(10), in(11), lx[0], lx[kOwnPoints], ro.m.inv_a == 1.0f && in(8) == 0.0f};
          const float* around = reinterpret_cast<const float*>(output_slot(o) + L::kOwnSlot + kLayerOwnArrays * L::kOwnBytes) +
                                (L::kAroundY + ty + 1) * L::kAroundX + tx + R;  // point (o, j, k) of box 0
          const auto box = [around](int a) {
            const float* f = around + a * (L::kAroundBytes / 4);
            return [f](int di, int dj, int dk) { return f[(di * L::kAroundY + dj) * L::kAroundX + dk]; };
          };
          tti_store_layer(g, off, tti_damped_update(g, o, j, k, pt, box(0), box(1), r), pt.isotropic);
        }
      }
    }
    // Plane P is staged; everyone is done with plane c, P's halo slot and o's output slot. (The
    // warps meeting at mbarriers instead, a plane staged ahead so that a warp could run a plane
    // ahead of the others, ran 12% slower: the waits spin; session 34, branch session34-ahead.)
    if (completes) out_off += g.p.sx;
    blk.sync();
    if (issuer) {  // those slots take plane P + kSlots and output o + kSlots
      if (P + kSlots < c_end) {
        blk.fence_proxy();
        issue_halo<TX, TY, kAxis>(blk, maps, P + kSlots, at, halo_slot(P), halo_bar(P));
      }
      if constexpr (kOutputSlot) {
        if (completes && o + kSlots < i_end) {
          blk.fence_proxy();
          issue_output<TX, TY, kRows, kAxis>(blk, maps, o + kSlots, meets_layer(o + kSlots), at, output_slot(o),
                                             output_bar(o));
        }
      }
    }
#pragma unroll
    for (int d = 0; d < 2 * R; ++d) Q[d] = Q[d + 1];
    Q[2 * R] = Sums{};
  }
  }
}

/// Blocks per SM that the shared memory allows (with planes of kind Plane), at most as many as
/// leave 128 registers a thread: the register budget. The constant-axis form (AxisPlane) takes the
/// same budget: its queue and the plane's 32 shared loads in flight take 100 registers (104-110
/// before session 34, 112-118 before session 30; ptxas sm_90, unbounded); bounded to 64 or 80 (1024 or 768 threads an SM) it spilled 60-92 B
/// and ran 4.5-17 GPts/s instead of 27-32 (H200, 1000^3, bench/results/2026-11-29-session29-tti-constant-axis.md).
template <int TX, int TY, class Plane = SplitPlane>
constexpr int kTensorMinBlocks = 228 * 1024 / (tensor_smem_bytes<TX, TY, Plane>() + 1024) < 512 / (TX * TY)
                                     ? 228 * 1024 / (tensor_smem_bytes<TX, TY, Plane>() + 1024)
                                     : 512 / (TX * TY);
// The constant-axis 32x8 tile (the fastest: session 34) runs 2 blocks an SM: its slots, planes and
// ring must fit twice (a third halo slot, which would still fit, gained nothing).
static_assert(kTensorMinBlocks<32, 8, AxisPlane> == 2, "the constant-axis 32x8 tile must keep 2 blocks an SM");

/// The inner launch: the split form (SplitSums) or the constant-axis form (AxisSums: three sums an
/// output and 16-B staged points).
template <int TX, int TY, class Sums>
__global__ void __launch_bounds__(TX* TY, kTensorMinBlocks<TX, TY, typename PlaneOf<Sums>::type>)
    swic_tti_tensor(TtiStepArgs g, const __grid_constant__ SplitMaps<CUtensorMap> maps, physics::Box3 region,
                    int shift, int chunk) {
  extern __shared__ unsigned char swic_tti_tensor_raw[];
  swic_split_tensor_block<TX, TY, Sums>(DeviceBlock(), g, maps, region, shift, chunk, TtiCpmlArgs{}, -1,
                                        swic_tti_tensor_raw);
}

/// The CPML launch (RowSums): 16 floats an output in the queue, so 128-thread tiles at two blocks
/// per SM (up to 255 registers). Its outputs only store their rows: pass 2 itself (global loads of
/// V around the point, zeta) inside this kernel, with 8 warps an SM to cover its waits, ran the
/// CPML at 12.3 GPts/s at 1000^3 on an H200 against the plain layer kernel's 15.7. The
/// constant-axis form (AxisRowSums, 9 floats an output) fits 3 blocks: 168 registers, 0 spill.
template <int TX, int TY, class Sums>
__global__ void __launch_bounds__(TX* TY, std::is_same_v<Sums, AxisRowSums> ? 3 : 2)
    swic_tti_tensor_cpml(TtiStepArgs g, TtiCpmlArgs cpml, int slab, const __grid_constant__ SplitMaps<CUtensorMap> maps,
                         physics::Box3 region, int shift, int chunk) {
  extern __shared__ unsigned char swic_tti_tensor_raw[];
  swic_split_tensor_block<TX, TY, Sums>(DeviceBlock(), g, maps, region, shift, chunk, cpml, slab,
                                        swic_tti_tensor_raw);
}

struct TtiVariant {
  int x, y;
  const void* kernel;
  void (*launch)(const TtiStepArgs&, const physics::Box3&, int, cudaStream_t);
  void (*emulate)(const TtiStepArgs&, const physics::Box3&, int);
  int smem_bytes;
  const void* axis_kernel = nullptr;  // swic_split_tma: the constant-axis form's kernel and its shared memory
  int axis_smem_bytes = 0;
};

template <int TX, int TY>
void launch_tti_variant(const TtiStepArgs& g, const physics::Box3& region, int chunk, cudaStream_t s) {
  constexpr int bytes = TtiTile<TX, TY>::template kBytesOf<>;
  ensure_smem_limit<&swic_tti<TX, TY>>(bytes);
  const dim3 grid(ceil_div(region.n.k, TX), ceil_div(region.n.j, TY), ceil_div(region.n.i, chunk));
  swic_tti<TX, TY><<<grid, dim3(TX, TY, 1), bytes, s>>>(g, region, chunk);
}

/// The same block body on host threads over host arrays (block_emulation.hpp): the same grid and
/// shared-memory size as launch_tti_variant.
template <int TX, int TY>
void emulate_tti_variant(const TtiStepArgs& g, const physics::Box3& region, int chunk) {
  const int grid[3] = {static_cast<int>(ceil_div(region.n.k, TX)),
                       static_cast<int>(ceil_div(region.n.j, TY)),
                       static_cast<int>(ceil_div(region.n.i, chunk))};
  emulate_grid(grid, TX, TY, TtiTile<TX, TY>::template kBytesOf<>, [&](HostBlock& blk, unsigned char* raw) {
    swic_split_block<TX, TY>(blk, g, region, chunk, raw);
  });
}

/// swic_split_tma's maps over the step's arrays, built by make(views, count, box x, box y, box
/// z) (tensor_map_group or HostTensorMap::group_of). kRows: the CPML launch's (the medium's first
/// kHaloMedium arrays at the tile's points; no own_next and no layer maps, which it never copies).
template <int TX, int TY, bool kRows = false, bool kAxis = false, class Make>
auto split_maps(const TtiStepArgs& g, const Make& make) {
  using V = physics::View3<const float>;
  using Map = decltype(make(static_cast<const V*>(nullptr), 1, 1, 1, 1));
  using L = TensorSlots<TX, TY>;
  const V medium[kOwnMedium] = {g.nx, g.ny, g.nz, g.inv_a, g.kappa_perp, g.kappa_axis, g.b, g.v2dt2};
  const V fields[2] = {g.p, g.q}, next[2] = {g.p_next, g.q_next}, aux[2] = {g.aux_p, g.aux_q};
  for (const V* v : {&medium[0], &medium[1], &medium[2], &medium[3], &medium[4], &medium[5], &medium[6], &medium[7],
                     &fields[1], &next[0], &next[1], &aux[0], &aux[1]})
    if (v->sx != g.p.sx || v->sy != g.p.sy || !(v->box == g.p.box))
      throw Error("swic_split_tma: the step's arrays must share one layout");
  constexpr int SX = TtiTile<TX, TY>::SX, SY = TtiTile<TX, TY>::SY;
  SplitMaps<Map> maps;
  // (the constant-axis CPML launch copies no output slot: its own maps go unused)
  constexpr int skip = skipped_halo_medium(kAxis), own_skip = kAxis && !kRows ? kAxisOwnSkipped : 0;
  maps.halo_medium = make(medium + skip, kHaloMedium - skip, SX, SY, 1);
  maps.halo_fields = make(fields, 2, SX, SY, 1);
  maps.own_fields = make(fields, 2, TX, TY, 1);
  maps.own_medium = make(medium + own_skip, (kRows ? kHaloMedium : kOwnMedium) - own_skip, TX, TY, 1);
  if (kRows) return maps;
  maps.own_next = make(next, 2, TX, TY, 1);
  maps.layer_aux = make(aux, 2, TX, TY, 1);
  maps.around = make(fields, 2, L::kAroundX, L::kAroundY, L::kAroundZ);
  return maps;
}
/// The maps' makers: on the GPU and in the host emulation.
const auto kDeviceMaps = [](const physics::View3<const float>* v, int count, int bx, int by, int bz) {
  return tensor_map_group(v, count, bx, by, bz);
};
const auto kHostMaps = [](const physics::View3<const float>* v, int count, int bx, int by, int bz) {
  return HostTensorMap::group_of(v, count, bx, by, bz);
};

/// How far a launch's first tile starts below region.lo.k: to the 16-B boundary of the rows at or
/// below it, since a box row must start on one (the boxes start R = 4 points before the tile). Not
/// on 128-B boundaries (tile_row_shift) as the isotropic families' tiles start, which keeps the
/// output rows in whole sectors: this kernel is bound by instruction issue, not by its bytes, and
/// the fewer tiles win. Over the whole grid the first tile no longer starts in the halo (at 512^3
/// 16 tiles along k instead of 17), over the CPML's inner box (from k = 27) no longer 31 points
/// before it: H100, in one process, sponge 23.23 -> 24.33 GPts/s at 512^3 and 23.31 -> 23.47 at
/// 1000^3, CPML 11.99 -> 12.20 and 16.17 -> 16.28 (bench/results/2026-11-27-session20-tti-cpml-bytes.md).
/// How far k lies past the 16-B boundary of the rows at or below it (rows start at alloc.lo.k, 16-B
/// aligned): what a box row starting at k must move down.
int past_row_boundary(int k, const physics::Box3& alloc) { return ((k - alloc.lo.k) % 4 + 4) % 4; }
int tile_shift(const physics::Box3& region, const physics::Box3& alloc) {
  return past_row_boundary(region.lo.k - R, alloc);  // the boxes start R points before the tile
}

/// Calls f(Sums{}) with the inner launch's queue for the step: AxisSums where the model's axis is
/// constant (TtiStepArgs::constant_axis), SplitSums otherwise.
template <class F>
void with_inner_form(const TtiStepArgs& g, F&& f) {
  if (g.constant_axis) return f(AxisSums{});
  return f(SplitSums{});
}
/// The same for the CPML launch's queue: AxisRowSums or RowSums.
template <class F>
void with_rows_form(const TtiStepArgs& g, F&& f) {
  if (g.constant_axis) return f(AxisRowSums{});
  return f(RowSums{});
}

template <int TX, int TY>
void launch_tensor_variant(const TtiStepArgs& g, const physics::Box3& region, int chunk, cudaStream_t s) {
  const int shift = tile_shift(region, g.p.box);
  const dim3 grid(ceil_div(region.n.k + shift, TX), ceil_div(region.n.j, TY), ceil_div(region.n.i, chunk));
  with_inner_form(g, [&](auto form) {
    using Sums = decltype(form);
    constexpr auto kernel = &swic_tti_tensor<TX, TY, Sums>;
    constexpr int bytes = tensor_smem_bytes<TX, TY, typename PlaneOf<Sums>::type>();
    ensure_smem_limit<kernel>(bytes);
    const auto maps = split_maps<TX, TY, false, std::is_same_v<Sums, AxisSums>>(g, kDeviceMaps);
    kernel<<<grid, dim3(TX, TY, 1), bytes, s>>>(g, maps, region, shift, chunk);
  });
}

template <int TX, int TY>
void emulate_tensor_variant(const TtiStepArgs& g, const physics::Box3& region, int chunk) {
  const int shift = tile_shift(region, g.p.box);
  const int grid[3] = {static_cast<int>(ceil_div(region.n.k + shift, TX)),
                       static_cast<int>(ceil_div(region.n.j, TY)),
                       static_cast<int>(ceil_div(region.n.i, chunk))};
  with_inner_form(g, [&](auto form) {
    using Sums = decltype(form);
    const auto maps = split_maps<TX, TY, false, std::is_same_v<Sums, AxisSums>>(g, kHostMaps);
    emulate_grid(grid, TX, TY, tensor_smem_bytes<TX, TY, typename PlaneOf<Sums>::type>(),
                 [&](HostBlock& blk, unsigned char* raw) {
                   swic_split_tensor_block<TX, TY, Sums>(blk, g, maps, region, shift, chunk, TtiCpmlArgs{}, -1, raw);
                 });
  });
}

// The CPML launch's tiles: 128 threads (its queue needs ~2x swic_split_tma's registers), 32 x 4
// (a j face of the default 20-point layer is 5 tiles deep, none partial), or 16 x 8 and 8 x 16 on
// a k face that thin (thin_k_width: an 8-point layer's k faces in tiles of 32 along k took 0.71 ms
// each against 0.22 for an i face, 512^3, H200).
constexpr int kCpmlThreads = 128, kCpmlTileX = 32, kCpmlChunk = 64;

/// Calls f(std::integral_constant<int, TX>) with the CPML launch's tile width along k for `region`
/// (thin_k_width).
template <class F>
void with_cpml_tile(const physics::Box3& region, F&& f) {
  switch (thin_k_width(region.n.k, kCpmlTileX)) {
    case 8: return f(std::integral_constant<int, 8>{});
    case 16: return f(std::integral_constant<int, 16>{});
    default: return f(std::integral_constant<int, kCpmlTileX>{});
  }
}

/// The grid of a CPML launch over `region` in tiles TX wide and its shift: the last tile ends at
/// the region's end, or up to 3 points beyond it so that the boxes' rows start on 16-B boundaries;
/// where that puts the boxes' rows outside the allocation and starting the first tile at the
/// region's start does not (a k face at k = 0: rows from k = -8, the halo starting at -4), the
/// latter. The copy engine fills what lies outside with zeros, but slowly: the k = 0 face's launch
/// took 1.11 ms with such boxes and 0.65 without, as long as the face at the far end (512^3, H100).
/// Ending the tiles at the region's end, a k face of a layer up to 28 points deep takes one tile of
/// 32 along k instead of two.
struct CpmlGrid {
  int shift;
  int blocks[3];
};
template <int TX>
CpmlGrid cpml_grid(const TtiStepArgs& g, const physics::Box3& region, int chunk) {
  constexpr int TY = kCpmlThreads / TX;
  const physics::Box3& alloc = g.p.box;
  const auto aligned = [&](int shift) { return shift + past_row_boundary(region.lo.k - shift - R, alloc); };
  const auto tiles = [&](int shift) { return static_cast<int>(ceil_div(region.n.k + shift, TX)); };
  const auto inside = [&](int shift) {
    const int k0 = region.lo.k - shift;
    return k0 - R >= alloc.lo.k && k0 + tiles(shift) * TX + R <= alloc.hi().k;
  };
  const int at_end = aligned((TX - region.n.k % TX) % TX), at_start = tile_shift(region, alloc);
  const int shift = !inside(at_end) && inside(at_start) ? at_start : at_end;
  return {shift, {tiles(shift), static_cast<int>(ceil_div(region.n.j, TY)), static_cast<int>(ceil_div(region.n.i, chunk))}};
}

void check_cpml_launch(const TtiStepArgs& g, const TtiCpmlArgs& c, int slab, const physics::Box3& region) {
  if (g.kappa_perp.origin == nullptr || c.row_centres == nullptr || c.rows == nullptr)
    throw Error("swic_split_tma (CPML layer): needs the centre weights, the row centre weights and the rows");
  if (slab < 0 || slab > 5 || !(physics::intersect(region, c.layer.slab(slab)) == region))
    throw Error("swic_split_tma (CPML layer): the region must lie in the named slab of the layer");
}

/// The rows of the CPML layer's points in `region` (in slab `slab`) from the family's sums, into
/// TtiCpmlArgs::rows.
void launch_tti_cpml_layer(const TtiStepArgs& g, const TtiCpmlArgs& c, int slab, const physics::Box3& region,
                           cudaStream_t s) {
  check_cpml_launch(g, c, slab, region);
  if (region.empty()) return;
  if (!has_tensor_copies()) throw Error("swic_split_tma: needs the tensor copy engine of sm_90 (Hopper) or newer");
  with_cpml_tile(region, [&](auto width) {
    with_rows_form(g, [&](auto form) {
      using Sums = decltype(form);
      constexpr int TX = decltype(width)::value, TY = kCpmlThreads / TX;
      constexpr auto kernel = &swic_tti_tensor_cpml<TX, TY, Sums>;
      constexpr int bytes = tensor_smem_bytes<TX, TY, typename PlaneOf<Sums>::type>();
      ensure_smem_limit<kernel>(bytes);
      const auto maps = split_maps<TX, TY, true, std::is_same_v<Sums, AxisRowSums>>(g, kDeviceMaps);
      const CpmlGrid q = cpml_grid<TX>(g, region, kCpmlChunk);
      kernel<<<dim3(q.blocks[0], q.blocks[1], q.blocks[2]), dim3(TX, TY, 1), bytes, s>>>(g, c, slab, maps, region,
                                                                                         q.shift, kCpmlChunk);
    });
  });
}

template <int TX, int TY>
constexpr TtiVariant tti_variant() {
  return {TX, TY, reinterpret_cast<const void*>(&swic_tti<TX, TY>), &launch_tti_variant<TX, TY>,
          &emulate_tti_variant<TX, TY>, TtiTile<TX, TY>::template kBytesOf<>};
}

template <int TX, int TY>
constexpr TtiVariant tensor_variant() {
  return {TX, TY, reinterpret_cast<const void*>(&swic_tti_tensor<TX, TY, SplitSums>), &launch_tensor_variant<TX, TY>,
          &emulate_tensor_variant<TX, TY>, tensor_smem_bytes<TX, TY>(),
          reinterpret_cast<const void*>(&swic_tti_tensor<TX, TY, AxisSums>), tensor_smem_bytes<TX, TY, AxisPlane>()};
}

const TtiVariant kTtiVariants[] = {tti_variant<32, 8>(), tti_variant<32, 4>(), tti_variant<64, 4>(),
                                   tti_variant<16, 8>()};
// One halo and one output slot: 32x16 (161 KB) and 64x8 (184 KB) fit one block per SM, 32x8
// (101 KB) two, 16x8 four, 32x4 three. Two halo slots, two output slots or both gave the same or
// less, and so did 64x4 (H100, 1000^3, bench/results/2026-11-24-h100-session6.md). 32x16, the
// first tunable (the default): the same 16 warps an SM as 32x8 with a halo box 1.875 times the
// tile instead of 2.5, sponge 24.2 -> 25.0 and CPML 17.4 -> 17.7 GPts/s at 1000^3 (64x8 25.0 and
// 17.5; bench/results/2026-11-27-session22-tti-tiles-and-psi.md).
const TtiVariant kTensorVariants[] = {tensor_variant<32, 8>(), tensor_variant<16, 8>(), tensor_variant<32, 4>(),
                                      tensor_variant<32, 16>(), tensor_variant<64, 8>()};

const char* const kRegisterName = "swic_split";
const char* const kTensorName = "swic_split_tma";

const TtiVariant& find_tti(const Tile& t, bool tensor) {
  return tensor ? find_chunked_variant(kTensorVariants, t, "swic_split_tma (acoustic_tti)")
                : find_chunked_variant(kTtiVariants, t, "swic_split (acoustic_tti)");
}

/// The variant of a launch or emulation, after the checks both share.
const TtiVariant& checked_variant(const TtiStepArgs& g, const Tile& t, bool tensor) {
  const TtiVariant& v = find_tti(t, tensor);
  if (g.kappa_perp.origin == nullptr || g.kappa_axis.origin == nullptr)
    throw Error(std::string(tensor ? kTensorName : kRegisterName) +
                ": the split form needs the centre weights kappa_perp, kappa_axis");
  return v;
}

template <bool kTensor>
void launch_tti(const TtiStepArgs& g, const physics::Box3& region, const Tile& t, cudaStream_t s) {
  const TtiVariant& v = checked_variant(g, t, kTensor);
  if (region.empty()) return;
  if (kTensor && !has_tensor_copies())
    throw Error("swic_split_tma: needs the tensor copy engine of sm_90 (Hopper) or newer");
  v.launch(g, region, t.z, s);
}

template <bool kTensor, bool kAxis = false>
cudaFuncAttributes tti_attributes(const Tile& t) {
  cudaFuncAttributes attr{};
  const TtiVariant& v = find_tti(t, kTensor);
  cudaFuncGetAttributes(&attr, kAxis ? v.axis_kernel : v.kernel);
  return attr;
}

template <bool kTensor, bool kAxis = false>
int tti_dynamic_smem(const Tile& t) {
  const TtiVariant& v = find_tti(t, kTensor);
  return kAxis ? v.axis_smem_bytes : v.smem_bytes;
}

template <bool kTensor>
KernelFamily family() {
  KernelFamily f;
  f.name = kTensor ? kTensorName : kRegisterName;
  f.propagators = {PropagatorKind::acoustic_tti};
  f.description = kTensor ? "swic_split with every global read a tensor copy (TMA) into shared memory, and a "
                            "constant-axis form where the model's axis is the same everywhere; sm_90+"
                          : "SWiC for TTI on the split form: staged products, one accumulation per neighbour and field";
  f.launch_tti = &launch_tti<kTensor>;
  // (the constant-axis form's fastest at 1000^3 on an H200: 32x8x256 with an 8-point sponge, 42.3
  // GPts/s; 32x8x512 with the CPML, whose layer runs beside the inner box, 38.8 against 38.0 for
  // 32x8x256, where the sponge's one launch over the grid ran 41.9 against 42.3;
  // bench/results/2026-11-29-session32-tti-layer-beside.md)
  f.tti_tunables = kTensor ? std::vector<Tile>{{32, 16, 64}, {32, 8, 64}, {64, 8, 64}, {16, 8, 64}, {32, 4, 64},
                                               {32, 8, 128}, {32, 8, 256}, {32, 8, 512}}
                           : std::vector<Tile>{{32, 4, 64}, {16, 8, 64}, {32, 8, 64}, {64, 4, 64}, {32, 4, 128}};
  f.tti_attributes = &tti_attributes<kTensor>;
  f.tti_dynamic_smem = &tti_dynamic_smem<kTensor>;
  f.tti_reads_centre_weights = true;
  if (kTensor) {
    f.launch_tti_cpml_layer = &launch_tti_cpml_layer;
    f.tti_axis_attributes = &tti_attributes<true, true>;
    f.tti_axis_dynamic_smem = &tti_dynamic_smem<true, true>;
  }
  return f;
}

const bool kRegistered = register_family(family<false>()) && register_family(family<true>());

}  // namespace

void emulate_swic_split(const TtiStepArgs& g, const physics::Box3& region, const Tile& t, bool tensor) {
  const TtiVariant& v = checked_variant(g, t, tensor);
  if (!region.empty()) v.emulate(g, region, t.z);
}

void emulate_swic_split_cpml(const TtiStepArgs& g, const TtiCpmlArgs& c, int slab, const physics::Box3& region,
                             int chunk) {
  check_cpml_launch(g, c, slab, region);
  if (region.empty()) return;
  with_cpml_tile(region, [&](auto width) {
    with_rows_form(g, [&](auto form) {
      using Sums = decltype(form);
      constexpr int TX = decltype(width)::value, TY = kCpmlThreads / TX;
      const SplitMaps<HostTensorMap> maps = split_maps<TX, TY, true, std::is_same_v<Sums, AxisRowSums>>(g, kHostMaps);
      const CpmlGrid q = cpml_grid<TX>(g, region, chunk);
      emulate_grid(q.blocks, TX, TY, tensor_smem_bytes<TX, TY, typename PlaneOf<Sums>::type>(),
                   [&](HostBlock& blk, unsigned char* raw) {
                     swic_split_tensor_block<TX, TY, Sums>(blk, g, maps, region, q.shift, chunk, c, slab, raw);
                   });
    });
  });
}

}  // namespace minimod::kernels::cuda
