// The kernel registry's tile lookup (needs no GPU: a tile is checked before any CUDA call). Every
// family accepts each of its own tunables and refuses a tile it was not compiled for with one
// config error that names the family and lists the valid tiles (gmem, one thread per point, is not
// compiled per tile and takes any block shape).
#include <gtest/gtest.h>

#include <string>

#include "kernels/cuda/registry.hpp"
#include "physics/error.hpp"

namespace minimod {
namespace {

namespace cuda = kernels::cuda;

TEST(KernelRegistry, EveryFamilyKnowsItsTilesAndNamesTheValidOnesOtherwise) {
  for (const auto& f : cuda::families()) {
    for (auto kind : {cuda::PropagatorKind::acoustic_iso, cuda::PropagatorKind::acoustic_tti}) {
      if (!cuda::implements(f, kind)) continue;
      const auto attributes = kind == cuda::PropagatorKind::acoustic_tti ? f.tti_attributes : f.attributes;
      ASSERT_NE(attributes, nullptr) << f.name;
      for (const auto& t : cuda::tunables(f, kind)) EXPECT_NO_THROW(attributes(t)) << f.name;
      if (kind == cuda::PropagatorKind::acoustic_tti && f.tti_axis_attributes) {  // the constant-axis kernel's
        ASSERT_NE(f.tti_axis_dynamic_smem, nullptr) << f.name;
        for (const auto& t : cuda::tunables(f, kind)) {
          EXPECT_NO_THROW(f.tti_axis_attributes(t)) << f.name;
          EXPECT_GT(f.tti_axis_dynamic_smem(t), 0) << f.name;
          EXPECT_LT(f.tti_axis_dynamic_smem(t), f.tti_dynamic_smem(t)) << f.name << ": 12 B a staged point, not 48";
        }
      }
      if (f.name == "gmem") continue;
      try {
        attributes(cuda::Tile{7, 5, 3});
        ADD_FAILURE() << f.name << " accepted a tile 7x5x3";
      } catch (const ConfigError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("execution.kernel"), std::string::npos) << what;
        EXPECT_NE(what.find(f.name), std::string::npos) << f.name << ": " << what;
        EXPECT_NE(what.find("valid tiles"), std::string::npos) << what;
      }
    }
  }
}

}  // namespace
}  // namespace minimod
