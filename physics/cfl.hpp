// Stability limit of leapfrog with the 8th-order Laplacian (DESIGN.md §3). The largest eigenvalue
// of the 1D operator is (|a0| + 2 sum |a_m|) / h^2 (reached at the Nyquist wavenumber, since the
// weights alternate in sign), so dt <= 2 / (v_max sqrt(sum_axes (|a0| + 2 sum|a_m|) / h^2)).
// Minimod uses the same bound with a safety factor cfl (notes/sai2020-digest.md §1.3).
#pragma once
#include <array>

namespace minimod::physics {

/// Largest stable dt (s) for velocity v_max (m/s) and spacings (m).
double critical_dt(double v_max, const std::array<double, 3>& spacing);

}  // namespace minimod::physics
