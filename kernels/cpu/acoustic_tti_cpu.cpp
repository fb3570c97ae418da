// CPU reference backend for the acoustic TTI propagator: one pass over the grid, each point updating
// p and q with the 73-point self-adjoint operator (physics/tti.hpp); points outside the inner
// region use Minimod's damped update with one auxiliary field per wavefield (TtiLayer::sponge) or
// the CPML of the TTI operator (TtiLayer::cpml, below). OpenMP over (i, j).
// What it reads per point: p, q (stencils), p_prev, q_prev, (v dt)^2, 2 (eps - delta) and the
// medium (the symmetry axis and 1 / (1 + 2 delta)) at the point and its 72 stencil neighbours.
// Distributed: the shell (points within the halo width of an exchanged face) is updated first,
// with its sources; then p and q exchange their face and edge halos axis by axis (kernels/halo.hpp,
// exchange_by_axis) while a third of the interior is updated during each phase; then free surfaces
// apply over the halo columns too.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "kernels/aligned_buffer.hpp"
#include "kernels/cpu/denormals.hpp"
#include "kernels/cpu/field_ops.hpp"
#include "kernels/halo.hpp"
#include "kernels/tti_cpml.hpp"
#include "kernels/tti_point.hpp"
#include "kernels/tti_propagator.hpp"
#include "physics/error.hpp"
#include "physics/view3.hpp"

