// The by-axis exchange (kernels/halo.hpp) reaches every halo point a 73-point stencil reads: every
// face and edge halo point of a subdomain is received exactly once, from a box its neighbour sends
// with the same shape (corners, which no point reads, may or may not be).
#include <gtest/gtest.h>

#include "kernels/halo.hpp"

namespace minimod {
namespace {

using physics::Box3;
using physics::Index3;

TEST(PhasedHalo, EveryFaceAndEdgeHaloPointIsReceivedExactlyOnce) {
  const Index3 n{9, 7, 6};
  for (int mask = 0; mask < 64; ++mask) {
    kernels::HaloFaces faces;
    for (int f = 0; f < 6; ++f) faces.neighbour[static_cast<size_t>(f)] = (mask >> f) & 1;
    const Box3 span = kernels::halo_span(n, faces);
    for (int i = span.lo.i; i < span.hi().i; ++i)
      for (int j = span.lo.j; j < span.hi().j; ++j)
        for (int k = span.lo.k; k < span.hi().k; ++k) {
          const int outside = (i < 0 || i >= n.i) + (j < 0 || j >= n.j) + (k < 0 || k >= n.k);
          if (outside == 0 || outside == 3) continue;
          int hits = 0;
          for (int f = 0; f < 6; ++f)
            if (faces.neighbour[static_cast<size_t>(f)])
              hits += kernels::phased_recv_box(n, faces, f).contains(i, j, k);
          EXPECT_EQ(hits, 1) << "faces mask " << mask << " at " << i << " " << j << " " << k;
        }
  }
}

TEST(PhasedHalo, SendAndReceiveBoxesOfAFaceHaveOneShape) {
  const Index3 n{9, 7, 6};
  kernels::HaloFaces faces;
  faces.neighbour = {true, false, true, true, false, true};
  for (int f = 0; f < 6; ++f) {
    const Box3 s = kernels::phased_send_box(n, faces, f), r = kernels::phased_recv_box(n, faces, f);
    EXPECT_EQ(s.n, r.n) << f;
    const int axis = f / 2;
    EXPECT_EQ(s.n[axis], kernels::kHaloWidth);
    for (int a = 0; a < 3; ++a)  // the earlier axes' halos on the sides with a neighbour, no more
      if (a != axis)
        EXPECT_EQ(s.n[a], a < axis ? kernels::halo_span(n, faces).n[a] : n[a]) << f << " " << a;
  }
}

}  // namespace
}  // namespace minimod
