#include "physics/cfl.hpp"

#include <cmath>

#include "physics/stencil.hpp"

namespace minimod::physics {

double critical_dt(double v_max, const std::array<double, 3>& spacing) {
  double s1 = std::fabs(kSecondDerivative8[0]);
  for (int m = 1; m <= kRadius; ++m) s1 += 2.0 * std::fabs(kSecondDerivative8[m]);
  double s = 0;
  for (double h : spacing) s += s1 / (h * h);
  return 2.0 / (v_max * std::sqrt(s));
}

}  // namespace minimod::physics
