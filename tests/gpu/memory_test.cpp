// The memory plan (what --dry-run prints and what the CUDA backend checks against the free memory)
// is within 5% of what the CUDA propagator really takes from the GPU.
#include <gtest/gtest.h>

#if defined(MINIMOD_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

#include "app/plan.hpp"
#include "kernels/backends.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "test_support.hpp"

namespace minimod {
namespace {

#if defined(MINIMOD_HAVE_CUDA)
std::int64_t used_bytes() {
  size_t free = 0, total = 0;
  cudaMemGetInfo(&free, &total);
  return static_cast<std::int64_t>(total - free);
}

TEST(GpuMemory, PlanIsWithinFivePercentOfTheMeasuredPeak) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  for (const char* mode : {"standard", "minimod"}) {
    SCOPED_TRACE(mode);
    // Minimod's mode puts 3 (4500 / f) / h = 27 PML points inside the grid at h = 20 m, 25 Hz.
    auto c = testing::homogeneous_config({300, 280, 260}, 20, 2000, 25);
    c.mode = mode;
    c.source.position = {3000, 2800, 2600};
    const auto plan = app::make_plan(c);
    const std::int64_t before = used_bytes();
    auto prop = kernels::make_acoustic_iso(plan.problem, "cuda", "gmem");
    prop->step(plan.source, 1.0f);
    const std::int64_t measured = used_bytes() - before;
    const double estimate = static_cast<double>(plan.memory_bytes);
    std::printf("%s: plan %.3f GiB, measured %.3f GiB\n", mode, estimate / (1 << 30),
                double(measured) / (1 << 30));
    EXPECT_NEAR(estimate / static_cast<double>(measured), 1.0, 0.05);
  }
}
#endif

}  // namespace
}  // namespace minimod
