// Acoustic TTI (pseudo-acoustic, coupled p and q; DESIGN.md §3, notes/semi-stencil-tti-digest.md):
//   p_tt = v^2 [ (1 + 2 delta) (lap - H)(p + q) + H p ],   q_tt = v^2 [ 2 (eps - delta) (lap - H)(p + q) ]
//   H = (n . grad)^2,  n = (sin theta cos phi, sin theta sin phi, cos theta)
// with the 73-point compact stencil: the 25-point star for the pure second derivatives and 16
// diagonal points in each coordinate plane for the mixed ones,
//   d2f/dx dy ~ 1/(4 dx dy) sum_m a_m [f(+m,+m) + f(-m,-m) - f(+m,-m) - f(-m,+m)],
// a_m the 1D second-derivative weights (exact for f = xy since sum_m a_m m^2 = 1). The propagators
// use its self-adjoint form, div(C grad f) with the same 73 points (div_tensor_grad73), which stays
// stable where the medium varies. Defined once for the CPU reference and every CUDA family.
#pragma once
#include <array>
#include <cmath>

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

/// The six second derivatives of one field at the centre of `at`.
struct Hessian {
  float xx, yy, zz, xy, xz, yz;
};

template <class At>
MM_HOST_DEVICE MM_FORCE_INLINE Hessian hessian73(const At& at, const TtiStencil& s) {
  const float f0 = at(0, 0, 0);
  Hessian d{s.c0[0] * f0, s.c0[1] * f0, s.c0[2] * f0, 0.0f, 0.0f, 0.0f};
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int m = 1; m <= kRadius; ++m) {
    d.xx += s.c[0][m - 1] * (at(m, 0, 0) + at(-m, 0, 0));
    d.yy += s.c[1][m - 1] * (at(0, m, 0) + at(0, -m, 0));
    d.zz += s.c[2][m - 1] * (at(0, 0, m) + at(0, 0, -m));
    d.xy += s.cxy[m - 1] * ((at(m, m, 0) + at(-m, -m, 0)) - (at(m, -m, 0) + at(-m, m, 0)));
    d.xz += s.cxz[m - 1] * ((at(m, 0, m) + at(-m, 0, -m)) - (at(m, 0, -m) + at(-m, 0, m)));
    d.yz += s.cyz[m - 1] * ((at(0, m, m) + at(0, -m, -m)) - (at(0, m, -m) + at(0, -m, m)));
  }
  return d;
}

MM_HOST_DEVICE MM_FORCE_INLINE float laplacian_of(const Hessian& d) { return d.xx + d.yy + d.zz; }

/// H f = (n . grad)^2 f.
MM_HOST_DEVICE MM_FORCE_INLINE float h_operator(const Hessian& d, const TtiAxis& n) {
  return n.nx * n.nx * d.xx + n.ny * n.ny * d.yy + n.nz * n.nz * d.zz +
         2.0f * (n.nx * n.ny * d.xy + n.nx * n.nz * d.xz + n.ny * n.nz * d.yz);
}

/// Components of a symmetric 3x3 coefficient tensor, in this order.
enum TensorComponent { kXX = 0, kYY, kZZ, kXY, kXZ, kYZ };

