// The streamed CPML passes (kernels/cuda/pml.cu, the default CPML kernels) run by host threads
// (kernels/cuda/block_emulation.hpp): needs no GPU. Random u, u_next, v2dt2, psi and zeta (halo
// included, psi and zeta also where an axis is undamped, so a wrongly staged cell shows) on an odd
// grid, CPML profiles with unequal widths (and a free-surface face), both passes over the PML
// slabs as the propagator runs them (psi on every slab first, then the update, also on slabs cut
// to a sub-box as a shell or MPI part cuts them), several i chunk lengths. Every output must equal
// the pml/cpml.hpp formulas in the point kernels' order to fp32 round-off, and nothing else may
// change. This checks the indexing, staging, psi_x window and barriers, not the device code.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/aligned_buffer.hpp"
#include "kernels/cuda/emulation.hpp"
#include "physics/stencil.hpp"
#include "physics/view3.hpp"
#include "pml/cpml.hpp"
#include "pml/regions.hpp"

namespace minimod {
namespace {

using physics::Box3;
using physics::Index3;
using physics::View3;

constexpr int kFields = 9;
const char* const kNames[kFields] = {"u",     "u_next", "v2dt2",  "psi_x", "psi_y",
                                     "psi_z", "zeta_x", "zeta_y", "zeta_z"};
enum Field { kU, kUNext, kV2dt2, kPsi, kZeta = kPsi + 3 };

struct CpmlProblem {
  Index3 n;
  physics::FieldLayout layout;
  std::vector<kernels::AlignedBuffer> f;  // kNames order, one layout
  pml::CpmlProfiles profiles;
  pml::AxisDerivatives w;

