// Acoustic TTI (pseudo-acoustic, coupled p and q; DESIGN.md §3, notes/semi-stencil-tti-digest.md):
//   p_tt = v^2 [ (1 + 2 delta) (lap - H)(p + q) + H p ],   q_tt = v^2 [ 2 (eps - delta) (lap - H)(p + q) ]
//   H = (n . grad)^2,  n = (sin theta cos phi, sin theta sin phi, cos theta)
// with the 73-point compact stencil: the 25-point star for the pure second derivatives and 16
// diagonal points in each coordinate plane for the mixed ones,
//   d2f/dx dy ~ 1/(4 dx dy) sum_m a_m [f(+m,+m) + f(-m,-m) - f(+m,-m) - f(-m,+m)],
// a_m the 1D second-derivative weights (exact for f = xy since sum_m a_m m^2 = 1). The propagators
// use its self-adjoint form, div(C grad f) with the same 73 points (tti_rhs73), which stays
// stable where the medium varies. Defined once for the CPU reference and every CUDA family.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "physics/box3.hpp"
#include "physics/host_device.hpp"
#include "physics/stencil.hpp"

namespace minimod::physics {

/// Weights of the 73-point operator for spacings (dx, dy, dz), 1/m^2.
struct TtiStencil {
  float c0[3];             // centre weight per axis (a_0 / h_a^2)
  float c[3][kRadius];     // pure second derivative, m = 1..4
  float cxy[kRadius], cxz[kRadius], cyz[kRadius];  // mixed: a_m / (4 h_a h_b)
};

inline TtiStencil make_tti_stencil(const std::array<double, 3>& h) {
  TtiStencil s{};
  for (int a = 0; a < 3; ++a) {
    s.c0[a] = static_cast<float>(kSecondDerivative8[0] / (h[a] * h[a]));
    for (int m = 1; m <= kRadius; ++m) s.c[a][m - 1] = static_cast<float>(kSecondDerivative8[m] / (h[a] * h[a]));
  }
  for (int m = 1; m <= kRadius; ++m) {
    s.cxy[m - 1] = static_cast<float>(kSecondDerivative8[m] / (4.0 * h[0] * h[1]));
    s.cxz[m - 1] = static_cast<float>(kSecondDerivative8[m] / (4.0 * h[0] * h[2]));
    s.cyz[m - 1] = static_cast<float>(kSecondDerivative8[m] / (4.0 * h[1] * h[2]));
  }
  return s;
}

/// The symmetry axis of tilt theta (from vertical) and azimuth phi (from x towards y), radians.
struct TtiAxis {
  float nx, ny, nz;
};
MM_HOST_DEVICE MM_FORCE_INLINE TtiAxis tti_axis(float theta, float phi) {
  return {sinf(theta) * cosf(phi), sinf(theta) * sinf(phi), cosf(theta)};
}

/// The medium at one stencil point as the operator reads it: the symmetry axis n with nz >= 0
/// (n and -n give the same operator) and 1 / a = 1 / (1 + 2 delta). 16 B; the propagators store
/// these four numbers per point (halo included) instead of the two tensors' 12 components.
struct TtiMediumPoint {
  float nx, ny, nz, inv_a;
};
MM_HOST_DEVICE MM_FORCE_INLINE TtiMediumPoint tti_medium_point(float theta, float phi, float a) {
  TtiAxis n = tti_axis(theta, phi);
  if (n.nz < 0) n = {-n.nx, -n.ny, -n.nz};
  return {n.nx, n.ny, n.nz, 1.0f / a};
}

/// Components of a symmetric 3x3 tensor, in this order.
enum TensorComponent { kXX = 0, kYY, kZZ, kXY, kXZ, kYZ };

/// Component t of n n^T.
MM_HOST_DEVICE MM_FORCE_INLINE float nn_component(const TtiMediumPoint& m, int t) {
  switch (t) {
    case kXX: return m.nx * m.nx;
    case kYY: return m.ny * m.ny;
    case kZZ: return m.nz * m.nz;
    case kXY: return m.nx * m.ny;
    case kXZ: return m.nx * m.nz;
    default: return m.ny * m.nz;
  }
}

/// p + q and p at one stencil point: the two fields the operator differentiates.
struct TtiFieldPoint {
  float s, p;
};

/// Right-hand sides (without v^2) of the p and q equations, self-adjoint form: with
/// a = 1 + 2 delta and b = 2 (eps - delta),
///   rp = a [ div(C_perp grad (p + q)) + div(C_axis grad p) ],   rq = b div(C_perp grad (p + q)),
/// C_perp = I - n n^T (the Laplacian across the symmetry axis, lap - H) and C_axis = n n^T / a
/// (H / a). For a constant medium this is a (lap - H)(p + q) + H p and b (lap - H)(p + q)
/// (DESIGN.md §3); the symmetric form keeps the system stable where tilt and delta vary (a
/// pointwise n n^T : Hessian grew exponentially there).
struct TtiRhs {
  float p, q;
};

/// The 73-point operator's stencil pairs, group by group: for each direction t (xx, yy, zz, xy,
/// xz, yz) and m = 1..4, add(t, wp, wa) receives that group's weighted pair sums of both tensors,
///   wp = w sum_y sg (C_perp(x) + C_perp(y))_t (s(y) - s(x)),  wa likewise with C_axis and p,
/// twice their share of div(C grad f) (the pair halves are taken once by the caller). Every
/// stencil pair (x, y) of direction t and weight w contributes w (C_t(x) + C_t(y)) / 2 (f(y) - f(x)),
/// so the discrete operator is symmetric for a varying medium and equals C : Hessian(f) where the
/// medium is constant. `field(di, dj, dk)` gives a TtiFieldPoint, `medium(di, dj, dk)` a
/// TtiMediumPoint. Per neighbour: one component of n n^T, both tensors' pair weights, both
/// differences.
template <class AtField, class AtMedium, class Add>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_pair_sums73(const AtField& field, const AtMedium& medium, const TtiStencil& s,
                                                    const Add& add) {
  const TtiFieldPoint f0 = field(0, 0, 0);
  const TtiMediumPoint m0 = medium(0, 0, 0);
  // Pair sums: C_perp(x) + C_perp(y) = perp0 - nn(y), C_axis(x) + C_axis(y) = axis0 + nn(y) / a(y).
  float perp0[6], axis0[6];
MM_UNROLL
  for (int t = 0; t < 6; ++t) {
    const float nn = nn_component(m0, t);
    perp0[t] = (t < 3 ? 2.0f : 0.0f) - nn;
    axis0[t] = nn * m0.inv_a;
  }
  // Sum over the neighbours (signed sg) of one direction t.
  const auto pair = [&](int t, int di, int dj, int dk, float& sp, float& sa, float sg) {
    const TtiFieldPoint f = field(di, dj, dk);
    const TtiMediumPoint m = medium(di, dj, dk);
    const float nn = nn_component(m, t);
    sp += sg * (perp0[t] - nn) * (f.s - f0.s);
    sa += sg * (axis0[t] + nn * m.inv_a) * (f.p - f0.p);
  };
MM_UNROLL
  for (int m = 1; m <= kRadius; ++m) {
    float sp = 0, sa = 0;
    pair(kXX, m, 0, 0, sp, sa, 1.0f);
    pair(kXX, -m, 0, 0, sp, sa, 1.0f);
    add(kXX, s.c[0][m - 1] * sp, s.c[0][m - 1] * sa);
    sp = sa = 0;
    pair(kYY, 0, m, 0, sp, sa, 1.0f);
    pair(kYY, 0, -m, 0, sp, sa, 1.0f);
    add(kYY, s.c[1][m - 1] * sp, s.c[1][m - 1] * sa);
    sp = sa = 0;
    pair(kZZ, 0, 0, m, sp, sa, 1.0f);
    pair(kZZ, 0, 0, -m, sp, sa, 1.0f);
    add(kZZ, s.c[2][m - 1] * sp, s.c[2][m - 1] * sa);
    // Mixed terms count twice (C_xy d2/dxdy + C_yx d2/dydx).
    sp = sa = 0;
    pair(kXY, m, m, 0, sp, sa, 1.0f);
    pair(kXY, -m, -m, 0, sp, sa, 1.0f);
    pair(kXY, m, -m, 0, sp, sa, -1.0f);
    pair(kXY, -m, m, 0, sp, sa, -1.0f);
    add(kXY, 2.0f * s.cxy[m - 1] * sp, 2.0f * s.cxy[m - 1] * sa);
    sp = sa = 0;
    pair(kXZ, m, 0, m, sp, sa, 1.0f);
    pair(kXZ, -m, 0, -m, sp, sa, 1.0f);
    pair(kXZ, m, 0, -m, sp, sa, -1.0f);
    pair(kXZ, -m, 0, m, sp, sa, -1.0f);
    add(kXZ, 2.0f * s.cxz[m - 1] * sp, 2.0f * s.cxz[m - 1] * sa);
    sp = sa = 0;
    pair(kYZ, 0, m, m, sp, sa, 1.0f);
    pair(kYZ, 0, -m, -m, sp, sa, 1.0f);
    pair(kYZ, 0, m, -m, sp, sa, -1.0f);
    pair(kYZ, 0, -m, m, sp, sa, -1.0f);
    add(kYZ, 2.0f * s.cyz[m - 1] * sp, 2.0f * s.cyz[m - 1] * sa);
  }
}

/// Both right-hand sides in one pass over the 72 neighbours of the 73-point stencil
/// (tti_pair_sums73); b is 2 (eps - delta) at the centre.
template <class AtField, class AtMedium>
MM_HOST_DEVICE MM_FORCE_INLINE TtiRhs tti_rhs73(const AtField& field, const AtMedium& medium, float b,
                                                const TtiStencil& s) {
  float perp = 0, axis = 0;  // twice div(C grad f): the pair halves are taken once at the end
  tti_pair_sums73(field, medium, s, [&](int, float wp, float wa) {
    perp += wp;
    axis += wa;
  });
  const float a = 1.0f / medium(0, 0, 0).inv_a;
  perp *= 0.5f;
  axis *= 0.5f;
  return {a * (perp + axis), b * perp};
}

/// Whether the symmetry axis of (theta, phi) is vertical as tti_axis computes it (n = (0, 0, 1):
/// theta = 0), where tti_rhs73 reduces to vti_rhs25.
MM_HOST_DEVICE MM_FORCE_INLINE bool tti_axis_is_vertical(float theta, float phi) {
  const TtiAxis n = tti_axis(theta, phi);
  return n.nx == 0.0f && n.ny == 0.0f && n.nz == 1.0f;
}

/// The operator where the medium around the point is VTI (tti_axis_is_vertical at all 73 points;
/// delta may vary): C_perp = diag(1, 1, 0) is constant, so div(C_perp grad s) is the x and y
/// lines' second derivatives of s = p + q; C_axis = e_z e_z^T / a leaves the z line's pairs of p
/// with (1/a(x) + 1/a(y)) / 2; every mixed group's pair weights are zero. 25 points instead of
/// 73, 16 of s and 8 of p, with tti_rhs73's accessors: the same pair sums added in another order,
/// the x and y lines' centre taken with the weight c0, so equal to tti_rhs73 (and its rows to
/// tti_rows73) there to round-off (tests/kernels/tti_split_test.cpp).
struct VtiLines {
  float xx, yy;  // d2s/dx2, d2s/dy2: C_perp's rows x and y (its row z is 0)
  float zz;      // div(C_axis grad p): C_axis's row z (its rows x and y are 0)
  float a;       // 1 + 2 delta at the point
};
template <class AtField, class AtMedium>
MM_HOST_DEVICE MM_FORCE_INLINE VtiLines vti_lines25(const AtField& field, const AtMedium& medium, const TtiStencil& s) {
  const TtiFieldPoint f0 = field(0, 0, 0);
  const float inv_a0 = medium(0, 0, 0).inv_a;
  float xx = s.c0[0] * f0.s, yy = s.c0[1] * f0.s, zz = 0;
MM_UNROLL
  for (int m = 1; m <= kRadius; ++m) {
    xx += s.c[0][m - 1] * (field(m, 0, 0).s + field(-m, 0, 0).s);
    yy += s.c[1][m - 1] * (field(0, m, 0).s + field(0, -m, 0).s);
    zz += s.c[2][m - 1] * ((inv_a0 + medium(0, 0, m).inv_a) * (field(0, 0, m).p - f0.p) +
                           (inv_a0 + medium(0, 0, -m).inv_a) * (field(0, 0, -m).p - f0.p));
  }
  return {xx, yy, 0.5f * zz, 1.0f / inv_a0};
}

/// tti_rhs73 where the medium around the point is VTI (vti_lines25).
template <class AtField, class AtMedium>
MM_HOST_DEVICE MM_FORCE_INLINE TtiRhs vti_rhs25(const AtField& field, const AtMedium& medium, float b,
                                                const TtiStencil& s) {
  const VtiLines l = vti_lines25(field, medium, s);
  const float perp = l.xx + l.yy;
  return {l.a * (perp + l.zz), b * perp};
}

/// div(C grad f) of both tensors by rows, row a = d_a (C grad f)_a, for the CPML (whose memory
/// term of axis a filters row a only): the pure group aa and half of each mixed group that
/// involves a (the 73-point mixed groups stand for d_a C_ab d_b + d_b C_ba d_a together, equal
/// halves where the medium is constant). The three rows add up to tti_rhs73's two operators.
struct TtiRows {
  float perp[3], axis[3];  // div(C_perp grad (p + q)) and div(C_axis grad p), by rows
};
/// Row a from the groups' sums g[t] (twice their share, as tti_pair_sums73 gives them): the pure
/// group aa and half of each mixed group that involves a (xy, xz for x; xy, yz for y; xz, yz for
/// z), halved.
/// The mixed groups of row a: xy and xz for x, xy and yz for y, xz and yz for z (which = 0, 1).
MM_HOST_DEVICE MM_FORCE_INLINE int row_mixed_group(int a, int which) {
  return which == 0 ? (a == 2 ? kXZ : kXY) : (a == 0 ? kXZ : kYZ);
}
MM_HOST_DEVICE MM_FORCE_INLINE float row_of_groups(const float (&g)[6], int a) {
  return 0.5f * (g[a] + 0.5f * (g[row_mixed_group(a, 0)] + g[row_mixed_group(a, 1)]));
}
/// Whether group t adds to row a (row_of_groups), and with what share: 1/2 for xx, yy, zz to
/// their own row, 1/4 for a mixed group to each of its axes' rows.
MM_HOST_DEVICE MM_FORCE_INLINE bool group_in_row(int t, int a) {
  return t == a || t == row_mixed_group(a, 0) || t == row_mixed_group(a, 1);
}
MM_HOST_DEVICE MM_FORCE_INLINE float row_share(int t) { return t < 3 ? 0.5f : 0.25f; }
/// Both tensors' rows (Rows: TtiRows or TtiRowCentres) from their groups' sums, returned as a
/// value: written through a reference to the caller's arrays, GCC left the CPU's row loop
/// (tti_rows_chunk) scalar, 1.7x slower on configs/tti.yaml (session 23).
template <class Rows>
MM_HOST_DEVICE MM_FORCE_INLINE Rows rows_of_groups(const float (&perp)[6], const float (&axis)[6]) {
  Rows r;
  MM_UNROLL
  for (int a = 0; a < 3; ++a) {
    r.perp[a] = row_of_groups(perp, a);
    r.axis[a] = row_of_groups(axis, a);
  }
  return r;
}
template <class AtField, class AtMedium>
MM_HOST_DEVICE MM_FORCE_INLINE TtiRows tti_rows73(const AtField& field, const AtMedium& medium, const TtiStencil& s) {
  float gp[6] = {}, ga[6] = {};  // the groups' sums
  tti_pair_sums73(field, medium, s, [&](int t, float wp, float wa) {
    gp[t] += wp;
    ga[t] += wa;
  });
  return rows_of_groups<TtiRows>(gp, ga);
}

/// tti_rows73 where the medium around the point is VTI (vti_lines25).
template <class AtField, class AtMedium>
MM_HOST_DEVICE MM_FORCE_INLINE TtiRows vti_rows25(const AtField& field, const AtMedium& medium, const TtiStencil& s) {
  const VtiLines l = vti_lines25(field, medium, s);
  return {{l.xx, l.yy, 0.0f}, {0.0f, 0.0f, l.zz}};
}

// --- The split (product) form of the same operator --------------------------------------------
// For a tensor C, tti_rhs73's pair sum over the neighbours y of direction t (weight w, sign sg)
//   2 L_C f(x) = sum_t sum_y sg w (C_t(x) + C_t(y)) (f(y) - f(x))
// expands, term by term and exactly, into
//   2 L_C f(x) = sum_t C_t(x) D_t f(x) + sum_t D_t (C_t f)(x) + kappa_C(x) f(x),
//   D_t g(x) = sum_y sg w g(y)   (neighbours only),
//   kappa_C(x) = -sum_t sum_y sg w (C_t(x) + C_t(y))   (static: the medium only).
// With C_perp = I - n n^T (pair sum 2 delta_t - nn_t(x) - nn_t(y), as tti_rhs73 writes it) and
// C_axis = n n^T / a:
//   2 perp = sum_t (2 delta_t - nn_t(x)) D_t s - sum_t D_t g_t + kappa_perp s(x),   g_t = nn_t s,
//   2 axis = sum_t (nn_t / a)(x) D_t p  + sum_t D_t h_t + kappa_axis p(x),          h_t = nn_t p / a.
// A kernel forms g_t and h_t once per point it stages, so a neighbour costs one accumulation per
// quantity (s, p, g_t, h_t) and no products of the medium; kappa is precomputed per point
// (tti_centre). Rounding: every sum has the magnitude of the pair form's terms times |f|, and the
// centre term cancels them as a plain stencil's centre weight does, so the error relative to the
// field's scale is that of an fp32 stencil (tests/kernels/tti_split_test.cpp measures it).

/// Weights of the split form per direction and m = 1..4, mixed ones doubled (C_xy d2/dxdy and
/// C_yx d2/dydx): the weights tti_rhs73 applies to each group's pair sum.
struct TtiWeights {
  float x[kRadius], y[kRadius], z[kRadius], xy[kRadius], xz[kRadius], yz[kRadius];
};
inline TtiWeights make_tti_weights(const TtiStencil& s) {
  TtiWeights w{};
  for (int m = 0; m < kRadius; ++m) {
    w.x[m] = s.c[0][m];
    w.y[m] = s.c[1][m];
    w.z[m] = s.c[2][m];
    w.xy[m] = 2.0f * s.cxy[m];
    w.xz[m] = 2.0f * s.cxz[m];
    w.yz[m] = 2.0f * s.cyz[m];
  }
  return w;
}

/// C_perp's coefficient of D_t s at the point itself: 2 delta_t - nn_t (the pair sum's own half).
MM_HOST_DEVICE MM_FORCE_INLINE float perp_own(const TtiMediumPoint& m, int t) {
  return (t < 3 ? 2.0f : 0.0f) - nn_component(m, t);
}
/// C_axis's coefficient of D_t p at the point itself: nn_t / a.
MM_HOST_DEVICE MM_FORCE_INLINE float axis_own(const TtiMediumPoint& m, int t) {
  return nn_component(m, t) * m.inv_a;
}
/// The neighbour values of a point for direction t: g_t = nn_t s and h_t = nn_t p / a.
MM_HOST_DEVICE MM_FORCE_INLINE float perp_product(const TtiMediumPoint& m, int t, float s) {
  return nn_component(m, t) * s;
}
MM_HOST_DEVICE MM_FORCE_INLINE float axis_product(const TtiMediumPoint& m, int t, float p) {
  return nn_component(m, t) * (m.inv_a * p);
}

/// kappa_perp, kappa_axis: the coefficients of s(x) and p(x) in 2 perp and 2 axis, 1/m^2.
struct TtiCentre {
  float perp, axis;
};

/// Calls visit(t, di, dj, dk, w) for the 72 neighbours of the 73-point stencil, w signed and
/// weighted (mixed weights doubled), in tti_rhs73's order.
template <class Visit>
MM_HOST_DEVICE MM_FORCE_INLINE void for_each_tti_neighbour(const TtiWeights& w, const Visit& visit) {
MM_UNROLL
  for (int m = 1; m <= kRadius; ++m) {
    const int i = m - 1;
    visit(kXX, m, 0, 0, w.x[i]);
    visit(kXX, -m, 0, 0, w.x[i]);
    visit(kYY, 0, m, 0, w.y[i]);
    visit(kYY, 0, -m, 0, w.y[i]);
    visit(kZZ, 0, 0, m, w.z[i]);
    visit(kZZ, 0, 0, -m, w.z[i]);
    visit(kXY, m, m, 0, w.xy[i]);
    visit(kXY, -m, -m, 0, w.xy[i]);
    visit(kXY, m, -m, 0, -w.xy[i]);
    visit(kXY, -m, m, 0, -w.xy[i]);
    visit(kXZ, m, 0, m, w.xz[i]);
    visit(kXZ, -m, 0, -m, w.xz[i]);
    visit(kXZ, m, 0, -m, -w.xz[i]);
    visit(kXZ, -m, 0, m, -w.xz[i]);
    visit(kYZ, 0, m, m, w.yz[i]);
    visit(kYZ, 0, -m, -m, w.yz[i]);
    visit(kYZ, 0, m, -m, -w.yz[i]);
    visit(kYZ, 0, -m, m, -w.yz[i]);
  }
}

/// One neighbour's share of kappa (neighbour medium m, direction t, signed weight wt, the point's
/// own medium m0): minus its pair weight of each tensor, added to perp and axis.
MM_HOST_DEVICE MM_FORCE_INLINE void add_centre_share(const TtiMediumPoint& m0, const TtiMediumPoint& m, int t,
                                                     float wt, float& perp, float& axis) {
  perp -= wt * (perp_own(m0, t) - nn_component(m, t));
  axis -= wt * (axis_own(m0, t) + axis_own(m, t));
}

/// kappa at a point from the medium around it (`medium(di, dj, dk)` gives a TtiMediumPoint):
/// minus the sum of all 72 pair weights of each tensor. Static; the propagators store it.
template <class AtMedium>
MM_HOST_DEVICE inline TtiCentre tti_centre(const AtMedium& medium, const TtiWeights& w) {
  const TtiMediumPoint m0 = medium(0, 0, 0);
  float perp = 0, axis = 0;
  for_each_tti_neighbour(w, [&](int t, int di, int dj, int dk, float wt) {
    add_centre_share(m0, medium(di, dj, dk), t, wt, perp, axis);
  });
  return {perp, axis};
}

/// The right-hand sides from the split form's sums: perp2 = 2 perp - kappa_perp s(x) and
/// axis2 = 2 axis - kappa_axis p(x) (the neighbour terms), f0 the point's own fields, b = 2 (eps -
/// delta) and inv_a = 1 / a there. Every kernel of the split form ends here.
/// tti_split_rhs_of_a takes a = 1 / inv_a itself (a kernel may form it faster).
MM_HOST_DEVICE MM_FORCE_INLINE TtiRhs tti_split_rhs_of_a(float perp2, float axis2, const TtiFieldPoint& f0,
                                                        const TtiCentre& kappa, float a, float b) {
  const float perp = 0.5f * (kappa.perp * f0.s + perp2);
  const float axis = 0.5f * (kappa.axis * f0.p + axis2);
  return {a * (perp + axis), b * perp};
}
MM_HOST_DEVICE MM_FORCE_INLINE TtiRhs tti_split_rhs(float perp2, float axis2, const TtiFieldPoint& f0,
                                                    const TtiCentre& kappa, float inv_a, float b) {
  return tti_split_rhs_of_a(perp2, axis2, f0, kappa, 1.0f / inv_a, b);
}

/// tti_rhs73 in the split form, for the CPU (tests) and as the definition the staged kernels
/// reorder: one accumulation per neighbour for each of s, p, g_t, h_t.
template <class AtField, class AtMedium>
MM_HOST_DEVICE inline TtiRhs tti_rhs73_split(const AtField& field, const AtMedium& medium,
                                             const TtiCentre& kappa, float b, const TtiWeights& w) {
  const TtiFieldPoint f0 = field(0, 0, 0);
  const TtiMediumPoint m0 = medium(0, 0, 0);
  float ds[6] = {}, dp[6] = {};  // D_t s, D_t p
  float dg = 0, dh = 0;          // sum_t D_t g_t, sum_t D_t h_t
  for_each_tti_neighbour(w, [&](int t, int di, int dj, int dk, float wt) {
    const TtiFieldPoint f = field(di, dj, dk);
    const TtiMediumPoint m = medium(di, dj, dk);
    ds[t] += wt * f.s;
    dp[t] += wt * f.p;
    dg += wt * perp_product(m, t, f.s);
    dh += wt * axis_product(m, t, f.p);
  });
  float perp2 = -dg, axis2 = dh;
  for (int t = 0; t < 6; ++t) {
    perp2 += perp_own(m0, t) * ds[t];
    axis2 += axis_own(m0, t) * dp[t];
  }
  return tti_split_rhs(perp2, axis2, f0, kappa, m0.inv_a, b);
}

// --- The split form where the symmetry axis is the same at every point ---------------------------
// With n constant over the medium (theta and phi constant; delta, eps and v may vary), C_perp =
// I - n n^T is constant: group t's pair weight is 2 delta_t - 2 nn_t, and the product sum
// -D_t g_t = -nn_t D_t s. C_axis = n n^T / a keeps only 1 / a varying: D_t h_t = nn_t D_t r with
// r = p / a. So, term by term from the split form above,
//   2 perp = sum_t 2 (delta_t - nn_t) D_t s + kappa_perp s(x),
//   2 axis = (1/a)(x) sum_t nn_t D_t p + sum_t nn_t D_t r + kappa_axis p(x),
// one accumulation per neighbour of each of s, p and r with weights constant over the model (the
// stencil weight times the direction's factor): no products of the medium, and a staged point
// carries s, p, r instead of s, p and the twelve products. Equal to tti_rhs73 there to fp32
// round-off (tests/kernels/tti_split_test.cpp).

/// The direction factors of a constant axis n: perp[t] = 2 (delta_t - nn_t), axis[t] = nn_t.
struct TtiAxisFactors {
  float perp[6], axis[6];
};
MM_HOST_DEVICE inline TtiAxisFactors tti_axis_factors(const TtiMediumPoint& n) {
  TtiAxisFactors f{};
  for (int t = 0; t < 6; ++t) {
    f.axis[t] = nn_component(n, t);
    f.perp[t] = 2.0f * ((t < 3 ? 1.0f : 0.0f) - f.axis[t]);
  }
  return f;
}

/// The weights a kernel of the constant-axis form applies per direction t and m = 1..4: the split
/// form's weights (mixed ones doubled) times the direction's factors, w[t][m - 1].s for s and
/// w[t][m - 1].a for p and r. The two lie side by side, so that a GPU kernel reading them from
/// its parameters loads both with one 64-bit constant load (ULDC.64): as two arrays they took 80
/// such loads in swic_split_tma's constant-axis kernel, 55 a warp and plane (session 34), now 55.
/// kappa_perp: the perp centre weight (tti_centre), the same at every point of such a model, since
/// C_perp is (kappa_axis is not: it weighs 1 / a around the point).
struct TtiAxisWeightPair {
  float s, a;
};
struct TtiAxisWeights {
  alignas(8) TtiAxisWeightPair w[6][kRadius];
  float kappa_perp;
};
inline TtiAxisWeights make_tti_axis_weights(const TtiWeights& w, const TtiMediumPoint& n) {
  const TtiAxisFactors f = tti_axis_factors(n);
  const float* by_t[6] = {w.x, w.y, w.z, w.xy, w.xz, w.yz};
  TtiAxisWeights aw{};
  for (int t = 0; t < 6; ++t)
    for (int m = 0; m < kRadius; ++m) {
      aw.w[t][m] = {by_t[t][m] * f.perp[t], by_t[t][m] * f.axis[t]};
    }
  aw.kappa_perp = tti_centre([&n](int, int, int) { return n; }, w).perp;
  return aw;
}

/// The right-hand sides from the constant-axis form's sums: S = sum_t perp_t D_t s, A = sum_t
/// axis_t D_t p, B = sum_t axis_t D_t r (neighbours only), with the point's own fields, centre
/// weights, b and 1 / a. Every kernel of the constant-axis form ends here.
/// The GPU kernels of this form pass a = 1 / inv_a from the fast reciprocal (within 1 ulp).
MM_HOST_DEVICE MM_FORCE_INLINE TtiRhs tti_axis_rhs(float S, float A, float B, const TtiFieldPoint& f0,
                                                   const TtiCentre& kappa, float inv_a, float a, float b) {
  return tti_split_rhs_of_a(S, fmaf(inv_a, A, B), f0, kappa, a, b);
}
MM_HOST_DEVICE MM_FORCE_INLINE TtiRhs tti_axis_rhs(float S, float A, float B, const TtiFieldPoint& f0,
                                                   const TtiCentre& kappa, float inv_a, float b) {
  return tti_axis_rhs(S, A, B, f0, kappa, inv_a, 1.0f / inv_a, b);
}

/// tti_rhs73 where the axis is constant (n, every point's), in the form above: `field` and
/// `medium` as for tti_rhs73 (only the medium's 1 / a is read). The definition the kernels of
/// this form reorder.
template <class AtField, class AtMedium>
MM_HOST_DEVICE inline TtiRhs tti_rhs73_axis(const AtField& field, const AtMedium& medium, const TtiMediumPoint& n,
                                            const TtiCentre& kappa, float b, const TtiWeights& w) {
  const TtiAxisFactors f = tti_axis_factors(n);
  float S = 0, A = 0, B = 0;
  for_each_tti_neighbour(w, [&](int t, int di, int dj, int dk, float wt) {
    const TtiFieldPoint x = field(di, dj, dk);
    S += wt * f.perp[t] * x.s;
    A += wt * f.axis[t] * x.p;
    B += wt * f.axis[t] * (x.p * medium(di, dj, dk).inv_a);
  });
  const float inv_a = medium(0, 0, 0).inv_a;
  return tti_axis_rhs(S, A, B, field(0, 0, 0), kappa, inv_a, b);
}

// The rows in the split form: group t of C contributes own_t(x) D_t f + D_t(C_t f) + kappa_t f(x)
// (the expansion above, group by group), so row a of a tensor is rows_of_groups of the groups'
// neighbour terms plus a static centre weight of its own, rows_of_groups of the groups' kappa_t.
// A kernel that streams the split form can then give the CPML its rows (kernels/tti_cpml.hpp)
// without the pair form's per-neighbour products (swic_split_tma's CPML launch).

/// Centre weights of the rows: the coefficients of s(x) in rows.perp[a] and of p(x) in
/// rows.axis[a] (tti_rows73), from the medium around the point. Static; stored per layer point.
struct TtiRowCentres {
  float perp[3], axis[3];
};
template <class AtMedium>
MM_HOST_DEVICE inline TtiRowCentres tti_row_centres(const AtMedium& medium, const TtiWeights& w) {
  const TtiMediumPoint m0 = medium(0, 0, 0);
  float perp[6] = {}, axis[6] = {};  // kappa of each group
  for_each_tti_neighbour(w, [&](int t, int di, int dj, int dk, float wt) {
    add_centre_share(m0, medium(di, dj, dk), t, wt, perp[t], axis[t]);
  });
  return rows_of_groups<TtiRowCentres>(perp, axis);
}

/// The rows from the groups' neighbour terms (perp[t] = own_t(x) D_t s - D_t g_t, axis[t] =
/// own_t(x) D_t p + D_t h_t), the point's own fields f0 and its row centre weights.
MM_HOST_DEVICE MM_FORCE_INLINE TtiRows tti_split_rows(const float (&perp)[6], const float (&axis)[6],
                                                      const TtiFieldPoint& f0, const TtiRowCentres& kappa) {
  TtiRows r = rows_of_groups<TtiRows>(perp, axis);
  for (int a = 0; a < 3; ++a) {
    r.perp[a] = fmaf(kappa.perp[a], f0.s, r.perp[a]);
    r.axis[a] = fmaf(kappa.axis[a], f0.p, r.axis[a]);
  }
  return r;
}

/// The weights of the constant-axis form's rows (the CPML's, tti_axis_rows): each group's weights
/// times its share of a row (row_share), so that a group's term adds to its rows with one weight.
/// Exact: the shares are powers of 2. kappa_perp is the operator's, unscaled (the rows take TtiRowCentres).
inline TtiAxisWeights make_tti_axis_row_weights(const TtiAxisWeights& aw) {
  TtiAxisWeights rw = aw;
  for (int t = 0; t < 6; ++t)
    for (int m = 0; m < kRadius; ++m) {
      rw.w[t][m].s *= row_share(t);
      rw.w[t][m].a *= row_share(t);
    }
  return rw;
}

/// The rows (tti_rows73) from the constant-axis form's row sums: S[a], A[a], B[a] of row a (the
/// groups' terms weighed with make_tti_axis_row_weights), the point's own fields, 1 / a there and
/// its row centre weights. The rows' counterpart of tti_axis_rhs.
MM_HOST_DEVICE MM_FORCE_INLINE TtiRows tti_axis_rows(const float (&S)[3], const float (&A)[3], const float (&B)[3],
                                                     const TtiFieldPoint& f0, float inv_a,
                                                     const TtiRowCentres& kappa) {
  TtiRows r;
  MM_UNROLL
  for (int a = 0; a < 3; ++a) {
    r.perp[a] = fmaf(kappa.perp[a], f0.s, S[a]);
    r.axis[a] = fmaf(kappa.axis[a], f0.p, fmaf(inv_a, A[a], B[a]));
  }
  return r;
}

/// tti_rows73 where the axis is constant (n, every point's), in the constant-axis form: the
/// definition swic_split_tma's CPML launch reorders on such models (tests/kernels/tti_split_test.cpp).
template <class AtField, class AtMedium>
MM_HOST_DEVICE inline TtiRows tti_rows73_axis(const AtField& field, const AtMedium& medium, const TtiMediumPoint& n,
                                              const TtiRowCentres& kappa, const TtiWeights& w) {
  const TtiAxisFactors f = tti_axis_factors(n);
  float S[3] = {}, A[3] = {}, B[3] = {};
  for_each_tti_neighbour(w, [&](int t, int di, int dj, int dk, float wt) {
    const TtiFieldPoint x = field(di, dj, dk);
    const float share = row_share(t), r = x.p * medium(di, dj, dk).inv_a;
    for (int a = 0; a < 3; ++a)
      if (group_in_row(t, a)) {
        S[a] += share * wt * f.perp[t] * x.s;
        A[a] += share * wt * f.axis[t] * x.p;
        B[a] += share * wt * f.axis[t] * r;
      }
  });
  return tti_axis_rows(S, A, B, field(0, 0, 0), medium(0, 0, 0).inv_a, kappa);
}

/// tti_rows73 in the split form (tests, and the definition swic_split_tma's CPML launch reorders).
template <class AtField, class AtMedium>
MM_HOST_DEVICE inline TtiRows tti_rows73_split(const AtField& field, const AtMedium& medium,
                                               const TtiRowCentres& kappa, const TtiWeights& w) {
  const TtiMediumPoint m0 = medium(0, 0, 0);
  float perp[6] = {}, axis[6] = {};
  for_each_tti_neighbour(w, [&](int t, int di, int dj, int dk, float wt) {
    const TtiFieldPoint f = field(di, dj, dk);
    const TtiMediumPoint m = medium(di, dj, dk);
    perp[t] += wt * (perp_own(m0, t) * f.s - perp_product(m, t, f.s));
    axis[t] += wt * (axis_own(m0, t) * f.p + axis_product(m, t, f.p));
  });
  return tti_split_rows(perp, axis, field(0, 0, 0), kappa);
}

/// Largest stable dt (s) of leapfrog with this operator, from the von Neumann symbol of the
/// discrete 73-point system (both fields) for constant medium parameters, maximised over the
/// wavenumbers and over tilt/azimuth (any orientation) for eps <= eps_max, delta in
/// [delta_min, delta_max]. With eps = delta = 0 it equals critical_dt (the isotropic bound).
double tti_critical_dt(double v_max, const std::array<double, 3>& spacing, double eps_max,
                       double delta_min, double delta_max);

/// The angle (degrees, 0 to 90) between the symmetry axes of (theta1, phi1) and (theta2, phi2),
/// radians: the axis is a line, so n and -n are the same axis.
double axis_turn_degrees(float theta1, float phi1, float theta2, float phi2);

/// How sharply the symmetry axis turns over a model: per point the largest angle between its
/// axis and a face neighbour's (axis_turn_degrees).
struct AxisTurns {
  double max_degrees = 0;   // the model's largest turn between face neighbours
  std::int64_t above = 0;   // points that turn by more than the limit toward a neighbour
  std::int64_t first = -1;  // the first of them in C order (-1: none)
};
/// The turns of a model of `shape` (theta, phi: C-order arrays, radians) against `limit_degrees`;
/// `mark(o)` is called once for each point o above it, from several threads (each o by one).
AxisTurns scan_axis_turns(const std::vector<float>& theta, const std::vector<float>& phi, const Index3& shape,
                          double limit_degrees, const std::function<void(std::int64_t)>& mark = {});

}  // namespace minimod::physics
