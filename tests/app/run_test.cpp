// The time loop stops a run that blows up, naming the step and the place, and measures how much
// the field grew after the source ended (a slowly unstable run); snapshots that come by parts
// (as a distributed run's do) are written as whole ones are.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "io/output_file.hpp"

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
  io::PositionGroupConfig g;
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
  void reset() override { steps_ = 0; }
  std::vector<kernels::StateField> state_fields() const override { return {}; }
  void finish_state() override {}
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

/// A CPU propagator that has its snapshots taken by parts, as a distributed one has.
class SnapshotsByParts final : public kernels::Propagator {
 public:
  explicit SnapshotsByParts(std::unique_ptr<kernels::Propagator> p) : p_(std::move(p)) {}
  std::string backend() const override { return p_->backend(); }
  std::string kernel() const override { return p_->kernel(); }
  std::int64_t allocated_bytes() const override { return p_->allocated_bytes(); }
  void set_receivers(const std::vector<kernels::NodeWeight>& n, int count) override { p_->set_receivers(n, count); }
  void step(const std::vector<kernels::NodeWeight>& s, float a) override { p_->step(s, a); }
  void take_traces(std::vector<float>& out) override { p_->take_traces(out); }
  void read_field(const std::string& f, const physics::Box3& b, const physics::Index3& st, float* out) override {
    p_->read_field(f, b, st, out);
  }
  void reset() override { p_->reset(); }
  std::vector<kernels::StateField> state_fields() const override { return p_->state_fields(); }
  void finish_state() override { p_->finish_state(); }
  void write_state(const float* a, const float* b) override { p_->write_state(a, b); }
  void write_field(const std::string& f, const physics::Box3& b, const float* d) override { p_->write_field(f, b, d); }
  kernels::FieldHealth health() override { return p_->health(); }
  void set_halo_transport(kernels::HaloTransport* t) override { p_->set_halo_transport(t); }
  void copy_field_async(const std::string&, const physics::Box3&, const physics::Index3&, int) override {
    ADD_FAILURE() << "a snapshot taken whole";
  }
  bool snapshots_by_parts() const override { return true; }

 private:
  std::unique_ptr<kernels::Propagator> p_;
};

/// Dataset `name` of HDF5 file `path` as floats, and its chunk's dimensions.
std::vector<float> read_floats(const std::string& path, const std::string& name, std::vector<hsize_t>* chunk = nullptr) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return {};
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  const hid_t space = H5Dget_space(d);
  std::vector<float> v(static_cast<size_t>(H5Sget_simple_extent_npoints(space)));
  H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  if (chunk) {
    const hid_t dcpl = H5Dget_create_plist(d);
    chunk->assign(8, 0);
    chunk->resize(static_cast<size_t>(std::max(0, H5Pget_chunk(dcpl, 8, chunk->data()))));
    H5Pclose(dcpl);
  }
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
  return v;
}

TEST(Run, SnapshotsTakenByPartsAreWrittenAsWholeOnesAre) {
  auto c = testing::homogeneous_config({20, 17, 13}, 10, 2000, 20);
  c.source.position = {100, 80, 60};
  c.time.duration = 0.1;
  c.boundary.pml_width = 4;
  c.output.snapshots.every = 7;
  c.output.snapshots.stride = {1, 2, 1};
  const auto plan = app::make_plan(c);
  const auto& sn = plan.snapshot_shape;
  ASSERT_GE(plan.snapshot_count(), 3);
  app::RunOptions opt;
  opt.progress_seconds = 0;
  const std::string dir = ::testing::TempDir();
  const std::string whole = dir + "snapshots_whole.h5", parts = dir + "snapshots_by_parts.h5";
  {
    auto prop = kernels::make_acoustic_iso(plan.problem, "cpu", "reference");
    io::OutputFile out(whole, true);
    app::run_shot(plan, *prop, &out, opt);
    out.commit();
  }
  {
    SnapshotsByParts prop(kernels::make_acoustic_iso(plan.problem, "cpu", "reference"));
    opt.snapshot_part_floats = 3 * static_cast<std::int64_t>(sn.j) * sn.k - 1;  // slabs of 2 planes
    io::OutputFile out(parts, true);
    app::run_shot(plan, prop, &out, opt);
    out.commit();
  }
  std::vector<hsize_t> chunk;
  const auto a = read_floats(whole, "/snapshots/p"), b = read_floats(parts, "/snapshots/p", &chunk);
  ASSERT_EQ(a.size(), static_cast<size_t>(plan.snapshot_count()) * sn.i * sn.j * sn.k);
  double peak = 0;
  for (float x : a) peak = std::max(peak, double(std::fabs(x)));
  EXPECT_GT(peak, 0) << "all-zero snapshots";
  EXPECT_EQ(a, b);
  EXPECT_EQ(chunk, (std::vector<hsize_t>{1, 2, static_cast<hsize_t>(sn.j), static_cast<hsize_t>(sn.k)}));
  EXPECT_EQ(read_floats(whole, "/snapshots/time"), read_floats(parts, "/snapshots/time"));
  std::filesystem::remove(whole);
  std::filesystem::remove(parts);
}

}  // namespace
}  // namespace minimod
