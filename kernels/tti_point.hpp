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
  bool vti = false;                           // AcousticTtiProblem::vti: tti_rhs_at takes vti_rhs25
  // AcousticTtiProblem::constant_axis: swic_split_tma takes the constant-axis form with these
  // weights (physics::make_tti_axis_weights of the model's axis).
  bool constant_axis = false;
  physics::TtiAxisWeights axis_weights{};
  physics::TtiAxisWeights axis_row_weights{};  // make_tti_axis_row_weights of them: the CPML launch's rows
  physics::TtiMediumPoint axis{};  // the model's axis where constant_axis (its inv_a unused): TtiAxisMedium's
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

/// What Minimod's damped update reads at its point besides p and q around it.
struct TtiLayerPoint {
  float v2dt2, p_prev, q_prev, aux_p, aux_q;
  bool isotropic;  // 1 / a == 1 and b == 0: the auxiliary term applies
};

/// The damped update's results: the new p and q, and the auxiliary fields (unchanged where the
/// medium is anisotropic).
struct TtiLayerUpdate {
  float p_next, q_next, aux_p, aux_q;
};

/// Minimod's damped update of point (i, j, k) outside g.inner, given its right-hand sides; at_p
/// and at_q give p and q at offsets (di, dj, dk) of at most 1 along one axis (the neighbours only
/// where pt.isotropic).
template <class AtP, class AtQ>
MM_HOST_DEVICE MM_FORCE_INLINE TtiLayerUpdate tti_damped_update(const TtiStepArgs& g, int i, int j, int k,
                                                                const TtiLayerPoint& pt, const AtP& at_p,
                                                                const AtQ& at_q, const physics::TtiRhs& r) {
  const float* ex = g.eta[0] + 1;
  const float* ey = g.eta[1] + 1;
  const float* ez = g.eta[2] + 1;
  const float eta = ex[i] + ey[j] + ez[k];
  const auto damped = [&](const auto& at, float prev, float a0, float rhs, float& next, float& aux) {
    next = pml::pml_u_next(prev, at(0, 0, 0), pt.v2dt2, rhs, a0, eta);
    aux = a0;
    if (!pt.isotropic) return;
    const float grad = pml::pml_gradient_term(ex[i + 1], ex[i - 1], at(1, 0, 0), at(-1, 0, 0), g.inv_4h2[0]) +
                       pml::pml_gradient_term(ey[j + 1], ey[j - 1], at(0, 1, 0), at(0, -1, 0), g.inv_4h2[1]) +
                       pml::pml_gradient_term(ez[k + 1], ez[k - 1], at(0, 0, 1), at(0, 0, -1), g.inv_4h2[2]);
    aux = pml::pml_aux_next(a0, eta, grad);
  };
  TtiLayerUpdate u;
  damped(at_p, pt.p_prev, pt.aux_p, r.p, u.p_next, u.aux_p);
  damped(at_q, pt.q_prev, pt.aux_q, r.q, u.q_next, u.aux_q);
  return u;
}

/// Stores a damped update at layout offset o (the auxiliary fields only where they changed).
MM_HOST_DEVICE MM_FORCE_INLINE void tti_store_layer(const TtiStepArgs& g, std::int64_t o, const TtiLayerUpdate& u,
                                                    bool isotropic) {
  g.p_next.origin[o] = u.p_next;
  g.q_next.origin[o] = u.q_next;
  if (!isotropic) return;
  g.aux_p.origin[o] = u.aux_p;
  g.aux_q.origin[o] = u.aux_q;
}

/// p or q around a point through the step's arrays (plain loads): an accessor for tti_damped_update.
struct TtiGlobalField {
  const float* centre;
  std::int64_t sx, sy;
  MM_HOST_DEVICE MM_FORCE_INLINE float operator()(int di, int dj, int dk) const {
    return load(centre + di * sx + dj * sy + dk);
  }
};

