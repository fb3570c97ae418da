// Convolutional PML (CFS-PML, recursive convolution) for the 2nd-order scalar wave equation, the
// default absorbing boundary (Komatitsch & Martin 2007; second-order form after Pasalic & McGarry
// 2010, as Deepwave uses). Each axis d is stretched, d/dx_d -> (1/s_d) d/dx_d with
// s_d = 1 + d_d / (alpha_d + i omega); in time, (1/s_d) f = f + conv_d(f) with the memory update
// conv^n = a conv^(n-1) + b f^n, a = exp(-(d + alpha) dt), b = d / (d + alpha) (a - 1).
//   psi_d  = conv_d(du/dx_d)                        (updated first, from u^n)
//   zeta_d = conv_d(d2u/dx_d^2 + dpsi_d/dx_d)
//   PML Laplacian = sum_d [d2u/dx_d^2 + dpsi_d/dx_d + zeta_d]
// psi_d and zeta_d are zero wherever axis d has no damping (b_d = 0), so outside the PML the
// operator is the plain Laplacian. Defined once for the CPU and CUDA backends.
#pragma once
#include <cmath>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "physics/box3.hpp"
#include "physics/host_device.hpp"
#include "physics/stencil.hpp"
#include "pml/regions.hpp"

namespace minimod::pml {

/// Which absorbing boundary: Minimod's damped equation (compatibility) or the CPML (default).
enum class PmlKind { minimod, cpml };

/// 1D first-derivative weights w_m (times h), 8th order: m = 1..4.
constexpr std::array<double, 4> kFirstDerivative8 = {4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0,
                                                     -1.0 / 280.0};

/// Per-axis derivative weights (1/m and 1/m^2).
struct AxisDerivatives {
  float c2[3][physics::kRadius + 1];  // second derivative, m = 0..4
  float c1[3][physics::kRadius];      // first derivative, m = 1..4
};
AxisDerivatives make_axis_derivatives(const std::array<double, 3>& spacing);

struct CpmlParams {
  double dt = 0;             // s
  double velocity = 0;       // m/s: profile tuned for this velocity (the model's maximum)
  double reflection = 1e-5;  // R: theoretical normal-incidence reflection
  double frequency = 10;     // Hz: dominant frequency; alpha_max = pi * frequency
  /// Profile power p of d(r) = d0 r^p. Measured (tests/pml/absorption_test.cpp, width 20, layered
  /// model): p = 2, R = 1e-3 left 9e-4 of the boundary-free traces; p = 4, R = 1e-5 leaves 5e-6.
  double power = 4;
};

/// a_d[i], b_d[i] for i = 0 .. n_d - 1 (b = 0 outside the PML).
struct CpmlProfiles {
  std::array<std::vector<float>, 3> a, b;
};
CpmlProfiles make_cpml_profiles(const physics::Index3& shape, const std::array<double, 3>& spacing,
                                const PmlWidths& widths, const CpmlParams& params);

/// Offset along axis A as an accessor offset (di, dj, dk).
template <int A, class At>
MM_HOST_DEVICE MM_FORCE_INLINE float along(const At& at, int m) {
  return A == 0 ? at(m, 0, 0) : (A == 1 ? at(0, m, 0) : at(0, 0, m));
}

/// d2f/dx_A^2, 8th order.
template <int A, class At>
MM_HOST_DEVICE MM_FORCE_INLINE float second_derivative8(const At& at, const AxisDerivatives& w) {
  float s = w.c2[A][0] * at(0, 0, 0);
  s += w.c2[A][1] * (along<A>(at, 1) + along<A>(at, -1));
  s += w.c2[A][2] * (along<A>(at, 2) + along<A>(at, -2));
  s += w.c2[A][3] * (along<A>(at, 3) + along<A>(at, -3));
  s += w.c2[A][4] * (along<A>(at, 4) + along<A>(at, -4));
  return s;
}

/// df/dx_A, 8th order. The fused multiply-adds are spelled out: left to contraction, a*b + c*d
/// may fuse either product, and the compiler chose differently where the same derivative was
/// inlined into different loops (the TTI CPML's flux derivatives by strides and by lookups),
/// which broke the bitwise equality of distributed runs.
template <int A, class At>
MM_HOST_DEVICE MM_FORCE_INLINE float first_derivative8(const At& at, const AxisDerivatives& w) {
  float s = w.c1[A][0] * (along<A>(at, 1) - along<A>(at, -1));
  s = fmaf(w.c1[A][1], along<A>(at, 2) - along<A>(at, -2), s);
  s = fmaf(w.c1[A][2], along<A>(at, 3) - along<A>(at, -3), s);
  s = fmaf(w.c1[A][3], along<A>(at, 4) - along<A>(at, -4), s);
  return s;
}

/// psi_A <- a psi_A + b du/dx_A.
template <int A, class At>
MM_HOST_DEVICE MM_FORCE_INLINE float cpml_psi_next(float psi, float a, float b, const At& at_u,
                                                   const AxisDerivatives& w) {
  return fmaf(b, first_derivative8<A>(at_u, w), a * psi);  // spelled out, as in first_derivative8
}

/// c ? x : y. On the host a blend of the bits, which GCC if-converts in a vector loop with AVX2
/// as with AVX-512: the conditional form left the CPU's cpml_row scalar on an AVX2 machine
/// ("control flow in loop"; ctest -R CpuVectorLoops). The same value either way; the GPU keeps
/// the select.
MM_HOST_DEVICE MM_FORCE_INLINE float select_value(bool c, float x, float y) {
#if defined(__CUDA_ARCH__)
  return c ? x : y;
#else
  std::uint32_t ux, uy;
  std::memcpy(&ux, &x, sizeof ux);
  std::memcpy(&uy, &y, sizeof uy);
  const std::uint32_t mask = 0u - static_cast<std::uint32_t>(c);
  const std::uint32_t bits = (ux & mask) | (uy & ~mask);
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
#endif
}

/// Axis A's part of the PML Laplacian; updates zeta_A in place. With b = 0 it is d2u/dx_A^2.
template <int A, class AtU, class AtPsi>
MM_HOST_DEVICE MM_FORCE_INLINE float cpml_axis_term(const AtU& at_u, const AtPsi& at_psi, float a,
                                                    float b, float& zeta,
                                                    const AxisDerivatives& w) {
  const float d2 = second_derivative8<A>(at_u, w);
  const float l = d2 + first_derivative8<A>(at_psi, w);
  zeta = a * zeta + b * l;  // stays 0 where b = 0 (a = 1 there)
  return select_value(b == 0.0f, d2, l + zeta);
}

}  // namespace minimod::pml
