#include "pml/cpml.hpp"

#include <cmath>

namespace minimod::pml {

AxisDerivatives make_axis_derivatives(const std::array<double, 3>& h) {
  AxisDerivatives w{};
  for (int a = 0; a < 3; ++a) {
    for (int m = 0; m <= physics::kRadius; ++m)
      w.c2[a][m] = static_cast<float>(physics::kSecondDerivative8[m] / (h[a] * h[a]));
    for (int m = 1; m <= physics::kRadius; ++m)
      w.c1[a][m - 1] = static_cast<float>(kFirstDerivative8[m - 1] / h[a]);
  }
  return w;
}

CpmlProfiles make_cpml_profiles(const physics::Index3& shape, const std::array<double, 3>& h,
                                const PmlWidths& widths, const CpmlParams& p) {
  CpmlProfiles out;
  const double alpha_max = M_PI * p.frequency;
  for (int ax = 0; ax < 3; ++ax) {
    const int n = shape[ax];
    out.a[ax].assign(static_cast<size_t>(n), 1.0f);
    out.b[ax].assign(static_cast<size_t>(n), 0.0f);
    for (int i = 0; i < n; ++i) {
      // s: depth into the PML in points, 1 at the innermost PML point, N at the outermost.
      int width = 0;
      double s = 0;
      if (widths.lo[ax] > 0 && i < widths.lo[ax]) {
        width = widths.lo[ax];
        s = widths.lo[ax] - i;
      } else if (widths.hi[ax] > 0 && i >= n - widths.hi[ax]) {
        width = widths.hi[ax];
        s = i - (n - widths.hi[ax]) + 1;
      }
      if (width == 0) continue;
      const double r = s / width;
      // d(r) = d0 r^p with d0 = (p + 1) v ln(1/R) / (2 L): normal-incidence reflection R.
      const double d0 =
          (p.power + 1) * p.velocity * std::log(1.0 / p.reflection) / (2.0 * width * h[ax]);
      const double d = d0 * std::pow(r, p.power);
      const double alpha = alpha_max * (1.0 - r);
      const double a = std::exp(-(d + alpha) * p.dt);
      out.a[ax][static_cast<size_t>(i)] = static_cast<float>(a);
      out.b[ax][static_cast<size_t>(i)] = static_cast<float>(d / (d + alpha) * (a - 1.0));
    }
  }
  return out;
}

}  // namespace minimod::pml
