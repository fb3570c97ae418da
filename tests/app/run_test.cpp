// The time loop stops a run that blows up, naming the step and the place, and measures how much
// the field grew after the source ended (a slowly unstable run).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

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

/// A propagator whose field is a number: health() reports `size(step)`; nothing else happens.
class FieldOfSize final : public kernels::Propagator {
 public:
  explicit FieldOfSize(std::function<float(int)> size) : size_(std::move(size)) {}
  std::string backend() const override { return "test"; }
  std::string kernel() const override { return "field of size"; }
  std::int64_t allocated_bytes() const override { return 0; }
  void set_receivers(const std::vector<kernels::NodeWeight>&, int) override {}
  void step(const std::vector<kernels::NodeWeight>&, float) override { ++steps_; }
  void take_traces(std::vector<float>& out) override { out.clear(); }
  void read_field(const std::string&, const physics::Box3&, const physics::Index3&, float*) override {}
  void write_state(const float*, const float*) override {}
  void write_field(const std::string&, const physics::Box3&, const float*) override {}
  kernels::FieldHealth health() override {
    kernels::FieldHealth h;
    h.max_abs = size_(steps_);
    return h;
  }
  void set_halo_transport(kernels::HaloTransport*) override {}

 private:
  std::function<float(int)> size_;
  int steps_ = 0;
};

TEST(Run, GrowthAfterTheSourceEndedIsMeasured) {
  auto c = testing::homogeneous_config({20, 20, 20}, 10, 2000, 20);
  c.source.position = {100, 100, 100};
  c.time.duration = 1.0;
  const auto plan = app::make_plan(c);
  const int settled = static_cast<int>(std::ceil(physics::wavelet_extent(plan.wavelet) / plan.dt));
  ASSERT_LT(settled + 300, plan.steps);
  app::RunOptions opt;
  opt.progress_seconds = 0;
  opt.health_every = 10;
  // Large while the source acts (not counted), then decaying: no growth.
  FieldOfSize decaying([&](int n) { return n < settled ? 100.0f : 1.0f / (1 + 0.01f * (n - settled)); });
  const double calm = app::run_shot(plan, decaying, nullptr, opt).growth_after_source;
  EXPECT_GT(calm, 0);
  EXPECT_LE(calm, 1.0);
  // Doubling every 50 steps after the source: far above the warning, far below overflow.
  FieldOfSize growing([&](int n) { return n < settled ? 1.0f : std::exp2(float(n - settled) / 50); });
  const double grown = app::run_shot(plan, growing, nullptr, opt).growth_after_source;
  EXPECT_GT(grown, app::kGrowthWarning);
  EXPECT_LT(grown, 1e10);
}

}  // namespace
}  // namespace minimod