namespace minimod::kernels {

using physics::Index3;

physics::Box3 medium_box(const physics::Grid& grid) {
  const int r = physics::kRadius;
  const Index3 n = grid.shape;
  return {{-r, -r, -r}, {n.i + 2 * r, n.j + 2 * r, n.k + 2 * r}};
}

physics::Box3 stored_medium_box(const TtiProblemSettings& p) {
  return physics::grown(stored_box(p), physics::kRadius);
}

void finish_problem(AcousticTtiProblem& p) {
  p.stencil = physics::make_tti_stencil(p.grid.spacing);
  for (int a = 0; a < 3; ++a)
    p.inv_4h2[static_cast<size_t>(a)] = static_cast<float>(1.0 / (4.0 * p.grid.spacing[a] * p.grid.spacing[a]));
  // The arrays' box: the grid, or a distributed plan's window of it (extended from its own points).
  const physics::Box3 s = stored_box(p);
  const Index3 n = s.n;
  const physics::Box3 m = stored_medium_box(p);
  const auto stored_points = static_cast<size_t>(s.points());
  for (auto* v : {&p.theta, &p.phi, &p.a}) {
    if (v->size() == static_cast<size_t>(m.points())) continue;
    if (v->size() != stored_points)
      throw std::invalid_argument("acoustic_tti: theta, phi and a must cover the grid or the grid and its halo");
    std::vector<float> out(static_cast<size_t>(m.points()));
#pragma omp parallel for collapse(2)
    for (int i = 0; i < m.n.i; ++i)
      for (int j = 0; j < m.n.j; ++j)
        for (int k = 0; k < m.n.k; ++k) {
          const int ci = std::clamp(i - physics::kRadius, 0, n.i - 1), cj = std::clamp(j - physics::kRadius, 0, n.j - 1),
                    ck = std::clamp(k - physics::kRadius, 0, n.k - 1);
          out[(static_cast<size_t>(i) * m.n.j + j) * m.n.k + k] = (*v)[(static_cast<size_t>(ci) * n.j + cj) * n.k + ck];
        }
    v->swap(out);
  }
  take_axis_flags(p);
}

void take_axis_flags(AcousticTtiProblem& p) {
  // One pass over the medium: vertical everywhere (VTI), and the axis as the operator reads it (n
  // and -n are the same axis) the same at every point as at the first. (Over a window: its own
  // flags, which the plan combines over the ranks.)
  const physics::Box3 m = stored_medium_box(p);
  const physics::TtiMediumPoint n0 = model_axis(p);
  bool vertical = true, same = true;
#pragma omp parallel for reduction(&& : vertical, same)
  for (std::int64_t o = 0; o < m.points(); ++o) {
    const float theta = p.theta[static_cast<size_t>(o)], phi = p.phi[static_cast<size_t>(o)];
    vertical = vertical && physics::tti_axis_is_vertical(theta, phi);
    const physics::TtiMediumPoint n = physics::tti_medium_point(theta, phi, 1.0f);
    same = same && n.nx == n0.nx && n.ny == n0.ny && n.nz == n0.nz;
  }
  p.vti = vertical;
  p.constant_axis = same;
}

std::vector<StateField> tti_state_fields(TtiLayer layer) {
  std::vector<StateField> f{{"p_prev"}, {"p"}, {"q_prev"}, {"q"}};
  if (layer == TtiLayer::cpml) {
    for (const auto& s : kTtiCpmlState) f.push_back({s.name, StateField::Lives::layer});
  } else {
    f.push_back({"aux_p"});
    f.push_back({"aux_q"});
  }
  return f;
}

std::vector<pml::Region> problem_regions(const TtiProblemSettings& p) {
  return p.regions.empty() ? pml::make_regions(p.grid.shape, p.pml) : p.regions;
}

namespace {
// A row function: out of line, with everything it calls inlined into it (flatten), so that the
// 73-point operator's lambdas end up inside its vector loops however large this file grows (GCC's
// inlining budget for the file dropped them out of the loops, 1.5x slower, when it last grew).
#define MM_ROW_FUNCTION __attribute__((noinline, flatten))

/// The forms of the operator the row loops take: the 73-point pair form (tti_*), its VTI form
/// (vti_*: vti_rhs25, vti_rows25, where the problem is VTI) or the pair form with the axis of a
/// model of one axis (axis_*: TtiAxisMedium, where the problem's axis is constant; only 1 / a of
/// the medium read per neighbour, the axis's products the same for every point).
enum class Form { general, vti, axis };
/// The row function (of one kind: inner, layer, rows) of the step's form.
template <class RowFunction>
RowFunction of_form(const TtiStepArgs& g, RowFunction general, RowFunction vti, RowFunction axis) {
  return g.vti ? vti : (g.constant_axis ? axis : general);
}
/// The right-hand sides and the rows at offset o in form F; n: the axis (Form::axis), a local of
/// the row function so that the compiler keeps it out of the loop (g.axis, behind a reference
/// the loop's stores may alias, it would reload).
template <Form F>
MM_FORCE_INLINE physics::TtiRhs rhs_of(const TtiStepArgs& g, std::int64_t o, const physics::TtiMediumPoint& n) {
  if constexpr (F == Form::axis) return tti_rhs_axis_of(g, o, n);
  else return tti_rhs_of<F == Form::vti>(g, o);
}
template <Form F>
MM_FORCE_INLINE physics::TtiRows rows_of(const TtiStepArgs& g, std::int64_t o, const physics::TtiMediumPoint& n) {
  if constexpr (F == Form::axis) return tti_rows_axis_of(g, o, n);
  else return tti_rows_of<F == Form::vti>(g, o);
}

/// The inner points [k0, k1) of the row whose point k = 0 is at offset o0: one vector loop (the
/// stencil's loops are unrolled: MM_UNROLL), the same arithmetic per point as tti_update_point.
template <Form F>
MM_FORCE_INLINE void inner_point(const TtiStepArgs& g, std::int64_t o, const physics::TtiMediumPoint& n) {
  tti_leapfrog(g, o, rhs_of<F>(g, o, n));
}
// (The point in a function of its own: with the right-hand sides' temporary in the loop body
// itself, GCC left this loop scalar.)
template <Form F>
MM_FORCE_INLINE void inner_row(const TtiStepArgs& g, std::int64_t o0, int k0, int k1) {
  const physics::TtiMediumPoint n = g.axis;
#pragma omp simd
  for (int k = k0; k < k1; ++k) inner_point<F>(g, o0 + k, n);
}
MM_ROW_FUNCTION void tti_inner_row(const TtiStepArgs& g, std::int64_t o0, int k0, int k1) {
  inner_row<Form::general>(g, o0, k0, k1);
}
MM_ROW_FUNCTION void vti_inner_row(const TtiStepArgs& g, std::int64_t o0, int k0, int k1) {
  inner_row<Form::vti>(g, o0, k0, k1);
}
MM_ROW_FUNCTION void axis_inner_row(const TtiStepArgs& g, std::int64_t o0, int k0, int k1) {
  inner_row<Form::axis>(g, o0, k0, k1);
}

/// Points [k0, k1) of a row in chunks of kChunk: vector(k, slot) over a chunk as one vector loop
/// (what vectorises: the 73-point operator), then scalar(k, slot) one by one (what branches: the
/// layer's updates); `slot` indexes the chunk's buffers.
constexpr int kChunk = 32;
template <class Vector, class Scalar>
MM_FORCE_INLINE void by_chunks(int k0, int k1, const Vector& vector, const Scalar& scalar) {
  for (int c0 = k0; c0 < k1; c0 += kChunk) {
    const int c1 = std::min(k1, c0 + kChunk);
#pragma omp simd
    for (int k = c0; k < c1; ++k) vector(k, k - c0);
    for (int k = c0; k < c1; ++k) scalar(k, k - c0);
  }
}

/// The layer points [k0, k1) of row (i, j) (outside g.inner, the sponge): their right-hand sides
/// (of form F), then the damped update.
template <Form F>
MM_FORCE_INLINE void layer_row(const TtiStepArgs& g, int i, int j, int k0, int k1) {
  float rp[kChunk], rq[kChunk];
  const std::int64_t o0 = g.p.offset(i, j, 0);
  const physics::TtiMediumPoint n = g.axis;
  by_chunks(
      k0, k1,
      [&](int k, int slot) {
        const physics::TtiRhs r = rhs_of<F>(g, o0 + k, n);
        rp[slot] = r.p;
        rq[slot] = r.q;
      },
      [&](int k, int slot) { tti_update_from_rhs(g, i, j, k, o0 + k, {rp[slot], rq[slot]}); });
}
MM_ROW_FUNCTION void tti_layer_row(const TtiStepArgs& g, int i, int j, int k0, int k1) {
  layer_row<Form::general>(g, i, j, k0, k1);
}
MM_ROW_FUNCTION void vti_layer_row(const TtiStepArgs& g, int i, int j, int k0, int k1) {
  layer_row<Form::vti>(g, i, j, k0, k1);
}
MM_ROW_FUNCTION void axis_layer_row(const TtiStepArgs& g, int i, int j, int k0, int k1) {
  layer_row<Form::axis>(g, i, j, k0, k1);
}

/// The CPML's pass 1 at the layer's points [k0, k1) of row (i, j) (compact index of k0 x0): psi
/// of each damped axis as one vector loop (x and y: the whole row or none; z: the ranges [0, z_lo)
/// and [z_hi, n.k) where the profile is not zero), then V as one vector loop. The same pieces,
/// point by point, are tti_cpml_psi_point (the halos here, every point on the GPU).
MM_ROW_FUNCTION void tti_cpml_psi_row(const TtiStepArgs& g, const TtiCpmlArgs& c, int i, int j, int k0, int k1,
                                      std::int64_t x0, int z_lo, int z_hi) {
  const std::int64_t o0 = g.p.offset(i, j, 0);
  // psi of axis E at point k, from and into the layer's fields
  const auto psi = [&](auto axis, int k, float a, float b) {
    constexpr int E = decltype(axis)::value;
    const std::int64_t x = x0 + (k - k0);
    float s = c.at(kPsiS, E, x), p = c.at(kPsiP, E, x);
    tti_cpml_psi_axis<E>(g, c, o0 + k, x, a, b, s, p);
  };
  if (const float a = c.a[0][i], b = c.b[0][i]; b != 0.0f) {
#pragma omp simd
    for (int k = k0; k < k1; ++k) psi(std::integral_constant<int, 0>{}, k, a, b);
  }
  if (const float a = c.a[1][j], b = c.b[1][j]; b != 0.0f) {
#pragma omp simd
    for (int k = k0; k < k1; ++k) psi(std::integral_constant<int, 1>{}, k, a, b);
  }
  const auto damped_z = [&](int from, int to) {
#pragma omp simd
    for (int k = from; k < to; ++k) psi(std::integral_constant<int, 2>{}, k, c.a[2][k], c.b[2][k]);
  };
  damped_z(k0, std::min(k1, z_lo));
  damped_z(std::max(k0, z_hi), k1);
#pragma omp simd
  for (int k = k0; k < k1; ++k) {
    const std::int64_t x = x0 + (k - k0);
    float s[3], p[3];
    for (int e = 0; e < 3; ++e) {
      s[e] = c.at(kPsiS, e, x);
      p[e] = c.at(kPsiP, e, x);
    }
    tti_cpml_fluxes(g, c, o0 + k, x, s, p);
  }
}

/// The flux derivatives along axis A (tti_flux_derivatives) of the CPML layer's points [c0, c1) of
/// row (i, j) in slab `slab` (compact index of point k0 x0) into dv_perp[k - c0], dv_axis[k - c0]:
/// where the 8 points along A lie in the slab (the whole row for A = i, j when `row_inside`; the
/// k range [kin_lo, kin_hi) for A = k) by the slab's strides as one vector loop, elsewhere point
/// by point (by the strides with zeros beyond where nothing is stored beyond the slab, else by
/// lookups). The formula is the same on every path, so the result does not depend on the path.
template <int A>
MM_FORCE_INLINE void flux_derivatives_row(const TtiCpmlArgs& c, const physics::Box3& slab, int i, int j, int k0,
                                          std::int64_t x0, int c0, int c1, bool row_inside, int kin_lo, int kin_hi,
                                          float* dv_perp, float* dv_axis) {
  int f0 = c1, f1 = c1;  // the vector range
  if (A < 2 && row_inside) f0 = c0;
  if (A == 2) {
    f0 = std::min(c1, std::max(c0, kin_lo));
    f1 = std::max(f0, std::min(c1, kin_hi));
  }
  for (int k = c0; k < f0; ++k)
    tti_flux_derivatives<A>(c, slab, i, j, k, x0 + (k - k0), dv_perp[k - c0], dv_axis[k - c0]);
#pragma omp simd
  for (int k = f0; k < f1; ++k)
    tti_flux_derivatives_inside<A>(c, slab, x0 + (k - k0), dv_perp[k - c0], dv_axis[k - c0]);
  for (int k = f1; k < c1; ++k)
    tti_flux_derivatives<A>(c, slab, i, j, k, x0 + (k - k0), dv_perp[k - c0], dv_axis[k - c0]);
}

/// The operator rows (tti_rows_of) of points [c0, c1) of the row whose point k = 0 is at offset o0,
/// into perp[a][k - c0], axis[a][k - c0]: one vector loop, in a function of its own so that the
/// compiler inlines the whole 73-point operator into it (vti_rows_chunk: the VTI form's rows).
template <Form F>
MM_FORCE_INLINE void rows_chunk(const TtiStepArgs& g, std::int64_t o0, int c0, int c1, float (&perp)[3][kChunk],
                                float (&axis)[3][kChunk]) {
  const physics::TtiMediumPoint n = g.axis;
#pragma omp simd
  for (int k = c0; k < c1; ++k) {
    const physics::TtiRows r = rows_of<F>(g, o0 + k, n);
    for (int a = 0; a < 3; ++a) {
      perp[a][k - c0] = r.perp[a];
      axis[a][k - c0] = r.axis[a];
    }
  }
}
MM_ROW_FUNCTION void tti_rows_chunk(const TtiStepArgs& g, std::int64_t o0, int c0, int c1, float (&perp)[3][kChunk],
                                    float (&axis)[3][kChunk]) {
  rows_chunk<Form::general>(g, o0, c0, c1, perp, axis);
}
MM_ROW_FUNCTION void vti_rows_chunk(const TtiStepArgs& g, std::int64_t o0, int c0, int c1, float (&perp)[3][kChunk],
                                    float (&axis)[3][kChunk]) {
  rows_chunk<Form::vti>(g, o0, c0, c1, perp, axis);
}
MM_ROW_FUNCTION void axis_rows_chunk(const TtiStepArgs& g, std::int64_t o0, int c0, int c1, float (&perp)[3][kChunk],
                                     float (&axis)[3][kChunk]) {
  rows_chunk<Form::axis>(g, o0, c0, c1, perp, axis);
}

/// The CPML layer's points [k0, k1) of row (i, j), all in slab `slab`, compact index of k0 x0, in
/// chunks: their operator rows (one vector loop), their flux derivatives (flux_derivatives_row),
/// then zeta and the update (tti_cpml_finish, one vector loop).
MM_ROW_FUNCTION void tti_cpml_layer_row(const TtiStepArgs& g, const TtiCpmlArgs& c, const physics::Box3& slab,
                                        int i, int j, int k0, int k1, std::int64_t x0) {
  float perp[3][kChunk], axis[3][kChunk], dv_perp[3][kChunk], dv_axis[3][kChunk];
  const std::int64_t o0 = g.p.offset(i, j, 0);
  const auto rows = of_form(g, tti_rows_chunk, vti_rows_chunk, axis_rows_chunk);
  const bool in_i = flux_line_inside<0>(slab, i, j, 0), in_j = flux_line_inside<1>(slab, i, j, 0);
  const int kin_lo = slab.lo.k + physics::kRadius, kin_hi = slab.lo.k + slab.n.k - physics::kRadius;
  for (int c0 = k0; c0 < k1; c0 += kChunk) {
    const int c1 = std::min(k1, c0 + kChunk);
    rows(g, o0, c0, c1, perp, axis);
    flux_derivatives_row<0>(c, slab, i, j, k0, x0, c0, c1, in_i, kin_lo, kin_hi, dv_perp[0], dv_axis[0]);
    flux_derivatives_row<1>(c, slab, i, j, k0, x0, c0, c1, in_j, kin_lo, kin_hi, dv_perp[1], dv_axis[1]);
    flux_derivatives_row<2>(c, slab, i, j, k0, x0, c0, c1, false, kin_lo, kin_hi, dv_perp[2], dv_axis[2]);
#pragma omp simd
    for (int k = c0; k < c1; ++k) {
      const int slot = k - c0;
      physics::TtiRows r;
      float dp[3], da[3];
      for (int a = 0; a < 3; ++a) {
        r.perp[a] = perp[a][slot];
        r.axis[a] = axis[a][slot];
        dp[a] = dv_perp[a][slot];
        da[a] = dv_axis[a][slot];
      }
      tti_cpml_finish(g, c, i, j, k, x0 + (k - k0), r, dp, da);
    }
  }
}
}  // namespace

physics::Box3 inner_box(const TtiProblemSettings& p) {
  const auto regions = problem_regions(p);
  return regions.front().is_pml ? physics::Box3{} : regions.front().box;
}

void fill_tti_medium(const AcousticTtiProblem& p, const physics::FieldLayout& layout, float* nx, float* ny,
                     float* nz, float* inv_a) {
  const physics::Box3 m = medium_box(p.grid);
  if (layout.halo != physics::kRadius || p.theta.size() != static_cast<size_t>(m.points()))
    throw std::invalid_argument("fill_tti_medium: call finish_problem first; the layout's halo is the radius");
  // The medium box's planes the layout holds (all of them, unless it is FieldLayout::planes).
  const physics::Box3 w = layout.with_halo();
  const int i_begin = std::max(w.lo.i, m.lo.i) - m.lo.i, i_end = std::min(w.hi().i, m.hi().i) - m.lo.i;
#pragma omp parallel for collapse(2)
  for (int i = i_begin; i < i_end; ++i)
    for (int j = 0; j < m.n.j; ++j)
      for (int k = 0; k < m.n.k; ++k) {
        const size_t o = (static_cast<size_t>(i) * m.n.j + j) * m.n.k + k;
        const auto t = physics::tti_medium_point(p.theta[o], p.phi[o], p.a[o]);
        const int gi = i + m.lo.i, gj = j + m.lo.j, gk = k + m.lo.k;
        layout.view(nx)(gi, gj, gk) = t.nx;
        layout.view(ny)(gi, gj, gk) = t.ny;
        layout.view(nz)(gi, gj, gk) = t.nz;
        layout.view(inv_a)(gi, gj, gk) = t.inv_a;
      }
}

void make_elliptic_layer(AcousticTtiProblem& p, TtiLayerAxis axis) {
  const Index3 n = p.grid.shape;
  // The arrays' box (the grid, or a distributed plan's window of it): depths from the grid's
  // faces, b read at the nearest stored point.
  const physics::Box3 s = stored_box(p), m = stored_medium_box(p);
  if (p.a.size() != static_cast<size_t>(m.points()) || p.b.size() != static_cast<size_t>(s.points()) ||
      p.theta.size() != p.a.size() || p.phi.size() != p.a.size())
    throw std::invalid_argument("make_elliptic_layer: call finish_problem first");
  const bool vertical = axis == TtiLayerAxis::vertical;
  const double elliptic_start = vertical ? 0.0 : kEllipticStart;
  const double elliptic_end = vertical ? kVerticalEllipticEnd : kEllipticEnd;
  // Depth into the layer as a fraction of its width (0 inside, 1 at the outermost point), per axis.
  const auto depth = [&](int c, int i) {
    const int lo = p.pml.lo[static_cast<size_t>(c)], hi = p.pml.hi[static_cast<size_t>(c)];
    if (lo > 0 && i < lo) return static_cast<double>(lo - i) / lo;
    if (hi > 0 && i >= n[c] - hi) return static_cast<double>(i - (n[c] - hi) + 1) / hi;
    return 0.0;
  };
  const auto depth_at = [&](const Index3& g) { return std::max({depth(0, g.i), depth(1, g.j), depth(2, g.k)}); };
  const auto smoothstep = [](double r, double start, double end) {
    const double x = std::clamp((r - start) / (end - start), 0.0, 1.0);
    return x * x * (3 - 2 * x);
  };
  // The shift of delta at depth r, w b / 2 for the layer's weight w there, from the grid's own
  // anellipticity b at the stored point og.
  const auto shift_at = [&](double r, size_t og) {
    return r > 0 ? smoothstep(r, elliptic_start, elliptic_end) * p.b[og] / 2 : 0.0;
  };
  // a (and with a vertical axis theta, phi) over the medium box first, reading b at the nearest
  // grid point (a halo point's is on the grid's edge), then b at the grid's points: b is read
  // unchanged in the first pass and each point reads and writes its own in the second, so no copy
  // of b is needed (it was the CPML plan's one array beyond its host figure: 18 MiB at 166^3,
  // PlanMemory.HostFigureIsWithinTwoPercentOf...). In a window, a medium point beyond it reads
  // its nearest stored point, which is its nearest grid point wherever a subdomain reads it (the
  // window reaches the radius past the subdomain, or the grid's face).
  const Index3 s_hi = s.hi();
#pragma omp parallel for collapse(2)
  for (int i = 0; i < m.n.i; ++i)
    for (int j = 0; j < m.n.j; ++j)
      for (int k = 0; k < m.n.k; ++k) {
        const Index3 g{std::clamp(i + m.lo.i, s.lo.i, s_hi.i - 1), std::clamp(j + m.lo.j, s.lo.j, s_hi.j - 1),
                       std::clamp(k + m.lo.k, s.lo.k, s_hi.k - 1)};
        const size_t og = static_cast<size_t>(s.position(g.i, g.j, g.k));
        const size_t om = (static_cast<size_t>(i) * m.n.j + j) * m.n.k + k;
        const double r = depth_at(g);
        const double shift = shift_at(r, og);
        if (shift != 0) p.a[om] = static_cast<float>(p.a[om] + 2 * shift);  // a = 1 + 2 delta: delta moves by the shift
        if (vertical && r > 0) {
          // The axis as the operator reads it (n_z >= 0) moved toward e_z by the weight.
          const double w = smoothstep(r, 0.0, kVerticalAxisEnd);
          const physics::TtiMediumPoint n = physics::tti_medium_point(p.theta[om], p.phi[om], 1.0f);
          const double nx = (1 - w) * n.nx, ny = (1 - w) * n.ny, nz = (1 - w) * n.nz + w;
          p.theta[om] = static_cast<float>(std::atan2(std::hypot(nx, ny), nz));
          if (nx != 0 || ny != 0) p.phi[om] = static_cast<float>(std::atan2(ny, nx));
        }
      }
#pragma omp parallel for collapse(2)
  for (int i = s.lo.i; i < s_hi.i; ++i)
    for (int j = s.lo.j; j < s_hi.j; ++j)
      for (int k = s.lo.k; k < s_hi.k; ++k) {
        const size_t og = static_cast<size_t>(s.position(i, j, k));
        const double shift = shift_at(depth_at({i, j, k}), og);
        if (shift != 0) p.b[og] = static_cast<float>(p.b[og] - 2 * shift);  // b = 2 (eps - delta)
      }
  if (vertical) take_axis_flags(p);  // vti and constant_axis of the turned axis
}

void use_cpml_layer(AcousticTtiProblem& p, const pml::CpmlParams& params, TtiLayerAxis axis) {
  p.layer = TtiLayer::cpml;
  p.cpml = pml::make_cpml_profiles(p.grid.shape, p.grid.spacing, p.pml, params);
  p.layer_axis = axis;
  make_elliptic_layer(p, axis);
}

namespace {

using physics::Box3;
using physics::FieldLayout;
using physics::View3;

class CpuAcousticTti final : public Propagator {
 public:
  explicit CpuAcousticTti(const AcousticTtiProblem& problem)
      : p_(problem), layout_(FieldLayout::make(problem.grid.box(), physics::kRadius)) {
    for (auto* f : {&p0_, &p1_, &q0_, &q1_, &aux_p_, &aux_q_, &v2dt2_, &b_, &nx_, &ny_, &nz_, &inv_a_})
      *f = AlignedBuffer(layout_.elements());
    const Index3 n = p_.grid.shape;
    const auto m = view(v2dt2_), vb = view(b_);
#pragma omp parallel for collapse(2)
    for (int i = 0; i < n.i; ++i)
      for (int j = 0; j < n.j; ++j)
        for (int k = 0; k < n.k; ++k) {
          const size_t o = (static_cast<size_t>(i) * n.j + j) * n.k + k;
          m(i, j, k) = problem.v2dt2[o];
          vb(i, j, k) = problem.b[o];
        }
    fill_tti_medium(problem, layout_, nx_.data(), ny_.data(), nz_.data(), inv_a_.data());
    inner_ = inner_box(p_);
    if (p_.constant_axis) axis_ = model_axis(problem);
    if (p_.layer == TtiLayer::cpml) {
      check_cuts_outside_layer(p_.cpml.b, p_.grid.shape, p_.halo.neighbour, kHaloWidth);
      cpml_.layer = LayerIndex::make(p_.grid.shape, inner_);
      cpml_.halo = TtiCpmlHalo::make(p_.grid.shape, inner_, p_.halo.neighbour, cpml_.layer.count, kHaloWidth);
      cpml_.count = cpml_.layer.count + cpml_.halo.count;
      cpml_fields_ = AlignedBuffer(std::max<std::int64_t>(1, kTtiCpmlFields * cpml_.count));
      cpml_.fields = cpml_fields_.data();
      for (int c = 0; c < 3; ++c) {
        cpml_.a[c] = p_.cpml.a[c].data();
        cpml_.b[c] = p_.cpml.b[c].data();
      }
      cpml_.d1 = pml::make_axis_derivatives(p_.grid.spacing);
      const auto& bz = p_.cpml.b[2];
      const int nk = p_.grid.shape.k;
      int lo = 0, hi = nk;
      while (lo < nk && bz[static_cast<size_t>(lo)] != 0.0f) ++lo;
      while (hi > lo && bz[static_cast<size_t>(hi - 1)] != 0.0f) --hi;
      for (int k = lo; k < hi; ++k)
        if (bz[static_cast<size_t>(k)] != 0.0f)
          throw std::invalid_argument("acoustic_tti: the CPML's z profile is damped inside the grid, not at its ends");
      z_damped_ = {lo, hi};
    }
  }

