#include "kernels/propagator.hpp"

namespace minimod::kernels {

void finish_problem(AcousticIsoProblem& p) {
  const auto& h = p.grid.spacing;
  p.laplacian = physics::make_laplacian_coeffs(h[0], h[1], h[2]);
  for (int a = 0; a < 3; ++a) p.inv_4h2[a] = static_cast<float>(1.0 / (4.0 * h[a] * h[a]));
}

}  // namespace minimod::kernels
