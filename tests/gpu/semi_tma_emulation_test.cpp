// semi_tma's block body run by host threads (kernels/cuda/block_emulation.hpp): needs no GPU. Every
// tile and several chunk lengths, on regions that divide no tile (the whole grid, so that tiles
// reach past the allocation and the copy engine's zero fill is exercised, and boxes at odd
// offsets), against the formula of the CPU reference at every point: each output equals the
// leapfrog of laplacian8 to fp32 round-off, and nothing outside the region changes. This checks the
// kernel's indexing, its stage ring and mbarrier parities and its rows per thread; that the device
// code does the same (PTX, tensor maps) is what the gpu tests check. With Minimod's layer fused
// (IsoStepArgs::layer) the points outside the inner box must equal the damped update of
// pml/pml_update.hpp, the auxiliary field included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/aligned_buffer.hpp"
#include "kernels/cuda/emulation.hpp"
#include "kernels/cuda/registry.hpp"
#include "tests/gpu/host_fields.hpp"
#include "physics/stencil.hpp"
#include "physics/view3.hpp"
#include "pml/pml_update.hpp"

namespace minimod {
namespace {

using physics::Box3;
using physics::Index3;

/// The fields of testing::HostFields, viewed as semi_tma's launch arguments.
struct HostFields : testing::HostFields {
  using testing::HostFields::HostFields;
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

/// `inner` empty: no layer; else Minimod's layer fused, damped outside `inner` (in every block,
/// or with `by_block` only in the blocks that meet the layer, as semi_tma_mixed).
void check_tile(const std::string& tile_name, const kernels::cuda::Tile& tile, const Box3& region, Index3 n,
                const Box3& inner = Box3{}, bool by_block = false) {
  const bool layer = !inner.empty();
  SCOPED_TRACE("semi_tma:" + tile_name + " region lo (" + std::to_string(region.lo.i) + "," +
               std::to_string(region.lo.j) + "," + std::to_string(region.lo.k) + ") n (" +
               std::to_string(region.n.i) + "," + std::to_string(region.n.j) + "," + std::to_string(region.n.k) +
               ")");
  HostFields f(n, 17u + static_cast<unsigned>(tile.x * 7 + tile.y * 3 + tile.z));
  const auto c = physics::make_laplacian_coeffs(10, 12, 8);
  const std::vector<float> before(f.u_next.data(), f.u_next.data() + f.layout.elements());
  const std::vector<float> aux_before(f.aux.data(), f.aux.data() + f.layout.elements());
  auto a = f.args(region, c);
  const float inv_4h2[3] = {1.0f / 400, 1.0f / 576, 1.0f / 256};
  if (layer) {
    a.layer.inner = inner;
    a.layer.aux = f.layout.view(f.aux.data());
    for (int d = 0; d < 3; ++d) {
      a.layer.eta[d] = f.eta[d].data();
      a.layer.inv_4h2[d] = inv_4h2[d];
    }
  }
  kernels::cuda::emulate_semi_tma(a, tile, by_block);
  const float* ex = f.eta[0].data() + 1;
  const float* ey = f.eta[1].data() + 1;
  const float* ez = f.eta[2].data() + 1;

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
          if (std::memcmp(&f.aux.data()[o], &aux_before[static_cast<size_t>(o)], 4) != 0) ++changed_outside;
          continue;
        }
        const auto at = [&](int di, int dj, int dk) { return u(i + di, j + dj, k + dk); };
        const float lap = physics::laplacian8(at, c);
        const float up = before[static_cast<size_t>(o)];
        float want = physics::leapfrog(up, u(i, j, k), a.v2dt2(i, j, k), lap);
        float want_aux = aux_before[static_cast<size_t>(o)];
        if (layer && !inner.contains(i, j, k)) {  // pml/pml_update.hpp, as the CPU reference
          const float eta = ex[i] + ey[j] + ez[k];
          want = pml::pml_u_next(up, u(i, j, k), a.v2dt2(i, j, k), lap, want_aux, eta);
          const float grad = pml::pml_gradient_term(ex[i + 1], ex[i - 1], at(1, 0, 0), at(-1, 0, 0), inv_4h2[0]) +
                             pml::pml_gradient_term(ey[j + 1], ey[j - 1], at(0, 1, 0), at(0, -1, 0), inv_4h2[1]) +
                             pml::pml_gradient_term(ez[k + 1], ez[k - 1], at(0, 0, 1), at(0, 0, -1), inv_4h2[2]);
          want_aux = pml::pml_aux_next(want_aux, eta, grad);
        }
        const double err = std::fabs(double(got) - want) / (1.0 + std::fabs(double(want)));
        const double err_aux = std::fabs(double(f.aux.data()[o]) - want_aux) / (1.0 + std::fabs(double(want_aux)));
        if (!(err <= 2e-6) || !(err_aux <= 2e-6)) ++bad;
        if (!(err <= worst)) worst = err;
        if (!(err_aux <= worst)) worst = err_aux;
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

TEST(SemiTmaEmulation, FusedMinimodLayerEqualsTheDampedUpdateAtEveryPoint) {
  const auto& family = kernels::cuda::find_family("semi_tma_fused", kernels::cuda::PropagatorKind::acoustic_iso);
  ASSERT_TRUE(family.fuses_minimod_layer);
  const Index3 n{21, 37, 45};
  const Box3 inner{{5, 6, 4}, {9, 22, 29}};  // unequal layer widths on every face
  for (const auto& t : family.tunables) {
    kernels::cuda::Tile tile = t;
    tile.z = 6;
    const std::string name = std::to_string(t.x) + "x" + std::to_string(t.y) + "x6";
    check_tile(name, tile, Box3{{0, 0, 0}, n}, n, inner);
    check_tile(name, tile, Box3{{0, 0, 0}, n}, n, Box3{{30, 0, 0}, {1, 1, 1}});  // every point in the layer
    // A region wholly in the layer (every point damped): an x slab (whole planes) and a z slab
    // (thin in k, from k = 33: a shifted first tile).
    check_tile(name, tile, Box3{{0, 0, 0}, {5, n.j, n.k}}, n, inner);
    check_tile(name, tile, Box3{{5, 6, 33}, {9, 22, 12}}, n, inner);
  }
}

// semi_tma_mixed: blocks whose outputs all lie in the inner box run the lean body, the others the
// damped one; every tile meets both kinds here (inner box 3..17 x 4..66 x 0..70 of 21 x 70 x 70,
// chunks of 6: the chunk 6..12 and, for every tile height, a row of j tiles lie inside).
TEST(SemiTmaEmulation, MixedTakesTheDampedBranchWhereABlockMeetsTheLayer) {
  const auto& family = kernels::cuda::find_family("semi_tma_mixed", kernels::cuda::PropagatorKind::acoustic_iso);
  ASSERT_TRUE(family.fuses_minimod_layer);
  const Index3 n{21, 70, 70};
  const Box3 inner{{3, 4, 0}, {14, 62, 70}};
  for (const auto& t : family.tunables) {
    if (t.z != 64) continue;  // the chunk is set below; one run per tile shape
    kernels::cuda::Tile tile = t;
    tile.z = 6;
    const std::string name = std::to_string(t.x) + "x" + std::to_string(t.y) + "x6 (mixed)";
    check_tile(name, tile, Box3{{0, 0, 0}, n}, n, inner, true);
  }
}

}  // namespace
}  // namespace minimod
