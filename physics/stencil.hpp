// The 8th-order, 25-point Laplacian and the leapfrog update of the acoustic wave equation
// (DESIGN.md §3; Minimod's operator, notes/sai2020-digest.md §1.3). Defined once, used by the CPU
// reference and every CUDA family through an accessor `at(di, dj, dk)` (value at an offset).
#pragma once
#include <array>

#include "physics/host_device.hpp"
#include "physics/view3.hpp"

namespace minimod::physics {

constexpr int kRadius = 4;  // stencil half-width = halo width (points)

/// 1D second-derivative weights a_m (times h^2), 8th order Taylor: m = 0..4.
constexpr std::array<double, kRadius + 1> kSecondDerivative8 = {-205.0 / 72.0, 8.0 / 5.0, -1.0 / 5.0,
                                                                8.0 / 315.0, -1.0 / 560.0};

/// Laplacian weights for spacings (dx, dy, dz): c0 is the summed centre weight (1/m^2).
struct LaplacianCoeffs {
  float c0 = 0;
  float cx[kRadius] = {}, cy[kRadius] = {}, cz[kRadius] = {};  // m = 1..4
};

inline LaplacianCoeffs make_laplacian_coeffs(double dx, double dy, double dz) {
  LaplacianCoeffs c;
  const double ix = 1.0 / (dx * dx), iy = 1.0 / (dy * dy), iz = 1.0 / (dz * dz);
  // Minimod sums the three centre weights in float (sai2020-digest §1.3).
  c.c0 = static_cast<float>(kSecondDerivative8[0] * ix) +
         static_cast<float>(kSecondDerivative8[0] * iy) +
         static_cast<float>(kSecondDerivative8[0] * iz);
  for (int m = 1; m <= kRadius; ++m) {
    c.cx[m - 1] = static_cast<float>(kSecondDerivative8[m] * ix);
    c.cy[m - 1] = static_cast<float>(kSecondDerivative8[m] * iy);
    c.cz[m - 1] = static_cast<float>(kSecondDerivative8[m] * iz);
  }
  return c;
}

/// The three symmetric pairs at distance M, weighted (Minimod adds each pair before weighting).
template <int M, class At>
MM_HOST_DEVICE MM_FORCE_INLINE float laplacian_ring(const At& at, const LaplacianCoeffs& c,
                                                    float lap) {
  lap += c.cx[M - 1] * (at(M, 0, 0) + at(-M, 0, 0));
  lap += c.cy[M - 1] * (at(0, M, 0) + at(0, -M, 0));
  lap += c.cz[M - 1] * (at(0, 0, M) + at(0, 0, -M));
  return lap;
}

/// 25-point Laplacian (1/m^2 times field units). Order of the sum as in Minimod: centre, then
/// the symmetric pairs for m = 1 (x, y, z), m = 2, ... Unrolled by templates, so host compilers
/// vectorise the caller's k loop and nvcc keeps everything in registers.
template <class At>
MM_HOST_DEVICE MM_FORCE_INLINE float laplacian8(const At& at, const LaplacianCoeffs& c) {
  float lap = c.c0 * at(0, 0, 0);
  lap = laplacian_ring<1>(at, c, lap);
  lap = laplacian_ring<2>(at, c, lap);
  lap = laplacian_ring<3>(at, c, lap);
  lap = laplacian_ring<4>(at, c, lap);
  return lap;
}

/// Leapfrog: u_next = 2 u - u_prev + (v dt)^2 lap.
MM_HOST_DEVICE MM_FORCE_INLINE float leapfrog(float u_prev, float u, float v2dt2, float lap) {
  return 2.0f * u + (v2dt2 * lap - u_prev);
}

/// Pressure-release (free) surface by antisymmetric images, for the column (x1, x2) of the two
/// other axes: along `axis`, f(s) = 0 on the surface plane s and f(s + dir m) = -f(s - dir m),
/// m = 1..R, dir pointing into the halo. Shared by the CPU and CUDA backends.
MM_HOST_DEVICE MM_FORCE_INLINE void mirror_free_surface(const View3<float>& f, int axis, int x1, int x2, int s,
                                                        int dir) {
  int idx[3];
  idx[(axis + 1) % 3] = x1;
  idx[(axis + 2) % 3] = x2;
  const auto at = [&](int along) -> float& {
    idx[axis] = along;
    return f(idx[0], idx[1], idx[2]);
  };
  at(s) = 0.0f;
  for (int m = 1; m <= kRadius; ++m) at(s + dir * m) = -at(s - dir * m);
}

}  // namespace minimod::physics
