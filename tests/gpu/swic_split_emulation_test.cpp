// swic_split's block body run by host threads (kernels/cuda/block_emulation.hpp): needs no GPU.
// One TTI step of a small random problem on the CUDA propagator's layout and medium arrays
// (halo 4; nx, ny, nz, 1 / a from fill_tti_medium, kappa_perp, kappa_axis from tti_centre_at, as
// kernels/cuda/acoustic_tti_cuda.cu fills them), for every tile of the family and an odd chunk
// length, over the whole grid (the tiles overhang it) and an odd sub-box: p_next, q_next, aux_p and
// aux_q must equal the CPU reference point update (kernels::tti_update_point: the pair form
// tti_rhs73, then leapfrog inside the inner box and the damped update outside it) at every point
// to fp32 round-off, and nothing outside the region may change. This checks the kernel's
// indexing, its double-buffered staging and barriers and its queue of partial sums, on the split
// form; that the device code does the same is what the gpu tests (tti_cuda_test.cpp) check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/aligned_buffer.hpp"
#include "kernels/cuda/autotune.hpp"
#include "kernels/cuda/emulation.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/tti_cpml.hpp"
#include "kernels/tti_point.hpp"
#include "kernels/tti_propagator.hpp"
#include "physics/tti.hpp"
#include "physics/view3.hpp"
#include "differences.hpp"

namespace minimod {
namespace {

using physics::Box3;
using physics::Index3;

constexpr int R = physics::kRadius;

// Of an array's largest value. One step from the same input: the split and pair forms then differ
// by fp32 round-off, measured up to 1.8e-7 of the max. A wrong outermost term weighs ~1e-5 of the
// max (staging zeros for the last halo row in j: 1.6e-5 in p_next, 3.5e-6 in q_next), other
// wrong indices or signs 1e-3 and more. tti_cuda_test.cpp allows 2e-5 after 25 steps.
constexpr double kTolerance = 2e-6;

/// The arrays of one TTI step in host memory, laid out and filled as the CUDA propagator does.
struct HostTti {
  kernels::AcousticTtiProblem problem;
  physics::FieldLayout layout;
  kernels::AlignedBuffer p, q, p_next, q_next, aux_p, aux_q, v2dt2, b, nx, ny, nz, inv_a,
      kappa_perp, kappa_axis;
  std::vector<float> eta[3];  // eta[axis][i + 1], i = -1 .. n
  Box3 inner;

