// A distributed run's ranks build only their windows of the model (app::ModelShare): each rank's
// subdomain problem, cut from its window, must equal the one cut from the whole model, and every
// figure of the plan (velocity and anisotropy ranges, dt, counts, warnings, the source's weights,
// the axis flags) must be the whole model's. The ranks are threads here, their collectives a
// barrier (ThreadRanks), so every decomposition runs in one process; the real binary under mpirun
// is tests/mpi/tti_mpirun_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "app/plan.hpp"
#include "io/model_file.hpp"
#include "mpi/decomposition.hpp"
#include "mpi/subdomain.hpp"
#include "physics/error.hpp"
#include "test_support.hpp"

namespace minimod {
namespace {

namespace fs = std::filesystem;
using physics::Index3;

/// n threads standing for n ranks: ModelShare's collectives, each round met by every thread.
class ThreadRanks {
 public:
  explicit ThreadRanks(int n) : n_(n), values_(static_cast<size_t>(n)), errors_(static_cast<size_t>(n)) {}

  void combine(int rank, std::vector<double>& v, char op) {
    std::unique_lock<std::mutex> lock(m_);
    values_[static_cast<size_t>(rank)] = v;
    meet(lock, [&] {
      combined_ = values_[0];
      for (const auto& w : values_)
        for (size_t e = 0; e < w.size(); ++e)
          combined_[e] = op == '+' ? (&w == &values_[0] ? w[e] : combined_[e] + w[e])
                                   : (op == '<' ? std::min(combined_[e], w[e]) : std::max(combined_[e], w[e]));
    });
    v = combined_;
  }

  std::string first_error(int rank, const std::string& own) {
    std::unique_lock<std::mutex> lock(m_);
    errors_[static_cast<size_t>(rank)] = own;
    meet(lock, [&] {
      first_.clear();
      for (const auto& e : errors_)
        if (!e.empty()) {
          first_ = e;
          break;
        }
    });
    return first_;
  }

 private:
  /// The last thread to arrive runs `last`; the others wait for it. A thread reads the round's
  /// result before it can arrive at the next round, which needs every thread.
  template <class F>
  void meet(std::unique_lock<std::mutex>& lock, const F& last) {
    const int round = round_;
    if (++arrived_ == n_) {
      last();
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return round_ != round; });
    }
  }

  int n_, arrived_ = 0, round_ = 0;
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<std::vector<double>> values_;
  std::vector<double> combined_;
  std::vector<std::string> errors_;
  std::string first_;
};

struct RankPlans {
  mpi::Decomposition decomposition;
  std::vector<app::RunPlan> plans;
  std::vector<std::string> errors;  // each rank's ConfigError ("" where it planned)
};

