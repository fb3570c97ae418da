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

/// Everything a point update reads and writes; all views share one layout. Per point the update
/// reads p, q, p_prev, q_prev, (v dt)^2, b and the medium (nx, ny, nz, 1 / a) at the point and its
/// neighbours: 48 B from memory when the neighbours' reads hit the caches (56 B for the split form,
/// which also reads kappa_perp and kappa_axis).
struct TtiStepArgs {
  physics::View3<const float> p, q;           // time level n
  physics::View3<float> p_next, q_next;       // hold n - 1 on entry
  physics::View3<float> aux_p, aux_q;         // PML auxiliary fields
  physics::View3<const float> v2dt2, b;       // (v dt)^2, 2 (eps - delta)
  physics::View3<const float> nx, ny, nz, inv_a;  // physics::TtiMediumPoint, halo filled
  // The split form's static centre weights (physics::tti_centre) at the grid points, for the
  // kernels that evaluate it (swic); empty where the propagator evaluates only the pair form.
  physics::View3<const float> kappa_perp, kappa_axis;
  physics::TtiWeights weights;                // the split form's weights (make_tti_weights)
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

/// The new p and q of an inner point (leapfrog), given the right-hand sides.
MM_HOST_DEVICE MM_FORCE_INLINE void tti_leapfrog(const TtiStepArgs& g, std::int64_t o, const physics::TtiRhs& r) {
  const float v2 = load(g.v2dt2.origin + o);
  float* pn = g.p_next.origin + o;
  float* qn = g.q_next.origin + o;
  *pn = physics::leapfrog(*pn, load(g.p.origin + o), v2, r.p);
  *qn = physics::leapfrog(*qn, load(g.q.origin + o), v2, r.q);
}

/// The field and medium accessors of tti_rhs73 reading the step's arrays around offset o.
struct TtiGlobalPoint {
  const TtiStepArgs& g;
  std::int64_t o;
  MM_HOST_DEVICE MM_FORCE_INLINE std::int64_t at(int di, int dj, int dk) const {
    return o + di * g.p.sx + dj * g.p.sy + dk;
  }
  MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiFieldPoint field(int di, int dj, int dk) const {
    const std::int64_t d = at(di, dj, dk);
    const float p = load(g.p.origin + d);
    return {p + load(g.q.origin + d), p};
  }
  MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiMediumPoint medium(int di, int dj, int dk) const {
    const std::int64_t d = at(di, dj, dk);
    return {load(g.nx.origin + d), load(g.ny.origin + d), load(g.nz.origin + d), load(g.inv_a.origin + d)};
  }
};

/// The new p and q of point (i, j, k) at layout offset o given its right-hand sides: leapfrog
/// inside g.inner, the damped update (with the auxiliary fields) outside.
MM_HOST_DEVICE MM_FORCE_INLINE void tti_update_from_rhs(const TtiStepArgs& g, int i, int j, int k, std::int64_t o,
                                                        const physics::TtiRhs& r) {
  const std::int64_t sx = g.p.sx, sy = g.p.sy;
  if (g.inner.contains(i, j, k)) {
    tti_leapfrog(g, o, r);
    return;
  }
  const float* pp = g.p.origin + o;
  const float* qp = g.q.origin + o;
  const auto at_p = [pp, sx, sy](int di, int dj, int dk) { return load(pp + di * sx + dj * sy + dk); };
  const auto at_q = [qp, sx, sy](int di, int dj, int dk) { return load(qp + di * sx + dj * sy + dk); };
  const float v2 = load(g.v2dt2.origin + o);
  float* pn = g.p_next.origin + o;
  float* qn = g.q_next.origin + o;
  const float* ex = g.eta[0] + 1;
  const float* ey = g.eta[1] + 1;
  const float* ez = g.eta[2] + 1;
  const float eta = ex[i] + ey[j] + ez[k];
  const bool isotropic = load(g.inv_a.origin + o) == 1.0f && load(g.b.origin + o) == 0.0f;
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

/// The split form's centre weights of point o from the medium arrays around it (halo filled).
MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiCentre tti_centre_at(const TtiStepArgs& g, std::int64_t o) {
  const TtiGlobalPoint pt{g, o};
  return physics::tti_centre([&pt](int di, int dj, int dk) { return pt.medium(di, dj, dk); }, g.weights);
}

/// One point of the step: the right-hand sides from the arrays (tti_rhs73), then the update.
MM_HOST_DEVICE MM_FORCE_INLINE void tti_update_point(const TtiStepArgs& g, int i, int j, int k) {
  const std::int64_t o = g.p.offset(i, j, k);
  const TtiGlobalPoint pt{g, o};
  const auto r = physics::tti_rhs73([&pt](int di, int dj, int dk) { return pt.field(di, dj, dk); },
                                    [&pt](int di, int dj, int dk) { return pt.medium(di, dj, dk); },
                                    load(g.b.origin + o), g.stencil);
  tti_update_from_rhs(g, i, j, k, o, r);
}

}  // namespace minimod::kernels
