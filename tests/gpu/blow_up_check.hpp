// Shared by the GPU tests of both propagators: a field made unstable in a small box around c
// blows up, and health() reports it where it is broken, next to the box.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <initializer_list>

#include "kernels/propagator.hpp"

namespace minimod::testing {

/// Steps `prop` (no sources) until health() reports a blow-up, checking every step; then the
/// reported point must be broken in one of `fields` and within 6 points of c on every axis (a
/// step spreads the blow-up by the stencil's radius at most).
inline void expect_blow_up_located(kernels::Propagator& prop, const physics::Index3& c,
                                   std::initializer_list<const char*> fields) {
  kernels::FieldHealth h;
  for (int s = 0; s < 5000 && h.finite && h.max_abs <= kernels::kBlowUpLevel; ++s) {
    prop.step({}, 0.0f);
    h = prop.health();
  }
  ASSERT_TRUE(!h.finite || h.max_abs > kernels::kBlowUpLevel) << "did not blow up";
  const auto& w = h.where;
  bool broken = false;
  for (const char* f : fields) {
    float x = 0;
    prop.read_field(f, {w, {1, 1, 1}}, {1, 1, 1}, &x);
    broken |= !std::isfinite(x) || std::fabs(x) >= h.max_abs;
  }
  EXPECT_TRUE(broken) << "at (" << w.i << ", " << w.j << ", " << w.k << ")";
  EXPECT_LE(std::abs(w.i - c.i), 6) << w.i;
  EXPECT_LE(std::abs(w.j - c.j), 6) << w.j;
  EXPECT_LE(std::abs(w.k - c.k), 6) << w.k;
}

/// v2dt2 (C order over shape n) times 9, three times the velocity, in the box of radius 1 around c.
inline void make_unstable_around(std::vector<float>& v2dt2, const physics::Index3& n, const physics::Index3& c) {
  for (int i = c.i - 1; i <= c.i + 1; ++i)
    for (int j = c.j - 1; j <= c.j + 1; ++j)
      for (int k = c.k - 1; k <= c.k + 1; ++k) v2dt2[(static_cast<size_t>(i) * n.j + j) * n.k + k] *= 9;
}

}  // namespace minimod::testing
