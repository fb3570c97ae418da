#include "pml/regions.hpp"

namespace minimod::pml {

using physics::Box3;
using physics::box_from_bounds;
using physics::Index3;

std::vector<Region> make_regions(const Index3& n, const PmlWidths& w) {
  const Index3 in_lo{w.lo[0], w.lo[1], w.lo[2]};
  const Index3 in_hi{n.i - w.hi[0], n.j - w.hi[1], n.k - w.hi[2]};
  std::vector<Region> all = {
      {"inner", box_from_bounds(in_lo, in_hi), false},
      {"z-", box_from_bounds({0, 0, 0}, {n.i, n.j, in_lo.k}), true},
      {"z+", box_from_bounds({0, 0, in_hi.k}, {n.i, n.j, n.k}), true},
      {"y-", box_from_bounds({0, 0, in_lo.k}, {n.i, in_lo.j, in_hi.k}), true},
      {"y+", box_from_bounds({0, in_hi.j, in_lo.k}, {n.i, n.j, in_hi.k}), true},
      {"x-", box_from_bounds({0, in_lo.j, in_lo.k}, {in_lo.i, in_hi.j, in_hi.k}), true},
      {"x+", box_from_bounds({in_hi.i, in_lo.j, in_lo.k}, {n.i, in_hi.j, in_hi.k}), true},
  };
  std::vector<Region> out;
  for (auto& r : all) {
    if (!r.box.empty()) out.push_back(r);
  }
  return out;
}

std::vector<Region> clip_regions(const std::vector<Region>& regions, const Box3& box) {
  std::vector<Region> out;
  for (const auto& r : regions) {
    Region c = r;
    c.box = physics::intersect(r.box, box);
    if (!c.box.empty()) out.push_back(c);
  }
  return out;
}

}  // namespace minimod::pml
