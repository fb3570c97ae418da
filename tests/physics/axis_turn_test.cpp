// physics::axis_turn_degrees and scan_axis_turns: the angle between symmetry axes as lines, and
// a model's sharpest turns between face neighbours, counted against a limit.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <vector>

#include "physics/tti.hpp"

namespace minimod {
namespace {

constexpr double kDeg = 3.14159265358979323846 / 180;

TEST(AxisTurn, IsTheAngleBetweenTheAxesAsLines) {
  EXPECT_NEAR(physics::axis_turn_degrees(0.3f, 1.1f, 0.3f, 1.1f), 0, 1e-3);
  EXPECT_NEAR(physics::axis_turn_degrees(0, 0, 40 * kDeg, 0), 40, 1e-3);
  EXPECT_NEAR(physics::axis_turn_degrees(0, 0, 90 * kDeg, 2.0f), 90, 1e-3);
  // n and -n are one axis: a tilt of 170 degrees is 20 degrees from one of 10 at the same azimuth,
  // and so is a tilt of 10 at the opposite azimuth from one of -10.
  EXPECT_NEAR(physics::axis_turn_degrees(10 * kDeg, 0, 170 * kDeg, 0), 20, 1e-3);
  EXPECT_NEAR(physics::axis_turn_degrees(10 * kDeg, 0, 10 * kDeg, 180 * kDeg), 20, 1e-3);
  EXPECT_NEAR(physics::axis_turn_degrees(10 * kDeg, 0, -10 * kDeg, 180 * kDeg), 0, 0.05);  // acos near 1 in float
  // At tilt 90 the azimuth turns the axis by as much as it changes.
  EXPECT_NEAR(physics::axis_turn_degrees(90 * kDeg, 0, 90 * kDeg, 35 * kDeg), 35, 1e-3);
}

TEST(AxisTurn, TheScanCountsThePointsBesideATurnAboveTheLimit) {
  const physics::Index3 n{5, 6, 7};
  const size_t points = 5 * 6 * 7;
  std::vector<float> theta(points, 0.2f), phi(points, 0.5f);
  // Nothing turns in a constant model.
  auto t = physics::scan_axis_turns(theta, phi, n, 30);
  EXPECT_EQ(t.max_degrees, 0);
  EXPECT_EQ(t.above, 0);
  EXPECT_EQ(t.first, -1);
  // The tilt 35 degrees more from k = 4: the points at k = 3 and 4 turn by 35 toward a neighbour.
  for (size_t o = 0; o < points; ++o)
    if (o % 7 >= 4) theta[o] = static_cast<float>(0.2 + 35 * kDeg);
  std::vector<std::atomic<int>> marked(points);
  t = physics::scan_axis_turns(theta, phi, n, 30, [&](std::int64_t o) { ++marked[static_cast<size_t>(o)]; });
  EXPECT_NEAR(t.max_degrees, 35, 1e-3);
  EXPECT_EQ(t.above, 2 * 5 * 6);
  EXPECT_EQ(t.first, 3);  // (0, 0, 3)
  for (size_t o = 0; o < points; ++o) EXPECT_EQ(marked[o].load(), o % 7 == 3 || o % 7 == 4 ? 1 : 0) << o;
  // Above the turn: counted as the largest, nothing above the limit.
  t = physics::scan_axis_turns(theta, phi, n, 40);
  EXPECT_NEAR(t.max_degrees, 35, 1e-3);
  EXPECT_EQ(t.above, 0);
  // One point of another axis (azimuth 50 degrees more at tilt 90 everywhere): it and its six
  // neighbours turn by 50.
  std::fill(theta.begin(), theta.end(), static_cast<float>(90 * kDeg));
  std::fill(phi.begin(), phi.end(), 0.0f);
  const size_t centre = (2 * 6 + 3) * 7 + 3;
  phi[centre] = static_cast<float>(50 * kDeg);
  t = physics::scan_axis_turns(theta, phi, n, 30);
  EXPECT_NEAR(t.max_degrees, 50, 1e-3);
  EXPECT_EQ(t.above, 7);
  EXPECT_EQ(t.first, static_cast<std::int64_t>(centre - 42));  // its neighbour at i - 1
}

}  // namespace
}  // namespace minimod
