// The tests' comparison helper (tests/differences.hpp): a NaN or an infinity on either side must
// fail a tolerance check instead of vanishing as it does through std::max.
#include "differences.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace minimod {
namespace {

TEST(Differences, TheLargestDifferenceOfFiniteArrays) {
  const std::vector<float> a = {1, 2, 3, 4}, b = {1, 2.5f, 2, 4};
  EXPECT_EQ(testing::max_difference(a, a), 0.0);
  EXPECT_EQ(testing::max_difference(a, b), 1.0);
  EXPECT_EQ(testing::max_difference(a, b, 2), 0.5);  // the first n entries only
}

TEST(Differences, ANonFiniteValueOnEitherSideFailsEveryTolerance) {
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  const std::vector<float> a = {1, 2, 3, 4};
  for (const float bad : {nan, inf, -inf})
    for (size_t at = 0; at < a.size(); ++at) {
      std::vector<float> b = a;
      b[at] = bad;
      EXPECT_TRUE(std::isnan(testing::max_difference(a, b))) << "at " << at;  // NaN <= tol is false
      EXPECT_TRUE(std::isnan(testing::max_difference(b, a))) << "at " << at;
    }
  double worst = 0;
  testing::keep_worst(worst, 0.5);
  testing::keep_worst(worst, nan);
  testing::keep_worst(worst, 7.0);  // a later, larger finite difference does not hide it
  EXPECT_TRUE(std::isnan(worst));
  double w = 0;
  std::vector<double> diffs = {0.25, 3.0, 1.0};
  for (double d : diffs) testing::keep_worst(w, d);
  EXPECT_EQ(w, 3.0);
}

}  // namespace
}  // namespace minimod
