// The acoustic TTI run plan: parameters from the config, the stable time step, the rejected
// epsilon < delta, and a short run recording p or q (DESIGN.md §3, §6).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "app/plan.hpp"
#include "app/run.hpp"
#include "io/model_file.hpp"
#include "physics/cfl.hpp"
#include "physics/error.hpp"
#include "test_support.hpp"

namespace minimod {
namespace {

io::Config tti_config() {
  auto c = testing::homogeneous_config({40, 36, 44}, 10, 2000, 15);
  c.propagator = "acoustic_tti";
  c.model.epsilon.constant = 0.2;
  c.model.delta.constant = 0.1;
  c.model.theta.constant = 0.5;
  c.model.phi.constant = 1.0;
  c.source.position = {200, 180, 220};
  c.boundary.pml_width = 8;
  c.time.duration = 0.08;
  c.receivers.push_back({});
  c.receivers.back().points = {{100, 180, 220}, {300, 100, 50}};
  return c;
}

TEST(TtiPlan, EpsilonBelowDeltaIsRejectedNamingTheKeyAndPlace) {
  auto c = tti_config();
  c.model.epsilon.constant = 0.05;
  try {
    app::make_plan(c);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.epsilon"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("epsilon < delta"), std::string::npos) << e.what();
    // Every point is below: the message counts the others and names the key that clamps them.
    const auto n = std::to_string(40 * 36 * 44 - 1);
    EXPECT_NE(std::string(e.what()).find("and at " + n + " more points"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model.epsilon_below_delta: clamp"), std::string::npos) << e.what();
  }
  // Inside the isotropic zone epsilon = delta, so a smaller epsilon there is no longer an error
  // only if the whole model is inside it: here it is not.
  c.model.isotropic_radius = 50;
  EXPECT_THROW(app::make_plan(c), ConfigError);
}

/// tti_config with delta 0.1 above 200 m and 0.3 below, epsilon 0.2: delta exceeds epsilon from
/// z = 200 m (the model's points k = 20..43).
io::Config tti_config_delta_above_epsilon_below(double deep_delta) {
  auto c = tti_config();
  c.model.delta.kind = io::ParameterConfig::Kind::layers;
  c.model.delta.layers = {{0, 0.1}, {200, deep_delta}};
  return c;
}

TEST(TtiPlan, TheErrorsNameTheFirstPointInModelOrder) {
  // delta above epsilon from z = 200 m: the first such point in C order (x, then y, then z) is
  // (0, 0, 200) m, however the pass over the model is split between threads.
  try {
    app::make_plan(tti_config_delta_above_epsilon_below(0.3));
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("epsilon 0.2 < delta 0.3 at (0, 0, 200) m (and at 34559 more points)"),
              std::string::npos)
        << e.what();
  }
  // delta at or below -0.5 (which only a model file can give): the first such point is named.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("minimod_tti_plan_test_" + std::to_string(static_cast<long long>(::getpid())));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "delta.h5").string();
  std::vector<float> delta(40 * 36 * 44, 0.1f);
  delta[(static_cast<size_t>(7) * 36 + 2) * 44 + 5] = -0.7f;   // (70, 20, 50) m
  delta[(static_cast<size_t>(3) * 36 + 30) * 44 + 40] = -0.6f;  // (30, 300, 400) m: first in C order
  std::filesystem::remove(file);
  io::write_model_dataset(file, "delta", {40, 36, 44}, delta);
  auto c = tti_config();
  c.model.delta.kind = io::ParameterConfig::Kind::file;
  c.model.delta.file = file;
  c.model.delta.dataset = "delta";
  try {
    app::make_plan(c);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.delta"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("> -0.5 and every TTI parameter finite, at (30, 300, 400) m"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(TtiPlan, ClampLowersDeltaToEpsilonWhereItExceedsIt) {
  auto c = tti_config_delta_above_epsilon_below(0.3);
  EXPECT_THROW(app::make_plan(c), ConfigError);  // the default policy: error
  c.model.epsilon_below_delta = "clamp";
  const auto plan = app::make_plan(c);
  EXPECT_EQ(plan.delta_clamped, 40 * 36 * 24);
  EXPECT_FLOAT_EQ(plan.delta_max, 0.2f);  // the ranges and the time step see the clamped model
  EXPECT_FLOAT_EQ(plan.delta_min, 0.1f);
  const auto clamp_warning = std::find_if(plan.warnings.begin(), plan.warnings.end(), [](const std::string& w) {
    return w.find("model.epsilon_below_delta") != std::string::npos;
  });
  ASSERT_NE(clamp_warning, plan.warnings.end());
  EXPECT_NE(clamp_warning->find("delta lowered to epsilon at 34560 of the model's points (54.5"), std::string::npos)
      << *clamp_warning;
  const auto unclamped = app::make_plan(tti_config());  // no warning where nothing was clamped
  EXPECT_EQ(unclamped.delta_clamped, 0);
  for (const auto& w : unclamped.warnings) EXPECT_EQ(w.find("epsilon_below_delta"), std::string::npos) << w;
  EXPECT_NE(app::describe(plan).find("lowered to epsilon at 34560 points"), std::string::npos);
  // Above 200 m the model is untouched (b = 0.2); below it is elliptic (b = 0, a = 1 + 2 eps).
  const auto& t = plan.tti_problem;
  const auto m = kernels::medium_box(t.grid);
  for (double z : {150.0, 190.0, 200.0, 300.0}) {
    const auto idx = t.grid.index_of({200, 180, z});
    const int i = std::lround(idx[0]), j = std::lround(idx[1]), k = std::lround(idx[2]);
    const float b = t.b[(static_cast<size_t>(i) * t.grid.shape.j + j) * t.grid.shape.k + k];
    const float a = t.a[(static_cast<size_t>(i - m.lo.i) * m.n.j + (j - m.lo.j)) * m.n.k + (k - m.lo.k)];
    EXPECT_FLOAT_EQ(b, z < 200 ? 0.2f : 0.0f) << z;
    EXPECT_FLOAT_EQ(a, z < 200 ? 1.2f : 1.4f) << z;
  }
}

TEST(TtiPlan, AClampedRunEqualsTheModelWithDeltaLoweredByHand) {
  auto clamped = tti_config_delta_above_epsilon_below(0.3);
  clamped.model.epsilon_below_delta = "clamp";
  const auto by_hand = tti_config_delta_above_epsilon_below(0.2);
  EXPECT_EQ(app::make_plan(by_hand).delta_clamped, 0);
  const auto a = testing::run_config(clamped).run.seismogram;
  const auto b = testing::run_config(by_hand).run.seismogram;
  ASSERT_FALSE(a.empty());
  EXPECT_GT(*std::max_element(a.begin(), a.end()), 0.0f);
  EXPECT_EQ(a, b);
}

TEST(TtiPlan, WhereTheAxisTurnsSharplyThePlanWarnsOrMakesThePointsElliptic) {
  // The tilt 0.5 rad above 200 m and 40 degrees more below: the axis turns by 40 degrees between
  // the points at z = 190 and 200 m (k = 19, 20), 2 x 40 x 36 points, the first at (0, 0, 190) m.
  auto c = tti_config();
  c.model.theta.kind = io::ParameterConfig::Kind::layers;
  c.model.theta.layers = {{0, 0.5}, {200, 0.5 + 40 * 3.14159265358979 / 180}};
  const auto warned = app::make_plan(c);
  EXPECT_NEAR(warned.axis_turn_max, 40, 1e-3);
  EXPECT_EQ(warned.axis_turn_elliptic, 0);
  const auto warning = std::find_if(warned.warnings.begin(), warned.warnings.end(), [](const std::string& w) {
    return w.find("the symmetry axis turns by more than 30 degrees") != std::string::npos;
  });
  ASSERT_NE(warning, warned.warnings.end());
  for (const char* part : {"at 2880 of the model's points", "the first point at (0, 0, 190) m",
                           "model.elliptic_where_axis_turns: 30"})
    EXPECT_NE(warning->find(part), std::string::npos) << part << " in: " << *warning;
  EXPECT_NE(app::describe(warned).find("the axis turns by up to 40"), std::string::npos) << app::describe(warned);
  // The turn reaches the CPML layer: the ring of each of the two planes within 4 points of the x
  // and y faces, 2 x (40 x 36 - 32 x 28) points (the z faces, 44 points deep, lie far from it).
  const auto at_layer = [](const app::RunPlan& plan) {
    return std::find_if(plan.warnings.begin(), plan.warnings.end(), [](const std::string& w) {
      return w.find("points of a face's CPML layer") != std::string::npos;
    });
  };
  ASSERT_NE(at_layer(warned), warned.warnings.end());
  for (const char* part : {"1088 of those points lie within 4 points", "boundary.pml.tti_axis: vertical"})
    EXPECT_NE(at_layer(warned)->find(part), std::string::npos) << part << " in: " << *at_layer(warned);
  for (const char* axis_or_layer : {"vertical", "sponge"}) {  // neither has that limit
    auto other = c;
    (std::string(axis_or_layer) == "sponge" ? other.boundary.tti_layer : other.boundary.tti_layer_axis) = axis_or_layer;
    const auto plan = app::make_plan(other);
    EXPECT_EQ(at_layer(plan), plan.warnings.end()) << axis_or_layer;
  }
  const auto b_at = [](const app::RunPlan& plan, double z) {
    const auto& t = plan.tti_problem;
    const auto idx = t.grid.index_of({200, 180, z});
    const int i = std::lround(idx[0]), j = std::lround(idx[1]), k = std::lround(idx[2]);
    return t.b[(static_cast<size_t>(i) * t.grid.shape.j + j) * t.grid.shape.k + k];
  };
  for (const double z : {180.0, 190.0, 200.0, 210.0}) EXPECT_FLOAT_EQ(b_at(warned, z), 0.2f) << z;  // untouched

  c.model.elliptic_where_axis_turns = 30;
  const auto elliptic = app::make_plan(c);
  EXPECT_EQ(elliptic.axis_turn_elliptic, 2880);
  EXPECT_NE(app::describe(elliptic).find("(elliptic at 2880 points)"), std::string::npos);
  for (const auto& w : elliptic.warnings) EXPECT_EQ(w.find("degrees toward a neighbour at "), std::string::npos) << w;
  EXPECT_TRUE(std::any_of(elliptic.warnings.begin(), elliptic.warnings.end(), [](const std::string& w) {
    return w.find("model.elliptic_where_axis_turns: epsilon set to delta at 2880 of the model's points") !=
           std::string::npos;
  }));
  // b = 2 (epsilon - delta): 0 on both sides of the turn, 0.2 a point away.
  for (const double z : {180.0, 190.0, 200.0, 210.0})
    EXPECT_FLOAT_EQ(b_at(elliptic, z), z == 190 || z == 200 ? 0.0f : 0.2f) << z;

  c.model.elliptic_where_axis_turns = 45;  // above the turn: nothing changed, nothing to warn of
  const auto wide = app::make_plan(c);
  EXPECT_EQ(wide.axis_turn_elliptic, 0);
  for (const auto& w : wide.warnings) EXPECT_EQ(w.find("axis turns"), std::string::npos) << w;
  EXPECT_EQ(app::make_plan(tti_config()).axis_turn_max, 0);  // constant angles: no turn
}

TEST(TtiPlan, TimeStepAndMediumFollowTheConfig) {
  const auto plan = app::make_plan(tti_config());
  ASSERT_TRUE(plan.tti);
  EXPECT_LE(plan.dt_limit, physics::critical_dt(2000, plan.problem.grid.spacing));
  EXPECT_NEAR(plan.dt, 0.6 * plan.dt_limit, 0.6 * plan.dt_limit * 0.05);  // whole steps per sample
  const auto& t = plan.tti_problem;
  ASSERT_EQ(t.b.size(), static_cast<size_t>(t.grid.points()));
  ASSERT_EQ(t.a.size(), static_cast<size_t>(kernels::medium_box(t.grid).points()));  // with the halo
  // Inside the model (the grid point of the source); theta over the medium box, halo included.
  const auto idx = t.grid.index_of({200, 180, 220});
  const size_t o = (static_cast<size_t>(std::lround(idx[0])) * t.grid.shape.j + std::lround(idx[1])) *
                       t.grid.shape.k + std::lround(idx[2]);
  EXPECT_FLOAT_EQ(t.b[o], 0.2f);
  EXPECT_FLOAT_EQ(t.theta[123], 0.5f);
}

TEST(TtiPlan, TheSpongeLayerKeepsTheAnisotropyOfTheModelsEdge) {
  auto c = tti_config();
  c.boundary.tti_layer = "sponge";
  const auto plan = app::make_plan(c);
  const auto& t = plan.tti_problem;
  const auto& n = t.grid.shape;
  const int w = plan.pad_lo[0];
  ASSERT_EQ(w, 8);
  // Along x through the model's centre: b = 2 (eps - delta) = 0.2 and a = 1 + 2 delta = 1.2 in
  // the model and across the whole layer (its auxiliary term is derived for the TTI operator;
  // fading the anisotropy out in the layer reflected and, at eps 0.3, delta 0.05, grew).
  const int j = n.j / 2, k = n.k / 2;
  auto b_at = [&](int i) { return t.b[(static_cast<size_t>(i) * n.j + j) * n.k + k]; };
  const auto m = kernels::medium_box(t.grid);
  auto a_at = [&](int i) {  // a over the medium box, which starts at -radius
    return t.a[(static_cast<size_t>(i - m.lo.i) * m.n.j + (j - m.lo.j)) * m.n.k + (k - m.lo.k)];
  };
  for (int i : {0, w / 2, w - 1, w, n.i - 1 - w, n.i - w, n.i - 1}) {
    EXPECT_FLOAT_EQ(b_at(i), 0.2f) << i;
    EXPECT_FLOAT_EQ(a_at(i), 1.2f) << i;
  }
}

TEST(TtiPlan, TheCpmlLayerTurnsTheMediumEllipticAtDepth) {
  auto c = tti_config();
  c.boundary.pml_width = 10;
  c.boundary.tti_layer = "cpml";
  const auto plan = app::make_plan(c);
  const auto& t = plan.tti_problem;
  ASSERT_EQ(t.layer, kernels::TtiLayer::cpml);
  const auto& n = t.grid.shape;
  const int w = plan.pad_lo[0];
  ASSERT_EQ(w, 10);
  EXPECT_LT(t.cpml.b[0][0], 0.0f);  // the outermost x point is damped
  EXPECT_EQ(t.cpml.b[0][static_cast<size_t>(n.i / 2)], 0.0f);
  // Along x through the model's centre (eps 0.2, delta 0.1): delta rises to eps between 20% and
  // 80% of the layer's depth, so b = 2 (eps - delta) falls from 0.2 to 0 and a = 1 + 2 delta
  // rises from 1.2 to 1.4; the medium box's halo beyond the grid takes its nearest point's values.
  const int j = n.j / 2, k = n.k / 2;
  auto b_at = [&](int i) { return t.b[(static_cast<size_t>(i) * n.j + j) * n.k + k]; };
  const auto m = kernels::medium_box(t.grid);
  auto a_at = [&](int i) {
    return t.a[(static_cast<size_t>(i - m.lo.i) * m.n.j + (j - m.lo.j)) * m.n.k + (k - m.lo.k)];
  };
  // Depth (w - i) / w below x = 0 and (i - (n - w) + 1) / w above.
  for (int i : {w - 2, w - 1, w, n.i - 1 - w, n.i - w, n.i - w + 1})  // depth 0 .. 0.2: the model's
    EXPECT_FLOAT_EQ(b_at(i), 0.2f) << i;
  for (int i = w - 2; i >= w - 7; --i) {  // depth 0.2 .. 0.8: elliptic step by step
    EXPECT_LT(b_at(i - 1), b_at(i)) << i;
    EXPECT_NEAR(a_at(i) + b_at(i), 1.4, 1e-6) << i;  // eps stays 0.2
  }
  for (int i : {w - 8, 0, -1, -4}) {
    if (i >= 0) EXPECT_EQ(b_at(i), 0.0f) << i;
    EXPECT_FLOAT_EQ(a_at(i), 1.4f) << i;
  }
  EXPECT_FLOAT_EQ(a_at(n.i + 3), 1.4f);
}

TEST(TtiPlan, TheDefaultLayerIsTheCpmlAndTheSpongeIsAKeyAway) {
  auto c = tti_config();
  EXPECT_EQ(app::make_plan(c).tti_problem.layer, kernels::TtiLayer::cpml);
  c.boundary.tti_layer = "sponge";
  EXPECT_EQ(app::make_plan(c).tti_problem.layer, kernels::TtiLayer::sponge);
}

TEST(TtiPlan, TheTtiLayerKeyIsRejectedForTheIsotropicPropagator) {
  auto c = testing::homogeneous_config({20, 20, 20}, 10, 2000, 15);
  c.boundary.tti_layer = "cpml";
  try {
    app::make_plan(c);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("boundary.pml.tti"), std::string::npos) << e.what();
  }
}

TEST(TtiPlan, AVerticalLayerAxisIsTheCpmlsAndTurnsTheLayersAxis) {
  auto c = tti_config();
  c.boundary.tti_layer_axis = "vertical";
  const auto plan = app::make_plan(c);
  const auto& t = plan.tti_problem;
  EXPECT_EQ(t.layer_axis, kernels::TtiLayerAxis::vertical);
  EXPECT_FALSE(t.constant_axis);  // the model's one tilted axis turns in the layer
  EXPECT_NE(app::describe(plan).find("its axis turned to vertical"), std::string::npos) << app::describe(plan);
  const auto m = kernels::medium_box(t.grid);
  const auto theta_at = [&](int i) {  // along x through the source's (j, k)
    const auto idx = t.grid.index_of({200, 180, 220});
    const int j = std::lround(idx[1]), k = std::lround(idx[2]);
    return t.theta[(static_cast<size_t>(i - m.lo.i) * m.n.j + (j - m.lo.j)) * m.n.k + (k - m.lo.k)];
  };
  EXPECT_FLOAT_EQ(theta_at(plan.pad_lo[0]), 0.5f);  // the model's first point
  EXPECT_FLOAT_EQ(theta_at(0), 0.0f);                // the layer's outermost
  EXPECT_EQ(app::make_plan(tti_config()).tti_problem.layer_axis, kernels::TtiLayerAxis::model);
  for (const bool sponge : {true, false}) {  // the sponge's layer has no such axis; nor has acoustic_iso
    auto bad = sponge ? c : testing::homogeneous_config({20, 20, 20}, 10, 2000, 15);
    if (sponge) bad.boundary.tti_layer = "sponge";
    bad.boundary.tti_layer_axis = "vertical";
    try {
      app::make_plan(bad);
      FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("boundary.pml.tti_axis"), std::string::npos) << e.what();
    }
  }
}

TEST(TtiPlan, IsotropicZoneMakesTheMediumEllipticAroundTheSource) {
  auto c = tti_config();
  c.model.isotropic_radius = 35;
  const auto plan = app::make_plan(c);
  const auto& t = plan.tti_problem;
  const auto& g = t.grid;
  auto b_at = [&](double x, double y, double z) {
    const auto idx = g.index_of({x, y, z});
    const size_t o = (static_cast<size_t>(std::lround(idx[0])) * g.shape.j + std::lround(idx[1])) * g.shape.k +
                     std::lround(idx[2]);
    return t.b[o];
  };
  EXPECT_EQ(b_at(200, 180, 220), 0.0f);  // the source point
  EXPECT_EQ(b_at(230, 180, 220), 0.0f);  // 30 m away
  EXPECT_FLOAT_EQ(b_at(250, 180, 220), 0.2f);  // 50 m away
}

TEST(TtiPlan, ShortRunRecordsPOrQ) {
  auto c = tti_config();
  std::vector<float> traces[2];
  for (int which = 0; which < 2; ++which) {
    c.output.record = which == 0 ? "p" : "q";
    traces[which] = testing::run_config(c).run.seismogram;
  }
  double pmax = 0, qmax = 0;
  for (size_t e = 0; e < traces[0].size(); ++e) {
    ASSERT_TRUE(std::isfinite(traces[0][e]) && std::isfinite(traces[1][e]));
    pmax = std::max(pmax, double(std::fabs(traces[0][e])));
    qmax = std::max(qmax, double(std::fabs(traces[1][e])));
  }
  EXPECT_GT(pmax, 0);
  EXPECT_GT(qmax, 0);             // eps > delta: q is excited
  EXPECT_NE(traces[0], traces[1]);
}

}  // namespace
}  // namespace minimod
