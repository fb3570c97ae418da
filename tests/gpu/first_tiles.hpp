// The first tile of every CUDA family of a propagator kind, as "family:tile" kernel names: a
// test that must see every family once (tests/gpu/reset_test.cpp, state_test.cpp).
#pragma once
#include <string>
#include <vector>

#include "kernels/cuda/autotune.hpp"
#include "kernels/cuda/registry.hpp"

namespace minimod::testing {

inline std::vector<std::string> first_tiles(kernels::cuda::PropagatorKind kind) {
  std::vector<std::string> out;
  for (const auto& f : kernels::cuda::families()) {
    if (!kernels::cuda::implements(f, kind)) continue;
    if (kind == kernels::cuda::PropagatorKind::acoustic_tti && f.tti_vti_only) continue;
    const auto& tiles = kernels::cuda::tunables(f, kind);
    if (!tiles.empty()) out.push_back(f.name + ":" + kernels::cuda::tile_string(tiles.front()));
  }
  return out;
}

}  // namespace minimod::testing
