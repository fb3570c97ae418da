// The acoustic TTI problem in plain numbers (DESIGN.md §3; formulas in physics/tti.hpp) and its CPU
// reference propagator. Absorbing layer: Minimod's damped equation on both fields in the PML slabs;
// its auxiliary term (derived for the Laplacian) is applied only where the medium is isotropic
// (eps = delta = 0, where the propagator equals the isotropic one exactly), elsewhere the layer
// is a plain damping sponge. The layer is as anisotropic as the model's edge (app/plan.cpp pads
// it with the edge's values). Measured (docs/tti.md): with the auxiliary term in anisotropic cells
// the layer grew without bound (|p| 50x the direct wave within 300 steps, VTI eps 0.24, delta
// 0.08); with a term derived for the TTI operator (grad eta . C grad f) it reflected 6x less but
// grew on random smooth models; with the anisotropy faded out across the layer (so that its outer
// part took Minimod's term) it grew without bound at eps 0.3, delta 0.05.
// That is TtiLayer::sponge (this struct's default). TtiLayer::cpml (every backend, distributed too;
// the app's default, app::kDefaultTtiLayer) stretches the TTI
// operator itself, over a layer made elliptic at depth (make_elliptic_layer): 30x less reflection.
// The operator is the self-adjoint form of physics/tti.hpp: the pointwise n n^T : Hessian form grew
// exponentially where the tilt varies (x25 per 1000 steps, tilt varying over ~200 points).
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "kernels/propagator.hpp"
#include "physics/tti.hpp"
#include "physics/view3.hpp"

