// Propagator::reset on the CPU reference (tests/reset_check.hpp): isotropic with the CPML and
// Minimod's layer, TTI with its CPML and with the sponge.
#include <gtest/gtest.h>

#include "kernels/backends.hpp"
#include "kernels/tti_propagator.hpp"
#include "reset_check.hpp"

namespace minimod {
namespace {

TEST(CpuReset, IsotropicShotAfterAResetIsAFreshOne) {
  const physics::Index3 n{28, 24, 26};
  for (const auto kind : {pml::PmlKind::cpml, pml::PmlKind::minimod}) {
    SCOPED_TRACE(kind == pml::PmlKind::cpml ? "CPML" : "Minimod's layer");
    const auto problem = testing::random_problem(11, n, true, kind);
    testing::expect_reset_is_a_fresh_start([&] { return kernels::make_acoustic_iso(problem, "cpu", "reference"); },
                                           n, {"u", "u_prev"});
  }
}

TEST(CpuReset, TtiShotAfterAResetIsAFreshOne) {
  const physics::Index3 n{26, 22, 24};
  const auto sponge = testing::random_tti(12, n, false);
  for (const bool cpml : {true, false}) {
    SCOPED_TRACE(cpml ? "CPML" : "sponge");
    const auto problem = cpml ? testing::with_cpml_layer(sponge) : sponge;
    testing::expect_reset_is_a_fresh_start([&] { return kernels::make_acoustic_tti(problem, "cpu", "reference"); },
                                           n, {"p", "p_prev", "q", "q_prev", "aux_p", "aux_q"});
  }
}

}  // namespace
}  // namespace minimod
