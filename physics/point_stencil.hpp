// Sources and receivers off the grid: trilinear interpolation over the 8 surrounding nodes.
// Injection spreads a point source with the same 8 weights (the adjoint of sampling), so a source
// on a node touches only that node. The weights depend only on the global position, so the result
// does not depend on how the grid is later decomposed.
#pragma once
#include <array>
#include <vector>

#include "physics/grid.hpp"

namespace minimod::physics {

struct PointStencil {
  Index3 base;                  // lower corner of the 8-node cell
  std::array<float, 8> weight;  // order: (di, dj, dk) = bits (4, 2, 1) of the index
  Index3 node(int n) const { return {base.i + ((n >> 2) & 1), base.j + ((n >> 1) & 1), base.k + (n & 1)}; }
};

/// Trilinear weights for a position; the caller has checked it lies inside the grid.
inline PointStencil make_point_stencil(const Grid& grid, const Point3& x) {
  const auto g = grid.index_of(x);
  PointStencil s;
  int base[3];
  double frac[3];
  for (int a = 0; a < 3; ++a) {
    const double f = g[a];
    int b = static_cast<int>(f);  // non-negative inside the grid
    if (b >= grid.shape[a] - 1) b = grid.shape[a] - 1;
    double t = f - b;
    if (t < 1e-9) t = 0;  // on a node (within round-off of the metre coordinates)
    if (t > 1 - 1e-9) { ++b; t = 0; }
    if (b >= grid.shape[a] - 1 && t > 0) t = 0;
    base[a] = b;
    frac[a] = t;
  }
  s.base = {base[0], base[1], base[2]};
  for (int n = 0; n < 8; ++n) {
    const double wx = ((n >> 2) & 1) ? frac[0] : 1 - frac[0];
    const double wy = ((n >> 1) & 1) ? frac[1] : 1 - frac[1];
    const double wz = (n & 1) ? frac[2] : 1 - frac[2];
    s.weight[n] = static_cast<float>(wx * wy * wz);
  }
  return s;
}

}  // namespace minimod::physics
