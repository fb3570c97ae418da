// semi_tma's block body run by host threads (kernels/cuda/block_emulation.hpp): needs no GPU. Every
// tile and several chunk lengths, on regions that divide no tile (the whole grid, so that tiles
// reach past the allocation and the copy engine's zero fill is exercised, and boxes at odd
// offsets), against the formula of the CPU reference at every point: each output equals the
// leapfrog of laplacian8 to fp32 round-off, and nothing outside the region changes. This checks the
// kernel's indexing, its stage ring and mbarrier parities and its rows per thread; that the device
// code does the same (PTX, tensor maps) is what the gpu tests check.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/aligned_buffer.hpp"
#include "kernels/cuda/emulation.hpp"
#include "kernels/cuda/registry.hpp"
#include "physics/stencil.hpp"
#include "physics/view3.hpp"

namespace minimod {
namespace {

using physics::Box3;
using physics::Index3;

struct HostFields {
  physics::FieldLayout layout;
  kernels::AlignedBuffer u, u_next, v2dt2;

  HostFields(Index3 n, unsigned seed)
      : layout(physics::FieldLayout::make(Box3{{0, 0, 0}, n}, physics::kRadius)),
        u(layout.elements()),
        u_next(layout.elements()),
        v2dt2(layout.elements()) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> f(-1, 1), v(0.05f, 0.4f);
    for (std::int64_t e = 0; e < layout.elements(); ++e) {  // halo and row padding too
      u.data()[e] = f(rng);
      u_next.data()[e] = f(rng);
      v2dt2.data()[e] = v(rng);
    }
  }
  kernels::cuda::IsoStepArgs args(const Box3& region, const physics::LaplacianCoeffs& c) const {
    kernels::cuda::IsoStepArgs a;
    a.region = region;
    a.u = layout.view<const float>(u.data());
    a.u_next = layout.view(u_next.data());
    a.v2dt2 = layout.view<const float>(v2dt2.data());
    a.laplacian = c;
    return a;
  }
};

void check_tile(const std::string& tile_name, const kernels::cuda::Tile& tile, const Box3& region, Index3 n) {
  SCOPED_TRACE("semi_tma:" + tile_name + " region lo (" + std::to_string(region.lo.i) + "," +
               std::to_string(region.lo.j) + "," + std::to_string(region.lo.k) + ") n (" +
               std::to_string(region.n.i) + "," + std::to_string(region.n.j) + "," + std::to_string(region.n.k) +
               ")");
  HostFields f(n, 17u + static_cast<unsigned>(tile.x * 7 + tile.y * 3 + tile.z));
  const auto c = physics::make_laplacian_coeffs(10, 12, 8);
  const std::vector<float> before(f.u_next.data(), f.u_next.data() + f.layout.elements());
  const auto a = f.args(region, c);
  kernels::cuda::emulate_semi_tma(a, tile);

  const auto u = a.u;
  std::int64_t bad = 0, changed_outside = 0;
  double worst = 0;
  for (int i = -4; i < n.i + 4; ++i)
    for (int j = -4; j < n.j + 4; ++j)
      for (int k = -4; k < n.k + 4; ++k) {
        const std::int64_t o = u.offset(i, j, k) - u.offset(-4, -4, -4);
        const float got = f.u_next.data()[o];
        if (!region.contains(i, j, k)) {
          if (std::memcmp(&got, &before[static_cast<size_t>(o)], 4) != 0) ++changed_outside;
          continue;
        }
        const auto at = [&](int di, int dj, int dk) { return u(i + di, j + dj, k + dk); };
        const float want = physics::leapfrog(before[static_cast<size_t>(o)], u(i, j, k), a.v2dt2(i, j, k),
                                             physics::laplacian8(at, c));
        const double err = std::fabs(double(got) - want) / (1.0 + std::fabs(double(want)));
        if (!(err <= 2e-6)) ++bad;
        if (!(err <= worst)) worst = err;
      }
  EXPECT_EQ(bad, 0) << "worst relative error " << worst;
  EXPECT_EQ(changed_outside, 0);
}

TEST(SemiTmaEmulation, EveryTileEqualsTheReferenceFormulaAtEveryPoint) {
  const auto& family = kernels::cuda::find_family("semi_tma", kernels::cuda::PropagatorKind::acoustic_iso);
  const Index3 n{21, 37, 45};
  for (const auto& t : family.tunables) {
    for (int chunk : {t.z, 5}) {
      kernels::cuda::Tile tile = t;
      tile.z = chunk;
      const std::string name = std::to_string(t.x) + "x" + std::to_string(t.y) + "x" + std::to_string(chunk);
      check_tile(name, tile, Box3{{0, 0, 0}, n}, n);          // whole grid: tiles overhang the allocation
      check_tile(name, tile, Box3{{3, 5, 27}, {11, 19, 9}}, n);  // odd offsets, narrower than a tile
    }
  }
}

}  // namespace
}  // namespace minimod
