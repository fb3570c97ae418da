// Minimod's damped update streamed over the PML slabs (kernels/cuda/pml.cu, pml_stream's block
// body) run by host threads (kernels/cuda/block_emulation.hpp): needs no GPU. Random
// u, u_next (= u_prev, in place), v2dt2, aux (halo included) and eta profiles on an odd grid;
// Minimod's six slabs around an off-centre inner box, as the propagator passes them (and cut to a
// sub-box, as a shell or an MPI part cuts them); several i chunk lengths; u_prev in place or
// apart. Every output (u_next and aux) must equal pml/pml_update.hpp's formulas in the CPU
// reference's order to fp32 round-off, and nothing outside the slabs may change. This checks the indexing, the tiling
// (thin and wide slabs, partial tiles), the staging and the barriers, not the device code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cuda/emulation.hpp"
#include "physics/stencil.hpp"
#include "physics/view3.hpp"
#include "pml/pml_update.hpp"
#include "tests/gpu/host_fields.hpp"

namespace minimod {
namespace {

using physics::Box3;
using physics::Index3;

/// Minimod's cut of the grid around `inner`: two x faces over the whole (j, k) plane, two y
/// faces over the inner i range, two z faces over the inner (i, j) range.
std::vector<Box3> minimod_slabs(Index3 n, const Box3& inner) {
  const Index3 lo = inner.lo, hi = inner.hi();
  return {Box3{{0, 0, 0}, {lo.i, n.j, n.k}},
          Box3{{hi.i, 0, 0}, {n.i - hi.i, n.j, n.k}},
          Box3{{lo.i, 0, 0}, {inner.n.i, lo.j, n.k}},
          Box3{{lo.i, hi.j, 0}, {inner.n.i, n.j - hi.j, n.k}},
          Box3{{lo.i, lo.j, 0}, {inner.n.i, inner.n.j, lo.k}},
          Box3{{lo.i, lo.j, hi.k}, {inner.n.i, inner.n.j, n.k - hi.k}}};
}

/// `separate_prev`: u_prev from an array of its own (PmlStepArgs::u_prev, as the two-step
/// families pass it), not from u_next (in place). Points of the boxes inside `undamped`
/// (PmlStepArgs::undamped) must take the plain leapfrog and keep their aux. `zero_k_halo`
/// (PmlStepArgs::zero_k_halo): the k halo cells of the written rows may become zero (u_next and
/// aux), and some must.
void check(Index3 n, const std::vector<Box3>& boxes, int chunk, bool separate_prev = false, Box3 undamped = {},
           bool zero_k_halo = false) {
  SCOPED_TRACE("chunk " + std::to_string(chunk) + (separate_prev ? ", u_prev apart" : "") +
               (undamped.empty() ? "" : ", inner columns given") + (zero_k_halo ? ", k halo zeroed" : ""));
  testing::HostFields h(n, 11u + static_cast<unsigned>(chunk));
  const auto& layout = h.layout;
  auto &u = h.u, &u_next = h.u_next, &v2dt2 = h.v2dt2, &aux = h.aux;
  auto& eta = h.eta;
  const std::vector<float> next_before(u_next.data(), u_next.data() + layout.elements());
  const std::vector<float> aux_before(aux.data(), aux.data() + layout.elements());
  std::vector<float> prev(next_before);
  for (auto& x : prev) x = 0.5f - 0.75f * x;  // differs from u_next everywhere

  kernels::cuda::PmlStepArgs a{};
  a.u = layout.view<const float>(u.data());
  a.u_next = layout.view(u_next.data());
  if (separate_prev) a.u_prev = layout.view<const float>(prev.data());
  a.v2dt2 = layout.view<const float>(v2dt2.data());
  a.aux = layout.view(aux.data());
  a.laplacian = physics::make_laplacian_coeffs(10, 12, 8);
  a.eta_x = eta[0].data();
  a.eta_y = eta[1].data();
  a.eta_z = eta[2].data();
  const float inv_4h2[3] = {1.0f / 400, 1.0f / 576, 1.0f / 256};
  for (int d = 0; d < 3; ++d) a.inv_4h2[d] = inv_4h2[d];
  a.undamped = undamped;
  a.zero_k_halo = zero_k_halo;
  kernels::cuda::emulate_pml_stream(a, boxes, chunk);

  const float* ex = eta[0].data() + 1;
  const float* ey = eta[1].data() + 1;
  const float* ez = eta[2].data() + 1;
  const auto uv = a.u;
  std::int64_t bad = 0, changed_outside = 0, checked = 0, undamped_points = 0, halo_zeroed = 0;
  double worst = 0;
  for (int i = -4; i < n.i + 4; ++i)
    for (int j = -4; j < n.j + 4; ++j)
      for (int k = -4; k < n.k + 4; ++k) {
        const std::int64_t o = uv.offset(i, j, k) - uv.offset(-4, -4, -4);
        const float got = u_next.data()[o], got_aux = aux.data()[o];
        bool inside = false;
        for (const auto& b : boxes) inside = inside || b.contains(i, j, k);
        bool row_written = false;  // a k halo cell of a row some slab writes
        for (const auto& b : boxes) row_written = row_written || b.contains(i, j, k < 0 ? 0 : n.k - 1);
        if (zero_k_halo && (k < 0 || k >= n.k) && row_written && i >= 0 && i < n.i && j >= 0 && j < n.j &&
            got == 0.0f && got_aux == 0.0f) {
          ++halo_zeroed;
          continue;
        }
        if (!inside) {
          if (std::memcmp(&got, &next_before[static_cast<size_t>(o)], 4) != 0) ++changed_outside;
          if (std::memcmp(&got_aux, &aux_before[static_cast<size_t>(o)], 4) != 0) ++changed_outside;
          continue;
        }
        ++checked;
        const auto at = [&](int di, int dj, int dk) { return uv(i + di, j + dj, k + dk); };
        const float lap = physics::laplacian8(at, a.laplacian);
        const float eta_ijk = ex[i] + ey[j] + ez[k];
        const float a0 = aux_before[static_cast<size_t>(o)];
        const float u_prev = (separate_prev ? prev : next_before)[static_cast<size_t>(o)];
        if (undamped.contains(i, j, k)) {
          ++undamped_points;
          const float want = physics::leapfrog(u_prev, uv(i, j, k), a.v2dt2(i, j, k), lap);
          const double err = std::fabs(double(got) - want) / (1.0 + std::fabs(double(want)));
          if (!(err <= 2e-6) || std::memcmp(&got_aux, &a0, 4) != 0) ++bad;
          if (!(err <= worst)) worst = err;
          continue;
        }
        const float want = pml::pml_u_next(u_prev, uv(i, j, k), a.v2dt2(i, j, k), lap, a0, eta_ijk);
        const float grad = pml::pml_gradient_term(ex[i + 1], ex[i - 1], at(1, 0, 0), at(-1, 0, 0), inv_4h2[0]) +
                           pml::pml_gradient_term(ey[j + 1], ey[j - 1], at(0, 1, 0), at(0, -1, 0), inv_4h2[1]) +
                           pml::pml_gradient_term(ez[k + 1], ez[k - 1], at(0, 0, 1), at(0, 0, -1), inv_4h2[2]);
        const float want_aux = pml::pml_aux_next(a0, eta_ijk, grad);
        const double err = std::fabs(double(got) - want) / (1.0 + std::fabs(double(want)));
        const double err_aux = std::fabs(double(got_aux) - want_aux) / (1.0 + std::fabs(double(want_aux)));
        if (!(err <= 2e-6) || !(err_aux <= 2e-6)) ++bad;
        if (!(err <= worst)) worst = err;
        if (!(err_aux <= worst)) worst = err_aux;
      }
  EXPECT_GT(checked, 0);
  EXPECT_EQ(undamped_points > 0, !undamped.empty()) << "the case gives the kernel no inner points";
  EXPECT_EQ(halo_zeroed > 0, zero_k_halo) << "k halo cells zeroed: " << halo_zeroed;
  EXPECT_EQ(bad, 0) << "of " << checked << " points; worst relative error " << worst;
  EXPECT_EQ(changed_outside, 0);
}

const Index3 kGrid{23, 41, 70};             // k wider than two tiles: thin z faces and tiled x / y faces
const Box3 kInner{{5, 9, 6}, {12, 26, 57}};  // unequal widths, one 5 thin

/// Minimod's slabs cut to a sub-box, as a shell or an MPI part cuts them.
std::vector<Box3> cut_slabs() {
  std::vector<Box3> cut;
  const Box3 part{{3, 4, 2}, {17, 30, 61}};
  for (const auto& b : minimod_slabs(kGrid, kInner)) {
    const Box3 c = physics::intersect(b, part);
    if (!c.empty()) cut.push_back(c);
  }
  return cut;
}

TEST(PmlStreamEmulation, EqualsTheDampedUpdateOnEverySlab) {
  for (int chunk : {64, 5}) check(kGrid, minimod_slabs(kGrid, kInner), chunk);
}

TEST(PmlStreamEmulation, SlabsCutToASubBoxEqualTheDampedUpdate) { check(kGrid, cut_slabs(), 7); }

TEST(PmlStreamEmulation, ReadsUPrevFromItsOwnArray) {
  check(kGrid, minimod_slabs(kGrid, kInner), 11, true);
}

TEST(PmlStreamEmulation, InnerColumnsGivenToTheLayerTakeThePlainLeapfrog) {
  // As a two-step family's pairs pass them (acoustic_iso_cuda.cu, line_split): the z faces grown
  // into the inner box by a few columns, which are inner points (PmlStepArgs::undamped).
  std::vector<Box3> slabs = minimod_slabs(kGrid, kInner);
  slabs[4].n.k += 2;  // z-: two inner columns
  slabs[5].lo.k -= 3;  // z+: three
  slabs[5].n.k += 3;
  for (int chunk : {64, 5}) check(kGrid, slabs, chunk, true, kInner);
  check(kGrid, slabs, 7, true, kInner, true);  // and the rows' k halo cells zeroed, as pairs ask
}

}  // namespace
}  // namespace minimod
