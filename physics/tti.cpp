#include "physics/tti.hpp"

#include <algorithm>
#include <vector>
#include <cmath>

namespace minimod::physics {

namespace {

/// Symbol (times -1, so >= 0 for the pure terms) of d2/dx_a^2 at k_a h_a = w.
double pure_symbol(double w, double h) {
  double s = -kSecondDerivative8[0];
  for (int m = 1; m <= kRadius; ++m) s -= 2.0 * kSecondDerivative8[m] * std::cos(m * w);
  return s / (h * h);
}

/// Symbol (times -1) of the diagonal mixed derivative: sum_m a_m sin(m wa) sin(m wb) / (ha hb).
double mixed_symbol(double wa, double wb, double ha, double hb) {
  double s = 0;
  for (int m = 1; m <= kRadius; ++m) s += kSecondDerivative8[m] * std::sin(m * wa) * std::sin(m * wb);
  return s / (ha * hb);
}

}  // namespace

double tti_critical_dt(double v_max, const std::array<double, 3>& h, double eps_max, double delta_min,
                       double delta_max) {
  // Plane wave e^{i k.x}: each field's Hessian becomes -S (S symmetric 3x3), lap -> -tr S,
  // H -> -n.S.n, and the system (p, q)'' = -v^2 M (p, q) with
  //   M = [[a (L - h) + h, a (L - h)], [b (L - h), b (L - h)]],  L = tr S, h = n.S.n.
  // Leapfrog is stable while v^2 dt^2 lambda_max(M) <= 4.
  constexpr int kW = 16, kAngles = 12;
  const double pi = std::acos(-1.0);
  double lambda_max = 0;
  std::vector<std::array<double, 6>> symbols;  // xx, yy, zz, xy, xz, yz
  for (int ix = 0; ix <= kW; ++ix)
    for (int iy = -kW; iy <= kW; ++iy)
      for (int iz = -kW; iz <= kW; ++iz) {
        const double wx = pi * ix / kW, wy = pi * iy / kW, wz = pi * iz / kW;
        symbols.push_back({pure_symbol(wx, h[0]), pure_symbol(wy, h[1]), pure_symbol(wz, h[2]),
                           mixed_symbol(wx, wy, h[0], h[1]), mixed_symbol(wx, wz, h[0], h[2]),
                           mixed_symbol(wy, wz, h[1], h[2])});
      }
  const double deltas[2] = {delta_min, std::min(delta_max, eps_max)};
  for (int it = 0; it <= kAngles; ++it)
    for (int ip = 0; ip <= 2 * kAngles; ++ip) {
      const double th = 0.5 * pi * it / kAngles, ph = pi * ip / kAngles;  // n and -n alike
      const double nx = std::sin(th) * std::cos(ph), ny = std::sin(th) * std::sin(ph), nz = std::cos(th);
      for (double delta : deltas) {
        const double a = 1 + 2 * delta, b = 2 * (eps_max - delta);
        for (const auto& s : symbols) {
          const double L = s[0] + s[1] + s[2];
          const double hh = nx * nx * s[0] + ny * ny * s[1] + nz * nz * s[2] +
                            2 * (nx * ny * s[3] + nx * nz * s[4] + ny * nz * s[5]);
          const double perp = L - hh;
          // Eigenvalues of [[a perp + hh, a perp], [b perp, b perp]]: trace T, determinant hh b perp.
          const double T = a * perp + hh + b * perp, D = hh * b * perp;
          const double d2 = T * T - 4 * D;
          if (d2 < 0) {  // complex pair: modulus sqrt(D)
            lambda_max = std::max(lambda_max, std::sqrt(std::fabs(D)));
            continue;
          }
          const double disc = std::sqrt(d2);
          lambda_max = std::max({lambda_max, std::fabs(0.5 * (T + disc)), std::fabs(0.5 * (T - disc))});
        }
      }
    }
  return 2.0 / (v_max * std::sqrt(lambda_max));
}

namespace {
/// |a . b|: the cosine of the angle between two axes as lines.
double line_cosine(const TtiAxis& a, const TtiAxis& b) {
  return std::fabs(double(a.nx) * b.nx + double(a.ny) * b.ny + double(a.nz) * b.nz);
}
double degrees_of_cosine(double c) { return std::acos(std::min(1.0, c)) * 180 / std::acos(-1.0); }
}  // namespace

double axis_turn_degrees(float theta1, float phi1, float theta2, float phi2) {
  return degrees_of_cosine(line_cosine(tti_axis(theta1, phi1), tti_axis(theta2, phi2)));
}

AxisTurns scan_axis_turns(const std::vector<float>& theta, const std::vector<float>& phi, const Index3& shape,
                          double limit_degrees, const std::function<void(std::int64_t)>& mark) {
  const std::int64_t nk = shape.k, njk = static_cast<std::int64_t>(shape.j) * nk;
  const std::int64_t points = njk * shape.i, none = points;
  const double cos_limit = std::cos(limit_degrees * std::acos(-1.0) / 180);
  double min_dot = 1;
  std::int64_t above = 0, first = none;
  // Each point against its six face neighbours (each pair twice, each point written by its own
  // iteration only); a neighbour with the same angles turns by nothing and costs no axis.
#pragma omp parallel for schedule(static) reduction(min : min_dot, first) reduction(+ : above)
  for (std::int64_t o = 0; o < points; ++o) {
    const int i = static_cast<int>(o / njk), j = static_cast<int>(o / nk % shape.j), k = static_cast<int>(o % nk);
    const auto x = static_cast<size_t>(o);
    const TtiAxis n0 = tti_axis(theta[x], phi[x]);
    double lowest = 1;  // the point's smallest |n0 . n| over its neighbours
    const auto against = [&](std::int64_t d) {
      const auto y = static_cast<size_t>(o + d);
      if (theta[y] == theta[x] && phi[y] == phi[x]) return;
      lowest = std::min(lowest, line_cosine(n0, tti_axis(theta[y], phi[y])));
    };
    if (i > 0) against(-njk);
    if (i + 1 < shape.i) against(njk);
    if (j > 0) against(-nk);
    if (j + 1 < shape.j) against(nk);
    if (k > 0) against(-1);
    if (k + 1 < shape.k) against(1);
    min_dot = std::min(min_dot, lowest);
    if (lowest < cos_limit) {
      ++above;
      first = std::min(first, o);
      if (mark) mark(o);
    }
  }
  AxisTurns t;
  t.max_degrees = degrees_of_cosine(min_dot);
  t.above = above;
  t.first = first == none ? -1 : first;
  return t;
}

}  // namespace minimod::physics
