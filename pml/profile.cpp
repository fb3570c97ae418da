#include "pml/profile.hpp"

#include <cmath>

namespace minimod::pml {

DampingProfiles make_damping_profiles(const physics::Index3& shape,
                                      const std::array<double, 3>& spacing, const PmlWidths& widths,
                                      const ProfileParams& p) {
  DampingProfiles out;
  for (int a = 0; a < 3; ++a) {
    const int n = shape[a];
    auto& eta = out.eta[a];
    eta.assign(static_cast<size_t>(n + 2), 0.0f);
    auto eta_at = [&](int width, double s) {
      const double eta_max =
          p.dt * 3.0 * p.velocity * std::log(1.0 / p.reflection) / (2.0 * width * spacing[a]);
      const double r = s / width;
      return static_cast<float>(eta_max * r * r);
    };
    for (int i = -1; i <= n; ++i) {
      const int x = i - p.index_shift;  // the index the profile formula sees
      float e = 0;
      const int wl = widths.lo[a], wh = widths.hi[a];
      if (wl > 0 && x <= wl - 1) e = eta_at(wl, (wl - 1 - x) + p.start_offset);
      if (wh > 0 && x >= n - wh) e = eta_at(wh, (x - (n - wh)) + p.start_offset);
      eta[static_cast<size_t>(i + 1)] = e;
    }
  }
  return out;
}

}  // namespace minimod::pml
