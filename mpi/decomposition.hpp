// Cartesian domain decomposition: how many ranks per axis, where the cuts fall, each rank's box and
// its neighbours. Pure arithmetic (no MPI), so it is unit-tested on its own. DESIGN.md §5.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "physics/box3.hpp"

namespace minimod::mpi {

/// Points near each end of an axis where no cut may fall (the CPML's memory fields are not
/// exchanged, so a cut must keep the halo width away from the absorbing layer); 0 = anywhere.
struct CutLimits {
  std::array<int, 3> lo{0, 0, 0};  // a cut c needs c >= lo[axis]
  std::array<int, 3> hi{0, 0, 0};  // and c <= n[axis] - hi[axis]
};

struct Decomposition {
  std::array<int, 3> dims{1, 1, 1};        // ranks per axis
  std::array<std::vector<int>, 3> cuts;    // per axis: dims + 1 boundaries, 0 .. n
  int ranks() const { return dims[0] * dims[1] * dims[2]; }
  /// Rank of Cartesian coordinates (C order: z fastest, like MPI_Cart_create); -1 outside.
  int rank_of(std::array<int, 3> c) const;
  std::array<int, 3> coords_of(int rank) const;
  physics::Box3 box_of(int rank) const;
  /// Neighbour rank across each face (x-, x+, y-, y+, z-, z+), -1 at the domain boundary.
  std::array<int, 6> neighbours_of(int rank) const;
  /// "2x1x1"
  std::string dims_string() const;
};

/// Smallest part a rank may own along an axis: its halo must come from one neighbour.
constexpr int kMinPartPoints = 4;

/// Ranks per axis for `ranks` ranks on `shape`: the factorisation with the least halo surface
/// (ties: more ranks along x, the slowest axis, whose faces are contiguous). Throws ConfigError
/// when no factorisation gives every rank at least kMinPartPoints per axis.
std::array<int, 3> choose_dims(const physics::Index3& shape, int ranks, const CutLimits& limits);

/// The decomposition of `shape` over `dims` ranks per axis: cuts as even as the limits allow.
/// Throws ConfigError naming execution.decomposition when an axis cannot be cut that way.
Decomposition decompose(const physics::Index3& shape, const std::array<int, 3>& dims,
                        const CutLimits& limits);

}  // namespace minimod::mpi
