// The run plan's memory figure (--dry-run, the run banner): the fields of the propagator the
// config asks for, with the two spare wavefields of a two-step CUDA family (`temporal`, which
// keeps u^{n+1} and u^{n+2} beside u, u_prev) where it advances in pairs: Minimod's layer, no
// free surface, not the CPU backend.
#include <gtest/gtest.h>

#include <string>

#include "app/plan.hpp"
#include "kernels/backends.hpp"
#include "kernels/tti_propagator.hpp"
#include "physics/grid.hpp"
#include "physics/view3.hpp"
#include "test_support.hpp"

namespace minimod {
namespace {

io::Config minimod_config(const char* kernel) {
  auto c = testing::homogeneous_config({90, 80, 70}, 20, 2000, 25);  // 27 PML points a side inside
  c.mode = "minimod";
  c.source.position = {900, 800, 700};
  c.execution.backend = "cuda";
  c.execution.kernel = kernel;
  return c;
}

std::int64_t wavefield_bytes(const app::RunPlan& p) {
  return physics::FieldLayout::make(p.problem.grid.box(), physics::kRadius).elements() * 4;
}

TEST(PlanMemory, CountsTheFieldsOfTheKernelAsked) {
  const auto lean = app::make_plan(minimod_config("semi_tma:64x32x64"));
  EXPECT_EQ(lean.field_bytes, 4 * wavefield_bytes(lean));  // u, u_prev, v2dt2, aux
  EXPECT_EQ(lean.memory_bytes, lean.field_bytes + std::int64_t{lean.samples()} * lean.receiver_count() * 4);
  if (!kernels::two_step_kernel(lean.problem, "temporal")) GTEST_SKIP() << "no CUDA backend in this build: no two-step family";
  const auto pairs = app::make_plan(minimod_config("temporal:32x16x1000"));
  EXPECT_EQ(pairs.field_bytes, 6 * wavefield_bytes(pairs));
  auto cpu = minimod_config("temporal");
  cpu.execution.backend = "cpu";  // the CPU reference runs one step at a time
  EXPECT_EQ(app::make_plan(cpu).field_bytes, 4 * wavefield_bytes(pairs));
  auto any = minimod_config("temporal");
  any.execution.backend = "auto";  // two spare fields only where a GPU runs it
  const int auto_fields = kernels::resolve_backend("auto") == "cuda" ? 6 : 4;
  EXPECT_EQ(app::make_plan(any).field_bytes, auto_fields * wavefield_bytes(pairs));
  auto standard = minimod_config("temporal");
  standard.mode = "standard";  // the CPML: single steps, nine fields
  const auto s = app::make_plan(standard);
  EXPECT_EQ(s.field_bytes, 9 * wavefield_bytes(s));
}

TEST(PlanMemory, TtiCountsWhatTheCpuPropagatorAllocates) {
  // The sponge layer: 12 arrays; the CPML layer adds 18 memory fields over the layer's points
  // (the grid less its inner box: 50 x 44 x 40 less 30 x 24 x 20 with a 10-point layer).
  for (const char* layer : {"sponge", "cpml"}) {
    auto c = testing::homogeneous_config({30, 24, 20}, 10, 2000, 15);
    c.propagator = "acoustic_tti";
    c.model.epsilon.constant = 0.1;
    c.boundary.tti_layer = layer;
    c.boundary.pml_width = 10;
    c.execution.backend = "cpu";
    const auto plan = app::make_plan(c);
    const auto prop = kernels::make_acoustic_tti(plan.tti_problem, "cpu", "auto");
    EXPECT_EQ(plan.field_bytes, prop->allocated_bytes()) << layer;
    const std::int64_t layer_bytes = std::string(layer) == "cpml" ? 18 * (50 * 44 * 40 - 30 * 24 * 20) * 4 : 0;
    EXPECT_EQ(plan.field_bytes, 12 * wavefield_bytes(plan) + layer_bytes) << layer;
  }
}

TEST(PlanMemory, OnlyTemporalIsATwoStepKernel) {
  const auto problem = app::make_plan(minimod_config("semi_tma")).problem;
  EXPECT_FALSE(kernels::two_step_kernel(problem, "semi_tma"));
  EXPECT_FALSE(kernels::two_step_kernel(problem, "auto"));
  EXPECT_FALSE(kernels::two_step_kernel(problem, "no_such_family:1x2x3"));
  EXPECT_EQ(kernels::two_step_kernel(problem, "temporal:32x8x1000"), kernels::two_step_kernel(problem, "temporal"));
}

}  // namespace
}  // namespace minimod
