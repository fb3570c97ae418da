// Earth models on the grid: building a parameter from layers, and padding a model with PML
// points by extending its edge values (DESIGN.md §3: the PML is padding around the user's model).
#pragma once
#include <array>
#include <vector>

#include "physics/box3.hpp"

namespace minimod::physics {

struct Layer {
  double top = 0;    // m: depth of the layer's top
  double value = 0;  // SI
};

/// Values [x][y][z] of a layered parameter: the layer whose top is the deepest at or above z.
std::vector<float> layered_values(const Index3& shape, double dz, const std::vector<Layer>& layers);
/// The same over `box` of the model (C order over the box; z = k dz for the model's index k).
std::vector<float> layered_values(const Box3& box, double dz, const std::vector<Layer>& layers);

/// Pad a model of `shape` by `lo`/`hi` points per axis, copying the nearest edge value outwards.
std::vector<float> pad_with_edges(const std::vector<float>& values, const Index3& shape,
                                  const std::array<int, 3>& lo, const std::array<int, 3>& hi);

/// The same over a window: `values` covers box `from` of a model of `shape` (C order over the box)
/// and the result covers box `to` of the padded grid (whose model starts at `lo`), each point
/// taking the model's nearest point, which must lie in `from` (std::invalid_argument otherwise).
std::vector<float> pad_with_edges(const std::vector<float>& values, const Box3& from, const Index3& shape,
                                  const std::array<int, 3>& lo, const Box3& to);

}  // namespace minimod::physics
