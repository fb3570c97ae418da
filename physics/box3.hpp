// Index3 (grid points) and Box3 (a half-open box of grid points): regions, subdomains, snapshots.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>

#include "physics/host_device.hpp"

namespace minimod::physics {

struct Index3 {
  int i = 0, j = 0, k = 0;
  MM_HOST_DEVICE int operator[](int axis) const { return axis == 0 ? i : (axis == 1 ? j : k); }
  MM_HOST_DEVICE int& operator[](int axis) { return axis == 0 ? i : (axis == 1 ? j : k); }
  friend bool operator==(const Index3& a, const Index3& b) {
    return a.i == b.i && a.j == b.j && a.k == b.k;
  }
};

/// Half-open box [lo, lo + n) in grid indices.
struct Box3 {
  Index3 lo;
  Index3 n;  // extent per axis (points)

  MM_HOST_DEVICE std::int64_t points() const {
    return (n.i > 0 && n.j > 0 && n.k > 0)
               ? static_cast<std::int64_t>(n.i) * n.j * n.k
               : 0;
  }
  MM_HOST_DEVICE bool empty() const { return points() == 0; }
  MM_HOST_DEVICE Index3 hi() const { return {lo.i + n.i, lo.j + n.j, lo.k + n.k}; }
  /// The C-order position of point (i, j, k) of the box among its points (k fastest).
  MM_HOST_DEVICE std::int64_t position(int i, int j, int k) const {
    return (static_cast<std::int64_t>(i - lo.i) * n.j + (j - lo.j)) * n.k + (k - lo.k);
  }
  MM_HOST_DEVICE bool contains(int i, int j, int k) const {
    return i >= lo.i && i < lo.i + n.i && j >= lo.j && j < lo.j + n.j && k >= lo.k &&
           k < lo.k + n.k;
  }
  friend bool operator==(const Box3& a, const Box3& b) { return a.lo == b.lo && a.n == b.n; }
};

/// Points per axis of every stride-th point of `box`, from its first (a strided read or snapshot).
inline Index3 strided_shape(const Box3& box, const Index3& stride) {
  return {(box.n.i + stride.i - 1) / stride.i, (box.n.j + stride.j - 1) / stride.j,
          (box.n.k + stride.k - 1) / stride.k};
}

/// Box from per-axis half-open ranges [lo, hi).
inline Box3 box_from_bounds(Index3 lo, Index3 hi) {
  return {lo, {std::max(0, hi.i - lo.i), std::max(0, hi.j - lo.j), std::max(0, hi.k - lo.k)}};
}

/// The box grown by `r` points on every side.
inline Box3 grown(const Box3& b, int r) {
  return {{b.lo.i - r, b.lo.j - r, b.lo.k - r}, {b.n.i + 2 * r, b.n.j + 2 * r, b.n.k + 2 * r}};
}

/// Whether every point of `inner` lies in `outer` (an empty `inner` lies anywhere).
inline bool covers(const Box3& outer, const Box3& inner) {
  if (inner.empty()) return true;
  const Index3 a = outer.hi(), b = inner.hi();
  return inner.lo.i >= outer.lo.i && inner.lo.j >= outer.lo.j && inner.lo.k >= outer.lo.k && b.i <= a.i &&
         b.j <= a.j && b.k <= a.k;
}

inline Box3 intersect(const Box3& a, const Box3& b) {
  Index3 lo{std::max(a.lo.i, b.lo.i), std::max(a.lo.j, b.lo.j), std::max(a.lo.k, b.lo.k)};
  Index3 ah = a.hi(), bh = b.hi();
  Index3 hi{std::min(ah.i, bh.i), std::min(ah.j, bh.j), std::min(ah.k, bh.k)};
  return box_from_bounds(lo, hi);
}

}  // namespace minimod::physics
