#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "physics/cfl.hpp"
#include "physics/point_stencil.hpp"
#include "physics/wavelet.hpp"

namespace minimod::physics {
namespace {

TEST(Cfl, ReproducesMinimodsTimeStep) {
  // Minimod: dt = 0.8 * limit at 4500 m/s, h = 20 m gives 1.61015e-3 s (sai2020-digest §1.3).
  EXPECT_NEAR(0.8 * critical_dt(4500, {20, 20, 20}), 1.61015e-3, 1e-8);
}

TEST(Cfl, LimitScalesWithSpacingOverVelocity) {
  const double a = critical_dt(2000, {10, 10, 10});
  EXPECT_NEAR(critical_dt(4000, {20, 20, 20}), a, 1e-12);
  EXPECT_NEAR(critical_dt(2000, {20, 20, 20}), 2 * a, 1e-12);
  EXPECT_LT(critical_dt(2000, {10, 10, 5}), a);
}

TEST(Wavelet, RickerPeaksAtItsDelayWithUnitAmplitude) {
  EXPECT_DOUBLE_EQ(ricker(0.15, 10, 0.15), 1.0);
  EXPECT_LT(ricker(0.10, 10, 0.15), 1.0);
  // Zero crossings at tau = +- 1 / (sqrt(2) pi f).
  EXPECT_NEAR(ricker(0.15 + 1 / (std::sqrt(2.0) * M_PI * 10), 10, 0.15), 0.0, 1e-12);
}

TEST(Wavelet, SignificantBandOfRickerIsAboutTwiceItsPeak) {
  Wavelet w;
  w.frequency = 15;
  w.delay = 0.1;
  const double f = highest_significant_frequency(w, 1e-3, 1.0);
  // |R(f)| ~ (f/fp)^2 exp(-(f/fp)^2): 5% of the peak is reached near 2.35 fp.
  EXPECT_GT(f, 2.2 * 15);
  EXPECT_LT(f, 2.5 * 15);
}

TEST(Wavelet, ARunShorterThanItsWaveletSeesTheWholeWaveletsBand) {
  // 7.5 Hz Ricker delayed 0.2 s, a 0.01 s run: the truncated tail alone looked broadband (the
  // estimate said 750 Hz, Nyquist, and the plan warned about 0.24 points per wavelength).
  Wavelet w;
  w.frequency = 7.5;
  w.delay = 0.2;
  const double whole = highest_significant_frequency(w, 6.7e-4, 1.0);
  EXPECT_NEAR(highest_significant_frequency(w, 6.7e-4, 0.01), whole, 0.02 * whole);
  EXPECT_LT(whole, 2.5 * 7.5);
  for (const auto kind : {Wavelet::Kind::ricker, Wavelet::Kind::minimod_gaussian}) {
    w.kind = kind;
    double peak = 0;
    for (double t = 0; t < wavelet_extent(w); t += 1e-4) peak = std::max(peak, std::fabs(w(t)));
    EXPECT_LT(std::fabs(w(wavelet_extent(w))), 1e-5 * peak) << "negligible after its extent";
  }
}

TEST(Wavelet, SamplesAreInterpolatedLinearly) {
  Wavelet w;
  w.kind = Wavelet::Kind::samples;
  w.samples = {0, 1, 3};
  w.sample_dt = 0.01;
  EXPECT_NEAR(w(0.005), 0.5, 1e-12);
  EXPECT_NEAR(w(0.015), 2.0, 1e-12);
  EXPECT_EQ(w(0.5), 0.0);
}

TEST(PointStencil, NodeGetsAllTheWeightAndOffNodeWeightsSumToOne) {
  Grid g;
  g.shape = {10, 10, 10};
  g.spacing = {10, 10, 10};
  const auto on = make_point_stencil(g, {20, 30, 40});
  EXPECT_EQ(on.base, (Index3{2, 3, 4}));
  EXPECT_FLOAT_EQ(on.weight[0], 1.0f);
  const auto off = make_point_stencil(g, {25, 32.5, 40});
  double sum = 0;
  for (float w : off.weight) sum += w;
  EXPECT_NEAR(sum, 1.0, 1e-6);
  EXPECT_FLOAT_EQ(off.weight[0], 0.5f * 0.75f);
  EXPECT_FLOAT_EQ(off.weight[4 + 2], 0.5f * 0.25f);
}

}  // namespace
}  // namespace minimod::physics
