#include "kernels/halo.hpp"

namespace minimod::kernels {

using physics::Box3;
using physics::Index3;

namespace {

/// The box `b` restricted along `axis` to [lo, lo + n).
Box3 slab(Box3 b, int axis, int lo, int n) {
  b.lo[axis] = lo;
  b.n[axis] = n;
  return b;
}

}  // namespace

Box3 send_box(const Index3& shape, int face) {
  const int axis = face / 2;
  const Box3 all{{0, 0, 0}, shape};
  return face % 2 == 0 ? slab(all, axis, 0, kHaloWidth)
                       : slab(all, axis, shape[axis] - kHaloWidth, kHaloWidth);
}

Box3 recv_box(const Index3& shape, int face) {
  const int axis = face / 2;
  const Box3 all{{0, 0, 0}, shape};
  return face % 2 == 0 ? slab(all, axis, -kHaloWidth, kHaloWidth)
                       : slab(all, axis, shape[axis], kHaloWidth);
}

ShellSplit split_shell(const Index3& shape, const HaloFaces& faces) {
  // Peel the faces off axis by axis (x faces over everything, then y over what is left, ...), so
  // the shell boxes are disjoint and the interior is what remains.
  ShellSplit s;
  Box3 rest{{0, 0, 0}, shape};
  for (int axis = 0; axis < 3; ++axis) {
    for (int side = 0; side < 2; ++side) {
      if (!faces.neighbour[static_cast<size_t>(2 * axis + side)] || rest.empty()) continue;
      const int w = std::min(kHaloWidth, rest.n[axis]);
      if (side == 0) {
        s.shell.push_back(slab(rest, axis, rest.lo[axis], w));
        rest = slab(rest, axis, rest.lo[axis] + w, rest.n[axis] - w);
      } else {
        s.shell.push_back(slab(rest, axis, rest.hi()[axis] - w, w));
        rest = slab(rest, axis, rest.lo[axis], rest.n[axis] - w);
      }
    }
  }
  s.interior = rest;
  return s;
}

}  // namespace minimod::kernels