  std::string backend() const override { return "cpu"; }
  std::string kernel() const override { return "reference"; }
  std::int64_t allocated_bytes() const override {
    return (12 * layout_.elements() + (p_.layer == TtiLayer::cpml ? kTtiCpmlFields * cpml_.count : 0)) * 4;
  }

  void set_receivers(const std::vector<NodeWeight>& nodes, int count) override {
    receivers_ = nodes;
    receiver_count_ = count;
  }

  void step(const std::vector<NodeWeight>& source, float amplitude) override {
    flush_denormals_to_zero();
    const auto pn = view(p0_);  // p_next after the update
    const auto inject = [&](const Box3& part) {
      for (const auto& s : source)
        if (part.contains(s.node.i, s.node.j, s.node.k)) pn(s.node.i, s.node.j, s.node.k) += s.weight * amplitude;
    };
    if (p_.layer == TtiLayer::cpml) update_psi();
    if (exchanging()) {
      overlapped_step(inject);
    } else {
      update(p_.grid.box());
      inject(p_.grid.box());
    }
    apply_free_surfaces(pn);
    apply_free_surfaces(view(q0_));
    std::swap(p0_, p1_);
    std::swap(q0_, q1_);
    cpu::record_samples(view(p_.record_q ? q1_ : p1_), receivers_, receiver_count_, traces_);
  }

