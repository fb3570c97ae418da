// One grid point of the acoustic TTI step, shared by the CPU reference and the CUDA kernels: the
// self-adjoint 73-point right-hand sides (physics/tti.hpp), leapfrog inside the inner region, and
// Minimod's damped update in the PML slabs with its auxiliary term derived for the TTI operator
// (tti_layer_gradients; kernels/tti_propagator.hpp).
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
  float inv_2h[3];                            // 1 / (2 h) per axis: the layer's centred differences
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

/// What Minimod's damped update reads at its point besides p and q around it.
struct TtiLayerPoint {
  float v2dt2, p_prev, q_prev, aux_p, aux_q;
  physics::TtiMediumPoint m;  // the symmetry axis and 1 / a
  float b;                    // 2 (eps - delta)
};

/// The damped update's results: the new p and q, and the auxiliary fields.
struct TtiLayerUpdate {
  float p_next, q_next, aux_p, aux_q;
};

/// The sources of the layer's auxiliary fields: Minimod's grad(eta) . grad(u), which comes from
/// stretching the Laplacian's coordinates, taken through the TTI operator instead. Each
/// div(C grad f) of the right-hand sides (physics/tti.hpp) gives grad(eta) . C grad(f), so with
/// s = p + q, C_perp = I - n n^T and C_axis = n n^T / a:
///   p: a [grad eta . C_perp grad s + grad eta . C_axis grad p] = a perp + (grad eta . n)(n . grad p),
///   q: b grad eta . C_perp grad s = b perp,  perp = grad eta . grad s - (grad eta . n)(n . grad s),
/// by centred differences. For eps = delta = 0 and q = 0 this is Minimod's term (the isotropic
/// propagator's layer); the Laplacian's term alone in an anisotropic medium made the layer grow
/// without bound, and a sponge there reflected (docs/tti.md).
struct TtiLayerGradients {
  float p, q;
};
template <class AtP, class AtQ>
MM_HOST_DEVICE MM_FORCE_INLINE TtiLayerGradients tti_layer_gradients(const TtiStepArgs& g, int i, int j, int k,
                                                                     const TtiLayerPoint& pt, const AtP& at_p,
                                                                     const AtQ& at_q) {
  const int at[3] = {i, j, k};
  float en = 0, es = 0, ns = 0, np = 0;
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    const int di = a == 0, dj = a == 1, dk = a == 2;
    const float* eta = g.eta[a] + 1;
    const float de = (eta[at[a] + 1] - eta[at[a] - 1]) * g.inv_2h[a];
    const float dp = (at_p(di, dj, dk) - at_p(-di, -dj, -dk)) * g.inv_2h[a];
    const float ds = dp + (at_q(di, dj, dk) - at_q(-di, -dj, -dk)) * g.inv_2h[a];
    const float n = a == 0 ? pt.m.nx : a == 1 ? pt.m.ny : pt.m.nz;
    en = fmaf(de, n, en);
    es = fmaf(de, ds, es);
    ns = fmaf(n, ds, ns);
    np = fmaf(n, dp, np);
  }
  const float perp = es - en * ns;
  return {perp / pt.m.inv_a + en * np, pt.b * perp};
}

/// Minimod's damped update of point (i, j, k) outside g.inner, given its right-hand sides; at_p
/// and at_q give p and q at offsets (di, dj, dk) of at most 1 along one axis.
template <class AtP, class AtQ>
MM_HOST_DEVICE MM_FORCE_INLINE TtiLayerUpdate tti_damped_update(const TtiStepArgs& g, int i, int j, int k,
                                                                const TtiLayerPoint& pt, const AtP& at_p,
                                                                const AtQ& at_q, const physics::TtiRhs& r) {
  const float eta = g.eta[0][i + 1] + g.eta[1][j + 1] + g.eta[2][k + 1];
  const TtiLayerGradients grad = tti_layer_gradients(g, i, j, k, pt, at_p, at_q);
  TtiLayerUpdate u;
  u.p_next = pml::pml_u_next(pt.p_prev, at_p(0, 0, 0), pt.v2dt2, r.p, pt.aux_p, eta);
  u.q_next = pml::pml_u_next(pt.q_prev, at_q(0, 0, 0), pt.v2dt2, r.q, pt.aux_q, eta);
  u.aux_p = pml::pml_aux_next(pt.aux_p, eta, grad.p);
  u.aux_q = pml::pml_aux_next(pt.aux_q, eta, grad.q);
  return u;
}

/// Stores a damped update at layout offset o.
MM_HOST_DEVICE MM_FORCE_INLINE void tti_store_layer(const TtiStepArgs& g, std::int64_t o, const TtiLayerUpdate& u) {
  g.p_next.origin[o] = u.p_next;
  g.q_next.origin[o] = u.q_next;
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
  const TtiLayerPoint pt{load(g.v2dt2.origin + o),
                         g.p_next.origin[o],
                         g.q_next.origin[o],
                         g.aux_p.origin[o],
                         g.aux_q.origin[o],
                         {load(g.nx.origin + o), load(g.ny.origin + o), load(g.nz.origin + o), load(g.inv_a.origin + o)},
                         load(g.b.origin + o)};
  const TtiGlobalField at_p{g.p.origin + o, g.p.sx, g.p.sy}, at_q{g.q.origin + o, g.p.sx, g.p.sy};
  tti_store_layer(g, o, tti_damped_update(g, i, j, k, pt, at_p, at_q, r));
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
