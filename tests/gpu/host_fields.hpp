// Host arrays for the emulation tests of Minimod-case kernels (semi_tma's block body with the
// layer fused, pml_stream's): u, u_next (holding u_prev), v2dt2 and the layer's aux field on one
// FieldLayout, random everywhere (halo and row padding too, so a wrongly staged cell shows), and
// random eta profiles, eta[axis][i + 1] for i = -1 .. n.
#pragma once
#include <random>
#include <vector>

#include "kernels/aligned_buffer.hpp"
#include "physics/view3.hpp"

namespace minimod::testing {

struct HostFields {
  physics::FieldLayout layout;
  kernels::AlignedBuffer u, u_next, v2dt2, aux;
  std::vector<float> eta[3];

  HostFields(physics::Index3 n, unsigned seed)
      : layout(physics::FieldLayout::make(physics::Box3{{0, 0, 0}, n}, physics::kRadius)),
        u(layout.elements()),
        u_next(layout.elements()),
        v2dt2(layout.elements()),
        aux(layout.elements()) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> f(-1, 1), v(0.05f, 0.4f), e(0.0f, 0.3f);
    for (std::int64_t x = 0; x < layout.elements(); ++x) {
      u.data()[x] = f(rng);
      u_next.data()[x] = f(rng);
      v2dt2.data()[x] = v(rng);
      aux.data()[x] = f(rng);
    }
    for (int a = 0; a < 3; ++a) {
      eta[a].resize(static_cast<size_t>(n[a] + 2));
      for (auto& x : eta[a]) x = e(rng);
    }
  }
};

}  // namespace minimod::testing