  void take_traces(std::vector<float>& out) override {
    out.swap(traces_);
    traces_.clear();
  }

  void read_field(const std::string& name, const Box3& box, const Index3& stride, float* out) override {
    if (float* f = cpml_field(name)) return copy_layer_box(cpml_, box, stride, f, out, true);
    cpu::read_strided(view(field(name)), box, stride, out);
  }

  std::vector<StateField> state_fields() const override { return tti_state_fields(p_.layer); }

  void finish_state() override {
    apply_free_surfaces(view(p1_));
    apply_free_surfaces(view(q1_));
  }
  void reset() override {
    for (const AlignedBuffer* b : {&p0_, &p1_, &q0_, &q1_, &aux_p_, &aux_q_, &cpml_fields_})
      if (b->size() > 0) zero_host(b->data(), static_cast<std::size_t>(b->size()) * sizeof(float));
    traces_.clear();
    split_times_ = StepSplit{};
  }

  void write_state(const float* p_prev, const float* p) override {
    write_field("p_prev", p_.grid.box(), p_prev);
    write_field("p", p_.grid.box(), p);
    apply_free_surfaces(view(p1_));
  }

  void write_field(const std::string& name, const Box3& box, const float* data) override {
    if (float* f = cpml_field(name))
      return copy_layer_box(cpml_, box, {1, 1, 1}, f, const_cast<float*>(data), false);
    cpu::copy_box(view(field(name)), box, const_cast<float*>(data), false);
  }

