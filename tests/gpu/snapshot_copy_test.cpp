// Asynchronous snapshots on the GPU (kernels/cuda/snapshot_copies.cuh): a strided box of p copied
// while the next steps run must hold the field of the step it was taken after. The CPU reference
// and a CUDA family run the same steps from the same random state; every other step a snapshot
// goes into the next of the three slots, and a slot is waited for only when it comes round again
// (as the snapshot writer does), so five more steps, two of which overwrite the copied buffer,
// are queued before its copy is read. Every snapshot is checked at every point. Skipped where no
// GPU exists.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu/first_tiles.hpp"
#include "kernels/backends.hpp"
#include "kernels/cuda/autotune.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/registry.hpp"
#include "random_problem.hpp"
#include "differences.hpp"

namespace minimod {
namespace {

using physics::Box3;
using physics::Index3;
using Snapshots = std::vector<std::vector<float>>;

constexpr int kSlots = kernels::Propagator::kSnapshotSlots;

/// The snapshots of p (every stride-th point of `box`) after every other step of `steps`.
Snapshots take_snapshots(kernels::Propagator& prop, const std::vector<kernels::NodeWeight>& source, int steps,
                         const Box3& box, const Index3& stride) {
  const Index3 on = physics::strided_shape(box, stride);
  const std::int64_t count = static_cast<std::int64_t>(on.i) * on.j * on.k;
  for (int slot = 0; slot < kSlots; ++slot) prop.snapshot_buffer(slot, count);
  Snapshots out;
  int held[kSlots] = {-1, -1, -1};  // which snapshot each slot's copy holds
  auto collect = [&](int slot) {
    if (held[slot] < 0) return;
    prop.wait_copy(slot);
    const float* b = prop.snapshot_buffer(slot, count);
    out[static_cast<size_t>(held[slot])].assign(b, b + count);
    held[slot] = -1;
  };
  for (int s = 0, slot = 0; s < steps; ++s) {
    prop.step(source, std::sin(0.3f * s) + 0.5f);
    if (s % 2 == 0) continue;
    collect(slot);
    prop.copy_field_async("u", box, stride, slot);
    held[slot] = static_cast<int>(out.size());
    out.emplace_back();
    slot = (slot + 1) % kSlots;
  }
  for (int slot = 0; slot < kSlots; ++slot) collect(slot);
  return out;
}

/// Every snapshot of `gpu` equals the CPU's within `tol` of its maximum; the CPU's change from one
/// snapshot to the next (so a stale copy would show).
void expect_same_snapshots(const Snapshots& cpu, const Snapshots& gpu, double tol) {
  ASSERT_EQ(cpu.size(), gpu.size());
  ASSERT_GE(cpu.size(), 6u);
  for (size_t n = 0; n < cpu.size(); ++n) {
    SCOPED_TRACE("snapshot " + std::to_string(n));
    ASSERT_EQ(cpu[n].size(), gpu[n].size());
    double scale = 0, worst = 0, change = 0;
    for (size_t e = 0; e < cpu[n].size(); ++e) {
      scale = std::max(scale, double(std::fabs(cpu[n][e])));
      testing::keep_worst(worst, std::fabs(double(cpu[n][e]) - gpu[n][e]));
      if (n > 0) change = std::max(change, double(std::fabs(cpu[n][e] - cpu[n - 1][e])));
    }
    EXPECT_GT(scale, 0.0);
    EXPECT_LE(worst, tol * scale) << "max |diff| " << worst << " of max " << scale;
    if (n > 0) EXPECT_GT(change, 100 * tol * scale) << "the field hardly changed between snapshots";
  }
}

const Box3 kBox{{1, 2, 0}, {33, 25, 46}};
const Index3 kStride{2, 3, 1};

TEST(CudaSnapshots, IsotropicCopiesHoldTheirStepForEveryFamily) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  const Index3 n{37, 29, 47};
  const auto problem = testing::random_problem(91, n, true);
  const std::vector<kernels::NodeWeight> source = {{{18, 14, 23}, 1.0f, 0}};
  auto cpu = kernels::make_acoustic_iso(problem, "cpu", "reference");
  cpu->write_state(testing::random_field(1, problem.grid.points()).data(),
                   testing::random_field(2, problem.grid.points()).data());
  const Snapshots want = take_snapshots(*cpu, source, 20, kBox, kStride);
  for (const auto& kernel : testing::first_tiles(kernels::cuda::PropagatorKind::acoustic_iso)) {
    SCOPED_TRACE(kernel);
    auto gpu = kernels::make_acoustic_iso(problem, "cuda", kernel);
    gpu->write_state(testing::random_field(1, problem.grid.points()).data(),
                     testing::random_field(2, problem.grid.points()).data());
    expect_same_snapshots(want, take_snapshots(*gpu, source, 20, kBox, kStride), 1e-5);
  }
}

/// TTI snapshots against the CPU's for the first tile of every family, with the sponge or the CPML
/// layer (whose one-rank step runs the layer on a second stream beside the inner box).
void expect_tti_copies_hold_their_step(bool cpml) {
  const Index3 n{37, 29, 47};
  const auto sponge = testing::random_tti(92, n, true);
  const auto problem = cpml ? testing::with_cpml_layer(sponge) : sponge;
  const auto pts = problem.grid.points();
  const std::vector<kernels::NodeWeight> source = {{{18, 14, 23}, 1.0f, 0}};
  auto start = [&](kernels::Propagator& p) {
    p.write_state(testing::random_field(1, pts).data(), testing::random_field(2, pts).data());
    p.write_field("q_prev", problem.grid.box(), testing::random_field(3, pts).data());
    p.write_field("q", problem.grid.box(), testing::random_field(4, pts).data());
  };
  auto cpu = kernels::make_cpu_acoustic_tti(problem);
  start(*cpu);
  const Snapshots want = take_snapshots(*cpu, source, 20, kBox, kStride);
  for (const auto& kernel : testing::first_tiles(kernels::cuda::PropagatorKind::acoustic_tti)) {
    SCOPED_TRACE(kernel);
    auto gpu = kernels::make_acoustic_tti(problem, "cuda", kernel);
    start(*gpu);
    expect_same_snapshots(want, take_snapshots(*gpu, source, 20, kBox, kStride), 2e-5);
  }
}

TEST(CudaSnapshots, TtiCopiesHoldTheirStepForEveryFamily) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  expect_tti_copies_hold_their_step(false);
}

TEST(CudaSnapshots, TtiCopiesHoldTheirStepWithTheCpmlLayer) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  expect_tti_copies_hold_their_step(true);
}

}  // namespace
}  // namespace minimod
