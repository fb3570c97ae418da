// Distributed acoustic TTI equals the one-rank run (DESIGN.md §5, §7): under mpirun with 1, 2 or 4
// ranks, every factorisation of the rank count, on a random anisotropic model (tilt over the whole
// 0..180 degrees, so above 90 too, any azimuth, eps >= delta, isotropic points mixed in so the
// PML's auxiliary branch runs), Minimod's damping on some faces, a free surface on one, random
// initial p: traces, final p, p_prev, q, q_prev (at every point), a strided snapshot and the health
// check. Bitwise: every point's update is the same shared function (kernels/tti_point.hpp) with the
// same summation order on any rank, so only wrong halos (faces or edges) or medium could differ.
// Backend and kernel from MINIMOD_TEST_BACKEND / _KERNEL (default cpu; cuda: gmem, bitwise too).
// The same with the CPML layer (TtiLayer::cpml), whose psi and V each rank computes over the
// layer points of its halos (kernels/tti_cpml.hpp, TtiCpmlHalo), cuts kept out of the layers.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "kernels/backends.hpp"
#include "kernels/tti_propagator.hpp"
#include "mpi/distributed_propagator.hpp"
#include "mpi/subdomain.hpp"
#include "mpi_ranks/rank_test_support.hpp"
#include "physics/error.hpp"
#include "physics/tti.hpp"

