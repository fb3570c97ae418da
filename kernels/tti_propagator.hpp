// The acoustic TTI problem in plain numbers (DESIGN.md §3; formulas in physics/tti.hpp) and its CPU
// reference propagator. Absorbing layer: Minimod's damped equation on both fields in the PML slabs;
// its auxiliary term (derived for the Laplacian) is applied only where the medium is isotropic
// (eps = delta = 0, where the propagator equals the isotropic one exactly), elsewhere the layer
// is a plain damping sponge. Measured: with the auxiliary term in anisotropic cells the layer grew
// without bound (|p| 50x the direct wave within 300 steps, VTI eps 0.24, delta 0.08).
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

struct AcousticTtiProblem {
  physics::Grid grid;
  pml::PmlWidths pml;
  pml::DampingProfiles damping;  // eta profiles of the PML slabs
  // Per point, C order [i][j][k]: (v dt)^2, 1 + 2 delta, 2 (eps - delta), tilt and azimuth (rad).
  std::vector<float> v2dt2, a, b, theta, phi;
  std::array<bool, 6> free_surface{};
  bool record_q = false;  // receivers sample q instead of p
  physics::TtiStencil stencil{};
  std::array<float, 3> inv_4h2{};
};

/// Fill the derived numbers (stencil weights, inv_4h2) from the grid spacing.
void finish_problem(AcousticTtiProblem& problem);

/// The operator's two tensors (physics/tti.hpp; 6 components each) on `layout`, halo included
/// (extended from the nearest grid point). Host arrays of layout.elements() floats.
void fill_tti_tensors(const AcousticTtiProblem& problem, const physics::FieldLayout& layout,
                      float* const perp[6], float* const axis[6]);

/// The CUDA propagator: one thread per point (`gmem`, the TTI correctness baseline), the same
/// point update (kernels/tti_point.hpp). Declared for every build; throws without CUDA.
std::unique_ptr<Propagator> make_cuda_acoustic_tti(const AcousticTtiProblem& problem);

/// The CPU reference (OpenMP). Fields: "p" (alias "u"), "p_prev" ("u_prev"), "q", "q_prev",
/// "aux_p", "aux_q". write_state sets p (q starts at rest). Runs on one rank only for now.
std::unique_ptr<Propagator> make_cpu_acoustic_tti(const AcousticTtiProblem& problem);

}  // namespace minimod::kernels
