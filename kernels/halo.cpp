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

Box3 halo_span(const Index3& shape, const HaloFaces& faces) {
  Box3 b{{0, 0, 0}, shape};
  for (int a = 0; a < 3; ++a) {
    if (faces.neighbour[static_cast<size_t>(2 * a)]) {
      b.lo[a] -= kHaloWidth;
      b.n[a] += kHaloWidth;
    }
    if (faces.neighbour[static_cast<size_t>(2 * a + 1)]) b.n[a] += kHaloWidth;
  }
  return b;
}

namespace {

/// `b` grown along the axes before `face`'s over the halos of the faces with a neighbour.
Box3 grow_over_earlier_halos(Box3 b, const Index3& shape, const HaloFaces& faces, int face) {
  const Box3 span = halo_span(shape, faces);
  for (int a = 0; a < face / 2; ++a) {
    b.lo[a] = span.lo[a];
    b.n[a] = span.n[a];
  }
  return b;
}

}  // namespace

Box3 phased_send_box(const Index3& shape, const HaloFaces& faces, int face) {
  return grow_over_earlier_halos(send_box(shape, face), shape, faces, face);
}

Box3 phased_recv_box(const Index3& shape, const HaloFaces& faces, int face) {
  return grow_over_earlier_halos(recv_box(shape, face), shape, faces, face);
}

void exchange_by_axis(HaloTransport& transport, const Index3& shape, const HaloFaces& faces,
                      int fields, void* stream, const PhasedHaloOps& ops,
                      const std::function<void(int axis)>& overlap) {
  for (int axis = 0; axis < 3; ++axis) {
    float* send[6] = {};
    float* recv[6] = {};
    std::int64_t count[6] = {};
    bool any = false;
    for (int f = 2 * axis; f < 2 * axis + 2; ++f) {
      if (!faces.neighbour[static_cast<size_t>(f)]) continue;
      count[f] = fields * phased_send_box(shape, faces, f).points();
      send[f] = ops.pack(f, count[f]);
      recv[f] = ops.receive_buffer(f, count[f]);
      any = true;
    }
    // Neighbours are mutual: without any along this axis nobody waits for this rank here.
    if (any) transport.start(send, recv, count, stream);
    if (overlap) overlap(axis);
    if (!any) continue;
    transport.finish(stream);
    for (int f = 2 * axis; f < 2 * axis + 2; ++f)
      if (count[f] > 0) ops.unpack(f, recv[f]);
  }
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