namespace minimod {
namespace {

using physics::Index3;
using testing::world_rank;

constexpr double kPi = 3.14159265358979323846;

/// A random TTI problem, drawn point by point (rough on purpose: halos see different media).
/// PML: x- 7 (so a quarter along x is all PML), x+ 3, y+ 5, z+ 6; y- none (a rigid halo); the
/// free face has no PML. `cpml`: the CPML layer instead of the sponge (kernels::use_cpml_layer).
/// `vti`: theta 0 everywhere (a VTI model, which takes the VTI form; the azimuth stays random).
kernels::AcousticTtiProblem random_tti(unsigned seed, Index3 n, kernels::Face free_face, bool cpml = false,
                                       bool vti = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  kernels::AcousticTtiProblem p;
  p.grid.shape = n;
  p.grid.spacing = {10, 12, 8};
  p.pml.lo = {7, 0, 4};
  p.pml.hi = {3, 5, 6};
  const int axis = free_face / 2;
  (free_face % 2 == 0 ? p.pml.lo : p.pml.hi)[static_cast<size_t>(axis)] = 0;
  p.free_surface[free_face] = true;
  const double eps_max = 0.3, delta_min = -0.1, v_max = 3500;
  const double dt =
      0.5 * physics::tti_critical_dt(v_max, p.grid.spacing, eps_max, delta_min, eps_max);
  p.damping = pml::make_damping_profiles(n, p.grid.spacing, p.pml,
                                         kernels::tti_layer_profile(dt, v_max * std::sqrt(1 + 2 * eps_max)));
  for (std::int64_t e = 0; e < p.grid.points(); ++e) {
    const double v = 1500 + (v_max - 1500) * u(rng);
    const bool isotropic = u(rng) < 0.25;
    const double eps = isotropic ? 0 : eps_max * u(rng);
    const double delta = isotropic ? 0 : delta_min + (eps - delta_min) * u(rng);
    const float vdt = static_cast<float>(v * dt);
    p.v2dt2.push_back(vdt * vdt);
    p.a.push_back(static_cast<float>(1 + 2 * delta));
    p.b.push_back(static_cast<float>(2 * (eps - delta)));
    p.theta.push_back(vti ? 0.0f : static_cast<float>(kPi * u(rng)));  // 0 .. 180 degrees
    p.phi.push_back(static_cast<float>(2 * kPi * u(rng) - kPi));  // -180 .. 180 degrees
  }
  p.record_q = seed % 2 == 1;
  kernels::finish_problem(p);
  if (cpml) {
    pml::CpmlParams c;
    c.dt = dt;
    c.velocity = v_max * std::sqrt(1 + 2 * eps_max);
    c.frequency = 15;
    kernels::use_cpml_layer(p, c);
  }
  return p;
}

const std::vector<std::string> kFields = {"p", "p_prev", "q", "q_prev"};

/// Runs `problem` from a random state on one rank and then on every decomposition of the world
/// into the factorisations the cut limits allow (mpi::cut_limits), and compares (rank 0).
/// Returns how many decompositions of more than one rank ran.
int expect_every_decomposition_equals_one_rank(const kernels::AcousticTtiProblem& problem, unsigned seed) {
  const std::string backend = testing::env_or("MINIMOD_TEST_BACKEND", "cpu");
  const std::string kernel =
      backend == "cpu" ? "reference" : testing::env_or("MINIMOD_TEST_KERNEL", "gmem");
  // Every point takes the same family on any rank (the regions are the global ones clipped), so
  // all families should be bitwise; a family whose sum order depends on a point's place in its
  // tile would not be, hence the iso test's round-off bound for the families other than gmem.
  const double tol = backend == "cpu" || kernel == "gmem" ? 0.0 : 2e-6;
  const Index3 shape = problem.grid.shape;
  const int steps = std::stoi(testing::env_or("MINIMOD_TEST_STEPS", "12"));  // 1: debugging a failure
  const testing::RunSpec spec{steps, kFields, problem.record_q ? "q" : "p", {{1, 2, 0}, {23, 19, 25}}};
  testing::Outcome ref;
  if (world_rank() == 0) {
    if (backend == "cuda") kernels::select_gpu(0);
    auto whole = kernels::make_acoustic_tti(problem, backend, kernel);
    ref = testing::run_from_random_state(*whole, shape, seed, spec);
    EXPECT_TRUE(ref.health.finite);
    EXPECT_GT(ref.health.max_abs, 0.1f);
  }
  int ran = 0;
  for (const auto& dims : testing::factorisations(testing::world_size())) {
    mpi::Decomposition d;
    try {
      d = mpi::decompose(shape, dims, mpi::cut_limits(problem));
    } catch (const ConfigError&) {  // no cuts outside the layers along some axis (every rank agrees)
      continue;
    }
    mpi::DistributedOptions o;
    o.backend = backend;
    o.kernel = kernel;
    o.local_rank = world_rank();
    o.transport = testing::env_or(
        "MINIMOD_TEST_TRANSPORT",
        backend == "cuda" && kernels::cuda_device_count() < testing::world_size() ? "host"
                                                                                  : "auto");
    mpi::DistributedPropagator p(problem, d, MPI_COMM_WORLD, o);
    const auto got = testing::run_from_random_state(p, shape, seed, spec);
    if (d.ranks() > 1) {  // the overlapped step ran and was timed (CUDA events on the GPU): every step
      ++ran;
      const auto split = p.step_split();
      EXPECT_EQ(split.steps, steps) << d.dims_string();
      EXPECT_GT(split.shell, 0.0) << d.dims_string();
    }
    if (world_rank() != 0) continue;
    testing::expect_same_outcome(ref, got, kFields, tol,
                                 d.dims_string() + " (" + p.transport() + ")", backend == "cpu");
  }
  return ran;
}

bool skip_without_gpu() {
  return testing::env_or("MINIMOD_TEST_BACKEND", "cpu") == "cuda" && kernels::cuda_device_count() == 0;
}

class TtiDistributed : public ::testing::TestWithParam<kernels::Face> {};

TEST_P(TtiDistributed, EveryDecompositionEqualsTheOneRankRun) {
  if (skip_without_gpu()) GTEST_SKIP() << "no CUDA device";
  // 4 ranks along any axis; sizes divide nothing.
  const unsigned seed = 4321u + static_cast<unsigned>(GetParam());
  expect_every_decomposition_equals_one_rank(random_tti(seed, {26, 22, 25}, GetParam()), seed);
}

class TtiCpmlDistributed : public ::testing::TestWithParam<kernels::Face> {};

TEST_P(TtiCpmlDistributed, EveryDecompositionEqualsTheOneRankRun) {
  if (skip_without_gpu()) GTEST_SKIP() << "no CUDA device";
  // Cuts stay the halo width outside each axis's layer (x: 11..19 or 11..22; z: 8..18 or 4..18;
  // y: ..13), which leaves 4 ranks room along every axis but y.
  const unsigned seed = 8765u + static_cast<unsigned>(GetParam());
  const auto problem = random_tti(seed, {26, 22, 28}, GetParam(), true);
  ASSERT_EQ(problem.layer, kernels::TtiLayer::cpml);
  const int ran = expect_every_decomposition_equals_one_rank(problem, seed);
  if (testing::world_size() > 1) EXPECT_GE(ran, 2) << "decompositions of more than one rank";
}

// A VTI model with the CPML layer: the VTI form's rows and, on the GPU, the CPML's live rows only
// (kernels/tti_cpml.hpp, perp_row_live), the halos' psi and V included.
TEST(TtiCpmlVtiDistributed, EveryDecompositionEqualsTheOneRankRun) {
  if (skip_without_gpu()) GTEST_SKIP() << "no CUDA device";
  const unsigned seed = 9127u;
  const auto problem = random_tti(seed, {26, 22, 28}, kernels::kZLo, true, true);
  ASSERT_TRUE(problem.vti);
  const int ran = expect_every_decomposition_equals_one_rank(problem, seed);
  if (testing::world_size() > 1) EXPECT_GE(ran, 2) << "decompositions of more than one rank";
}

INSTANTIATE_TEST_SUITE_P(CpmlFreeFaces, TtiCpmlDistributed, ::testing::Values(kernels::kZLo, kernels::kXHi),
                         [](const auto& info) {
                           return std::string(info.param == kernels::kZLo ? "FreeTop" : "FreeXHi");
                         });

INSTANTIATE_TEST_SUITE_P(FreeFaces, TtiDistributed, ::testing::Values(kernels::kZLo, kernels::kXHi),
                         [](const auto& info) {
                           return std::string(info.param == kernels::kZLo ? "FreeTop" : "FreeXHi");
                         });

TEST(TtiSubdomain, HaloMediumIsTheNeighboursNotTheEdgeExtension) {
  // The medium a subdomain reads in its halo is the global medium there (clamped only beyond the
  // global boundary): cut a 2-rank split and compare the cut theta with the global one.
  const Index3 shape{16, 12, 14};
  const auto g = random_tti(7, shape, kernels::kZLo);
  kernels::HaloFaces faces;
  faces.neighbour[kernels::kXLo] = true;
  const physics::Box3 box{{8, 0, 0}, {8, 12, 14}};
  const auto s = mpi::subdomain_problem(g, box, faces);
  const auto gm = kernels::medium_box(g.grid), sm = kernels::medium_box(s.grid);
  ASSERT_EQ(s.theta.size(), static_cast<size_t>(sm.points()));
  auto at = [](const std::vector<float>& v, const physics::Box3& m, int i, int j, int k) {
    return v[(static_cast<size_t>(i - m.lo.i) * m.n.j + (j - m.lo.j)) * m.n.k + (k - m.lo.k)];
  };
  for (int i = sm.lo.i; i < sm.hi().i; ++i)
    for (int j = sm.lo.j; j < sm.hi().j; ++j)
      for (int k = sm.lo.k; k < sm.hi().k; ++k)
        ASSERT_EQ(at(s.theta, sm, i, j, k), at(g.theta, gm, i + box.lo.i, j, k))
            << i << " " << j << " " << k;
  EXPECT_NE(at(s.theta, sm, -1, 3, 3), at(s.theta, sm, 0, 3, 3));  // not an edge copy
}

}  // namespace
}  // namespace minimod