  FieldHealth health() override {
    FieldHealth h;
    const Index3 n = p_.grid.shape;
    for (const AlignedBuffer* b : {&p1_, &q1_}) {
      const auto f = view(*b);
      for (int i = 0; i < n.i; ++i)
        for (int j = 0; j < n.j; ++j)
          for (int k = 0; k < n.k; ++k) {
            const float a = std::fabs(f(i, j, k));
            if (!std::isfinite(a)) return {false, a, {i, j, k}};
            if (a > h.max_abs) h = {true, a, {i, j, k}};
          }
    }
    return h;
  }

  void set_halo_transport(HaloTransport* transport) override {
    if (transport != nullptr && transport->memory() != HaloTransport::Memory::host)
      throw std::invalid_argument("the CPU backend exchanges halos through host memory only");
    transport_ = transport;
  }
  /// `shell`: updating (and sending) what the neighbours need; `interior`: the rest, done while
  /// the three exchange phases are in flight; `exchange_exposed`: the exchange time not hidden.
  StepSplit step_split() const override { return split_times_; }

 private:
  View3<float> view(const AlignedBuffer& b) const { return layout_.view(b.data()); }
  // p1_/q1_ hold the current time level, p0_/q0_ the previous one (overwritten by the next).
  const AlignedBuffer& field(const std::string& name) const {
    if (name == "p" || name == "u") return p1_;
    if (name == "p_prev" || name == "u_prev") return p0_;
    if (name == "q") return q1_;
    if (name == "q_prev") return q0_;
    if (name == "aux_p" || name == "pml_aux") return aux_p_;
    if (name == "aux_q") return aux_q_;
    throw std::invalid_argument("no field named '" + name + "' in the acoustic_tti propagator");
  }