  /// `constant_axis`: tilt and azimuth the same at every point (AcousticTtiProblem::constant_axis;
  /// swic_split_tma then takes the constant-axis form), delta, eps and v still random per point.
  HostTti(Index3 n, unsigned seed, bool constant_axis = false)
      : layout(physics::FieldLayout::make(Box3{{0, 0, 0}, n}, R)),
        p(layout.elements()),
        q(layout.elements()),
        p_next(layout.elements()),
        q_next(layout.elements()),
        aux_p(layout.elements()),
        aux_q(layout.elements()),
        v2dt2(layout.elements()),
        b(layout.elements()),
        nx(layout.elements()),
        ny(layout.elements()),
        nz(layout.elements()),
        inv_a(layout.elements()),
        kappa_perp(layout.elements()),
        kappa_axis(layout.elements()) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    const double pi = 3.14159265358979323846;
    auto& pr = problem;
    pr.grid.shape = n;
    pr.grid.spacing = {10, 12, 8};
    pr.pml.lo = {4, 0, 5};  // a layer of unequal widths on four faces, none on y- and x+
    pr.pml.hi = {0, 3, 6};
    // dt at the stability limit, not below it: the larger (v dt)^2, the larger the operator's
    // share of p_next against 2 p - p_prev, and the more a wrong outermost term (weight a_4 =
    // -1/560) shows against the round-off (see kTolerance).
    const double dt = physics::tti_critical_dt(3500, pr.grid.spacing, 0.4, -0.1, 0.2);
    // Independent per point: tilt (beyond 90 degrees too), azimuth, delta, eps >= delta, and a
    // quarter of the points isotropic (a = 1, b = 0), where the layer's auxiliary term applies.
    for (int i = 0; i < n.i; ++i)
      for (int j = 0; j < n.j; ++j)
        for (int k = 0; k < n.k; ++k) {
          const bool iso = u(rng) < 0.25;
          const double delta = iso ? 0 : -0.1 + 0.3 * u(rng);
          const double eps = iso ? 0 : delta + 0.2 * u(rng);
          const double vdt = (1500 + 2000 * u(rng)) * dt;
          pr.v2dt2.push_back(static_cast<float>(vdt * vdt));
          pr.a.push_back(static_cast<float>(1 + 2 * delta));
          pr.b.push_back(static_cast<float>(2 * (eps - delta)));
          pr.theta.push_back(static_cast<float>(constant_axis ? 0.9 : pi * u(rng)));
          pr.phi.push_back(static_cast<float>(constant_axis ? 2.2 : 2 * pi * u(rng)));
        }
    kernels::finish_problem(pr);
    kernels::fill_tti_medium(pr, layout, nx.data(), ny.data(), nz.data(), inv_a.data());
    const auto vv = layout.view(v2dt2.data()), vb = layout.view(b.data());
    for (int i = 0; i < n.i; ++i)  // their halo stays 0, as on the GPU
      for (int j = 0; j < n.j; ++j)
        for (int k = 0; k < n.k; ++k) {
          const size_t o = (static_cast<size_t>(i) * n.j + j) * n.k + k;
          vv(i, j, k) = pr.v2dt2[o];
          vb(i, j, k) = pr.b[o];
        }
    for (const auto& r : kernels::problem_regions(pr))
      if (!r.is_pml) inner = r.box;
    // Random damping profiles rather than make_damping_profiles' (0 at the innermost layer point,
    // small over a thin layer): the damped update then differs clearly from the leapfrog.
    std::uniform_real_distribution<float> e(0.0f, 0.3f), f(-1, 1);
    for (int a = 0; a < 3; ++a) {
      eta[a].resize(static_cast<size_t>(n[a] + 2));
      for (auto& x : eta[a]) x = e(rng);
    }
    for (auto* buf : {&p, &q, &p_next, &q_next, &aux_p, &aux_q})  // halo and row padding too
      for (std::int64_t x = 0; x < layout.elements(); ++x) buf->data()[x] = f(rng);
    // The centre weights at the grid points, from the medium arrays (fill_centre_weights); the
    // halo keeps its 0.
    const auto g = args();
    const auto kp = layout.view(kappa_perp.data()), ka = layout.view(kappa_axis.data());
    for (int i = 0; i < n.i; ++i)
      for (int j = 0; j < n.j; ++j)
        for (int k = 0; k < n.k; ++k) {
          const physics::TtiCentre c = kernels::tti_centre_at(g, g.p.offset(i, j, k));
          kp(i, j, k) = c.perp;
          ka(i, j, k) = c.axis;
        }
  }

  kernels::TtiStepArgs args() const {
    kernels::TtiStepArgs g{};
    g.p = layout.view<const float>(p.data());
    g.q = layout.view<const float>(q.data());
    g.p_next = layout.view(p_next.data());
    g.q_next = layout.view(q_next.data());
    g.aux_p = layout.view(aux_p.data());
    g.aux_q = layout.view(aux_q.data());
    g.v2dt2 = layout.view<const float>(v2dt2.data());
    g.b = layout.view<const float>(b.data());
    g.nx = layout.view<const float>(nx.data());
    g.ny = layout.view<const float>(ny.data());
    g.nz = layout.view<const float>(nz.data());
    g.inv_a = layout.view<const float>(inv_a.data());
    g.kappa_perp = layout.view<const float>(kappa_perp.data());
    g.kappa_axis = layout.view<const float>(kappa_axis.data());
    g.weights = physics::make_tti_weights(problem.stencil);
    g.constant_axis = problem.constant_axis;  // as CudaAcousticTti sets it
    if (problem.constant_axis) {
      g.axis = kernels::model_axis(problem);
      g.axis_weights = physics::make_tti_axis_weights(g.weights, g.axis);
      g.axis_row_weights = physics::make_tti_axis_row_weights(g.axis_weights);
    }
    for (int a = 0; a < 3; ++a) {
      g.eta[a] = eta[a].data();
      g.inv_4h2[a] = problem.inv_4h2[static_cast<size_t>(a)];
    }
    g.stencil = problem.stencil;
    g.inner = inner;
    return g;
  }

