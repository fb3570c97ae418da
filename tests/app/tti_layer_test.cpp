// The acoustic TTI absorbing layer (kernels/tti_propagator.hpp): in a strongly anisotropic medium
// the wave leaves a small model through the layer and what stays behind decays, for tilts that
// put the symmetry axis across the faces. With the anisotropy faded out across the layer (its
// outer half isotropic, with Minimod's auxiliary term) the residual grew without bound at eps 0.3,
// delta 0.05: 10^4 times the direct wave within 1.5 s. And what the layer reflects at the default
// width stays below 1% (it is a sponge where the medium is anisotropic: docs/tti.md). The CPML
// layer (boundary.pml.tti: cpml) reflects ten times less and stays bounded where the axis is
// oblique to the faces.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "app/plan.hpp"
#include "app/run.hpp"
#include "test_support.hpp"

namespace minimod {
namespace {

struct Residual {
  std::array<double, 4> quarter{};  // max |p| at the source point over each quarter of the run
  double growth = 0;                // RunResult::growth_after_source (the whole field)
};

/// A homogeneous TTI model at 10 m (vp 2000 m/s, Ricker of f Hz), tilt and azimuth in degrees.
io::Config tti_config(std::array<int, 3> shape, double f, double eps, double delta, double theta_deg,
                      double phi_deg) {
  auto c = testing::homogeneous_config(shape, 10, 2000, f);
  c.propagator = "acoustic_tti";
  c.model.epsilon.constant = eps;
  c.model.delta.constant = delta;
  c.model.theta.constant = theta_deg * M_PI / 180;  // SI: rad
  c.model.phi.constant = phi_deg * M_PI / 180;
  return c;
}

/// A run of `seconds` (1.2 s by default) with the source and the receiver at the centre, the layer
/// of kind `layer` (boundary.pml.tti) 10 points wide, eps 0.3 and delta 0.05 unless given.
Residual residual(double theta_deg, double phi_deg, const std::string& layer = "sponge", double seconds = 1.2,
                  double eps = 0.3, double delta = 0.05, int width = 10, const std::string& axis = "") {
  auto c = tti_config({24, 24, 24}, 12, eps, delta, theta_deg, phi_deg);
  c.source.position = {120, 120, 120};
  c.boundary.pml_width = width;
  c.boundary.tti_layer = layer;
  c.boundary.tti_layer_axis = axis;
  c.time.duration = seconds;
  c.receivers.push_back({});
  c.receivers.back().points = {{120, 120, 120}};
  const auto run = testing::run_config(c).run;
  Residual r;
  r.growth = run.growth_after_source;
  auto& q = r.quarter;
  for (int s = 0; s < run.samples; ++s) {
    const double x = std::fabs(run.seismogram[static_cast<size_t>(s)]);
    EXPECT_TRUE(std::isfinite(x)) << "sample " << s;
    auto& m = q[static_cast<size_t>(std::min(3, 4 * s / run.samples))];
    m = std::max(m, x);
  }
  return r;
}

/// The residual leaves: the last quarter is small against the peak and less than the quarter
/// before, and the field never grows after the source ended.
void expect_decays(const Residual& r, double last_quarter_of_peak) {
  const auto& q = r.quarter;
  EXPECT_GT(q[0], 0);
  EXPECT_LT(q[3], last_quarter_of_peak * q[0]) << "last quarter " << q[3] << " of peak " << q[0];
  EXPECT_LT(q[3], 0.9 * q[2]) << "the residual grows: " << q[2] << " then " << q[3];
  EXPECT_LT(r.growth, 1.0) << "the field grew after the source ended";
}

/// Weaker: the residual stays small against the peak, and what the field does after the source
/// ended is a bump of at most `growth`, not a growth.
void expect_bounded(const Residual& r, double last_quarter_of_peak, double growth) {
  const auto& q = r.quarter;
  EXPECT_GT(q[0], 0);
  EXPECT_LT(q[3], last_quarter_of_peak * q[0]) << "last quarter " << q[3] << " of peak " << q[0];
  EXPECT_LT(r.growth, growth) << "the field grew after the source ended";
}

TEST(TtiLayer, StrongAnisotropyLeavesThroughTheLayerAndTheResidualDecays) {
  // When written: the last quarter held 1.3% (tilt 30, azimuth 20) and 15% (90, 0) of the peak,
  // each less than the quarter before; with the fade, 300 and 600 times the peak.
  for (const auto& [theta, phi] : {std::pair{30.0, 20.0}, std::pair{90.0, 0.0}}) {
    SCOPED_TRACE("tilt " + std::to_string(theta) + ", azimuth " + std::to_string(phi));
    expect_decays(residual(theta, phi), 0.3);
  }
}

TEST(TtiLayer, CpmlStaysBoundedInStrongAnisotropyForObliqueAxes) {
  // The CPML over the anelliptic medium grew 8e6 times within 1.2 s at tilt 30, azimuth 20 (the
  // shear artefact's slowness surface is not convex where the axis is oblique to a face); with
  // the layer elliptic at depth (and q damped there) the residual decays over 3 s for these axes
  // (over 5 s before q's damping: 0.3%, 0.2% and 1% of the peak in the last quarter,
  // bench/results/2026-11-25-cpu-tti-cpml.md).
  for (const auto& [theta, phi] : {std::pair{30.0, 20.0}, std::pair{60.0, 45.0}, std::pair{0.0, 0.0}}) {
    SCOPED_TRACE("tilt " + std::to_string(theta) + ", azimuth " + std::to_string(phi));
    expect_decays(residual(theta, phi, "cpml", 3.0), 0.05);
  }
  // Stronger still, now that the CPML is the default layer: eps 0.45 with a negative delta; and
  // so in a layer of 8 points, as thin as it absorbs better than the sponge of 27 (below; when
  // written 0.22% of the peak in the last quarter, 0.23% at 6 points, 0.49% at tilt 30).
  for (const int width : {10, 8}) {
    SCOPED_TRACE("eps 0.45, delta -0.1, tilt 45, azimuth 30, " + std::to_string(width) + " points");
    expect_decays(residual(45.0, 30.0, "cpml", 3.0, 0.45, -0.1, width), 0.05);
  }
}

/// Traces at receivers 4 points inside the x- and x+ faces of a 25^3 model (eps 0.2, delta 0.1,
/// tilt 30, azimuth 20) with the layer `layer` (the sponge unless named; the app's default is the
/// CPML) of `width` points, the model grown by `extra` points on both x sides. Only the x faces
/// move, so the y and z faces' reflections are the same in both runs and the difference is what
/// the x faces reflect.
std::vector<double> x_face_traces(int extra, const std::string& layer = "sponge", int width = 20,
                                  const std::string& axis = "") {
  const double s = 10.0 * extra;
  auto c = tti_config({25 + 2 * extra, 25, 25}, 15, 0.2, 0.1, 30, 20);
  c.boundary.tti_layer = layer;
  c.boundary.tti_layer_axis = axis;
  c.boundary.pml_width = width;
  c.source.position = {s + 120, 120, 120};
  c.time.duration = 0.35;
  c.output.seismogram_interval = 0.002;
  c.receivers.push_back({});
  for (double x : {s + 40, s + 200})
    for (const auto& [y, z] : {std::pair{120.0, 120.0}, std::pair{60.0, 180.0}, std::pair{180.0, 60.0}})
      c.receivers.back().points.push_back({x, y, z});
  const auto traces = testing::run_config(c).run.seismogram;
  return {traces.begin(), traces.end()};
}

/// What the x faces of a layer of kind `layer` and `width` points reflect: the relative L2
/// difference of x_face_traces between the 25^3 model and the one grown by 30 points.
double x_face_reflection(const std::string& layer, int width = 20, const std::string& axis = "") {
  const auto small = x_face_traces(0, layer, width, axis), large = x_face_traces(30, layer, width, axis);
  EXPECT_EQ(small.size(), large.size());
  return testing::relative_l2(small, large);
}

TEST(TtiLayer, ReflectsLessThanOnePercentAtTheDefaultWidth) {
  // 30 points more on each side: what the larger model's x faces reflect travels 78 points at
  // v sqrt(1 + 2 eps) or less before it reaches a receiver, after the window; the window holds
  // what the small model's layer reflects from its far side (18 + 40 points). Measured when
  // written: 7.4e-3 (steeper profiles: d ~ r^4 7.0e-3, r^8 9.7e-3; the isotropic CPML: 5e-6).
  const double e = x_face_reflection("sponge");
  std::printf("TTI layer, default width: relative L2 of the x faces' reflections %.3e\n", e);
  EXPECT_LE(e, 1e-2);
}

TEST(TtiLayer, CpmlReflectsTenTimesLessThanTheSponge) {
  // Measured when written: 7.5e-4, from the layer's elliptic taper (the CPML over the anelliptic
  // medium reflected 4e-6 but was unstable; the sponge above reflects 7.4e-3); 2.5e-4 since the
  // taper ends at 80% of the layer instead of 60% (5.9e-4), which the bound below pins.
  const double e = x_face_reflection("cpml");
  std::printf("TTI CPML layer, default width: relative L2 of the x faces' reflections %.3e\n", e);
  EXPECT_LE(e, 4e-4);
}

TEST(TtiLayer, ACpmlOfEightPointsReflectsLessThanHalfOfTheSpongeOfTwentySeven) {
  // The width trade-off (docs/tti.md, "Absorbing layer"): the bench's TTI layer is 27 points
  // (minimod_bench). Measured when written: the CPML of 8 points 1.49e-3, the sponge of 27
  // 3.97e-3 (the CPML of 6 points 3.21e-3 already reflects less).
  const double cpml = x_face_reflection("cpml", 8), sponge = x_face_reflection("sponge", 27);
  std::printf("x faces' reflections: CPML of 8 points %.3e, sponge of 27 %.3e\n", cpml, sponge);
  EXPECT_LT(cpml, 0.5 * sponge);
  EXPECT_LT(cpml, 2e-3);
}

TEST(TtiLayer, AVerticalLayerAxisStaysBoundedAndReflectsFiveTimesLessThanTheSponge) {
  // boundary.pml.tti_axis: vertical, for models whose axis turns sharply at the layer
  // (Tti.WhereTheAxisJumpsAtTheCpmlLayer...): the layer elliptic from its edge with its axis
  // turned to vertical. Measured when written: 1.48e-3 at 20 points (the model's axis 2.5e-4, the
  // sponge 7.4e-3: the tests above), 3.5e-3 at 8 (the sponge 6.2e-2; docs/tti.md).
  const double e = x_face_reflection("cpml", 20, "vertical");
  std::printf("TTI CPML layer with a vertical axis, default width: the x faces' reflections %.3e\n", e);
  EXPECT_LE(e, 2e-3);
  // Its residual leaves about 3x slower than with the model's axis: over 6 s (twice the test
  // above), at tilt 30, azimuth 20, 1.76e-3 then 1.31e-3 of the peak in the last two quarters
  // (over 3 s it had not yet fallen from quarter to quarter). In the strongest medium it falls
  // from quarter to quarter only over 9 s (3.7e-3, 1.5e-3, 6.3e-4 of the peak with the model's
  // axis; 2.7e-3, 1.7e-3, 7.9e-4 with the vertical one, a bump to 1.06 of the field after the
  // source on the way): here it must stay below 5% of the peak, the bump below 1.2.
  SCOPED_TRACE("tilt 30, azimuth 20");
  expect_decays(residual(30.0, 20.0, "cpml", 6.0, 0.3, 0.05, 10, "vertical"), 0.05);
  SCOPED_TRACE("eps 0.45, delta -0.1, tilt 45, azimuth 30, 8 points");
  expect_bounded(residual(45.0, 30.0, "cpml", 6.0, 0.45, -0.1, 8, "vertical"), 0.05, 1.2);
}

// A measurement, not a check (run it with --gtest_also_run_disabled_tests): what the x faces
// reflect against the layer's width, each kind; the table in docs/tti.md.
TEST(TtiLayer, DISABLED_ReflectionAgainstWidth) {
  const char* only = std::getenv("MINIMOD_REFLECTION_LAYER");  // sponge, cpml or cpml_vertical: that row only
  for (const std::string layer : {"sponge", "cpml", "cpml_vertical"}) {
    if (only && layer != only) continue;
    for (const int w : {6, 8, 10, 12, 16, 20, 27}) {
      const bool vertical = layer == "cpml_vertical";
      std::printf("%s, %d points: %.3e\n", layer.c_str(), w,
                  x_face_reflection(vertical ? "cpml" : layer, w, vertical ? "vertical" : ""));
      std::fflush(stdout);
    }
  }
}

}  // namespace
}  // namespace minimod
