// Propagator::state_fields on the GPU (tests/state_check.hpp): every CUDA family's first tile,
// isotropic with the CPML and TTI with its CPML (a tilted model, and one of one axis) and its sponge.
#include <gtest/gtest.h>

#include "kernels/backends.hpp"
#include "kernels/tti_propagator.hpp"
#include "gpu/first_tiles.hpp"
#include "state_check.hpp"

namespace minimod {
namespace {

TEST(CudaState, IsotropicStateCarriesTheRun) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  const physics::Index3 n{40, 36, 44};
  const auto problem = testing::random_problem(23, n, true);
  const auto names = testing::first_tiles(kernels::cuda::PropagatorKind::acoustic_iso);
  ASSERT_FALSE(names.empty());
  for (const auto& k : names) {
    SCOPED_TRACE(k);
    testing::expect_state_carries_the_run([&] { return kernels::make_acoustic_iso(problem, "cuda", k); }, n,
                                          {"u", "u_prev"});
  }
}

TEST(CudaState, TtiStateCarriesTheRun) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  const physics::Index3 n{40, 36, 44};
  const auto tilted = testing::random_tti(24, n, true);
  auto one_axis = tilted;  // the constant-axis forms (swic_split_tma's fastest)
  std::fill(one_axis.theta.begin(), one_axis.theta.end(), 0.5f);
  std::fill(one_axis.phi.begin(), one_axis.phi.end(), 0.3f);
  kernels::take_axis_flags(one_axis);
  ASSERT_TRUE(one_axis.constant_axis);
  const auto names = testing::first_tiles(kernels::cuda::PropagatorKind::acoustic_tti);
  ASSERT_FALSE(names.empty());
  struct Case {
    const char* what;
    kernels::AcousticTtiProblem problem;
  };
  for (const auto& c : {Case{"CPML", testing::with_cpml_layer(tilted)}, Case{"CPML, one axis", testing::with_cpml_layer(one_axis)},
                        Case{"sponge", tilted}})
    for (const auto& k : names) {
      SCOPED_TRACE(std::string(c.what) + ", " + k);
      testing::expect_state_carries_the_run([&] { return kernels::make_acoustic_tti(c.problem, "cuda", k); }, n,
                                            {"p", "p_prev", "q", "q_prev"});
    }
}

}  // namespace
}  // namespace minimod