  /// What the step writes: p_next, q_next, aux_p, aux_q.
  std::vector<kernels::AlignedBuffer*> outputs() { return {&p_next, &q_next, &aux_p, &aux_q}; }
};

using Arrays = std::vector<std::vector<float>>;

Arrays save(HostTti& s) {
  Arrays out;
  for (auto* buf : s.outputs()) out.emplace_back(buf->data(), buf->data() + buf->size());
  return out;
}

void restore(HostTti& s, const Arrays& a) {
  const auto outs = s.outputs();
  for (size_t f = 0; f < outs.size(); ++f) std::copy(a[f].begin(), a[f].end(), outs[f]->data());
}

class SwicSplitEmulation : public ::testing::Test {
 protected:
  explicit SwicSplitEmulation(bool constant_axis = false) : s_{n_, 29u, constant_axis} {}
  // Prime sides that divide no tile; the tiles (16..64 along k, 4 or 8 along j) overhang the
  // grid and its halo.
  const Index3 n_{21, 19, 23};
  HostTti s_;
  Arrays initial_, reference_;

  void SetUp() override {
    ASSERT_FALSE(s_.inner.empty());
    initial_ = save(s_);
    const auto g = s_.args();
    for (int i = 0; i < n_.i; ++i)
      for (int j = 0; j < n_.j; ++j)
        for (int k = 0; k < n_.k; ++k) kernels::tti_update_point(g, i, j, k);
    reference_ = save(s_);
  }