  /// A CPML memory field named as in kTtiCpmlState: its own layer's points; null for other names.
  float* cpml_field(const std::string& name) const {
    const int f = tti_cpml_field_named(name);
    if (f < 0) return nullptr;
    if (p_.layer != TtiLayer::cpml)
      throw std::invalid_argument("no field named '" + name + "' in the acoustic_tti propagator without the CPML");
    return cpml_.fields + f * cpml_.count;
  }

  bool exchanging() const { return transport_ != nullptr && p_.halo.any(); }

  /// A distributed step: the shell (points within the halo width of an exchanged face) first,
  /// with its sources, so that every message can be packed; then the exchange axis by axis while
  /// a third of the interior is updated during each phase (kernels/halo.hpp, exchange_by_axis).
  /// Every point takes the same update as in a one-rank step, so results stay bitwise.
  template <class Inject>
  void overlapped_step(const Inject& inject) {
    using clock = std::chrono::steady_clock;
    const auto seconds = [](clock::time_point a, clock::time_point b) {
      return std::chrono::duration<double>(b - a).count();
    };
    const ShellSplit split = split_shell(p_.grid.shape, p_.halo);
    const auto t0 = clock::now();
    for (const auto& b : split.shell) {
      update(b);
      inject(b);
    }
    const auto t1 = clock::now();
    double interior = 0;
    exchange_halos([&](int axis) {
      const auto a = clock::now();
      const Box3 part = interior_third(split.interior, axis);
      update(part);
      inject(part);
      interior += seconds(a, clock::now());
    });
    split_times_.shell += seconds(t0, t1);
    split_times_.interior += interior;
    split_times_.exchange_exposed += seconds(t1, clock::now()) - interior;
    ++split_times_.steps;
  }

