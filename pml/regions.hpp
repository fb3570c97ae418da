// The propagator's regions as boxes: the inner box and the 6 PML slabs around it, cut as Minimod's
// GPU code cuts them (notes/sai2020-digest.md §2.2): k faces over the full (i, j) range, then j faces
// over the inner k range, then i faces over the inner (j, k) range. Empty slabs are dropped.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "physics/box3.hpp"

namespace minimod::pml {

/// Damping points on each face: lo/hi per axis (0 = no PML there, e.g. a free surface).
struct PmlWidths {
  std::array<int, 3> lo{0, 0, 0};
  std::array<int, 3> hi{0, 0, 0};
};

struct Region {
  std::string name;  // "inner", "x-", "x+", "y-", "y+", "z-", "z+"
  physics::Box3 box;
  bool is_pml = false;
};

/// Inner region first, then the non-empty PML slabs, for a domain of `shape` points.
std::vector<Region> make_regions(const physics::Index3& shape, const PmlWidths& widths);

/// The inner region clipped to a sub-box (for MPI subdomains and shells): regions ∩ box.
std::vector<Region> clip_regions(const std::vector<Region>& regions, const physics::Box3& box);

}  // namespace minimod::pml