  /// One emulated update of `region` from the initial state: the reference inside it (within
  /// kTolerance of each array's largest value there), the initial values bitwise elsewhere (the
  /// halo and row padding included).
  void check(const std::string& family, const kernels::cuda::Tile& tile, const Box3& region) {
    SCOPED_TRACE(family + ":" + kernels::cuda::tile_string(tile) + " region lo (" +
                 std::to_string(region.lo.i) + "," + std::to_string(region.lo.j) + "," +
                 std::to_string(region.lo.k) + ") n (" + std::to_string(region.n.i) + "," +
                 std::to_string(region.n.j) + "," + std::to_string(region.n.k) + ")");
    restore(s_, initial_);
    kernels::cuda::emulate_swic_split(s_.args(), region, tile, family == "swic_split_tma");
    const Arrays got = save(s_);
    const auto v = s_.layout.view(s_.p.data());
    const std::int64_t base = v.offset(-R, -R, -R);
    const int k_end = static_cast<int>(s_.layout.nz_alloc) - R;  // row padding too
    const char* names[] = {"p_next", "q_next", "aux_p", "aux_q"};
    for (size_t f = 0; f < got.size(); ++f) {
      double scale = 0;
      for (int i = 0; i < n_.i; ++i)
        for (int j = 0; j < n_.j; ++j)
          for (int k = 0; k < n_.k; ++k)
            if (region.contains(i, j, k))
              scale = std::max(scale, double(std::fabs(reference_[f][v.offset(i, j, k) - base])));
      std::int64_t bad = 0, changed_outside = 0;
      double worst = 0;
      Index3 at{};
      for (int i = -R; i < n_.i + R; ++i)
        for (int j = -R; j < n_.j + R; ++j)
          for (int k = -R; k < k_end; ++k) {
            const auto o = static_cast<size_t>(v.offset(i, j, k) - base);
            if (!region.contains(i, j, k)) {
              if (std::memcmp(&got[f][o], &initial_[f][o], 4) != 0) ++changed_outside;
              continue;
            }
            const double err = std::fabs(double(got[f][o]) - reference_[f][o]);
            if (!(err <= kTolerance * scale)) {
              if (bad == 0) at = {i, j, k};
              ++bad;
            }
            if (!(err <= worst)) worst = err;
          }
      EXPECT_EQ(bad, 0) << names[f] << ": max |diff| " << worst << " of max " << scale
                        << ", first at (" << at.i << "," << at.j << "," << at.k << ")";
      EXPECT_EQ(changed_outside, 0) << names[f];
    }
  }
};

// Both families of swic_split.cu: register staging and tensor copies (swic_split_tma).
const char* const kFamilies[] = {"swic_split", "swic_split_tma"};

TEST_F(SwicSplitEmulation, EveryTileEqualsTheCpuReferenceAtEveryPoint) {
  for (const std::string name : kFamilies) {
    const auto& family = kernels::cuda::find_family(name, kernels::cuda::PropagatorKind::acoustic_tti);
    ASSERT_FALSE(family.tti_tunables.empty());
    std::set<std::tuple<int, int, int>> done;
    for (const auto& t : family.tti_tunables)
      for (int chunk : {t.z, 5, 1}) {  // 5: chunks that divide nothing, the last one short; 1: one output plane
        kernels::cuda::Tile tile = t;
        tile.z = chunk;
        if (!done.insert({tile.x, tile.y, tile.z}).second) continue;
        check(name, tile, Box3{{0, 0, 0}, n_});  // the whole grid, as the propagator launches it
      }
  }
}

TEST_F(SwicSplitEmulation, OddSubBoxEqualsTheCpuReference) {
  // A region at odd offsets, narrower than a tile: the kernel stages the halo around it from the
  // arrays and must write nothing outside it.
  for (const std::string name : kFamilies) {
    const auto& family = kernels::cuda::find_family(name, kernels::cuda::PropagatorKind::acoustic_tti);
    for (const auto& t : family.tti_tunables) {
      kernels::cuda::Tile tile = t;
      tile.z = 4;
      check(name, tile, Box3{{3, 2, 3}, {13, 15, 9}});  // crosses the x-, y+ and z- layers
    }
  }
}

// A model whose axis is the same everywhere (tilt 0.9, azimuth 2.2 rad; delta, eps random per
// point): swic_split_tma takes the constant-axis form (s, p, p / a staged, three sums an output),
// which must equal the CPU reference's pair form at every point for every tile and chunk, over
// the whole grid and an odd sub-box.
class SwicSplitAxisEmulation : public SwicSplitEmulation {
 protected:
  SwicSplitAxisEmulation() : SwicSplitEmulation(true) {}
};

TEST_F(SwicSplitAxisEmulation, EveryTileEqualsTheCpuReferenceAtEveryPoint) {
  ASSERT_TRUE(s_.problem.constant_axis);
  ASSERT_TRUE(s_.args().constant_axis);
  const auto& family = kernels::cuda::find_family("swic_split_tma", kernels::cuda::PropagatorKind::acoustic_tti);
  for (const auto& t : family.tti_tunables)
    for (int chunk : {t.z, 5, 2, 1}) {
      // 2, 1 (the 32x8 tile, the odd sub-box): as many outputs a block as output slots, or fewer
      if (chunk <= 2 && (t.x != 32 || t.y != 8)) continue;
      kernels::cuda::Tile tile = t;
      tile.z = chunk;
      if (chunk > 2) check("swic_split_tma", tile, Box3{{0, 0, 0}, n_});
      check("swic_split_tma", tile, Box3{{3, 2, 3}, {13, 15, 9}});
    }
}

// swic_split_tma's CPML launch (KernelFamily::launch_tti_cpml_layer) gives the rows of every
// slab of the layer, with full and odd chunks; pass 2 from them (as tti_cpml_layer_rows takes it)
// must leave p_next, q_next and the six zeta fields equal to the plain layer kernel's pass 2
// (kernels::tti_cpml_layer_point, the pair form's rows) at every point, and change nothing else.
// V, zeta and the profiles are random: pass 2 reads them as given.
class SwicSplitCpmlEmulation : public ::testing::Test {
 protected:
  /// `constant_axis`: HostTti's model of one axis, where the launch takes the constant-axis form.
  explicit SwicSplitCpmlEmulation(bool constant_axis = false) : s_{n_, 31u, constant_axis} {}
  // 36 along k: the k = 0 face's tile starts at k = 0, its boxes inside the allocation, rather
  // than ending at the face's end (cpml_grid).
  const Index3 n_{21, 19, 36};
  HostTti s_;
  kernels::TtiCpmlArgs c_{};
  std::vector<float> fields_, profiles_[6], row_centres_, rows_;

