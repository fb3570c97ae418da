// The time loop stops a run that blows up, naming the step and the place.
#include <gtest/gtest.h>

#include "physics/error.hpp"
#include "test_support.hpp"

namespace minimod {
namespace {

TEST(Run, BlowUpStopsTheRunWithStepAndLocation) {
  auto c = testing::homogeneous_config({40, 40, 40}, 10, 2000, 10);
  c.source.position = {200, 200, 200};
  c.time.duration = 0.3;
  auto plan = app::make_plan(c);
  for (auto& m : plan.problem.v2dt2) m *= 4.0f;  // twice the velocity: well above the CFL limit
  auto prop = kernels::make_acoustic_iso(plan.problem, "cpu", "reference");
  app::RunOptions opt;
  opt.progress_seconds = 0;
  opt.health_every = 10;
  try {
    app::run_shot(plan, *prop, nullptr, opt);
    FAIL() << "an unstable run was not stopped";
  } catch (const InstabilityError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("blew up at step"), std::string::npos) << msg;
    EXPECT_NE(msg.find("grid point ("), std::string::npos) << msg;
    std::printf("%s\n", msg.c_str());
  }
}

TEST(Run, StableRunRecordsEverySampleAndStartsAtRest) {
  auto c = testing::homogeneous_config({40, 40, 40}, 10, 2000, 10);
  c.source.position = {200, 200, 200};
  c.time.duration = 0.2;
  c.output.seismogram_interval = 0.004;
  io::ReceiverGroupConfig g;
  g.points = {{300, 200, 200}};
  c.receivers = {g};
  const auto shot = testing::run_config(c);
  EXPECT_EQ(shot.run.samples, shot.plan.steps / shot.plan.record_every + 1);
  const auto t = shot.trace(0);
  EXPECT_EQ(t[0], 0.0);  // at rest at t = 0
  double peak = 0;
  for (double x : t) peak = std::max(peak, std::fabs(x));
  EXPECT_GT(peak, 0.0);
}

}  // namespace
}  // namespace minimod
