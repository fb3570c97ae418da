// Distributed runs equal the one-rank run (DESIGN.md §7): run under mpirun with 1, 2, 4 or 8
// ranks, every decomposition of the rank count (1D, 2D, 3D) on random models and random initial
// fields, both PML kinds, with and without a free surface: receiver traces, the final u and u_prev
// at every point, strided snapshots and the health check are compared with one propagator on the
// whole grid. Bitwise on the CPU and with CUDA's gmem; other CUDA families use a different
// summation order in the shell than in the interior (gmem there), so they get a round-off bound.
// Backend, kernel and transport from MINIMOD_TEST_BACKEND / _KERNEL / _TRANSPORT (default cpu).
#include <gtest/gtest.h>
#include <mpi.h>

#include "kernels/backends.hpp"
#include "mpi/comm.hpp"
#include "mpi/distributed_propagator.hpp"
#include "mpi/subdomain.hpp"
#include "mpi_ranks/rank_test_support.hpp"
#include "physics/error.hpp"

namespace minimod {
namespace {

using physics::Index3;

using testing::env_or;
using testing::factorisations;
using testing::world_rank;
using testing::world_size;

const std::vector<std::string> kFields = {"u", "u_prev"};
const testing::RunSpec kSpec{9, kFields, "u", {{3, 2, 1}, {29, 31, 40}}};

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
  testing::Outcome ref;
  if (world_rank() == 0) {
    if (backend == "cuda") kernels::select_gpu(0);  // the reference runs on the first GPU
    auto whole = kernels::make_acoustic_iso(problem, backend, backend == "cpu" ? "reference" : kernel);
    ref = testing::run_from_random_state(*whole, shape, seed, kSpec);
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
    const auto got = testing::run_from_random_state(p, shape, seed, kSpec);
    if (world_rank() != 0) continue;
    // CUDA locates the maximum only for a blown-up field (it is not needed otherwise).
    testing::expect_same_outcome(ref, got, kFields, tol,
                                 d.dims_string() + " (" + p.transport() + ")", backend == "cpu");
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