  void SetUp() override {
    c_.layer = kernels::LayerIndex::make(n_, s_.inner);
    c_.count = c_.layer.count;
    ASSERT_GT(c_.count, 0);
    std::mt19937 rng(37u);
    std::uniform_real_distribution<float> u(-1, 1), pos(0.05f, 0.95f);
    fields_.resize(static_cast<size_t>(kernels::kTtiCpmlFields * c_.count));
    for (auto& x : fields_) x = u(rng);
    c_.fields = fields_.data();
    for (int a = 0; a < 3; ++a) {
      profiles_[a].resize(static_cast<size_t>(n_[a]));
      profiles_[3 + a].resize(static_cast<size_t>(n_[a]));
      for (auto& x : profiles_[a]) x = pos(rng);
      for (auto& x : profiles_[3 + a]) x = u(rng);
      c_.a[a] = profiles_[a].data();
      c_.b[a] = profiles_[3 + a].data();
    }
    c_.d1 = pml::make_axis_derivatives(s_.problem.grid.spacing);
    const auto g = s_.args();
    row_centres_.resize(static_cast<size_t>(6 * c_.count));
    for (int i = 0; i < n_.i; ++i)
      for (int j = 0; j < n_.j; ++j)
        for (int k = 0; k < n_.k; ++k) {
          const std::int64_t x = c_.layer(i, j, k);
          if (x < 0) continue;
          const kernels::TtiGlobalPoint at{g, g.p.offset(i, j, k)};
          kernels::store_by_rows(row_centres_.data(), c_, x,
                                 physics::tti_row_centres(
                                     [&at](int di, int dj, int dk) { return at.medium(di, dj, dk); }, g.weights));
        }
    c_.row_centres = row_centres_.data();
    rows_.assign(static_cast<size_t>(6 * c_.count), std::nanf(""));  // unwritten rows show
    c_.rows = rows_.data();
  }

  struct State {
    Arrays grid;
    std::vector<float> fields;
  };
  State state() { return {save(s_), fields_}; }
  /// Field f (kernels::TtiCpmlField), axis a, of a state.
  std::vector<float> field(const State& st, int f, int a) const {
    const auto b = st.fields.begin() + (f + a) * c_.count;
    return std::vector<float>(b, b + c_.count);
  }
  /// `have` equals `want` to round-off where the reference wrote (`want` differs from `before`)
  /// and equals `before` elsewhere.
  static void expect_written_alike(const std::vector<float>& want, const std::vector<float>& have,
                                   const std::vector<float>& before, const std::string& name) {
    double scale = 0, worst = 0;
    std::int64_t unchanged_moved = 0;
    for (size_t x = 0; x < want.size(); ++x) {
      if (std::memcmp(&want[x], &before[x], 4) == 0) {  // not written by the reference
        if (std::memcmp(&have[x], &before[x], 4) != 0) ++unchanged_moved;
        continue;
      }
      scale = std::max(scale, double(std::fabs(want[x])));
      testing::keep_worst(worst, std::fabs(double(have[x]) - want[x]));  // an unwritten row's NaN fails
    }
    EXPECT_GT(scale, 0) << name;
    EXPECT_LE(worst, kTolerance * scale) << name << ": max |diff| " << worst << " of max " << scale;
    EXPECT_EQ(unchanged_moved, 0) << name << ": written where the reference writes nothing";
  }
  void restore_state(const State& st) {
    restore(s_, st.grid);
    fields_ = st.fields;
  }
  /// The CPML launch over `region` (inside slab `slab`) with `chunk`, then pass 2 from its rows
  /// there, against the plain layer kernel's pass 2 over `region`: p_next, q_next and each zeta
  /// field alike where the reference writes, nothing else changed.
  void expect_rows_give_the_plain_pass_two(int slab, const Box3& region, int chunk) {
    const State initial = state();
    const auto g = s_.args();
    const Box3 box = c_.layer.slab(slab);
    const auto each_point = [&](const auto& f) {
      for (int i = region.lo.i; i < region.hi().i; ++i)
        for (int j = region.lo.j; j < region.hi().j; ++j)
          for (int k = region.lo.k; k < region.hi().k; ++k) f(i, j, k, c_.layer(i, j, k));
    };
    each_point([&](int i, int j, int k, std::int64_t x) { kernels::tti_cpml_layer_point(g, c_, box, i, j, k, x); });
    const State reference = state();
    restore_state(initial);
    kernels::cuda::emulate_swic_split_cpml(g, c_, slab, region, chunk);
    each_point([&](int i, int j, int k, std::int64_t x) {
      kernels::tti_cpml_layer_update(g, c_, box, i, j, k, x, kernels::load_by_rows<physics::TtiRows>(c_.rows, c_, x));
    });
    const State got = state();
    restore_state(initial);
    // p_next, q_next (aux_p, aux_q: untouched by either), then each zeta field.
    expect_written_alike(reference.grid[0], got.grid[0], initial.grid[0], "p_next");
    expect_written_alike(reference.grid[1], got.grid[1], initial.grid[1], "q_next");
    for (int f : {kernels::kZetaPerp, kernels::kZetaAxis})
      for (int a = 0; a < 3; ++a)
        expect_written_alike(field(reference, f, a), field(got, f, a), field(initial, f, a),
                             std::string(f == kernels::kZetaPerp ? "zeta_perp" : "zeta_axis") + " " +
                                 std::to_string(a));
    EXPECT_EQ(got.grid[2], initial.grid[2]);  // aux_p
    EXPECT_EQ(got.grid[3], initial.grid[3]);  // aux_q
  }