/// div(C grad f) with the 73-point stencil in symmetric (self-adjoint) form: every stencil pair
/// (x, y) contributes w * (C(x) + C(y)) / 2 * (f(y) - f(x)), so the discrete operator is symmetric
/// for a varying tensor C and equals C : Hessian(f) (hessian73) where C is constant.
/// `f(di, dj, dk)` reads the field, `c(component, di, dj, dk)` the tensor.
template <class AtF, class AtC>
MM_HOST_DEVICE MM_FORCE_INLINE float div_tensor_grad73(const AtF& f, const AtC& c, const TtiStencil& s) {
  const float f0 = f(0, 0, 0);
  const float cxx = c(kXX, 0, 0, 0), cyy = c(kYY, 0, 0, 0), czz = c(kZZ, 0, 0, 0);
  const float cxy = c(kXY, 0, 0, 0), cxz = c(kXZ, 0, 0, 0), cyz = c(kYZ, 0, 0, 0);
  // One pair at offset (di, dj, dk) of component t, weight w.
  const auto pair = [&](int t, float c0, int di, int dj, int dk) {
    return 0.5f * (c0 + c(t, di, dj, dk)) * (f(di, dj, dk) - f0);
  };
  float sum = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int m = 1; m <= kRadius; ++m) {
    sum += s.c[0][m - 1] * (pair(kXX, cxx, m, 0, 0) + pair(kXX, cxx, -m, 0, 0));
    sum += s.c[1][m - 1] * (pair(kYY, cyy, 0, m, 0) + pair(kYY, cyy, 0, -m, 0));
    sum += s.c[2][m - 1] * (pair(kZZ, czz, 0, 0, m) + pair(kZZ, czz, 0, 0, -m));
    // Mixed terms count twice (C_xy d2/dxdy + C_yx d2/dydx).
    sum += 2.0f * s.cxy[m - 1] * ((pair(kXY, cxy, m, m, 0) + pair(kXY, cxy, -m, -m, 0)) -
                                  (pair(kXY, cxy, m, -m, 0) + pair(kXY, cxy, -m, m, 0)));
    sum += 2.0f * s.cxz[m - 1] * ((pair(kXZ, cxz, m, 0, m) + pair(kXZ, cxz, -m, 0, -m)) -
                                  (pair(kXZ, cxz, m, 0, -m) + pair(kXZ, cxz, -m, 0, m)));
    sum += 2.0f * s.cyz[m - 1] * ((pair(kYZ, cyz, 0, m, m) + pair(kYZ, cyz, 0, -m, -m)) -
                                  (pair(kYZ, cyz, 0, m, -m) + pair(kYZ, cyz, 0, -m, m)));
  }
  return sum;
}

/// The two tensors of the self-adjoint TTI operator at a point: C_perp = I - n n^T (the Laplacian
/// across the symmetry axis, lap - H) and C_axis = n n^T / a (H, divided by a = 1 + 2 delta).
struct TtiTensors {
  float perp[6], axis[6];
};
MM_HOST_DEVICE MM_FORCE_INLINE TtiTensors tti_tensors(const TtiAxis& n, float a) {
  const float nn[6] = {n.nx * n.nx, n.ny * n.ny, n.nz * n.nz, n.nx * n.ny, n.nx * n.nz, n.ny * n.nz};
  TtiTensors t{};
  for (int c = 0; c < 6; ++c) {
    t.perp[c] = (c < 3 ? 1.0f : 0.0f) - nn[c];
    t.axis[c] = nn[c] / a;
  }
  return t;
}

/// Right-hand sides (without v^2) of the p and q equations, self-adjoint form: with
/// a = 1 + 2 delta and b = 2 (eps - delta),
///   rp = a [ div(C_perp grad (p + q)) + div(C_axis grad p) ],   rq = b div(C_perp grad (p + q)).
/// For a constant medium this is a (lap - H)(p + q) + H p and b (lap - H)(p + q) (DESIGN.md §3); the
/// symmetric form keeps the system stable where tilt and delta vary (a pointwise n n^T : Hessian
/// grew exponentially there). `perp_s` = div(C_perp grad (p + q)), `axis_p` = div(C_axis grad p).
struct TtiRhs {
  float p, q;
};
MM_HOST_DEVICE MM_FORCE_INLINE TtiRhs tti_rhs(float perp_s, float axis_p, float a, float b) {
  return {a * (perp_s + axis_p), b * perp_s};
}

/// Largest stable dt (s) of leapfrog with this operator, from the von Neumann symbol of the
/// discrete 73-point system (both fields) for constant medium parameters, maximised over the
/// wavenumbers and over tilt/azimuth (any orientation) for eps <= eps_max, delta in
/// [delta_min, delta_max]. With eps = delta = 0 it equals critical_dt (the isotropic bound).
double tti_critical_dt(double v_max, const std::array<double, 3>& spacing, double eps_max,
                       double delta_min, double delta_max);

}  // namespace minimod::physics
