// Decomposition arithmetic, subdomain slicing and the shell split (no MPI needed).
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "kernels/halo.hpp"
#include "mpi/decomposition.hpp"
#include "mpi/subdomain.hpp"
#include "physics/error.hpp"
#include "random_problem.hpp"

namespace minimod {
namespace {

using physics::Box3;
using physics::Index3;

TEST(Decomposition, BoxesTileTheGridExactlyOnceWithMatchingNeighbours) {
  const Index3 shape{37, 29, 50};
  for (const std::array<int, 3> dims : {std::array<int, 3>{1, 1, 1}, {2, 1, 1}, {1, 3, 1}, {1, 1, 8},
                                        {2, 2, 2}, {3, 2, 4}}) {
    const auto d = mpi::decompose(shape, dims, {});
    std::vector<int> owner(static_cast<size_t>(shape.i) * shape.j * shape.k, -1);
    for (int r = 0; r < d.ranks(); ++r) {
      const Box3 b = d.box_of(r);
      for (int a = 0; a < 3; ++a) EXPECT_GE(b.n[a], mpi::kMinPartPoints);
      for (int i = b.lo.i; i < b.hi().i; ++i)
        for (int j = b.lo.j; j < b.hi().j; ++j)
          for (int k = b.lo.k; k < b.hi().k; ++k) {
            int& o = owner[(static_cast<size_t>(i) * shape.j + j) * shape.k + k];
            EXPECT_EQ(o, -1) << "point owned twice";
            o = r;
          }
      const auto nb = d.neighbours_of(r);
      for (int f = 0; f < 6; ++f) {
        const int a = f / 2;
        const bool at_edge = f % 2 == 0 ? b.lo[a] == 0 : b.hi()[a] == shape[a];
        EXPECT_EQ(nb[static_cast<size_t>(f)] < 0, at_edge);
        if (nb[static_cast<size_t>(f)] < 0) continue;
        // The neighbour touches this face and shares the other two extents.
        const Box3 o = d.box_of(nb[static_cast<size_t>(f)]);
        EXPECT_EQ(f % 2 == 0 ? o.hi()[a] : o.lo[a], f % 2 == 0 ? b.lo[a] : b.hi()[a]);
        for (int c = 0; c < 3; ++c)
          if (c != a) {
            EXPECT_EQ(o.lo[c], b.lo[c]);
            EXPECT_EQ(o.n[c], b.n[c]);
          }
        EXPECT_EQ(d.neighbours_of(nb[static_cast<size_t>(f)])[static_cast<size_t>(f ^ 1)], r);
      }
    }
    for (int o : owner) ASSERT_GE(o, 0) << "point owned by nobody";
  }
}

TEST(Decomposition, CutsStayOutOfTheLimitsAndEvenWhereFree) {
  const auto d = mpi::decompose({100, 40, 40}, {4, 1, 1}, {});
  EXPECT_EQ(d.cuts[0], (std::vector<int>{0, 25, 50, 75, 100}));
  mpi::CutLimits l;
  l.lo[0] = 30;
  l.hi[0] = 20;
  const auto e = mpi::decompose({100, 40, 40}, {4, 1, 1}, l);
  for (int m = 1; m < 4; ++m) {
    EXPECT_GE(e.cuts[0][static_cast<size_t>(m)], 30);
    EXPECT_LE(e.cuts[0][static_cast<size_t>(m)], 80);
    EXPECT_GE(e.cuts[0][static_cast<size_t>(m)] - e.cuts[0][static_cast<size_t>(m) - 1], mpi::kMinPartPoints);
  }
}

TEST(Decomposition, ImpossibleSplitNamesTheKeyAndAxis) {
  mpi::CutLimits l;
  l.lo[1] = 10;
  l.hi[1] = 10;
  try {
    mpi::decompose({64, 30, 64}, {1, 5, 1}, l);  // 4 cuts 4 apart do not fit in [10, 20]
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("execution.decomposition"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("axis y"), std::string::npos) << e.what();
  }
  EXPECT_THROW(mpi::choose_dims({6, 6, 6}, 64, {}), ConfigError);
}

TEST(Decomposition, AutoChoosesTheLeastHaloSurface) {
  // A long x axis is cut across x; a cube over 8 ranks becomes 2x2x2.
  EXPECT_EQ(mpi::choose_dims({800, 100, 100}, 4, {}), (std::array<int, 3>{4, 1, 1}));
  EXPECT_EQ(mpi::choose_dims({200, 200, 200}, 8, {}), (std::array<int, 3>{2, 2, 2}));
  EXPECT_EQ(mpi::choose_dims({100, 100, 100}, 2, {}), (std::array<int, 3>{2, 1, 1}));  // tie: x
  EXPECT_EQ(mpi::choose_dims({100, 400, 100}, 2, {}), (std::array<int, 3>{1, 2, 1}));
}

TEST(Subdomain, SlicesModelProfilesRegionsAndFaces) {
  const Index3 n{30, 26, 34};
  for (auto kind : {pml::PmlKind::cpml, pml::PmlKind::minimod}) {
    const auto g = testing::random_problem(7, n, true, kind);
    const Box3 box{{10, 0, 5}, {12, 26, 20}};
    kernels::HaloFaces faces;
    faces.neighbour = {true, true, false, false, true, true};
    const auto p = mpi::subdomain_problem(g, box, faces);
    EXPECT_EQ(p.grid.shape, box.n);
    EXPECT_DOUBLE_EQ(p.grid.origin[0], g.grid.origin[0] + 10 * g.grid.spacing[0]);
    for (int i = 0; i < box.n.i; ++i)
      for (int j = 0; j < box.n.j; ++j)
        for (int k = 0; k < box.n.k; ++k)
          ASSERT_EQ(p.v2dt2[(static_cast<size_t>(i) * box.n.j + j) * box.n.k + k],
                    g.v2dt2[(static_cast<size_t>(i + 10) * n.j + j) * n.k + k + 5]);
    for (int a = 0; a < 3; ++a) {
      if (kind == pml::PmlKind::minimod) {
        for (int i = -1; i <= box.n[a]; ++i) EXPECT_EQ(p.damping.at(a, i), g.damping.at(a, i + box.lo[a]));
      } else {
        for (int i = 0; i < box.n[a]; ++i)
          EXPECT_EQ(p.cpml.b[a][static_cast<size_t>(i)], g.cpml.b[a][static_cast<size_t>(i + box.lo[a])]);
      }
    }
    // Every local point is in exactly the region it is in globally.
    const auto gr = kernels::problem_regions(g);
    ASSERT_FALSE(p.regions.empty());
    EXPECT_FALSE(p.regions.front().is_pml);
    for (int i = 0; i < box.n.i; ++i)
      for (int j = 0; j < box.n.j; ++j)
        for (int k = 0; k < box.n.k; ++k) {
          std::string local, global;
          for (const auto& r : p.regions)
            if (r.box.contains(i, j, k)) local += r.name;
          for (const auto& r : gr)
            if (r.box.contains(i + 10, j, k + 5)) global += r.name;
          ASSERT_EQ(local, global) << i << " " << j << " " << k;
        }
    // The top is a free surface globally, but this box's z- face has a neighbour.
    EXPECT_FALSE(p.free_surface[kernels::kZLo]);
    EXPECT_TRUE(mpi::subdomain_problem(g, {{0, 0, 0}, {12, 26, 20}}, {}).free_surface[kernels::kZLo]);
  }
}

TEST(Subdomain, CpmlCutLimitsKeepTheHaloOutOfTheAbsorbingLayers) {
  const auto g = testing::random_problem(3, {40, 40, 40}, true);
  const auto l = mpi::cut_limits(g);
  EXPECT_EQ(l.lo[0], g.pml.lo[0] + kernels::kHaloWidth);
  EXPECT_EQ(l.hi[1], g.pml.hi[1] + kernels::kHaloWidth);
  EXPECT_EQ(l.lo[2], 0);  // free surface: no absorbing layer there
  const auto m = mpi::cut_limits(testing::random_problem(3, {40, 40, 40}, true, pml::PmlKind::minimod));
  EXPECT_EQ(m.lo[0], 0);
}

TEST(ShellSplit, ShellAndInteriorCoverTheBoxOnceAndTheShellHoldsEverySentPoint) {
  const Index3 n{13, 9, 21};
  for (int mask = 0; mask < 64; ++mask) {
    kernels::HaloFaces faces;
    for (int f = 0; f < 6; ++f) faces.neighbour[static_cast<size_t>(f)] = (mask >> f) & 1;
    const auto s = kernels::split_shell(n, faces);
    std::vector<int> hits(static_cast<size_t>(n.i) * n.j * n.k, 0);
    auto mark = [&](const Box3& b, int add) {
      for (int i = b.lo.i; i < b.hi().i; ++i)
        for (int j = b.lo.j; j < b.hi().j; ++j)
          for (int k = b.lo.k; k < b.hi().k; ++k) hits[(static_cast<size_t>(i) * n.j + j) * n.k + k] += add;
    };
    for (const auto& b : s.shell) mark(b, 1);
    mark(s.interior, 1);
    for (int h : hits) ASSERT_EQ(h, 1) << "mask " << mask;
    for (int f = 0; f < 6; ++f) {
      if (!faces.neighbour[static_cast<size_t>(f)]) continue;
      const Box3 sb = kernels::send_box(n, f);
      EXPECT_TRUE(physics::intersect(sb, s.interior).empty()) << "face " << f << " mask " << mask;
      const Box3 rb = kernels::recv_box(n, f);
      EXPECT_EQ(rb.points(), sb.points());
      EXPECT_TRUE(physics::intersect(rb, {{0, 0, 0}, n}).empty());
    }
  }
}

}  // namespace
}  // namespace minimod