  // The tests below, for both fixtures.
  void expect_every_slab_alike() {
    // The k faces (5 and 6 deep) in tiles of 8 x 16, the others in tiles of 32 x 4.
    int slabs = 0;
    for (int slab = 0; slab < 6; ++slab) {
      const Box3 box = c_.layer.slab(slab);
      if (box.empty()) continue;
      ++slabs;
      for (int chunk : {64, 5}) {
        SCOPED_TRACE("slab " + std::to_string(slab) + ", chunk " + std::to_string(chunk));
        expect_rows_give_the_plain_pass_two(slab, box, chunk);
      }
    }
    EXPECT_EQ(slabs, 4);  // x-, y+, z- and z+ (HostTti's layer)
  }
  void expect_thin_boxes_alike() {
    // Boxes of every slab 1 to 17 points deep along k, 0, 1 or 3 points from the slab's outer edge:
    // tiles of 8 x 16 up to 8, 16 x 8 up to 16, 32 x 4 beyond; one or two tiles along k.
    int boxes = 0;
    for (int slab = 0; slab < 6; ++slab) {
      const Box3 box = c_.layer.slab(slab);
      if (box.empty()) continue;
      for (const int depth : {1, 5, 8, 9, 12, 16, 17})
        for (const int from : {0, 1, 3})
          if (from + depth <= box.n.k) {
            Box3 thin = box;
            thin.lo.k = box.lo.k + (box.lo.k == 0 ? from : box.n.k - depth - from);
            thin.n.k = depth;
            SCOPED_TRACE("slab " + std::to_string(slab) + ", k from " + std::to_string(thin.lo.k) + ", " +
                         std::to_string(depth) + " deep");
            expect_rows_give_the_plain_pass_two(slab, thin, 5);
            ++boxes;
          }
    }
    EXPECT_GE(boxes, 30);
  }
  void expect_pass_one_at_the_j_and_k_faces() {
    for (int i = s_.inner.lo.i; i < s_.inner.hi().i; ++i) profiles_[3][static_cast<size_t>(i)] = 0.0f;  // b_x
    for (size_t k = 0; k < profiles_[5].size(); k += 4) profiles_[5][k] = 0.0f;  // some of b_z
    const State initial = state();
    const auto g = s_.args();
    int taken = 0;
    for (int slab = 0; slab < 6; ++slab) {
      const Box3 box = c_.layer.slab(slab);
      if (box.empty()) continue;
      for (int chunk : {64, 5}) {
        SCOPED_TRACE("slab " + std::to_string(slab) + ", chunk " + std::to_string(chunk));
        restore_state(initial);
        c_.psi_in_rows = true;
        const bool takes = c_.psi_by_rows(slab);
        if (takes) {
          ++taken;
          for (int i = box.lo.i; i < box.hi().i; ++i)
            for (int j = box.lo.j; j < box.hi().j; ++j)
              for (int k = box.lo.k; k < box.hi().k; ++k) kernels::tti_cpml_psi_point(g, c_, i, j, k);
        }
        const State reference = state();
        restore_state(initial);
        kernels::cuda::emulate_swic_split_cpml(g, c_, slab, box, chunk);
        c_.psi_in_rows = false;
        const State got = state();
        for (int f : {kernels::kPsiS, kernels::kPsiP, kernels::kVPerp, kernels::kVAxis, kernels::kZetaPerp,
                      kernels::kZetaAxis})
          for (int a = 0; a < 3; ++a) {
            const std::string name = "field " + std::to_string(f) + " axis " + std::to_string(a);
            if (!takes || f >= kernels::kZetaPerp || (f < kernels::kVPerp && a == 0))
              EXPECT_EQ(field(got, f, a), field(initial, f, a)) << name << " written";
            else
              expect_written_alike(field(reference, f, a), field(got, f, a), field(initial, f, a), name);
          }
        EXPECT_EQ(got.grid, initial.grid);  // the CPML launch writes only the rows and these fields
      }
    }
    EXPECT_EQ(taken, 6);  // y+, z- and z+ (HostTti's layer), two chunks each
  }
};

/// The same launch on a model of one axis (HostTti's constant_axis): the constant-axis form of
/// its rows (AxisRowSums, physics::tti_rows73_axis) and, at the j and k faces, of pass 1.
class SwicSplitCpmlAxisEmulation : public SwicSplitCpmlEmulation {
 protected:
  SwicSplitCpmlAxisEmulation() : SwicSplitCpmlEmulation(true) {}
};

TEST_F(SwicSplitCpmlEmulation, EverySlabEqualsThePlainLayerKernel) {
  expect_every_slab_alike();
}

TEST_F(SwicSplitCpmlEmulation, BoxesThinAlongKTakeNarrowTilesAndEqualThePlainLayerKernel) {
  expect_thin_boxes_alike();
}

// With TtiCpmlArgs::psi_in_rows the CPML launch also takes pass 1 at the points of slabs 2-5
// (the j and k faces, not damped along x), from the planes it stages: psi and V there must equal
// the psi kernel's (kernels::tti_cpml_psi_point) at every point, including where an axis is not
// damped (psi untouched), and at the other slabs it must leave psi and V alone.
TEST_F(SwicSplitCpmlEmulation, TakingPassOneAtTheJAndKFacesEqualsThePsiKernel) {
  expect_pass_one_at_the_j_and_k_faces();
}

TEST_F(SwicSplitCpmlAxisEmulation, EverySlabEqualsThePlainLayerKernel) {
  ASSERT_TRUE(s_.args().constant_axis);
  expect_every_slab_alike();
}

TEST_F(SwicSplitCpmlAxisEmulation, BoxesThinAlongKTakeNarrowTilesAndEqualThePlainLayerKernel) {
  expect_thin_boxes_alike();
}

TEST_F(SwicSplitCpmlAxisEmulation, TakingPassOneAtTheJAndKFacesEqualsThePsiKernel) {
  expect_pass_one_at_the_j_and_k_faces();
}

// Pass 2 on the GPU (tti_cpml_finish<true>) reads and writes zeta of an axis only where the
// axis is damped; where it is not, zeta is zero and the branch-free form (the CPU's) keeps it so.
// With some profile entries zero and zeta zero there, both forms must give the same bits.
TEST_F(SwicSplitCpmlEmulation, PassTwoSkippingUndampedZetaGivesTheSameBits) {
  for (int a = 0; a < 3; ++a)
    for (size_t x = 0; x < profiles_[3 + a].size(); x += 3) profiles_[3 + a][x] = 0.0f;  // b
  const auto g = s_.args();
  int skipped = 0;
  for (int i = 0; i < n_.i; ++i)
    for (int j = 0; j < n_.j; ++j)
      for (int k = 0; k < n_.k; ++k) {
        const std::int64_t x = c_.layer(i, j, k);
        if (x < 0) continue;
        const int idx[3] = {i, j, k};
        for (int e = 0; e < 3; ++e)
          if (c_.b[e][idx[e]] == 0.0f) {
            c_.at(kernels::kZetaPerp, e, x) = c_.at(kernels::kZetaAxis, e, x) = 0.0f;
            ++skipped;
          }
      }
  ASSERT_GT(skipped, 0);
  std::mt19937 rng(41u);
  std::uniform_real_distribution<float> u(-1, 1);
  const State initial = state();
  State got[2];
  for (const bool damped_only : {false, true}) {
    restore_state(initial);
    std::mt19937 same(rng);  // the same rows and derivatives for both forms
    for (int i = 0; i < n_.i; ++i)
      for (int j = 0; j < n_.j; ++j)
        for (int k = 0; k < n_.k; ++k) {
          const std::int64_t x = c_.layer(i, j, k);
          if (x < 0) continue;
          physics::TtiRows rows;
          float dv_perp[3], dv_axis[3];
          for (int e = 0; e < 3; ++e) {
            rows.perp[e] = u(same), rows.axis[e] = u(same);
            dv_perp[e] = u(same), dv_axis[e] = u(same);
          }
          if (damped_only)
            kernels::tti_cpml_finish<true>(g, c_, i, j, k, x, rows, dv_perp, dv_axis);
          else
            kernels::tti_cpml_finish<false>(g, c_, i, j, k, x, rows, dv_perp, dv_axis);
        }
    got[damped_only ? 1 : 0] = state();
  }
  EXPECT_NE(got[0].grid[0], initial.grid[0]);  // p_next was written
  for (size_t f = 0; f < got[0].grid.size(); ++f)
    EXPECT_EQ(std::memcmp(got[0].grid[f].data(), got[1].grid[f].data(), got[0].grid[f].size() * 4), 0)
        << "grid array " << f;
  EXPECT_EQ(std::memcmp(got[0].fields.data(), got[1].fields.data(), got[0].fields.size() * 4), 0) << "CPML fields";
}

// On a VTI model (n = (0, 0, 1) at every point) the GPU's CPML point kernels take the live rows
// only (kernels/tti_cpml.hpp, perp_row_live: tti_cpml_psi_point<.., true>, tti_cpml_layer_update<true>),
// leaving the dead fields at the zero of their reset. Both passes over the whole layer, from the
// same rows (vti_rows25), must give the general form's p_next, q_next, V, zeta and live psi, and
// leave dead psi (which the general form computes but never uses) as it was.
TEST_F(SwicSplitCpmlEmulation, VtiModelsTakeTheLiveRowsOnlyToTheSameValues) {
  for (std::int64_t x = 0; x < s_.layout.elements(); ++x) {  // halo included, as fill_tti_medium
    s_.nx.data()[x] = s_.ny.data()[x] = 0.0f;
    s_.nz.data()[x] = 1.0f;
  }
  auto g = s_.args();
  g.vti = true;
  const auto live = [](int f, int e) {
    const bool perp = f == kernels::kPsiS || f == kernels::kVPerp || f == kernels::kZetaPerp;
    return perp ? kernels::perp_row_live<true>(e) : kernels::axis_row_live<true>(e);
  };
  for (int f : {kernels::kVPerp, kernels::kVAxis, kernels::kZetaPerp, kernels::kZetaAxis})
    for (int e = 0; e < 3; ++e)
      if (!live(f, e))
        for (std::int64_t x = 0; x < c_.count; ++x) c_.at(f, e, x) = 0.0f;
  const State initial = state();
  State got[2];
  for (const bool vti : {false, true}) {
    restore_state(initial);
    const auto every_layer_point = [&](const auto& f) { c_.layer.for_each_point(f); };
    every_layer_point([&](const Box3&, int i, int j, int k, std::int64_t) {
      vti ? kernels::tti_cpml_psi_point<true>(g, c_, i, j, k) : kernels::tti_cpml_psi_point<false>(g, c_, i, j, k);
    });
    every_layer_point([&](const Box3& box, int i, int j, int k, std::int64_t x) {
      const physics::TtiRows rows = kernels::tti_rows_of<true>(g, g.p.offset(i, j, k));
      vti ? kernels::tti_cpml_layer_update<true>(g, c_, box, i, j, k, x, rows)
          : kernels::tti_cpml_layer_update<false>(g, c_, box, i, j, k, x, rows);
    });
    got[vti ? 1 : 0] = state();
  }
  const auto mismatches = [](const std::vector<float>& a, const std::vector<float>& b) {
    std::int64_t n = 0;
    for (size_t x = 0; x < a.size(); ++x) n += a[x] != b[x];  // -0 equals 0; NaN counts
    return n;
  };
  EXPECT_GT(mismatches(got[0].grid[0], initial.grid[0]), 0);  // p_next was written
  for (size_t f = 0; f < 2; ++f) EXPECT_EQ(mismatches(got[0].grid[f], got[1].grid[f]), 0) << "grid array " << f;
  for (int f = 0; f < kernels::kTtiCpmlFields; f += 3)
    for (int e = 0; e < 3; ++e) {
      const std::string name = "field " + std::to_string(f) + " axis " + std::to_string(e);
      if (f < kernels::kVPerp && !live(f, e))  // dead psi: untouched by the VTI form
        EXPECT_EQ(mismatches(field(got[1], f, e), field(initial, f, e)), 0) << name;
      else
        EXPECT_EQ(mismatches(field(got[0], f, e), field(got[1], f, e)), 0) << name;
    }
}

}  // namespace
}  // namespace minimod
