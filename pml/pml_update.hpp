// Pointwise PML update for the 2nd-order acoustic equation, Minimod's formulation
// (notes/sai2020-digest.md §1.4): a damped wave equation u_tt + 2d u_t + d^2 u = v^2 (lap u + aux)
// with aux_t + d aux = -grad d . grad u, discretised with eta = d dt. Defined once for all backends.
#pragma once
#include "physics/host_device.hpp"

namespace minimod::pml {

/// 1 / ((1 + 2 eta)(1 + eta)): both updates' denominators from one reciprocal (a caller that
/// inlines both computes it once). On the GPU the reciprocal instruction (rcp.approx, within
/// 1 ulp) instead of an IEEE division: with two IEEE divisions (and their slow-path calls) the
/// layer's kernel was bound by its instruction count; this took 30% of them away
/// (docs/kernels.md, bench/results/2026-11-24-h100-session4.md). The instruction itself, not
/// __fdividef(1, d): d >= 1 (eta >= 0), so the latter's guard for tiny divisors (four more
/// instructions a point) never changes the result.
MM_HOST_DEVICE MM_FORCE_INLINE float pml_inverse_denominators(float eta) {
  const float d = (1.0f + 2.0f * eta) * (1.0f + eta);
#if defined(__CUDA_ARCH__)
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
  return r;
#else
  return 1.0f / d;
#endif
}

/// u_next = ((2 + 2 eta - eta^2) u - u_prev + v2dt2 (lap + aux)) / (1 + 2 eta).
MM_HOST_DEVICE MM_FORCE_INLINE float pml_u_next(float u_prev, float u, float v2dt2, float lap,
                                                float aux, float eta) {
  return ((2.0f + 2.0f * eta - eta * eta) * u - u_prev + v2dt2 * (lap + aux)) *
         ((1.0f + eta) * pml_inverse_denominators(eta));
}

/// One axis' term of grad(eta).grad(u) with centred differences: (eta+ - eta-)(u+ - u-) / (4 h^2).
MM_HOST_DEVICE MM_FORCE_INLINE float pml_gradient_term(float eta_plus, float eta_minus, float u_plus,
                                                       float u_minus, float inv_4h2) {
  return (eta_plus - eta_minus) * (u_plus - u_minus) * inv_4h2;
}

/// aux_next = (aux - sum_d gradient_term_d) / (1 + eta).
MM_HOST_DEVICE MM_FORCE_INLINE float pml_aux_next(float aux, float eta, float gradient_sum) {
  return (aux - gradient_sum) * ((1.0f + 2.0f * eta) * pml_inverse_denominators(eta));
}

}  // namespace minimod::pml