namespace minimod::kernels {

/// The absorbing layer: Minimod's damped equation (a sponge where the medium is anisotropic; every
/// backend) or a CPML of the TTI operator over a layer made elliptic at depth (CPU reference, one
/// rank, for now). See docs/tti.md#absorbing-layer.
enum class TtiLayer { sponge, cpml };

/// The symmetry axis in the CPML layer (boundary.pml.tti_axis). `model`: the model's (the layer
/// elliptic at depth, above). `vertical`: the layer turns elliptic from its inner edge (delta ->
/// eps by kVerticalEllipticEnd of its width) and its axis turns to vertical (by kVerticalAxisEnd),
/// both smoothsteps. An elliptic medium whose axis lies along a grid axis keeps the CPML bounded
/// where a tilted one does not: where the model's axis turns sharply at the layer (blocks of
/// random axes; docs/tti.md, "Where the axis turns sharply") the CPML grew with `model` and stays
/// bounded with `vertical`, which reflects more (docs/tti.md) and, its axis varying, takes the
/// varying-axis kernels where the model's axis is one tilted axis.
enum class TtiLayerAxis { model, vertical };

/// Everything of an acoustic TTI problem but its model's per-point arrays: what a propagator keeps
/// once it has taken those into its own layout. It copies this part only (the arrays are 20 GB at
/// 1000^3).
struct TtiProblemSettings {
  physics::Grid grid;
  pml::PmlWidths pml;
  TtiLayer layer = TtiLayer::sponge;
  pml::DampingProfiles damping;  // TtiLayer::sponge: eta profiles of the PML slabs
  pml::CpmlProfiles cpml;        // TtiLayer::cpml: a, b profiles (make_elliptic_layer first)
  TtiLayerAxis layer_axis = TtiLayerAxis::model;  // TtiLayer::cpml: the layer's axis (use_cpml_layer)
  std::array<bool, 6> free_surface{};
  /// The box of the grid the per-point arrays cover (v2dt2, b; theta, phi, a over it grown by the
  /// radius): empty for the whole grid, as AcousticIsoProblem::stored.
  physics::Box3 stored;
  bool record_q = false;  // receivers sample q instead of p
  // The symmetry axis is vertical (theta = 0) over the whole medium box of the whole model: the
  // points take the VTI form of the operator (physics::vti_rhs25, 25 points, equal to tti_rhs73
  // there to round-off). Set by finish_problem; a subdomain keeps its global problem's, so that
  // every decomposition evaluates the same formula.
  bool vti = false;
  // The symmetry axis is the same at every point of the whole model's medium box (theta and phi
  // constant; vti implies it): swic_split_tma takes the constant-axis form (physics::tti_rhs73_axis,
  // equal to tti_rhs73 there to round-off). Set by finish_problem, kept by a subdomain as vti is.
  bool constant_axis = false;
  physics::TtiStencil stencil{};
  std::array<float, 3> inv_4h2{};
  /// The regions to update (inner first; points outside the inner box take the damped update).
  /// Empty: make_regions(grid.shape, pml). A distributed run's subdomain holds the global regions
  /// clipped to its box (mpi/subdomain.hpp); its damping profiles are the global ones sliced.
  std::vector<pml::Region> regions;
  /// Faces shared with a neighbouring subdomain: their halos (edges included) come from the
  /// exchange (kernels/halo.hpp, exchange_by_axis).
  HaloFaces halo;
};

/// A TTI problem: its settings and the model's per-point arrays.
struct AcousticTtiProblem : TtiProblemSettings {
  // Per point of stored_box() (the grid), C order [i][j][k]: (v dt)^2 and b = 2 (eps - delta).
  std::vector<float> v2dt2, b;
  // Tilt and azimuth (rad) and a = 1 + 2 delta, C order over medium_box(): the grid grown by the
  // stencil radius, because the self-adjoint pairs weigh the medium at both ends (in a subdomain
  // the halo holds the neighbours' medium). finish_problem extends grid-sized arrays from the
  // nearest grid point (a whole domain); a stored window's, stored_medium_box(), from its nearest
  // point (its points beyond the grid or the subdomain's reach are read nowhere else).
  std::vector<float> theta, phi, a;
};

/// Planes of the medium a host slab takes on the CUDA propagator's upload (its only host array of
/// the grid's size: four slabs).
constexpr std::int64_t kTtiMediumSlab = 16;

/// The model's axis as the kernels take it, for logs and tables: "VTI" (the VTI forms),
/// "constant axis" (one tilted axis everywhere: swic_split_tma's constant-axis form) or "varying
/// axis" (the 73-point split or pair form).
inline const char* tti_axis_kind(const TtiProblemSettings& p) {
  return p.vti ? "VTI" : (p.constant_axis ? "constant axis" : "varying axis");
}

/// The symmetry axis at the medium's first point (its 1 / a left 1): every point's where
/// constant_axis, the axis the constant-axis forms take.
inline physics::TtiMediumPoint model_axis(const AcousticTtiProblem& p) {
  return physics::tti_medium_point(p.theta[0], p.phi[0], 1.0f);
}

/// The TTI layer's damping profile for time step dt, tuned for `velocity` (the fastest wave:
/// vp max * sqrt(1 + 2 eps max)): Minimod's quadratic profile with R = 1e-3. Steeper profiles
/// (d ~ r^4, r^8) reflected as much or more (bench/results/2026-11-25-cpu-tti-layer-profile.md).
inline pml::ProfileParams tti_layer_profile(double dt, double velocity) {
  pml::ProfileParams p;
  p.dt = dt;
  p.velocity = velocity;
  p.reflection = 1e-3;
  return p;
}

/// Where the CPML layer turns the medium elliptic, as fractions of the layer's width: delta rises
/// to eps between kEllipticStart and kEllipticEnd (a smoothstep), so the outer part of the layer
/// carries no pseudo-acoustic shear artefact. A CPML over the anelliptic medium grew without bound
/// where the symmetry axis is oblique to a face (the artefact's slowness surface is not convex);
/// the taper inside the layer reflects 2.5e-4 (docs/tti.md). Ending it at 0.6 reflected 5.9e-4;
/// ending it at 1.0 reflects a little less (2.0e-4) but leaves the field at tilt 0 just short of
/// growing after the source (TtiLayer.CpmlStaysBounded...: 0.996 of its level then), and starting
/// it at 0.3 made it grow (bench/results/2026-11-27-session18-tti-cpml-rows.md, CPU part).
constexpr double kEllipticStart = 0.2, kEllipticEnd = 0.8;

/// TtiLayerAxis::vertical: the layer is elliptic by this fraction of its width and its axis
/// vertical by the second (smoothsteps from its inner edge; the first fits the probe of
/// Tti.WhereTheAxisJumpsAtTheCpmlLayer...: elliptic by 0.5 with the axis vertical by 0.5 grew
/// there by step 6000).
constexpr double kVerticalEllipticEnd = 0.3, kVerticalAxisEnd = 0.6;

/// Turns the medium of a whole-domain problem elliptic in its layer (delta -> eps, see above),
/// a over medium_box() and b over the grid, from the layer depth of the nearest grid point, and
/// with TtiLayerAxis::vertical turns its axis (theta, phi over medium_box()) to vertical, the
/// problem's vti and constant_axis then taken again. Call after finish_problem.
void make_elliptic_layer(AcousticTtiProblem& problem, TtiLayerAxis axis = TtiLayerAxis::model);

/// Gives a whole-domain problem (after finish_problem) the CPML layer: TtiLayer::cpml, the CPML
/// profiles of its grid and widths for `params`, and the medium made elliptic at depth.
void use_cpml_layer(AcousticTtiProblem& problem, const pml::CpmlParams& params,
                    TtiLayerAxis axis = TtiLayerAxis::model);

/// problem.regions, or the regions of the whole grid when it names none.
std::vector<pml::Region> problem_regions(const TtiProblemSettings& problem);

/// What a TTI propagator's state is (Propagator::state_fields): p and q at both levels, and the
/// sponge's aux_p, aux_q or the CPML's memory fields over the layer (kTtiCpmlState).
std::vector<StateField> tti_state_fields(TtiLayer layer);

/// The inner box of problem_regions (empty when the whole grid is layer): points outside it take
/// the layer's update.
physics::Box3 inner_box(const TtiProblemSettings& problem);

/// The box theta, phi and a cover: the grid grown by the stencil radius on every side.
physics::Box3 medium_box(const physics::Grid& grid);
/// The same for a problem whose arrays cover a window of the grid: stored_box() grown by the radius.
physics::Box3 stored_medium_box(const TtiProblemSettings& problem);

/// Fill the derived numbers (stencil weights, inv_4h2, vti, constant_axis) from the grid spacing and the medium,
/// and extend grid-sized theta, phi, a to medium_box(). Throws std::invalid_argument on other
/// sizes.
void finish_problem(AcousticTtiProblem& problem);

/// The vti and constant_axis flags from the medium (theta, phi over stored_medium_box()): finish_problem's
/// last pass, taken again where the axis changed after it (make_elliptic_layer's vertical axis).
void take_axis_flags(AcousticTtiProblem& problem);

/// The medium as the operator reads it (physics::TtiMediumPoint: nx, ny, nz, 1 / a) on `layout`,
/// whose halo must be the stencil radius. Host arrays of layout.elements() floats; where `layout`
/// is a slab of planes of the grid's (FieldLayout::planes), the slab's only.
void fill_tti_medium(const AcousticTtiProblem& problem, const physics::FieldLayout& layout, float* nx,
                     float* ny, float* nz, float* inv_a);

/// The CPU reference (OpenMP). Fields: "p" (alias "u"), "p_prev" ("u_prev"), "q", "q_prev",
/// "aux_p", "aux_q". write_state sets p (q starts at rest). Distributed: set_halo_transport with a
/// host-memory transport; p and q are exchanged after each update (no overlap).
std::unique_ptr<Propagator> make_cpu_acoustic_tti(const AcousticTtiProblem& problem);

}  // namespace minimod::kernels
