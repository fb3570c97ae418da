// One grid point of the acoustic TTI step, shared by the CPU reference and the CUDA kernels: the
// self-adjoint 73-point right-hand sides (physics/tti.hpp), leapfrog inside the inner region, and
// Minimod's damped update in the PML slabs (its auxiliary term only where the medium is isotropic:
// kernels/tti_propagator.hpp says why).
#pragma once
#include "physics/box3.hpp"
#include "physics/tti.hpp"
#include "physics/view3.hpp"
#include "pml/pml_update.hpp"

namespace minimod::kernels {

/// Everything a point update reads and writes; all views share one layout.
struct TtiStepArgs {
  physics::View3<const float> p, q;           // time level n
  physics::View3<float> p_next, q_next;       // hold n - 1 on entry
  physics::View3<float> aux_p, aux_q;         // PML auxiliary fields
  physics::View3<const float> v2dt2, a, b;    // (v dt)^2, 1 + 2 delta, 2 (eps - delta)
  physics::View3<const float> perp[6], axis[6];  // the operator's tensors (halo filled)
  const float* eta[3];                        // eta[axis][i + 1], i = -1 .. n
  float inv_4h2[3];
  physics::TtiStencil stencil;
  physics::Box3 inner;                        // points outside it are PML
};

/// Reads through __ldg on the GPU (read-only data path), plainly on the host.
template <class T>
MM_HOST_DEVICE MM_FORCE_INLINE float load(const T* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

MM_HOST_DEVICE MM_FORCE_INLINE void tti_update_point(const TtiStepArgs& g, int i, int j, int k) {
  const std::int64_t o = g.p.offset(i, j, k), sx = g.p.sx, sy = g.p.sy;
  const float* pp = g.p.origin + o;
  const float* qp = g.q.origin + o;
  const auto at_p = [pp, sx, sy](int di, int dj, int dk) { return load(pp + di * sx + dj * sy + dk); };
  const auto at_q = [qp, sx, sy](int di, int dj, int dk) { return load(qp + di * sx + dj * sy + dk); };
  const auto at_s = [pp, qp, sx, sy](int di, int dj, int dk) {
    const std::int64_t d = di * sx + dj * sy + dk;
    return load(pp + d) + load(qp + d);
  };
  const auto at_perp = [&g, o, sx, sy](int c, int di, int dj, int dk) {
    return load(g.perp[c].origin + o + di * sx + dj * sy + dk);
  };
  const auto at_axis = [&g, o, sx, sy](int c, int di, int dj, int dk) {
    return load(g.axis[c].origin + o + di * sx + dj * sy + dk);
  };
  const float a = load(g.a.origin + o), b = load(g.b.origin + o), v2 = load(g.v2dt2.origin + o);
  const auto r = physics::tti_rhs(physics::div_tensor_grad73(at_s, at_perp, g.stencil),
                                  physics::div_tensor_grad73(at_p, at_axis, g.stencil), a, b);
  float* pn = g.p_next.origin + o;
  float* qn = g.q_next.origin + o;
  if (g.inner.contains(i, j, k)) {
    *pn = physics::leapfrog(*pn, *pp, v2, r.p);
    *qn = physics::leapfrog(*qn, *qp, v2, r.q);
    return;
  }
  const float* ex = g.eta[0] + 1;
  const float* ey = g.eta[1] + 1;
  const float* ez = g.eta[2] + 1;
  const float eta = ex[i] + ey[j] + ez[k];
  const bool isotropic = a == 1.0f && b == 0.0f;
  const auto damped = [&](const auto& at, float* next, float* aux, float rhs) {
    const float a0 = *aux;
    *next = pml::pml_u_next(*next, at(0, 0, 0), v2, rhs, a0, eta);
    if (!isotropic) return;
    const float grad = pml::pml_gradient_term(ex[i + 1], ex[i - 1], at(1, 0, 0), at(-1, 0, 0), g.inv_4h2[0]) +
                       pml::pml_gradient_term(ey[j + 1], ey[j - 1], at(0, 1, 0), at(0, -1, 0), g.inv_4h2[1]) +
                       pml::pml_gradient_term(ez[k + 1], ez[k - 1], at(0, 0, 1), at(0, 0, -1), g.inv_4h2[2]);
    *aux = pml::pml_aux_next(a0, eta, grad);
  };
  damped(at_p, pn, g.aux_p.origin + o, r.p);
  damped(at_q, qn, g.aux_q.origin + o, r.q);
}

}  // namespace minimod::kernels