/// make_plan on `dims` ranks (threads), each building its window.
RankPlans plan_on_ranks(const io::Config& c, const std::array<int, 3>& dims) {
  const int n = dims[0] * dims[1] * dims[2];
  ThreadRanks ranks(n);
  RankPlans out;
  out.plans.resize(static_cast<size_t>(n));
  out.errors.resize(static_cast<size_t>(n));
  std::mutex m;
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      const app::ShareOf share_of = [&](const app::RunPlan& p) -> std::optional<app::ModelShare> {
        const mpi::CutLimits limits = p.tti ? mpi::cut_limits(p.tti_problem) : mpi::cut_limits(p.problem);
        const mpi::Decomposition d = mpi::decompose(p.problem.grid.shape, dims, limits);
        if (r == 0) {
          std::lock_guard<std::mutex> lock(m);
          out.decomposition = d;
        }
        app::ModelShare s;
        s.box = d.box_of(r);
        s.combine = [&ranks, r](std::vector<double>& v, char op) { ranks.combine(r, v, op); };
        s.first_error = [&ranks, r](const std::string& own) { return ranks.first_error(r, own); };
        return s;
      };
      try {
        out.plans[static_cast<size_t>(r)] = app::make_plan(c, {}, share_of);
      } catch (const ConfigError& e) {
        out.errors[static_cast<size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return out;
}

kernels::HaloFaces faces_of(const mpi::Decomposition& d, int rank) {
  kernels::HaloFaces faces;
  const auto nb = d.neighbours_of(rank);
  for (int f = 0; f < 6; ++f) faces.neighbour[static_cast<size_t>(f)] = nb[static_cast<size_t>(f)] >= 0;
  return faces;
}

/// A smooth field over the model, varying along every axis, with a seed's phase.
std::vector<float> smooth(const Index3& n, double lo, double hi, double seed) {
  std::vector<float> v(static_cast<size_t>(n.i) * n.j * n.k);
  for (int i = 0; i < n.i; ++i)
    for (int j = 0; j < n.j; ++j)
      for (int k = 0; k < n.k; ++k) {
        const double s = std::sin(0.21 * i + seed) * std::cos(0.17 * j - 2 * seed) + std::sin(0.13 * k + 3 * seed);
        v[(static_cast<size_t>(i) * n.j + j) * n.k + k] = static_cast<float>(lo + (hi - lo) * (s + 2) / 4);
      }
  return v;
}

/// A tilted model from files: smooth vp, eps >= delta (but for `below` points), angles in
/// degrees with a block where the axis jumps by 60 degrees (the axis-turn scan and its warning).
struct ModelFiles {
  fs::path dir, file;
  ModelFiles(const Index3& n, int below) {
    dir = fs::temp_directory_path() / ("minimod_model_share_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    file = dir / "model.h5";
    fs::remove(file);
    const std::array<int, 3> shape{n.i, n.j, n.k};
    auto delta = smooth(n, -0.05, 0.1, 0.7), eps = smooth(n, 0, 0.25, 1.9), theta = smooth(n, 0, 70, 2.3);
    for (size_t x = 0; x < eps.size(); ++x) eps[x] += delta[x];
    for (int x = 0; x < below; ++x) eps[static_cast<size_t>(x * 97 % static_cast<int>(eps.size()))] -= 0.3f;
    for (int i = 10; i < 13; ++i)
      for (int j = 9; j < 12; ++j)
        for (int k = 2; k < 5; ++k) theta[(static_cast<size_t>(i) * n.j + j) * n.k + k] += 60;
    io::write_model_dataset(file.string(), "vp", shape, smooth(n, 1800, 2600, 0.3));
    io::write_model_dataset(file.string(), "epsilon", shape, eps);
    io::write_model_dataset(file.string(), "delta", shape, delta);
    io::write_model_dataset(file.string(), "theta", shape, theta);
    io::write_model_dataset(file.string(), "phi", shape, smooth(n, 0, 360, 3.1));
  }
  ~ModelFiles() { fs::remove_all(dir); }
  io::ParameterConfig parameter(const char* dataset, double scale = 1) const {
    io::ParameterConfig p;
    p.kind = io::ParameterConfig::Kind::file;
    p.file = file.string();
    p.dataset = dataset;
    p.scale = scale;
    return p;
  }
};

io::Config tti_files_config(const ModelFiles& files) {
  auto c = testing::homogeneous_config({26, 22, 24}, 12.5, 2000, 15);
  c.propagator = "acoustic_tti";
  const double deg = std::acos(-1.0) / 180;
  c.model.vp = files.parameter("vp");
  c.model.epsilon = files.parameter("epsilon");
  c.model.delta = files.parameter("delta");
  c.model.theta = files.parameter("theta", deg);
  c.model.phi = files.parameter("phi", deg);
  c.model.elliptic_where_axis_turns = 30;
  c.model.isotropic_radius = 30;
  c.model.epsilon_below_delta = "clamp";
  c.source.position = {130, 120, 100};
  c.boundary.pml_width = 6;
  c.boundary.free_surface[4] = true;
  c.time.duration = 0.05;
  c.receivers.push_back({});
  c.receivers.back().points = {{60, 100, 150}, {250, 20, 10}};
  return c;
}

void expect_same(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t x = 0; x < a.size(); ++x)
    if (!(a[x] == b[x])) {
      ADD_FAILURE() << what << " differs at " << x << ": " << a[x] << " against " << b[x];
      return;
    }
}

/// Every rank's figures are the whole plan's, and its subdomain problems those cut from the whole.
void expect_windows_equal_the_whole(const io::Config& c, const std::array<int, 3>& dims) {
  const app::RunPlan whole = app::make_plan(c);
  const RankPlans ranks = plan_on_ranks(c, dims);
  for (size_t r = 0; r < ranks.plans.size(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r) + " of " + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) +
                 "x" + std::to_string(dims[2]));
    ASSERT_EQ(ranks.errors[r], "");
    const app::RunPlan& p = ranks.plans[r];
    EXPECT_EQ(p.dt, whole.dt);
    EXPECT_EQ(p.steps, whole.steps);
    EXPECT_EQ(p.vp_min, whole.vp_min);
    EXPECT_EQ(p.vp_max, whole.vp_max);
    EXPECT_EQ(p.eps_max, whole.eps_max);
    EXPECT_EQ(p.delta_min, whole.delta_min);
    EXPECT_EQ(p.delta_max, whole.delta_max);
    EXPECT_EQ(p.delta_clamped, whole.delta_clamped);
    EXPECT_EQ(p.axis_turn_max, whole.axis_turn_max);
    EXPECT_EQ(p.axis_turn_elliptic, whole.axis_turn_elliptic);
    EXPECT_EQ(p.warnings, whole.warnings);
    ASSERT_EQ(p.source.size(), whole.source.size());
    for (size_t e = 0; e < p.source.size(); ++e) {
      EXPECT_TRUE(p.source[e].node == whole.source[e].node);
      EXPECT_EQ(p.source[e].weight, whole.source[e].weight);
    }
    // Its memory figures are its share, and say so.
    EXPECT_LT(p.field_bytes, whole.field_bytes);
    EXPECT_LT(p.host_bytes, whole.host_bytes);
    EXPECT_NE(app::describe(p).find(" GiB a rank at its peak"), std::string::npos) << app::describe(p);
    const physics::Box3 box = ranks.decomposition.box_of(static_cast<int>(r));
    const kernels::HaloFaces faces = faces_of(ranks.decomposition, static_cast<int>(r));
    // Only the window is built: the rank's box grown by the radius, less than the whole grid.
    const auto& grid = whole.problem.grid;
    if (p.tti) {
      EXPECT_TRUE(physics::covers(p.tti_problem.stored, box));
      EXPECT_LT(p.tti_problem.v2dt2.size(), static_cast<size_t>(grid.points()));
      EXPECT_EQ(p.tti_problem.vti, whole.tti_problem.vti);
      EXPECT_EQ(p.tti_problem.constant_axis, whole.tti_problem.constant_axis);
      const auto mine = mpi::subdomain_problem(p.tti_problem, box, faces);
      const auto cut = mpi::subdomain_problem(whole.tti_problem, box, faces);
      expect_same(mine.v2dt2, cut.v2dt2, "v2dt2");
      expect_same(mine.b, cut.b, "b");
      expect_same(mine.theta, cut.theta, "theta");
      expect_same(mine.phi, cut.phi, "phi");
      expect_same(mine.a, cut.a, "a");
      for (int a = 0; a < 3; ++a) expect_same(mine.cpml.b[a], cut.cpml.b[a], "cpml b");
    } else {
      EXPECT_LT(p.problem.v2dt2.size(), static_cast<size_t>(grid.points()));
      expect_same(mpi::subdomain_problem(p.problem, box, faces).v2dt2,
                  mpi::subdomain_problem(whole.problem, box, faces).v2dt2, "v2dt2");
    }
  }
}

