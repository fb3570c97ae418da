// Propagator::state_fields on the CPU reference (tests/state_check.hpp): isotropic with the CPML
// and Minimod's layer, TTI with its CPML and with the sponge, free surface on top.
#include <gtest/gtest.h>

#include "kernels/backends.hpp"
#include "kernels/tti_propagator.hpp"
#include "state_check.hpp"

namespace minimod {
namespace {

TEST(CpuState, IsotropicStateCarriesTheRun) {
  const physics::Index3 n{28, 24, 26};
  for (const auto kind : {pml::PmlKind::cpml, pml::PmlKind::minimod}) {
    SCOPED_TRACE(kind == pml::PmlKind::cpml ? "CPML" : "Minimod's layer");
    const auto problem = testing::random_problem(13, n, true, kind);
    testing::expect_state_carries_the_run([&] { return kernels::make_acoustic_iso(problem, "cpu", "reference"); }, n,
                                          {"u", "u_prev"});
  }
}

TEST(CpuState, TtiStateCarriesTheRun) {
  const physics::Index3 n{26, 22, 24};
  const auto sponge = testing::random_tti(14, n, true);
  for (const bool cpml : {true, false}) {
    SCOPED_TRACE(cpml ? "CPML" : "sponge");
    const auto problem = cpml ? testing::with_cpml_layer(sponge) : sponge;
    testing::expect_state_carries_the_run([&] { return kernels::make_acoustic_tti(problem, "cpu", "reference"); }, n,
                                          {"p", "p_prev", "q", "q_prev"});
  }
}

}  // namespace
}  // namespace minimod
