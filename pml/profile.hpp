// 1D damping profiles eta(i) (dimensionless, eta = d * dt) for each axis; eta(i, j, k) is their sum.
// Quadratic profile d(s) = d_max (s / N)^2 with d_max = 3 v ln(1/R) / (2 N h) (Minimod; Collino &
// Tsogka 2001), s the distance into the PML in points. Arrays hold indices -1 .. n (one ghost each
// side) because the PML update needs eta at i +- 1.
#pragma once
#include <array>
#include <vector>

#include "pml/regions.hpp"
#include "physics/box3.hpp"

namespace minimod::pml {

struct ProfileParams {
  double dt = 0;            // s
  double velocity = 0;      // m/s: the velocity the profile is tuned for
  double reflection = 1e-3; // R: theoretical reflection coefficient
  /// Where the damping starts: distance s of the innermost PML point. Minimod uses 0 (the innermost
  /// PML point is undamped and the ghost point outside gets s = N).
  double start_offset = 0.0;
  /// Minimod's arrays hold the profile one index late: eta(i) = profile(i - 1) on every axis,
  /// found by matching Minimod's own output (tests/data/minimod). 0 elsewhere.
  int index_shift = 0;
};

struct DampingProfiles {
  std::array<std::vector<float>, 3> eta;  // eta[axis][i + 1], i = -1 .. n
  float at(int axis, int i) const { return eta[axis][static_cast<size_t>(i + 1)]; }
};

DampingProfiles make_damping_profiles(const physics::Index3& shape,
                                      const std::array<double, 3>& spacing, const PmlWidths& widths,
                                      const ProfileParams& params);

}  // namespace minimod::pml
