#include "pml/regions.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "pml/profile.hpp"

namespace minimod::pml {
namespace {

TEST(Regions, InnerAndSixSlabsCoverEveryPointExactlyOnce) {
  const physics::Index3 n{37, 29, 53};
  PmlWidths w;
  w.lo = {5, 0, 7};  // y- free surface style: no PML there
  w.hi = {3, 6, 9};
  const auto regions = make_regions(n, w);
  std::vector<int> hits(static_cast<size_t>(n.i) * n.j * n.k, 0);
  for (const auto& r : regions)
    for (int i = r.box.lo.i; i < r.box.hi().i; ++i)
      for (int j = r.box.lo.j; j < r.box.hi().j; ++j)
        for (int k = r.box.lo.k; k < r.box.hi().k; ++k) ++hits[(static_cast<size_t>(i) * n.j + j) * n.k + k];
  for (int h : hits) ASSERT_EQ(h, 1);
  EXPECT_EQ(regions.front().name, "inner");
  EXPECT_EQ(regions.front().box.n.i, 37 - 8);
  EXPECT_EQ(regions.size(), 6u);  // the empty y- slab is dropped
}

TEST(Regions, MinimodBenchmarkCountsMatchThePaper) {
  PmlWidths w;
  w.lo = w.hi = {27, 27, 27};
  const auto regions = make_regions({1000, 1000, 1000}, w);
  ASSERT_EQ(regions.size(), 7u);
  EXPECT_EQ(regions[0].box.points(), 946LL * 946 * 946);  // sai2020-digest §2.2
  std::int64_t pml = 0;
  for (size_t r = 1; r < regions.size(); ++r) pml += regions[r].box.points();
  EXPECT_EQ(pml, 153409464LL);
}

TEST(DampingProfile, IsZeroInsideAndGrowsQuadraticallyToTheEdge) {
  PmlWidths w;
  w.lo = w.hi = {10, 10, 10};
  ProfileParams p;
  p.dt = 1e-3;
  p.velocity = 3000;
  const auto d = make_damping_profiles({50, 50, 50}, {10, 10, 10}, w, p);
  EXPECT_EQ(d.at(0, 25), 0.0f);
  EXPECT_EQ(d.at(0, 9), 0.0f);  // innermost PML point (Minimod: s = 0 there)
  EXPECT_GT(d.at(0, 0), d.at(0, 1));
  EXPECT_NEAR(d.at(0, 5) / d.at(0, 0), (4.0 * 4.0) / (9.0 * 9.0), 1e-6);
  EXPECT_FLOAT_EQ(d.at(0, 0), d.at(0, 49));  // symmetric faces
  const double eta_max = 1e-3 * 3 * 3000 * std::log(1000.0) / (2 * 10 * 10.0);
  EXPECT_NEAR(d.at(0, -1), eta_max, 1e-6);  // ghost point: s = N
}

}  // namespace
}  // namespace minimod::pml
