// Propagator::reset on the GPU (tests/reset_check.hpp): every CUDA family's first tile, isotropic
// with the CPML and TTI with its CPML, the two-step families' pending step included.
#include <gtest/gtest.h>

#include "kernels/backends.hpp"
#include "kernels/cuda/autotune.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/tti_propagator.hpp"
#include "reset_check.hpp"

namespace minimod {
namespace {

std::vector<std::string> first_tiles(kernels::cuda::PropagatorKind kind) {
  std::vector<std::string> out;
  for (const auto& f : kernels::cuda::families()) {
    if (!kernels::cuda::implements(f, kind)) continue;
    if (kind == kernels::cuda::PropagatorKind::acoustic_tti && f.tti_vti_only) continue;
    const auto& tiles = kernels::cuda::tunables(f, kind);
    if (!tiles.empty()) out.push_back(f.name + ":" + kernels::cuda::tile_string(tiles.front()));
  }
  return out;
}

TEST(CudaReset, IsotropicShotAfterAResetIsAFreshOne) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  const physics::Index3 n{40, 36, 44};
  const auto problem = testing::random_problem(21, n, true);
  const auto names = first_tiles(kernels::cuda::PropagatorKind::acoustic_iso);
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
  const auto names = first_tiles(kernels::cuda::PropagatorKind::acoustic_tti);
  ASSERT_FALSE(names.empty());
  for (const auto& k : names) {
    SCOPED_TRACE(k);
    testing::expect_reset_is_a_fresh_start([&] { return kernels::make_acoustic_tti(problem, "cuda", k); }, n,
                                           {"p", "p_prev", "q", "q_prev"});
  }
}

}  // namespace
}  // namespace minimod
