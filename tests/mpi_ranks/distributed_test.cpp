// Distributed runs equal the one-rank run (DESIGN.md §7): run under mpirun with 1, 2, 4 or 8
// ranks, every decomposition of the rank count (1D, 2D, 3D) on random models and random initial
// fields, both PML kinds, with and without a free surface: receiver traces, the final u and u_prev
// at every point, strided snapshots and the health check are compared with one propagator on the
// whole grid. Bitwise on the CPU and with CUDA's gmem; other CUDA families use a different
// summation order in the shell than in the interior (gmem there), so they get a round-off bound.
// Backend, kernel and transport from MINIMOD_TEST_BACKEND / _KERNEL / _TRANSPORT (default cpu).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "kernels/backends.hpp"
#include "mpi/comm.hpp"
#include "mpi/distributed_propagator.hpp"
#include "mpi/subdomain.hpp"
#include "physics/error.hpp"
#include "random_problem.hpp"

namespace minimod {
namespace {

using kernels::NodeWeight;
using physics::Box3;
using physics::Index3;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

/// Every (px, py, pz) with px * py * pz = ranks.
std::vector<std::array<int, 3>> factorisations(int ranks) {
  std::vector<std::array<int, 3>> out;
  for (int px = 1; px <= ranks; ++px)
    for (int py = 1; py <= ranks; ++py)
      if (ranks % (px * py) == 0) out.push_back({px, py, ranks / (px * py)});
  return out;
}

/// `count` points of `per` nodes each at random grid positions, random weights.
std::vector<NodeWeight> random_nodes(std::mt19937& rng, Index3 n, int count, int per) {
  std::vector<NodeWeight> v;
  std::uniform_real_distribution<float> w(-1, 1);
  for (int p = 0; p < count; ++p)
    for (int e = 0; e < per; ++e) {
      const Index3 at{static_cast<int>(rng() % static_cast<unsigned>(n.i)),
                      static_cast<int>(rng() % static_cast<unsigned>(n.j)),
                      static_cast<int>(rng() % static_cast<unsigned>(n.k))};
      bool dup = false;  // one node per grid point and receiver, as interpolation gives
      for (const auto& x : v) dup |= x.point == p && x.node == at;
      if (!dup) v.push_back({at, w(rng), p});
    }
  return v;
}

struct Outcome {
  std::vector<float> traces, u, u_prev, snapshot;
  kernels::FieldHealth health;
};

constexpr int kSteps = 9;
const Box3 kSnapshotBox{{3, 2, 1}, {29, 31, 40}};
const Index3 kSnapshotStride{2, 3, 2};

Outcome run(kernels::Propagator& p, const kernels::AcousticIsoProblem& problem, unsigned seed) {
  std::mt19937 rng(seed);
  const Index3 n = problem.grid.shape;
  const auto src = random_nodes(rng, n, 1, 8);
  const auto rec = random_nodes(rng, n, 23, 8);
  p.write_state(testing::random_field(seed + 1, problem.grid.points()).data(),
                testing::random_field(seed + 2, problem.grid.points()).data());
  p.set_receivers(rec, 23);
  for (int s = 0; s < kSteps; ++s) p.step(src, std::sin(0.7f * static_cast<float>(s + 1)));
  Outcome o;
  p.take_traces(o.traces);
  const bool root = world_rank() == 0;
  o.u.resize(root ? static_cast<size_t>(problem.grid.points()) : 0);
  o.u_prev.resize(o.u.size());
  p.read_field("u", problem.grid.box(), {1, 1, 1}, o.u.data());
  p.read_field("u_prev", problem.grid.box(), {1, 1, 1}, o.u_prev.data());
  const Index3 sn{(kSnapshotBox.n.i + 1) / 2, (kSnapshotBox.n.j + 2) / 3, (kSnapshotBox.n.k + 1) / 2};
  o.snapshot.resize(root ? static_cast<size_t>(sn.i) * sn.j * sn.k : 0);
  p.read_field("u", kSnapshotBox, kSnapshotStride, o.snapshot.data());
  o.health = p.health();
  return o;
}

/// Largest |a - b| relative to max |a| (0 when bitwise equal).
double worst(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0, d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    m = std::max(m, double(std::fabs(a[i])));
    if (!(a[i] == b[i])) d = std::max(d, std::fabs(double(a[i]) - b[i]));
  }
  return d == 0 ? 0 : d / m;
}

struct Case {
  pml::PmlKind kind;
  bool free_top;
};

class Distributed : public ::testing::TestWithParam<Case> {};

TEST_P(Distributed, EveryDecompositionEqualsTheOneRankRun) {
  const std::string backend = env_or("MINIMOD_TEST_BACKEND", "cpu");
  const std::string kernel = env_or("MINIMOD_TEST_KERNEL", "gmem");
  if (backend == "cuda" && kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const bool bitwise = backend == "cpu" || kernel == "gmem";
  const double tol = bitwise ? 0.0 : 2e-6;
  // Large enough for 8 ranks along any axis outside the CPML's cut limits; sizes divide nothing.
  const Index3 shape{61, 47, 53};
  const unsigned seed = 1234u + static_cast<unsigned>(GetParam().kind == pml::PmlKind::cpml) * 7u +
                        GetParam().free_top * 3u;
  const auto problem = testing::random_problem(seed, shape, GetParam().free_top, GetParam().kind);
  Outcome ref;
  if (world_rank() == 0) {
    if (backend == "cuda") kernels::select_gpu(0);  // the reference runs on the first GPU
    auto whole = kernels::make_acoustic_iso(problem, backend, backend == "cpu" ? "reference" : kernel);
    ref = run(*whole, problem, seed);
  }
  for (const auto& dims : factorisations(world_size())) {
    mpi::Decomposition d;
    try {
      d = mpi::decompose(shape, dims, mpi::cut_limits(problem));
    } catch (const ConfigError& e) {
      ADD_FAILURE() << dims[0] << "x" << dims[1] << "x" << dims[2] << ": " << e.what();
      continue;
    }
    mpi::DistributedOptions o;
    o.backend = backend;
    o.kernel = backend == "cpu" ? "reference" : kernel;
    o.local_rank = world_rank();
    // NCCL needs a GPU per rank; ranks sharing a GPU exchange through host memory.
    o.transport = env_or("MINIMOD_TEST_TRANSPORT",
                         backend == "cuda" && kernels::cuda_device_count() < world_size() ? "host" : "auto");
    mpi::DistributedPropagator p(problem, d, MPI_COMM_WORLD, o);
    const Outcome got = run(p, problem, seed);
    if (world_rank() != 0) continue;
    const std::string what = d.dims_string() + " (" + p.transport() + ")";
    ASSERT_EQ(got.traces.size(), ref.traces.size()) << what;
    EXPECT_LE(worst(ref.traces, got.traces), tol) << what << ": receiver traces";
    EXPECT_LE(worst(ref.u, got.u), tol) << what << ": final u";
    EXPECT_LE(worst(ref.u_prev, got.u_prev), tol) << what << ": final u_prev";
    EXPECT_LE(worst(ref.snapshot, got.snapshot), tol) << what << ": strided snapshot";
    EXPECT_EQ(got.health.finite, ref.health.finite) << what;
    EXPECT_EQ(got.health.max_abs, ref.health.max_abs) << what;
    // CUDA locates the maximum only for a blown-up field (it is not needed otherwise).
    if (backend == "cpu") EXPECT_EQ(got.health.where, ref.health.where) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(PmlKinds, Distributed,
                         ::testing::Values(Case{pml::PmlKind::cpml, true}, Case{pml::PmlKind::cpml, false},
                                           Case{pml::PmlKind::minimod, false}),
                         [](const auto& info) {
                           return std::string(info.param.kind == pml::PmlKind::cpml ? "Cpml" : "Minimod") +
                                  (info.param.free_top ? "FreeTop" : "");
                         });

TEST(DistributedHealth, ANonFiniteValueIsFoundOnWhicheverRankHoldsIt) {
  const Index3 shape{40, 36, 44};
  const auto problem = testing::random_problem(99, shape, false, pml::PmlKind::minimod);
  const auto d = mpi::decompose(shape, mpi::choose_dims(shape, world_size(), {}), {});
  mpi::DistributedOptions o;
  o.kernel = "reference";
  mpi::DistributedPropagator p(problem, d, MPI_COMM_WORLD, o);
  auto u = testing::random_field(5, problem.grid.points());
  const Index3 bad{33, 2, 40};  // far corner: the last rank's box when split
  u[(static_cast<size_t>(bad.i) * shape.j + bad.j) * shape.k + bad.k] = NAN;
  p.write_state(u.data(), u.data());
  const auto h = p.health();
  EXPECT_FALSE(h.finite);
  EXPECT_EQ(h.where, bad);
}

}  // namespace
}  // namespace minimod

int main(int argc, char** argv) {
  minimod::mpi::Session session(argc, argv, /*force=*/true);
  ::testing::InitGoogleTest(&argc, argv);
  if (session.rank() != 0) {  // one report; every rank still runs every (collective) test
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
