// Propagator::reset on the GPU (tests/reset_check.hpp): every CUDA family's first tile, isotropic
// with the CPML and TTI with its CPML, the two-step families' pending step included.
#include <gtest/gtest.h>

#include "kernels/backends.hpp"
#include "kernels/tti_propagator.hpp"
#include "gpu/first_tiles.hpp"
#include "reset_check.hpp"

namespace minimod {
namespace {

TEST(CudaReset, IsotropicShotAfterAResetIsAFreshOne) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  const physics::Index3 n{40, 36, 44};
  const auto problem = testing::random_problem(21, n, true);
  const auto names = testing::first_tiles(kernels::cuda::PropagatorKind::acoustic_iso);
  ASSERT_FALSE(names.empty());
  for (const auto& k : names) {
    SCOPED_TRACE(k);
    testing::expect_reset_is_a_fresh_start([&] { return kernels::make_acoustic_iso(problem, "cuda", k); }, n,
                                           {"u", "u_prev"});
  }
}

TEST(CudaReset, TtiShotAfterAResetIsAFreshOne) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  const physics::Index3 n{40, 36, 44};
  const auto problem = testing::with_cpml_layer(testing::random_tti(22, n, false));
  const auto names = testing::first_tiles(kernels::cuda::PropagatorKind::acoustic_tti);
  ASSERT_FALSE(names.empty());
  for (const auto& k : names) {
    SCOPED_TRACE(k);
    testing::expect_reset_is_a_fresh_start([&] { return kernels::make_acoustic_tti(problem, "cuda", k); }, n,
                                           {"p", "p_prev", "q", "q_prev"});
  }
}

}  // namespace
}  // namespace minimod
