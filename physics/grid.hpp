// Grid: the simulated grid (PML padding included), its spacing and where it lies in the model's
// coordinates. Positions in metres are mapped to continuous grid indices here and only here.
#pragma once
#include <array>
#include <cstdint>

#include "physics/box3.hpp"

namespace minimod::physics {

using Point3 = std::array<double, 3>;  // m, (x, y, z), z = depth positive down

struct Grid {
  Index3 shape;                   // simulated points per axis, PML padding included
  std::array<double, 3> spacing;  // m (dx, dy, dz)
  Point3 origin{};                // m: coordinate of grid index (0, 0, 0); the model's first point is 0

  std::int64_t points() const { return static_cast<std::int64_t>(shape.i) * shape.j * shape.k; }
  Box3 box() const { return {{0, 0, 0}, shape}; }
  /// Continuous grid index of a position (no snapping): (x - origin) / spacing per axis.
  std::array<double, 3> index_of(const Point3& x) const {
    return {(x[0] - origin[0]) / spacing[0], (x[1] - origin[1]) / spacing[1],
            (x[2] - origin[2]) / spacing[2]};
  }
  Point3 position_of(int i, int j, int k) const {
    return {origin[0] + i * spacing[0], origin[1] + j * spacing[1], origin[2] + k * spacing[2]};
  }
};

}  // namespace minimod::physics