  /// The third `part` (0, 1, 2) of the interior, cut along i (the slowest axis).
  static Box3 interior_third(const Box3& interior, int part) {
    Box3 b = interior;
    const int lo = interior.lo.i + interior.n.i * part / 3, hi = interior.lo.i + interior.n.i * (part + 1) / 3;
    b.lo.i = lo;
    b.n.i = hi - lo;
    return b;
  }

  /// p_next and q_next (p0_, q0_) into the neighbours' halos, faces and edges, one message per
  /// face; `overlap(axis)` runs while each phase is in flight.
  void exchange_halos(const std::function<void(int)>& overlap) {
    const View3<float> fields[2] = {view(p0_), view(q0_)};
    const Index3 n = p_.grid.shape;
    PhasedHaloOps ops;
    ops.pack = [&](int f, std::int64_t floats) {
      halo_send_[f].resize(static_cast<size_t>(floats));
      const Box3 b = phased_send_box(n, p_.halo, f);
      for (int c = 0; c < 2; ++c)
        cpu::copy_box(fields[c], b, halo_send_[f].data() + c * b.points(), true);
      return halo_send_[f].data();
    };
    ops.receive_buffer = [&](int f, std::int64_t floats) {
      halo_recv_[f].resize(static_cast<size_t>(floats));
      return halo_recv_[f].data();
    };
    ops.unpack = [&](int f, const float* data) {
      const Box3 b = phased_recv_box(n, p_.halo, f);
      for (int c = 0; c < 2; ++c)
        cpu::copy_box(fields[c], b, const_cast<float*>(data) + c * b.points(), false);
    };
    exchange_by_axis(*transport_, n, p_.halo, 2, nullptr, ops, overlap);
  }

  /// Over the own columns and the halo columns of exchanged faces (kernels/halo.hpp, halo_span).
  void apply_free_surfaces(const View3<float>& f) const {
    cpu::apply_free_surfaces(f, p_.grid.shape, p_.free_surface, halo_span(p_.grid.shape, p_.halo));
  }

  // --- The CPML layer (TtiLayer::cpml; formulas and field layout in kernels/tti_cpml.hpp) ------
  // Each axis c is stretched, d/dx_c -> (1/s_c) d/dx_c with 1/s_c f = f + conv_c(f) (the isotropic
  // CPML's recursive convolution, pml/cpml.hpp), inside and outside the tensor:
  //   div(C grad f) -> sum_c (1/s_c) d_c F_c,  F_c = sum_e C_ce (1/s_e) d_e f = (C grad f)_c + V_c,
  // for both operators: C_perp with s = p + q and C_axis with p. Its fields live on the layer's
  // points only (LayerIndex); inner points take the plain operator.