TEST(ModelShare, EachRanksWindowOfATiltedModelFromFilesCutsToTheWholeModelsSubdomain) {
  const ModelFiles files({26, 22, 24}, 40);
  const io::Config c = tti_files_config(files);
  // The model exercises what the figures combine: clamped points, turns made elliptic, a warning.
  const app::RunPlan whole = app::make_plan(c);
  EXPECT_GT(whole.delta_clamped, 0);
  EXPECT_GT(whole.axis_turn_elliptic, 0);
  EXPECT_FALSE(whole.warnings.empty());
  for (const auto& dims : {std::array<int, 3>{2, 1, 1}, {1, 2, 2}, {2, 2, 2}, {1, 1, 3}})
    expect_windows_equal_the_whole(c, dims);
}

TEST(ModelShare, TheSpongeAndTheVerticalLayerAxisToo) {
  const ModelFiles files({26, 22, 24}, 0);
  io::Config c = tti_files_config(files);
  c.boundary.tti_layer_axis = "vertical";
  expect_windows_equal_the_whole(c, {2, 2, 1});
  c.boundary.tti_layer_axis.clear();
  c.boundary.tti_layer = "sponge";
  expect_windows_equal_the_whole(c, {1, 3, 1});
  // The sponge may be cut anywhere: 5 ranks along z (24 model points, a 6-point layer below, the
  // free surface above: 6 points each) give the deepest rank the layer alone, no point of the
  // model to count.
  expect_windows_equal_the_whole(c, {1, 1, 5});
}

/// A short TTI run of constant eps 0.2 and delta 0.1 on `shape` (10 m), the source near a corner.
io::Config constant_tti_config(const std::array<int, 3>& shape) {
  auto c = testing::homogeneous_config(shape, 10, 2000, 15);
  c.propagator = "acoustic_tti";
  c.model.epsilon.constant = 0.2;
  c.model.delta.constant = 0.1;
  c.source.position = {100, 90, 100};
  c.time.duration = 0.05;
  return c;
}

