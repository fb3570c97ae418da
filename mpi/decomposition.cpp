#include "mpi/decomposition.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "physics/error.hpp"

namespace minimod::mpi {

using physics::Box3;
using physics::Index3;

namespace {

constexpr const char* kAxis[] = {"x", "y", "z"};

/// dims + 1 boundaries for `parts` parts of [0, n), each >= kMinPartPoints, every inner cut inside
/// [lo, n - hi]; empty if impossible. Even cuts first, then pushed inside the limits and apart.
std::vector<int> cut_axis(int n, int parts, int lo, int hi) {
  std::vector<int> c(static_cast<size_t>(parts) + 1);
  for (int m = 0; m <= parts; ++m)
    c[static_cast<size_t>(m)] =
        static_cast<int>((static_cast<std::int64_t>(m) * n + parts / 2) / parts);
  if (parts == 1) return c;
  const int first = std::max(lo, kMinPartPoints), last = std::min(n - hi, n - kMinPartPoints);
  // Cut m may lie in [first + 4 (m - 1), last - 4 (parts - 1 - m)]: that leaves room for the cuts
  // on either side. Clamping the even cuts into these windows keeps them kMinPartPoints apart.
  for (int m = 1; m < parts; ++m) {
    const int lo_m = first + kMinPartPoints * (m - 1), hi_m = last - kMinPartPoints * (parts - 1 - m);
    if (lo_m > hi_m) return {};
    c[static_cast<size_t>(m)] = std::clamp(c[static_cast<size_t>(m)], lo_m, hi_m);
  }
  for (int m = 1; m <= parts; ++m)
    if (c[static_cast<size_t>(m)] - c[static_cast<size_t>(m) - 1] < kMinPartPoints) return {};
  return c;
}

}  // namespace

int Decomposition::rank_of(std::array<int, 3> c) const {
  for (int a = 0; a < 3; ++a)
    if (c[a] < 0 || c[a] >= dims[a]) return -1;
  return (c[0] * dims[1] + c[1]) * dims[2] + c[2];
}

std::array<int, 3> Decomposition::coords_of(int rank) const {
  return {rank / (dims[1] * dims[2]), (rank / dims[2]) % dims[1], rank % dims[2]};
}

Box3 Decomposition::box_of(int rank) const {
  const auto c = coords_of(rank);
  Index3 lo, hi;
  for (int a = 0; a < 3; ++a) {
    lo[a] = cuts[a][static_cast<size_t>(c[a])];
    hi[a] = cuts[a][static_cast<size_t>(c[a]) + 1];
  }
  return physics::box_from_bounds(lo, hi);
}

std::array<int, 6> Decomposition::neighbours_of(int rank) const {
  std::array<int, 6> nb{};
  const auto c = coords_of(rank);
  for (int f = 0; f < 6; ++f) {
    auto d = c;
    d[f / 2] += f % 2 == 0 ? -1 : 1;
    nb[static_cast<size_t>(f)] = rank_of(d);
  }
  return nb;
}

std::string Decomposition::dims_string() const {
  return std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
}

std::array<int, 3> choose_dims(const Index3& shape, int ranks, const CutLimits& limits) {
  std::array<int, 3> best{0, 0, 0};
  double best_cost = std::numeric_limits<double>::infinity();
  for (int px = 1; px <= ranks; ++px) {
    if (ranks % px) continue;
    for (int py = 1; py <= ranks / px; ++py) {
      if ((ranks / px) % py) continue;
      const std::array<int, 3> d{px, py, ranks / px / py};
      bool ok = true;
      for (int a = 0; a < 3 && ok; ++a) ok = !cut_axis(shape[a], d[a], limits.lo[a], limits.hi[a]).empty();
      if (!ok) continue;
      // Halo surface: each cut plane along axis a has the area of the other two axes.
      const double cost = (d[0] - 1.0) * shape.j * shape.k + (d[1] - 1.0) * shape.i * shape.k +
                          (d[2] - 1.0) * shape.i * shape.j;
      if (cost < best_cost * (1 - 1e-12)) {
        best_cost = cost;
        best = d;
      } else if (cost <= best_cost * (1 + 1e-12) && d[0] > best[0]) {  // tie: more along x
        best = d;
      }
    }
  }
  if (best[0] == 0)
    throw ConfigError("config error: execution.decomposition: " + std::to_string(ranks) +
                      " ranks cannot share a grid of " + std::to_string(shape.i) + "x" +
                      std::to_string(shape.j) + "x" + std::to_string(shape.k) +
                      " points with at least " + std::to_string(kMinPartPoints) +
                      " points per rank and axis outside the absorbing layers: use fewer ranks");
  return best;
}

Decomposition decompose(const Index3& shape, const std::array<int, 3>& dims, const CutLimits& limits) {
  Decomposition d;
  d.dims = dims;
  for (int a = 0; a < 3; ++a) {
    d.cuts[a] = cut_axis(shape[a], dims[a], limits.lo[a], limits.hi[a]);
    if (d.cuts[a].empty()) {
      throw ConfigError(
          "config error: execution.decomposition: axis " + std::string(kAxis[a]) + " (" +
          std::to_string(shape[a]) + " points) cannot be cut into " + std::to_string(dims[a]) +
          " parts of at least " + std::to_string(kMinPartPoints) + " points" +
          (limits.lo[a] > 0 || limits.hi[a] > 0
               ? " with every cut between points " + std::to_string(limits.lo[a]) + " and " +
                     std::to_string(shape[a] - limits.hi[a]) +
                     " (outside the absorbing layers by the halo width)"
               : std::string()) +
          ": use fewer ranks along " + kAxis[a]);
    }
  }
  return d;
}

}  // namespace minimod::mpi
