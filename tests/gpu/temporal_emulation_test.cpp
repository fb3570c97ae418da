// The two-step families' block bodies (temporal, temporal_tma) run by host threads
// (kernels/cuda/block_emulation.hpp): needs no GPU. Every tile, its chunk and a short one, on a box
// with unequal margins and on the whole grid, against two applications of the CPU reference's
// formula: u^{n+1} on the box is the leapfrog of u^n, u^{n+2} the leapfrog of u^{n+1} where the
// points outside the box take the u^{n+1} given in u1 (the PML's, in the propagator); nothing
// outside the box changes. This checks the ring, both register queues, the shared planes, the
// tensor-copy boxes and the barriers; the gpu tests check the device code and the propagator's pairs.
#include <gtest/gtest.h>

#include <algorithm>
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

using Emulate = void (*)(const kernels::cuda::IsoPairArgs&, const kernels::cuda::Tile&);

void check_pair(const std::string& family, Emulate emulate, const kernels::cuda::Tile& tile, const Box3& box,
                Index3 n) {
  SCOPED_TRACE(family + ":" + std::to_string(tile.x) + "x" + std::to_string(tile.y) + "x" +
               std::to_string(tile.z) + " box lo (" + std::to_string(box.lo.i) + "," + std::to_string(box.lo.j) +
               "," + std::to_string(box.lo.k) + ") n (" + std::to_string(box.n.i) + "," +
               std::to_string(box.n.j) + "," + std::to_string(box.n.k) + ")");
  const auto layout = physics::FieldLayout::make(Box3{{0, 0, 0}, n}, physics::kRadius);
  const std::int64_t size = layout.elements();
  kernels::AlignedBuffer u_prev(size), u(size), u1(size), u2(size), v(size);
  std::mt19937 rng(7u + static_cast<unsigned>(tile.x + tile.y * 3 + tile.z * 5));
  std::uniform_real_distribution<float> f(-1, 1), vel(0.05f, 0.4f);
  for (std::int64_t x = 0; x < size; ++x) {  // halo and padding too: nothing is assumed zero
    u_prev.data()[x] = f(rng);
    u.data()[x] = f(rng);
    u1.data()[x] = f(rng);  // outside the box: u^{n+1} as the PML would have left it
    u2.data()[x] = f(rng);
    v.data()[x] = vel(rng);
  }
  const std::vector<float> u1_before(u1.data(), u1.data() + size), u2_before(u2.data(), u2.data() + size);
  const auto c = physics::make_laplacian_coeffs(10, 12, 8);
  kernels::cuda::IsoPairArgs a;
  a.box = box;
  a.u_prev = layout.view<const float>(u_prev.data());
  a.u = layout.view<const float>(u.data());
  a.u1 = layout.view(u1.data());
  a.u2 = layout.view(u2.data());
  a.v2dt2 = layout.view<const float>(v.data());
  a.laplacian = c;
  emulate(a, tile);

  // The reference: u^{n+1} on the box, the given values elsewhere; then u^{n+2} on the box.
  std::vector<float> next = u1_before;
  const auto at_offset = [&](int i, int j, int k) { return static_cast<size_t>(a.u.offset(i, j, k) - a.u.offset(-4, -4, -4)); };
  for (int i = box.lo.i; i < box.hi().i; ++i)
    for (int j = box.lo.j; j < box.hi().j; ++j)
      for (int k = box.lo.k; k < box.hi().k; ++k) {
        const auto at = [&](int di, int dj, int dk) { return a.u(i + di, j + dj, k + dk); };
        next[at_offset(i, j, k)] = physics::leapfrog(a.u_prev(i, j, k), a.u(i, j, k), a.v2dt2(i, j, k),
                                                     physics::laplacian8(at, c));
      }
  std::int64_t bad1 = 0, bad2 = 0, changed_outside = 0;
  double worst = 0;
  for (int i = -4; i < n.i + 4; ++i)
    for (int j = -4; j < n.j + 4; ++j)
      for (int k = -4; k < n.k + 4; ++k) {
        const size_t o = at_offset(i, j, k);
        if (!box.contains(i, j, k)) {
          if (std::memcmp(&u1.data()[o], &u1_before[o], 4) != 0) ++changed_outside;
          if (std::memcmp(&u2.data()[o], &u2_before[o], 4) != 0) ++changed_outside;
          continue;
        }
        const auto at = [&](int di, int dj, int dk) { return next[at_offset(i + di, j + dj, k + dk)]; };
        const float want2 = physics::leapfrog(a.u(i, j, k), next[o], a.v2dt2(i, j, k), physics::laplacian8(at, c));
        const double e1 = std::fabs(double(u1.data()[o]) - next[o]) / (1.0 + std::fabs(double(next[o])));
        const double e2 = std::fabs(double(u2.data()[o]) - want2) / (1.0 + std::fabs(double(want2)));
        if (!(e1 <= 2e-6)) ++bad1;
        if (!(e2 <= 2e-6)) ++bad2;
        if (!(e1 <= worst)) worst = e1;
        if (!(e2 <= worst)) worst = e2;
      }
  EXPECT_EQ(bad1, 0) << "u^{n+1} wrong; worst relative error " << worst;
  EXPECT_EQ(bad2, 0) << "u^{n+2} wrong; worst relative error " << worst;
  EXPECT_EQ(changed_outside, 0);
}

void check_family(const std::string& name, Emulate emulate) {
  const auto& family = kernels::cuda::find_family(name, kernels::cuda::PropagatorKind::acoustic_iso);
  ASSERT_NE(family.launch_pair, nullptr);
  const Index3 n{19, 27, 45};
  std::vector<std::pair<int, int>> done;  // tunables differing only in chunk run the same code
  for (auto tile : family.tunables) {
    if (std::find(done.begin(), done.end(), std::make_pair(tile.x, tile.y)) != done.end()) continue;
    done.emplace_back(tile.x, tile.y);
    for (int chunk : {tile.z, 5}) {
      tile.z = chunk;
      check_pair(name, emulate, tile, Box3{{5, 6, 4}, {9, 17, 36}}, n);  // unequal margins; tiles overhang the box
      check_pair(name, emulate, tile, Box3{{0, 0, 0}, n}, n);            // the ring reaches into the halo
    }
  }
}

TEST(TemporalEmulation, TwoStepsEqualTheReferenceFormulaTwiceAtEveryPoint) {
  check_family("temporal", &kernels::cuda::emulate_temporal);
}

TEST(TemporalTmaEmulation, TwoStepsEqualTheReferenceFormulaTwiceAtEveryPoint) {
  check_family("temporal_tma", &kernels::cuda::emulate_temporal_tma);
}

}  // namespace
}  // namespace minimod