TEST(ModelShare, OneTiltedAxisStaysConstantOverTheRanksAndAVerticalOneVti) {
  auto c = constant_tti_config({24, 20, 22});
  c.model.theta.constant = 0.5;
  c.model.phi.constant = 1.0;
  ASSERT_TRUE(app::make_plan(c).tti_problem.constant_axis);
  expect_windows_equal_the_whole(c, {2, 1, 2});
  c.model.theta.constant = 0;
  ASSERT_TRUE(app::make_plan(c).tti_problem.vti);
  expect_windows_equal_the_whole(c, {2, 1, 2});
}

TEST(ModelShare, AnAxisThatChangesInOneRanksPartOnlyIsNeitherVtiNorConstantOnAnyRank) {
  auto c = constant_tti_config({20, 18, 40});
  c.model.theta.kind = io::ParameterConfig::Kind::layers;
  c.model.theta.layers = {{0, 0.0}, {340, 0.5}};  // vertical above z = 340 m: all the upper rank sees
  const app::RunPlan whole = app::make_plan(c);
  ASSERT_FALSE(whole.tti_problem.vti);
  ASSERT_FALSE(whole.tti_problem.constant_axis);
  expect_windows_equal_the_whole(c, {1, 1, 2});
  c.model.theta.layers = {{0, 0.3}, {340, 0.5}};  // one tilted axis above, another below
  expect_windows_equal_the_whole(c, {1, 1, 2});
}

TEST(ModelShare, AnIsotropicModelFromAFile) {
  const ModelFiles files({26, 22, 24}, 0);
  auto c = testing::homogeneous_config({26, 22, 24}, 12.5, 2000, 15);
  c.model.vp = files.parameter("vp");
  c.source.position = {130, 120, 100};
  c.time.duration = 0.05;
  for (const auto& dims : {std::array<int, 3>{2, 1, 1}, {2, 2, 2}}) expect_windows_equal_the_whole(c, dims);
  // Minimod's mode: its PML inside the grid (no padding), its own dt and raw source weights.
  c.mode = "minimod";
  c.source.frequency = 100;  // its PML 10 points a side: 3 vmax / f / h
  expect_windows_equal_the_whole(c, {1, 2, 2});
}

/// The ConfigError of a one-rank plan of `c` ("" where it plans).
std::string plan_error(const io::Config& c) {
  try {
    app::make_plan(c);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelShare, ABadValueInOneRanksPartStopsEveryRankWithTheSameError) {
  const Index3 n{26, 22, 24};
  const ModelFiles files(n, 0);
  std::vector<float> vp = smooth(n, 1800, 2600, 0.3);
  vp[(static_cast<size_t>(n.i - 3) * n.j + n.j - 3) * n.k + 5] = std::nanf("");  // the last rank's, of 2x2x1
  io::write_model_dataset(files.file.string(), "vp_bad", {n.i, n.j, n.k}, vp);
  io::Config c = tti_files_config(files);
  c.model.vp = files.parameter("vp_bad");
  const std::string alone = plan_error(c);
  ASSERT_NE(alone.find("model.vp"), std::string::npos) << alone;
  // Every rank throws the one message, which names the key, the file and the point as the
  // whole read does (counting the bad values of the reading rank's part only).
  const RankPlans ranks = plan_on_ranks(c, {2, 2, 1});
  const std::string& first = ranks.errors.front();
  for (const auto& e : ranks.errors) EXPECT_EQ(e, first);
  for (const char* part : {"config error: model.vp", "vp_bad", "model.h5", "nan at [23][19][5]"}) {
    EXPECT_NE(alone.find(part), std::string::npos) << alone;
    EXPECT_NE(first.find(part), std::string::npos) << first;
  }
}

TEST(ModelShare, EpsilonBelowDeltaInOneRanksPartIsNamedWithItsValuesOnEveryRank) {
  const ModelFiles files({26, 22, 24}, 3);
  io::Config c = tti_files_config(files);
  c.model.epsilon_below_delta = "error";
  const std::string alone = plan_error(c);
  ASSERT_NE(alone.find("epsilon < delta"), std::string::npos) << alone;
  const RankPlans ranks = plan_on_ranks(c, {2, 1, 2});
  for (const auto& e : ranks.errors) EXPECT_EQ(e, alone);
}

}  // namespace
}  // namespace minimod