/// The new p and q of point (i, j, k) at layout offset o given its right-hand sides: leapfrog
/// inside g.inner, the damped update (with the auxiliary fields) outside.
MM_HOST_DEVICE MM_FORCE_INLINE void tti_update_from_rhs(const TtiStepArgs& g, int i, int j, int k, std::int64_t o,
                                                        const physics::TtiRhs& r) {
  if (g.inner.contains(i, j, k)) {
    tti_leapfrog(g, o, r);
    return;
  }
  const TtiLayerPoint pt{load(g.v2dt2.origin + o), g.p_next.origin[o], g.q_next.origin[o], g.aux_p.origin[o],
                         g.aux_q.origin[o], load(g.inv_a.origin + o) == 1.0f && load(g.b.origin + o) == 0.0f};
  const TtiGlobalField at_p{g.p.origin + o, g.p.sx, g.p.sy}, at_q{g.q.origin + o, g.p.sx, g.p.sy};
  tti_store_layer(g, o, tti_damped_update(g, i, j, k, pt, at_p, at_q, r), pt.isotropic);
}

/// The split form's centre weights of point o from the medium arrays around it (halo filled).
MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiCentre tti_centre_at(const TtiStepArgs& g, std::int64_t o) {
  const TtiGlobalPoint pt{g, o};
  return physics::tti_centre([&pt](int di, int dj, int dk) { return pt.medium(di, dj, dk); }, g.weights);
}

/// The right-hand sides at offset o from the step's arrays: tti_rhs73, or its VTI form vti_rhs25
/// (Vti; where g.vti). Branch-free, so the CPU reference evaluates a row of them as one vector loop.
template <bool Vti>
MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiRhs tti_rhs_of(const TtiStepArgs& g, std::int64_t o) {
  const TtiGlobalPoint pt{g, o};
  const auto field = [&pt](int di, int dj, int dk) { return pt.field(di, dj, dk); };
  const auto medium = [&pt](int di, int dj, int dk) { return pt.medium(di, dj, dk); };
  if constexpr (Vti) return physics::vti_rhs25(field, medium, load(g.b.origin + o), g.stencil);
  else return physics::tti_rhs73(field, medium, load(g.b.origin + o), g.stencil);
}

/// The medium around offset o of a model of one axis n (g.constant_axis, g.axis): only 1 / a from
/// memory. tti_rhs73 and tti_rows73 through it are the same arithmetic on the same values as
/// through TtiGlobalPoint::medium (bit for bit), and with n a local of the caller's row loop the
/// axis's products are the same for every point of it, computed once.
struct TtiAxisMedium {
  physics::TtiMediumPoint n;
  const float* inv_a;  // at the point
  std::int64_t sx, sy;
  MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiMediumPoint operator()(int di, int dj, int dk) const {
    return {n.nx, n.ny, n.nz, load(inv_a + di * sx + dj * sy + dk)};
  }
};

/// tti_rhs_of where the model has one axis n (g.constant_axis; the CPU reference's row loops).
MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiRhs tti_rhs_axis_of(const TtiStepArgs& g, std::int64_t o,
                                                              const physics::TtiMediumPoint& n) {
  const TtiGlobalPoint pt{g, o};
  const auto field = [&pt](int di, int dj, int dk) { return pt.field(di, dj, dk); };
  return physics::tti_rhs73(field, TtiAxisMedium{n, g.inv_a.origin + o, g.p.sx, g.p.sy}, load(g.b.origin + o),
                            g.stencil);
}

/// tti_rhs_of for the step's operator (g.vti), for the kernels that take one point at a time.
MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiRhs tti_rhs_at(const TtiStepArgs& g, std::int64_t o) {
  return g.vti ? tti_rhs_of<true>(g, o) : tti_rhs_of<false>(g, o);
}

/// An inner point (g.inner) at offset o: the right-hand sides, then the leapfrog.
template <bool Vti>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_inner_point(const TtiStepArgs& g, std::int64_t o) {
  tti_leapfrog(g, o, tti_rhs_of<Vti>(g, o));
}

/// One point of the step: the right-hand sides from the arrays (tti_rhs73), then the update.
MM_HOST_DEVICE MM_FORCE_INLINE void tti_update_point(const TtiStepArgs& g, int i, int j, int k) {
  const std::int64_t o = g.p.offset(i, j, k);
  tti_update_from_rhs(g, i, j, k, o, tti_rhs_at(g, o));
}

}  // namespace minimod::kernels
