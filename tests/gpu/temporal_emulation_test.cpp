// The two-step families' block bodies (temporal, temporal_tma) run by host threads
// (kernels/cuda/block_emulation.hpp): needs no GPU. Every tile, its chunk and a short one, on a box
// with unequal margins and on the whole grid, against two applications of the CPU reference's
// formula: u^{n+1} on the box is the leapfrog of u^n, u^{n+2} the leapfrog of u^{n+1} where the
// points outside the box take the u^{n+1} given in u1 (the PML's, in the propagator); nothing
// outside the box changes. This checks the ring, both register queues, the shared planes, the
// tensor-copy boxes and the barriers; the gpu tests check the device code and the propagator's pairs.
// temporal_tma also sweeps the whole grid with Minimod's layer in the pair (IsoPairArgs::layer):
// checked against two steps of the damped update (pml/pml_update.hpp) outside the inner box.
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
#include "pml/pml_update.hpp"

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

/// temporal_tma over the whole grid `n` with Minimod's layer outside `inner`: u^{n+1}, u^{n+2} at
/// every grid point and aux^{n+1}, aux^{n+2} at every layer point equal two steps of the CPU's
/// formulas (the leapfrog inside, the damped update outside, u^{n+1} zero outside the grid); aux1
/// and aux2 keep their values on the inner points, and nothing outside the grid changes.
void check_pair_with_layer(const kernels::cuda::Tile& tile, Index3 n, const Box3& inner) {
  SCOPED_TRACE("temporal_tma:" + std::to_string(tile.x) + "x" + std::to_string(tile.y) + "x" +
               std::to_string(tile.z) + " with the layer, inner lo (" + std::to_string(inner.lo.i) + "," +
               std::to_string(inner.lo.j) + "," + std::to_string(inner.lo.k) + ") n (" +
               std::to_string(inner.n.i) + "," + std::to_string(inner.n.j) + "," + std::to_string(inner.n.k) + ")");
  const Box3 grid{{0, 0, 0}, n};
  const auto layout = physics::FieldLayout::make(grid, physics::kRadius);
  const std::int64_t size = layout.elements();
  kernels::AlignedBuffer u_prev(size), u(size), u1(size), u2(size), v(size), aux(size), aux1(size), aux2(size);
  std::mt19937 rng(11u + static_cast<unsigned>(tile.x + tile.y * 3 + tile.z * 5));
  std::uniform_real_distribution<float> f(-1, 1), vel(0.05f, 0.4f), damping(0.0f, 0.3f);
  for (std::int64_t x = 0; x < size; ++x) {  // halo and padding too: nothing is assumed zero
    for (auto* b : {&u_prev, &u, &u1, &u2, &aux, &aux1, &aux2}) b->data()[x] = f(rng);
    v.data()[x] = vel(rng);
  }
  std::vector<float> eta[3];
  for (int d = 0; d < 3; ++d) {
    eta[d].resize(static_cast<size_t>(n[d] + 2));
    for (auto& e : eta[d]) e = damping(rng);
  }
  const std::vector<float> u1_before(u1.data(), u1.data() + size), u2_before(u2.data(), u2.data() + size);
  const std::vector<float> aux1_before(aux1.data(), aux1.data() + size), aux2_before(aux2.data(), aux2.data() + size);
  const auto c = physics::make_laplacian_coeffs(10, 12, 8);
  kernels::cuda::IsoPairArgs a;
  a.box = grid;
  a.u_prev = layout.view<const float>(u_prev.data());
  a.u = layout.view<const float>(u.data());
  a.u1 = layout.view(u1.data());
  a.u2 = layout.view(u2.data());
  a.v2dt2 = layout.view<const float>(v.data());
  a.laplacian = c;
  a.layer.inner = inner;
  a.layer.aux = layout.view(aux.data());
  for (int d = 0; d < 3; ++d) a.layer.eta[d] = eta[d].data();
  const float inv_4h2[3] = {1 / (4 * 10.f * 10.f), 1 / (4 * 12.f * 12.f), 1 / (4 * 8.f * 8.f)};
  for (int d = 0; d < 3; ++d) a.layer.inv_4h2[d] = inv_4h2[d];
  a.aux1 = layout.view(aux1.data());
  a.aux2 = layout.view(aux2.data());
  kernels::cuda::emulate_temporal_tma(a, tile);

  // One step of the reference on the grid from (prev, now, aux_now) into (next, aux_next); `now`
  // and `next` indexed like the allocation.
  const auto at_offset = [&](int i, int j, int k) { return static_cast<size_t>(a.u.offset(i, j, k) - a.u.offset(-4, -4, -4)); };
  const auto step = [&](const std::vector<float>& prev, const std::vector<float>& now, const std::vector<float>& aux_now,
                        std::vector<float>& next, std::vector<float>& aux_next) {
    for (int i = 0; i < n.i; ++i)
      for (int j = 0; j < n.j; ++j)
        for (int k = 0; k < n.k; ++k) {
          const size_t o = at_offset(i, j, k);
          const auto at = [&](int di, int dj, int dk) { return now[at_offset(i + di, j + dj, k + dk)]; };
          const float lap = physics::laplacian8(at, c);
          if (inner.contains(i, j, k)) {
            next[o] = physics::leapfrog(prev[o], now[o], v.data()[o], lap);
            continue;
          }
          const float* ex = eta[0].data() + 1;
          const float* ey = eta[1].data() + 1;
          const float* ez = eta[2].data() + 1;
          const float e = ex[i] + ey[j] + ez[k];
          const float grad = pml::pml_gradient_term(ex[i + 1], ex[i - 1], at(1, 0, 0), at(-1, 0, 0), inv_4h2[0]) +
                             pml::pml_gradient_term(ey[j + 1], ey[j - 1], at(0, 1, 0), at(0, -1, 0), inv_4h2[1]) +
                             pml::pml_gradient_term(ez[k + 1], ez[k - 1], at(0, 0, 1), at(0, 0, -1), inv_4h2[2]);
          next[o] = pml::pml_u_next(prev[o], now[o], v.data()[o], lap, aux_now[o], e);
          aux_next[o] = pml::pml_aux_next(aux_now[o], e, grad);
        }
  };
  const std::vector<float> prev0(u_prev.data(), u_prev.data() + size), now0(u.data(), u.data() + size),
      aux0(aux.data(), aux.data() + size);
  std::vector<float> next1(static_cast<size_t>(size), 0.0f), next2(static_cast<size_t>(size), 0.0f);  // zero halo
  std::vector<float> aux_1(static_cast<size_t>(size), 0.0f), aux_2(static_cast<size_t>(size), 0.0f);
  step(prev0, now0, aux0, next1, aux_1);
  step(now0, next1, aux_1, next2, aux_2);

  std::int64_t bad_u = 0, bad_aux = 0, changed = 0;
  double worst = 0;
  const auto close = [&worst](float got, float want) {
    const double e = std::fabs(double(got) - want) / (1.0 + std::fabs(double(want)));
    if (!(e <= worst)) worst = e;
    return e <= 2e-6;
  };
  for (int i = -4; i < n.i + 4; ++i)
    for (int j = -4; j < n.j + 4; ++j)
      for (int k = -4; k < n.k + 4; ++k) {
        const size_t o = at_offset(i, j, k);
        const auto same = [o](const kernels::AlignedBuffer& b, const std::vector<float>& before) {
          return std::memcmp(&b.data()[o], &before[o], 4) == 0;
        };
        if (!grid.contains(i, j, k)) {
          changed += !same(u1, u1_before) + !same(u2, u2_before) + !same(aux1, aux1_before) + !same(aux2, aux2_before);
          continue;
        }
        bad_u += !close(u1.data()[o], next1[o]) + !close(u2.data()[o], next2[o]);
        if (inner.contains(i, j, k))
          changed += !same(aux1, aux1_before) + !same(aux2, aux2_before);
        else
          bad_aux += !close(aux1.data()[o], aux_1[o]) + !close(aux2.data()[o], aux_2[o]);
      }
  EXPECT_EQ(bad_u, 0) << "u^{n+1} or u^{n+2} wrong; worst relative error " << worst;
  EXPECT_EQ(bad_aux, 0) << "aux^{n+1} or aux^{n+2} wrong; worst relative error " << worst;
  EXPECT_EQ(changed, 0) << "values changed outside the grid or aux changed on inner points";
}

