// Helpers shared by the GPU and MPI tests: random valid problems (isotropic, TTI) and fields,
// whole-field reads.
#pragma once
#include <array>
#include <random>
#include <string>
#include <vector>

#include "kernels/propagator.hpp"
#include "kernels/tti_propagator.hpp"
#include "physics/cfl.hpp"
#include "physics/tti.hpp"
#include "pml/cpml.hpp"

namespace minimod::testing {

using physics::Box3;
using physics::Index3;

/// A random valid problem: velocities 1500..4500 m/s, unequal PML
/// widths (`z_widths` on the z faces), optionally a free surface on top.
inline kernels::AcousticIsoProblem random_problem(unsigned seed, Index3 n, bool free_top,
                                                  pml::PmlKind kind = pml::PmlKind::cpml,
                                                  std::array<int, 2> z_widths = {4, 8}) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> v(1500, 4500);
  kernels::AcousticIsoProblem p;
  p.grid.shape = n;
  p.grid.spacing = {10, 12, 8};
  p.pml.lo = {5, 6, free_top ? 0 : z_widths[0]};
  p.pml.hi = {7, 3, z_widths[1]};
  p.free_surface[kernels::kZLo] = free_top;
  const double dt = 0.5 * physics::critical_dt(4500, p.grid.spacing);
  p.pml_kind = kind;
  if (kind == pml::PmlKind::minimod) {
    pml::ProfileParams pp;
    pp.dt = dt;
    pp.velocity = 4500;
    p.damping = pml::make_damping_profiles(n, p.grid.spacing, p.pml, pp);
  } else {
    pml::CpmlParams cp;
    cp.dt = dt;
    cp.velocity = 4500;
    cp.frequency = 20;
    p.cpml = pml::make_cpml_profiles(n, p.grid.spacing, p.pml, cp);
  }
  p.v2dt2.resize(static_cast<size_t>(p.grid.points()));
  for (auto& x : p.v2dt2) {
    const float vdt = static_cast<float>(v(rng) * dt);
    x = vdt * vdt;
  }
  kernels::finish_problem(p);
  return p;
}

/// random_tti's layer widths on the high faces (x, y, z) unless a test names others.
constexpr std::array<int, 3> kRandomTtiPmlHi = {7, 3, 8};

/// A random smooth TTI model (vp, eps >= delta, tilt beyond 90 degrees and azimuth all varying),
/// Minimod's damping layer on unequal widths (none on top, a free surface, when `free_top`), half
/// the critical time step. `pml_hi`: the layer's widths on the high faces.
inline kernels::AcousticTtiProblem random_tti(unsigned seed, Index3 n, bool free_top,
                                             std::array<int, 3> pml_hi = kRandomTtiPmlHi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  kernels::AcousticTtiProblem p;
  p.grid.shape = n;
  p.grid.spacing = {10, 12, 8};
  p.pml.lo = {5, 6, free_top ? 0 : 4};
  p.pml.hi = pml_hi;
  p.free_surface[kernels::kZLo] = free_top;
  const double dt = 0.5 * physics::tti_critical_dt(3500, p.grid.spacing, 0.3, 0.0, 0.3);
  p.damping =
      pml::make_damping_profiles(n, p.grid.spacing, p.pml, kernels::tti_layer_profile(dt, 4000));
  const double w[5] = {0.1 + 0.2 * u(rng), 0.1 + 0.2 * u(rng), 0.1 + 0.2 * u(rng), 6 * u(rng), 6 * u(rng)};
  for (int i = 0; i < n.i; ++i)
    for (int j = 0; j < n.j; ++j)
      for (int k = 0; k < n.k; ++k) {
        const double s = std::sin(w[0] * i + w[3]) * std::cos(w[1] * j + w[2] * k + w[4]);
        const double v = 2500 + 800 * s, eps = 0.15 + 0.1 * s, delta = 0.5 * eps;
        const float vdt = static_cast<float>(v * dt);
        p.v2dt2.push_back(vdt * vdt);
        p.a.push_back(static_cast<float>(1 + 2 * delta));
        p.b.push_back(static_cast<float>(2 * (eps - delta)));
        p.theta.push_back(static_cast<float>(1.2 + 0.8 * s));
        p.phi.push_back(static_cast<float>(2.0 - 1.5 * s));
      }
  kernels::finish_problem(p);
  return p;
}

/// random_tti with the CPML layer (boundary.pml.tti: cpml): its profiles and the medium made
/// elliptic at depth (with `axis` vertical: elliptic from the layer's edge, its axis turned to
/// vertical).
inline kernels::AcousticTtiProblem with_cpml_layer(kernels::AcousticTtiProblem p,
                                                   kernels::TtiLayerAxis axis = kernels::TtiLayerAxis::model) {
  pml::CpmlParams cp;
  cp.dt = 0.5 * physics::tti_critical_dt(3500, p.grid.spacing, 0.3, 0.0, 0.3);
  cp.velocity = 4000;
  cp.frequency = 15;
  kernels::use_cpml_layer(p, cp, axis);
  return p;
}

inline std::vector<float> random_field(unsigned seed, std::int64_t n) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> f(static_cast<size_t>(n));
  for (auto& x : f) x = d(rng);
  return f;
}

inline std::vector<float> read_all(kernels::Propagator& p, const std::string& name, Box3 box) {
  std::vector<float> f(static_cast<size_t>(box.points()));
  p.read_field(name, box, {1, 1, 1}, f.data());
  return f;
}

}  // namespace minimod::testing
