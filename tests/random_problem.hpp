// Helpers shared by the GPU and MPI tests: random valid problems and fields, whole-field reads.
#pragma once
#include <array>
#include <random>
#include <string>
#include <vector>

#include "kernels/propagator.hpp"
#include "physics/cfl.hpp"

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