  CpmlProblem(Index3 shape, const pml::PmlWidths& widths, unsigned seed)
      : n(shape), layout(physics::FieldLayout::make(Box3{{0, 0, 0}, shape}, physics::kRadius)) {
    const std::array<double, 3> h = {10.0, 12.0, 8.0};  // m
    pml::CpmlParams p;
    p.dt = 1e-3;          // s
    p.velocity = 3000.0;  // m/s
    profiles = pml::make_cpml_profiles(shape, h, widths, p);
    w = pml::make_axis_derivatives(h);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> any(-1, 1), v(0.05f, 0.4f);
    for (int x = 0; x < kFields; ++x) {
      f.emplace_back(layout.elements());
      for (std::int64_t e = 0; e < layout.elements(); ++e)  // halo and row padding too
        f[x].data()[e] = x == kV2dt2 ? v(rng) : any(rng);
    }
  }
  std::vector<std::vector<float>> copy() const {
    std::vector<std::vector<float>> c;
    for (const auto& b : f) c.emplace_back(b.data(), b.data() + b.size());
    return c;
  }
  template <class T>
  View3<T> view(T* base) const {
    return layout.view(base);
  }
  kernels::cuda::PmlStepArgs args() const {
    kernels::cuda::PmlStepArgs a{};
    a.u = view<const float>(f[kU].data());
    a.u_next = view(f[kUNext].data());
    a.v2dt2 = view<const float>(f[kV2dt2].data());
    a.derivatives = w;
    for (int d = 0; d < 3; ++d) {
      a.psi[d] = view(f[kPsi + d].data());
      a.zeta[d] = view(f[kZeta + d].data());
      a.a[d] = profiles.a[d].data();
      a.b[d] = profiles.b[d].data();
    }
    return a;
  }
};

/// The point kernels' CPML passes (cpml_psi, cpml_update in pml.cu: the CPU's formulas) on host
/// arrays: psi on every box of `psi_boxes`, then u_next and zeta on every box of `boxes`.
void reference(const CpmlProblem& p, std::vector<std::vector<float>>& r,
               const std::vector<Box3>& psi_boxes, const std::vector<Box3>& boxes) {
  const auto v = [&](int x) { return p.view(r[x].data()); };
  const auto u = v(kU);
  const auto& prof = p.profiles;
  for (const auto& b : psi_boxes)
    for (int i = b.lo.i; i < b.hi().i; ++i)
      for (int j = b.lo.j; j < b.hi().j; ++j)
        for (int k = b.lo.k; k < b.hi().k; ++k) {
          const auto at = [&](int di, int dj, int dk) { return u(i + di, j + dj, k + dk); };
          const int along[3] = {i, j, k};
          float* psi[3] = {&v(kPsi)(i, j, k), &v(kPsi + 1)(i, j, k), &v(kPsi + 2)(i, j, k)};
          const auto a = [&](int d) { return prof.a[d][along[d]]; };
          const auto bb = [&](int d) { return prof.b[d][along[d]]; };
          if (bb(0) != 0.0f) *psi[0] = pml::cpml_psi_next<0>(*psi[0], a(0), bb(0), at, p.w);
          if (bb(1) != 0.0f) *psi[1] = pml::cpml_psi_next<1>(*psi[1], a(1), bb(1), at, p.w);
          if (bb(2) != 0.0f) *psi[2] = pml::cpml_psi_next<2>(*psi[2], a(2), bb(2), at, p.w);
        }
  for (const auto& b : boxes)
    for (int i = b.lo.i; i < b.hi().i; ++i)
      for (int j = b.lo.j; j < b.hi().j; ++j)
        for (int k = b.lo.k; k < b.hi().k; ++k) {
          const auto at = [&](int di, int dj, int dk) { return u(i + di, j + dj, k + dk); };
          const int along[3] = {i, j, k};
          float t[3];
          for (int d = 0; d < 3; ++d) {
            const float a = prof.a[d][along[d]], bb = prof.b[d][along[d]];
            const auto psi = v(kPsi + d);
            const auto at_psi = [&](int di, int dj, int dk) { return psi(i + di, j + dj, k + dk); };
            float& zeta = v(kZeta + d)(i, j, k);
            if (bb == 0.0f)
              t[d] = d == 0 ? pml::second_derivative8<0>(at, p.w)
                            : (d == 1 ? pml::second_derivative8<1>(at, p.w)
                                      : pml::second_derivative8<2>(at, p.w));
            else
              t[d] = d == 0 ? pml::cpml_axis_term<0>(at, at_psi, a, bb, zeta, p.w)
                            : (d == 1 ? pml::cpml_axis_term<1>(at, at_psi, a, bb, zeta, p.w)
                                      : pml::cpml_axis_term<2>(at, at_psi, a, bb, zeta, p.w));
          }
          float& un = v(kUNext)(i, j, k);
          un = physics::leapfrog(un, u(i, j, k), v(kV2dt2)(i, j, k), t[0] + t[1] + t[2]);
        }
}

/// Every field, every element of the allocation: those the reference changed within 2e-6 of the
/// field's largest value (fp32 round-off: the sums are in the same order, so ~0 is expected), the
/// others bit for bit as before.
::testing::AssertionResult fields_match(const CpmlProblem& p,
                                        const std::vector<std::vector<float>>& before,
                                        const std::vector<std::vector<float>>& ref) {
  const auto lo = p.layout.with_halo().lo;
  const auto u = p.view(p.f[kU].data());
  std::string report;
  std::int64_t changed = 0;
  for (int x = 0; x < kFields; ++x) {
    double max_ref = 0;
    for (std::int64_t e = 0; e < p.layout.elements(); ++e)
      max_ref = std::fmax(max_ref, std::fabs(ref[x][e]));
    std::int64_t bad = 0, bad_outside = 0, worst_e = -1;
    double worst = 0;
    for (std::int64_t e = 0; e < p.layout.elements(); ++e) {
      const float got = p.f[x].data()[e];
      if (std::memcmp(&ref[x][e], &before[x][e], 4) == 0) {
        if (std::memcmp(&got, &before[x][e], 4) != 0) ++bad_outside, worst_e = e;
        continue;
      }
      ++changed;
      const double err = std::fabs(double(got) - ref[x][e]) / max_ref;
      if (!(err <= 2e-6)) ++bad;
      if (!(err <= worst)) worst = err, worst_e = e;
    }
    if (bad || bad_outside) {
      const std::int64_t e = worst_e;  // elements from the halo corner lo
      const int i = static_cast<int>(e / u.sx) + lo.i;
      const int j = static_cast<int>(e % u.sx / u.sy) + lo.j, k = static_cast<int>(e % u.sy) + lo.k;
      report += std::string(kNames[x]) + ": " + std::to_string(bad) + " wrong, " +
                std::to_string(bad_outside) + " changed outside; worst at (" + std::to_string(i) +
                "," + std::to_string(j) + "," + std::to_string(k) + ") got " +
                std::to_string(p.f[x].data()[worst_e]) + " want " +
                std::to_string(ref[x][worst_e]) + " (relative " + std::to_string(worst) + ")\n";
    }
  }
  if (changed == 0) return ::testing::AssertionFailure() << "the reference changed nothing";
  if (!report.empty()) return ::testing::AssertionFailure() << report;
  return ::testing::AssertionSuccess() << changed << " outputs match";
}

std::vector<Box3> pml_boxes(const std::vector<pml::Region>& regions) {
  std::vector<Box3> b;
  for (const auto& r : regions)
    if (r.is_pml) b.push_back(r.box);
  return b;
}

/// The slabs of the update pass as a whole-grid step gives them (acoustic_iso_cuda.cu,
/// line_split): the z slabs grown into the inner box by `grow_lo` and `grow_hi` columns, the y and
/// x slabs ending there; the inner box's points among them are PmlStepArgs::undamped.
std::vector<Box3> grown_slabs(const std::vector<pml::Region>& regions, int grow_lo, int grow_hi) {
  const Box3 in = regions.front().box;  // make_regions: the inner region first
  std::vector<Box3> out;
  for (const auto& r : regions) {
    if (!r.is_pml) continue;
    Box3 b = r.box;
    if (b.hi().k == in.lo.k) {
      b.n.k += grow_lo;
    } else if (b.lo.k == in.hi().k) {
      b.lo.k -= grow_hi;
      b.n.k += grow_hi;
    } else {
      b.lo.k += grow_lo;
      b.n.k -= grow_lo + grow_hi;
    }
    out.push_back(b);
  }
  return out;
}

/// Both emulated passes against the reference; the update on the slabs cut to `part`. `grow`:
/// the update on grown_slabs instead, the inner columns with the inner update, and the k halo
/// cells of the written rows zeroed (PmlStepArgs::zero_k_halo): u_next may be zero there, and
/// somewhere is.
void check(const Index3 n, const pml::PmlWidths& widths, const Box3& part, int chunk,
           unsigned seed, std::array<int, 2> grow = {0, 0}) {
  SCOPED_TRACE("chunk " + std::to_string(chunk) + ", part lo (" + std::to_string(part.lo.i) + "," +
               std::to_string(part.lo.j) + "," + std::to_string(part.lo.k) + "), seed " +
               std::to_string(seed));
  CpmlProblem p(n, widths, seed);
  const auto regions = pml::make_regions(n, widths);
  const std::vector<Box3> psi_boxes = pml_boxes(regions);
  const bool grown = grow[0] + grow[1] > 0;
  const std::vector<Box3> boxes =
      grown ? grown_slabs(regions, grow[0], grow[1]) : pml_boxes(pml::clip_regions(regions, part));
  ASSERT_GE(psi_boxes.size(), 5u);
  const auto before = p.copy();
  auto ref = before;
  const Box3 inner = regions.front().box;
  const auto c = physics::make_laplacian_coeffs(10, 12, 8);  // CpmlProblem's spacings
  std::vector<Box3> damped_boxes;  // the reference's CPML update off the inner columns
  for (const auto& b : boxes)
    for (int i = b.lo.i; i < b.hi().i && grown; ++i)
      for (int j = b.lo.j; j < b.hi().j; ++j)
        for (int k = b.lo.k; k < b.hi().k; ++k)
          if (inner.contains(i, j, k)) {
            const auto u = p.view(ref[kU].data());
            const auto at = [&](int di, int dj, int dk) { return u(i + di, j + dj, k + dk); };
            float& un = p.view(ref[kUNext].data())(i, j, k);
            un = physics::leapfrog(un, u(i, j, k), p.view(ref[kV2dt2].data())(i, j, k), physics::laplacian8(at, c));
          }
  for (const auto& b : boxes) {
    if (!grown) {
      damped_boxes.push_back(b);
      continue;
    }
    for (const auto& r : regions)  // the grown slabs less the inner box: the PML slabs' parts
      if (r.is_pml && !physics::intersect(r.box, b).empty()) damped_boxes.push_back(physics::intersect(r.box, b));
  }
  reference(p, ref, psi_boxes, damped_boxes);
  auto a = p.args();
  a.laplacian = c;
  if (grown) {
    a.undamped = inner;
    a.zero_k_halo = true;
  }
  kernels::cuda::emulate_cpml_psi_stream(a, psi_boxes, chunk);
  kernels::cuda::emulate_cpml_stream(a, boxes, chunk);
  std::int64_t zeroed = 0;
  if (grown) {  // u_next's k halo cells of written rows: zero (kept in the reference) or as before
    const auto got = p.view(p.f[kUNext].data());
    auto want = p.view(ref[kUNext].data());
    for (int i = 0; i < n.i; ++i)
      for (int j = 0; j < n.j; ++j)
        for (int k : {-4, -3, -2, -1, n.k, n.k + 1, n.k + 2, n.k + 3}) {
          bool row = false;
          for (const auto& b : boxes) row = row || b.contains(i, j, k < 0 ? 0 : n.k - 1);
          if (row && got(i, j, k) == 0.0f) want(i, j, k) = 0.0f, ++zeroed;
        }
    EXPECT_GT(zeroed, 0) << "no k halo cell zeroed";
  }
  EXPECT_TRUE(fields_match(p, before, ref));
}

TEST(CpmlStreamEmulation, BothPassesEqualTheCpmlFormulasOnEverySlab) {
  const Index3 n{23, 19, 29};
  pml::PmlWidths widths;
  widths.lo = {3, 5, 4};
  widths.hi = {6, 2, 7};
  const Box3 all{{0, 0, 0}, n};
  for (int chunk : {64, 5, 2}) check(n, widths, all, chunk, 11u + chunk);
  check(n, widths, Box3{{2, 1, 3}, {17, 16, 21}}, 4, 29u);  // slabs cut at odd offsets
}

TEST(CpmlStreamEmulation, SlabsWiderThanATileEqualTheFormulas) {
  // k spans over 32 points: several 32-wide k tiles and several j tiles per slab, so the halos
  // between tiles come from memory, not from the slab's edge.
  const Index3 n{12, 21, 70};
  pml::PmlWidths widths;
  widths.lo = {3, 4, 5};
  widths.hi = {4, 2, 6};
  for (int chunk : {64, 5}) check(n, widths, Box3{{0, 0, 0}, n}, chunk, 53u + chunk);
}

TEST(CpmlStreamEmulation, FreeSurfaceFaceHasNoSlab) {
  const Index3 n{23, 19, 29};
  pml::PmlWidths widths;  // z lo a free surface: width 0, no z- slab
  widths.lo = {4, 2, 0};
  widths.hi = {3, 5, 6};
  for (int chunk : {64, 3}) check(n, widths, Box3{{0, 0, 0}, n}, chunk, 41u + chunk);
}

TEST(CpmlStreamEmulation, InnerColumnsGivenToTheUpdateTakeTheInnerUpdate) {
  // As a whole-grid step gives them (line_split): the z slabs grown by inner columns, which take
  // the inner update (laplacian8, no zeta), and the rows' k halo cells zeroed.
  const Index3 n{12, 21, 70};
  pml::PmlWidths widths;
  widths.lo = {3, 4, 5};
  widths.hi = {4, 2, 6};
  for (int chunk : {64, 5}) check(n, widths, Box3{{0, 0, 0}, n}, chunk, 71u + chunk, {3, 2});
}

}  // namespace
}  // namespace minimod
