// Free surface: with a pressure-release surface at z = 0 the point-source solution is the direct
// wave minus its mirror image (reflection coefficient -1):
//   u = s(t - r1/v) / (4 pi r1) - s(t - r2/v) / (4 pi r2),  r2 = distance to the image source.
#include <gtest/gtest.h>

#include <cmath>

#include "test_support.hpp"

namespace minimod {
namespace {

TEST(FreeSurface, TraceIsDirectWaveMinusItsMirrorImage) {
  constexpr double kV = 2000, kH = 10;
  auto c = testing::homogeneous_config({106, 61, 81}, kH, kV, 10);
  c.boundary.free_surface[4] = true;  // z- (top)
  c.time.duration = 0.55;
  c.time.cfl = 0.5;
  c.output.seismogram_interval = 0.002;
  const io::Vec3 src{300, 300, 100}, rec{750, 300, 100};
  c.source.position = src;
  io::PositionGroupConfig g;
  g.points = {rec};
  c.receivers = {g};
  const auto shot = testing::run_config(c);
  const double r1 = rec[0] - src[0];
  const double r2 = std::hypot(r1, rec[2] + src[2]);
  std::vector<double> exact(static_cast<size_t>(shot.run.samples));
  const double interval = shot.plan.record_every * shot.plan.dt;
  for (size_t s = 0; s < exact.size(); ++s) {
    const double t = s * interval;
    exact[s] = shot.plan.wavelet(t - r1 / kV) / (4 * M_PI * r1) -
               shot.plan.wavelet(t - r2 / kV) / (4 * M_PI * r2);
  }
  const double err = testing::relative_l2(shot.trace(0), exact);
  std::printf("free surface: relative L2 error %.4f against direct minus ghost\n", err);
  EXPECT_LE(err, 0.02);
  // Without the ghost the error is large: the surface reflection is really there.
  std::vector<double> direct(exact.size());
  for (size_t s = 0; s < direct.size(); ++s)
    direct[s] = shot.plan.wavelet(s * interval - r1 / kV) / (4 * M_PI * r1);
  EXPECT_GT(testing::relative_l2(shot.trace(0), direct), 0.2);
}

}  // namespace
}  // namespace minimod
