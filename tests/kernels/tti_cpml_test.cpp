// The TTI CPML layer's field layout (kernels/tti_cpml.hpp, LayerIndex): every point of the layer
// (the grid outside the inner box) has its own index in [0, count), and no other point has one,
// for layers on all faces, on some faces only (a free surface) and for a grid that is all layer;
// the six slabs, in C order, run through those indices. A subdomain's halos (TtiCpmlHalo): every
// point of a shared face's 4-deep halo outside the inner region (continued across the face) has
// its own index after the layer's, found by TtiCpmlArgs::index; edges and other points have none.
// The flux derivatives of pass 2 by the slab's strides (tti_flux_derivatives) equal those by
// lookups at every layer point, bit for bit.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/tti_cpml.hpp"

namespace minimod {
namespace {

using physics::Box3;
using physics::Index3;

void expect_one_index_per_layer_point(const Index3& n, const Box3& inner) {
  const kernels::LayerIndex layer = kernels::LayerIndex::make(n, inner);
  const Box3 grid{{0, 0, 0}, n};
  EXPECT_EQ(layer.count, grid.points() - inner.points());
  std::vector<int> seen(static_cast<size_t>(layer.count), 0);
  for (int i = -2; i < n.i + 2; ++i)
    for (int j = -2; j < n.j + 2; ++j)
      for (int k = -2; k < n.k + 2; ++k) {
        const std::int64_t x = layer(i, j, k);
        const bool in_grid = i >= 0 && j >= 0 && k >= 0 && i < n.i && j < n.j && k < n.k;
        if (!in_grid || inner.contains(i, j, k)) {
          EXPECT_EQ(x, -1) << i << " " << j << " " << k;
          EXPECT_EQ(layer.slab_of(i, j, k), -1) << i << " " << j << " " << k;
          continue;
        }
        ASSERT_GE(x, 0) << i << " " << j << " " << k;
        ASSERT_LT(x, layer.count) << i << " " << j << " " << k;
        ++seen[static_cast<size_t>(x)];
      }
  for (size_t x = 0; x < seen.size(); ++x) ASSERT_EQ(seen[x], 1) << "index " << x;
  // The slabs tile the layer: a slab's points, in C order, are its indices from start[s] on.
  std::int64_t covered = 0;
  for (int s = 0; s < 6; ++s) {
    const Box3 b = layer.slab(s);
    covered += b.points();
    std::int64_t x = layer.start[s];
    for (int i = b.lo.i; i < b.hi().i; ++i)
      for (int j = b.lo.j; j < b.hi().j; ++j)
        for (int k = b.lo.k; k < b.hi().k; ++k) {
          ASSERT_EQ(layer.slab_of(i, j, k), s);
          ASSERT_EQ(layer(i, j, k), x++) << "slab " << s;
        }
  }
  EXPECT_EQ(covered, layer.count);
}

TEST(TtiCpmlLayer, EveryLayerPointHasItsOwnIndex) {
  expect_one_index_per_layer_point({13, 11, 9}, {{3, 2, 4}, {6, 5, 3}});  // all faces, uneven
  expect_one_index_per_layer_point({10, 12, 14}, {{0, 3, 3}, {7, 6, 11}});  // no layer at x-, z+
  expect_one_index_per_layer_point({6, 5, 4}, Box3{});                     // all layer
}

/// The halo points of faces `faces` around a grid n with inner box `inner`, through TtiCpmlArgs.
void expect_one_index_per_halo_layer_point(const Index3& n, const Box3& inner, const std::array<bool, 6>& faces) {
  constexpr int w = 4;
  kernels::TtiCpmlArgs c;
  c.layer = kernels::LayerIndex::make(n, inner);
  c.halo = kernels::TtiCpmlHalo::make(n, inner, faces, c.layer.count, w);
  c.count = c.layer.count + c.halo.count;
  std::vector<int> seen(static_cast<size_t>(c.count), 0);
  std::int64_t expected = 0;
  for (int i = -w - 1; i < n.i + w + 1; ++i)
    for (int j = -w - 1; j < n.j + w + 1; ++j)
      for (int k = -w - 1; k < n.k + w + 1; ++k) {
        const int idx[3] = {i, j, k}, ext[3] = {n.i, n.j, n.k};
        int outside = 0, face = -1;
        bool near = true;
        for (int a = 0; a < 3; ++a) {
          if (idx[a] >= 0 && idx[a] < ext[a]) continue;
          ++outside;
          face = 2 * a + (idx[a] < 0 ? 0 : 1);
          near = idx[a] >= -w && idx[a] < ext[a] + w;
        }
        const std::int64_t x = c.index(i, j, k);
        if (outside == 0) {  // the own grid: the layer's index
          EXPECT_EQ(x, c.layer(i, j, k));
          continue;
        }
        // A halo point is in the layer unless the inner box, continued across its face, holds it.
        bool in_layer = outside == 1 && near && faces[static_cast<size_t>(face)];
        if (in_layer && !inner.empty()) {
          const int a = face / 2;
          bool inside = true;
          for (int b = 0; b < 3; ++b)
            if (b != a) inside = inside && idx[b] >= inner.lo[b] && idx[b] < inner.hi()[b];
          in_layer = !inside;
        }
        if (!in_layer) {
          EXPECT_EQ(x, -1) << i << " " << j << " " << k;
          continue;
        }
        ++expected;
        ASSERT_GE(x, c.layer.count) << i << " " << j << " " << k;
        ASSERT_LT(x, c.count) << i << " " << j << " " << k;
        ++seen[static_cast<size_t>(x)];
      }
  EXPECT_EQ(expected, c.halo.count);
  for (std::int64_t x = c.layer.count; x < c.count; ++x) ASSERT_EQ(seen[static_cast<size_t>(x)], 1) << x;
}

TEST(TtiCpmlLayer, EveryHaloLayerPointHasItsOwnIndex) {
  expect_one_index_per_halo_layer_point({13, 11, 9}, {{0, 2, 4}, {13, 5, 3}}, {true, true, false, false, false, false});
  expect_one_index_per_halo_layer_point({10, 12, 14}, {{2, 0, 3}, {8, 12, 11}},
                                        {false, true, true, true, false, true});
  expect_one_index_per_halo_layer_point({6, 5, 7}, Box3{}, {true, true, true, true, true, true});  // all layer
}

/// d V_A / dx_A at every own layer point, as pass 2 takes it (by the slab's strides where
/// flux_line_by_strides holds, else by lookups), against the lookups everywhere (the CPU
/// reference's form at a slab's rims), on random V: equal bit for bit. With `everywhere`, also
/// that the strides are taken wherever a line leaves its slab only for points where nothing is
/// stored (TtiCpmlArgs::index gives -1): a lookup only where a neighbour lies in another slab.
template <int A>
void expect_flux_derivatives_as_by_lookup(const kernels::TtiCpmlArgs& c, bool everywhere) {
  std::int64_t by_strides = 0, by_lookup = 0;
  bool failed = false;
  c.layer.for_each_point([&](const Box3& b, int i, int j, int k, std::int64_t x) {
    if (failed) return;
    float perp = 0, axis = 0, perp_ref = 0, axis_ref = 0;
    kernels::tti_flux_derivatives<A>(c, b, i, j, k, x, perp, axis);
    kernels::tti_flux_derivatives_by_lookup<A>(c, b, i, j, k, x, perp_ref, axis_ref);
    if (perp != perp_ref || axis != axis_ref) {
      ADD_FAILURE() << "axis " << A << ", point " << i << " " << j << " " << k << ": " << perp << " " << axis
                    << " against " << perp_ref << " " << axis_ref << " by lookups";
      failed = true;
      return;
    }
    if (kernels::flux_line_inside<A>(b, i, j, k)) return;
    if (kernels::flux_line_by_strides<A>(c, b, i, j, k)) {
      ++by_strides;
      return;
    }
    ++by_lookup;
    bool stored = false;  // a neighbour beyond the slab with an index of its own
    for (int m = -physics::kRadius; m <= physics::kRadius; ++m) {
      Index3 p{i, j, k};
      p[A] += m;
      stored = stored || (!b.contains(p.i, p.j, p.k) && c.index(p.i, p.j, p.k) >= 0);
    }
    if (everywhere && !stored) {
      ADD_FAILURE() << "axis " << A << ", point " << i << " " << j << " " << k
                    << ": looked up, though nothing is stored beyond its slab";
      failed = true;
    }
  });
  if (failed) return;
  if (everywhere) EXPECT_GT(by_strides, 0) << "axis " << A;
}

/// The layer of grid n around `inner`, halos on `faces`, random fields and derivative weights.
struct RandomLayer {
  kernels::TtiCpmlArgs c;
  std::vector<float> fields;
  RandomLayer(const Index3& n, const Box3& inner, const std::array<bool, 6>& faces) {
    c.layer = kernels::LayerIndex::make(n, inner);
    c.halo = kernels::TtiCpmlHalo::make(n, inner, faces, c.layer.count, 4);
    c.count = c.layer.count + c.halo.count;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    fields.resize(static_cast<size_t>(c.count) * kernels::kTtiCpmlFields);
    for (float& f : fields) f = u(rng);
    c.fields = fields.data();
    for (auto& axis : c.d1.c1)
      for (float& w : axis) w = u(rng);
  }
};

TEST(TtiCpmlLayer, FluxDerivativesByTheSlabsStridesEqualThoseByLookups) {
  const std::array<bool, 6> none{}, all{true, true, true, true, true, true};
  // A 6-point layer on every face: the lines leaving a slab into the inner box or off the grid
  // take the strides, those into another slab the lookups.
  const RandomLayer faces({40, 38, 36}, {{6, 6, 6}, {28, 26, 24}}, none);
  expect_flux_derivatives_as_by_lookup<0>(faces.c, true);
  expect_flux_derivatives_as_by_lookup<1>(faces.c, true);
  expect_flux_derivatives_as_by_lookup<2>(faces.c, true);
  // Halos on some faces (a distributed subdomain), an inner box thinner than the stencil along i,
  // no layer at j+ and k- (a free surface), a grid that is all layer.
  const RandomLayer halos({14, 12, 11}, {{0, 3, 2}, {14, 5, 6}}, {true, true, false, true, false, false});
  const RandomLayer thin({13, 12, 11}, {{5, 4, 0}, {3, 8, 7}}, {false, false, true, false, false, true});
  const RandomLayer open({11, 12, 13}, {{2, 0, 3}, {7, 9, 10}}, none);
  const RandomLayer whole({6, 5, 7}, Box3{}, all);
  for (const RandomLayer* r : {&halos, &thin, &open, &whole}) {
    expect_flux_derivatives_as_by_lookup<0>(r->c, false);
    expect_flux_derivatives_as_by_lookup<1>(r->c, false);
    expect_flux_derivatives_as_by_lookup<2>(r->c, false);
  }
}

}  // namespace
}  // namespace minimod
