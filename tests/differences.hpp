// The largest difference between a result and its reference, for the tests' tolerance checks.
// std::max(worst, NaN) returns worst, so with it a point left unwritten (NaN) or blown up on one
// side would pass as equal; here a NaN or an infinity on either side makes the difference NaN,
// which fails every EXPECT_LE / EXPECT_LT against a tolerance and shows as "nan" in its message.
#pragma once
#include <cmath>
#include <cstddef>
#include <limits>

namespace minimod::testing {

/// worst = max(worst, d), a non-finite d making it NaN for good.
inline void keep_worst(double& worst, double d) {
  if (std::isnan(worst)) return;
  if (!std::isfinite(d))
    worst = std::numeric_limits<double>::quiet_NaN();
  else if (d > worst)
    worst = d;
}

/// max |a[e] - b[e]| over e < n, NaN where either side is not finite somewhere.
template <class A, class B>
double max_difference(const A& a, const B& b, std::size_t n) {
  double worst = 0;
  for (std::size_t e = 0; e < n; ++e)
    keep_worst(worst, std::fabs(static_cast<double>(a[e]) - static_cast<double>(b[e])));
  return worst;
}

/// The same over all of a (b at least as long).
template <class A, class B>
double max_difference(const A& a, const B& b) {
  return max_difference(a, b, a.size());
}

}  // namespace minimod::testing