TEST(TemporalEmulation, TwoStepsEqualTheReferenceFormulaTwiceAtEveryPoint) {
  check_family("temporal", &kernels::cuda::emulate_temporal);
}

TEST(TemporalTmaEmulation, TwoStepsEqualTheReferenceFormulaTwiceAtEveryPoint) {
  check_family("temporal_tma", &kernels::cuda::emulate_temporal_tma);
}

TEST(TemporalTmaEmulation, TwoStepsWithMinimodsLayerEqualTheReferenceAtEveryPoint) {
  // 48x24 (two rows a thread), 32x8 (one), 32x32 (four); chunk 5. The grid holds a block whose
  // first-step points all lie inside the inner box (the lean body) beside the layer's blocks; the
  // second inner box reaches the grid's i- and k+ faces (no layer there).
  for (const kernels::cuda::Tile tile : {kernels::cuda::Tile{48, 24, 5}, kernels::cuda::Tile{32, 8, 5},
                                         kernels::cuda::Tile{32, 32, 5}}) {
    check_pair_with_layer(tile, Index3{22, 56, 100}, Box3{{3, 4, 4}, {16, 48, 92}});
    check_pair_with_layer(tile, Index3{13, 30, 41}, Box3{{0, 5, 6}, {9, 20, 35}});
  }
}

}  // namespace
}  // namespace minimod