  /// The step's first pass (kernels/tti_cpml.hpp): psi and V at every layer point, which the
  /// update reads around each point, a row of a slab at a time (tti_cpml_psi_row), and at the layer
  /// points of the halos shared with neighbours (TtiCpmlHalo: each rank computes those itself, from
  /// the exchanged p and q), point by point. Pass 1 reads no other point's psi or V: no barrier.
  void update_psi() {
    const TtiStepArgs g = step_args();
    const LayerIndex& layer = cpml_.layer;
#pragma omp parallel
    {
      for (int s = 0; s < 6; ++s) {
        const Box3 b = layer.slab(s);
        const Index3 lo = b.lo, hi = b.hi();
#pragma omp for collapse(2) schedule(static) nowait
        for (int i = lo.i; i < hi.i; ++i)
          for (int j = lo.j; j < hi.j; ++j)
            tti_cpml_psi_row(g, cpml_, i, j, lo.k, hi.k, layer.start[s] + b.position(i, j, lo.k), z_damped_.first,
                             z_damped_.second);
      }
      for (int f = 0; f < 6; ++f) {
        const Box3 b = cpml_.halo.box(f);
        const Index3 lo = b.lo, hi = b.hi();
#pragma omp for collapse(2) schedule(static) nowait
        for (int i = lo.i; i < hi.i; ++i)
          for (int j = lo.j; j < hi.j; ++j)
            for (int k = lo.k; k < hi.k; ++k) tti_cpml_psi_point(g, cpml_, i, j, k);
      }
    }
  }

  /// The step's arrays (kernels/tti_point.hpp).
  TtiStepArgs step_args() const {
    TtiStepArgs g{};
    g.p = view(p1_);
    g.q = view(q1_);
    g.p_next = view(p0_);
    g.q_next = view(q0_);
    g.aux_p = view(aux_p_);
    g.aux_q = view(aux_q_);
    g.v2dt2 = view(v2dt2_);
    g.b = view(b_);
    g.nx = view(nx_);
    g.ny = view(ny_);
    g.nz = view(nz_);
    g.inv_a = view(inv_a_);
    for (int a = 0; a < 3; ++a) {
      g.eta[a] = p_.damping.eta[a].data();
      g.inv_4h2[a] = p_.inv_4h2[static_cast<size_t>(a)];
    }
    g.stencil = p_.stencil;
    g.vti = p_.vti;
    g.constant_axis = p_.constant_axis;
    g.axis = axis_;
    g.inner = inner_;
    return g;
  }

  /// The TTI step at every point of `box`: a row's inner points as one vector loop
  /// (tti_inner_row; vti_inner_row where the problem is VTI), its layer points by the sponge's
  /// damped update (tti_layer_row, vti_layer_row) or the
  /// CPML's pass 2 (tti_cpml_layer_row, with the slab that holds them). One parallel region a
  /// step: this runs for up to 10,000 small steps in the tests, where each region's barrier shows.
  void update(const Box3& box) {
    if (box.empty()) return;
    const TtiStepArgs g = step_args();
    const bool cpml = p_.layer == TtiLayer::cpml;
    Box3 slabs[6];
    for (int s = 0; s < 6 && cpml; ++s) slabs[s] = cpml_.layer.slab(s);
    const auto layer_points = [&](int i, int j, int k0, int k1) {  // [k0, k1): one slab
      if (k0 >= k1) return;
      if (!cpml) {
        of_form(g, tti_layer_row, vti_layer_row, axis_layer_row)(g, i, j, k0, k1);
        return;
      }
      tti_cpml_layer_row(g, cpml_, slabs[cpml_.layer.slab_of(i, j, k0)], i, j, k0, k1, cpml_.layer(i, j, k0));
    };
    const Index3 lo = box.lo, hi = box.hi();
    const Box3 in = intersect(box, inner_);
#pragma omp parallel for collapse(2) schedule(static)
    for (int i = lo.i; i < hi.i; ++i)
      for (int j = lo.j; j < hi.j; ++j) {
        int k0 = hi.k, k1 = hi.k;  // the row's inner points [k0, k1)
        if (!in.empty() && i >= in.lo.i && i < in.hi().i && j >= in.lo.j && j < in.hi().j) {
          k0 = in.lo.k;
          k1 = in.hi().k;
        }
        layer_points(i, j, lo.k, k0);
        if (k0 < k1) of_form(g, tti_inner_row, vti_inner_row, axis_inner_row)(g, g.p.offset(i, j, 0), k0, k1);
        layer_points(i, j, k1, hi.k);
      }
  }

  TtiProblemSettings p_;  // the model's arrays are in the propagator's own layout
  FieldLayout layout_;
  AlignedBuffer p0_, p1_, q0_, q1_, aux_p_, aux_q_, v2dt2_, b_;
  AlignedBuffer nx_, ny_, nz_, inv_a_;  // the medium per point, halo included (physics::TtiMediumPoint)
  TtiCpmlArgs cpml_{};        // TtiLayer::cpml: the layer's points, fields and profiles
  std::pair<int, int> z_damped_{0, 0};  // its z profile is not zero on [0, first) and [second, n.k)
  AlignedBuffer cpml_fields_;  // its memory fields (kernels/tti_cpml.hpp)
  Box3 inner_;
  physics::TtiMediumPoint axis_{};  // the model's axis where p_.constant_axis (TtiStepArgs::axis)
  HaloTransport* transport_ = nullptr;
  std::vector<float> halo_send_[6], halo_recv_[6];
  StepSplit split_times_;
  std::vector<NodeWeight> receivers_;
  int receiver_count_ = 0;
  std::vector<float> traces_;
};

}  // namespace

std::unique_ptr<Propagator> make_cpu_acoustic_tti(const AcousticTtiProblem& problem) {
  return std::make_unique<CpuAcousticTti>(problem);
}

}  // namespace minimod::kernels
