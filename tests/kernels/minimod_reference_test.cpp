// Minimod's own output (tests/data/minimod, from reference/minimod/PROVENANCE.md) reproduced by the
// Minimod-compatible mode: configs/minimod-benchmark.yaml with 250 and 1000 steps.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "kernels/backends.hpp"
#include "test_support.hpp"

namespace minimod {
namespace {

TEST(MinimodReference, Matches250StepsWithin1e4) {
  const double e = testing::minimod_reference_error(250, "cpu");
  std::printf("relative L2 error after 250 steps: %.3e\n", e);
  EXPECT_LE(e, 1e-4);
}

TEST(MinimodReference, Matches1000StepsWithin1e3) {
  const double e = testing::minimod_reference_error(1000, "cpu");
  std::printf("relative L2 error after 1000 steps: %.3e\n", e);
  EXPECT_LE(e, 1e-3);
}

}  // namespace
}  // namespace minimod
