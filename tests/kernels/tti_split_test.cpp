// The split (product) form of the TTI operator (physics/tti.hpp, tti_rhs73_split with the static
// centre weights tti_centre) against the pair form tti_rhs73 that the CPU reference evaluates: the
// same operator, so they must agree at every point to fp32 rounding, on random media (tilt,
// azimuth, eps >= delta varying smoothly or point to point) and random or smooth fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "physics/tti.hpp"
#include "differences.hpp"

namespace minimod {
namespace {

using physics::TtiFieldPoint;
using physics::TtiMediumPoint;

constexpr int R = physics::kRadius;

/// Fields and medium on an n^3 grid plus a halo of R, with accessors around a point.
struct Box {
  int n;
  int side() const { return n + 2 * R; }
  size_t at(int i, int j, int k) const {
    return (static_cast<size_t>(i + R) * side() + (j + R)) * side() + (k + R);
  }
  size_t size() const { return static_cast<size_t>(side()) * side() * side(); }
};

struct Case {
  std::vector<TtiMediumPoint> medium;
  std::vector<TtiFieldPoint> field;
  std::vector<float> b;
};

/// A medium of smooth random tilt, azimuth, delta and eps - delta >= 0 (rough: independent per
/// point), and fields random per point (smooth: a sum of plane waves of 4..12 points).
Case make_case(const Box& box, unsigned seed, bool rough_medium, bool smooth_fields) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const double pi = 3.14159265358979323846;
  double kw[4][3], ph[4];
  for (auto& w : kw)
    for (double& c : w) c = (u(rng) - 0.5) * 2 * pi / (4 + 8 * u(rng));
  for (double& p : ph) p = 2 * pi * u(rng);
  const auto smooth = [&](int q, int i, int j, int k) {
    return std::sin(kw[q][0] * i + kw[q][1] * j + kw[q][2] * k + ph[q]);
  };
  Case c;
  c.medium.resize(box.size());
  c.field.resize(box.size());
  c.b.resize(box.size());
  for (int i = -R; i < box.n + R; ++i)
    for (int j = -R; j < box.n + R; ++j)
      for (int k = -R; k < box.n + R; ++k) {
        const bool r = rough_medium;
        const double theta = pi * (r ? u(rng) : 0.5 + 0.5 * smooth(0, i, j, k));
        const double phi = pi * (r ? 2 * u(rng) : 1 + smooth(1, i, j, k));
        const double delta = r ? -0.1 + 0.3 * u(rng) : 0.05 + 0.15 * smooth(2, i, j, k);
        const double eps = delta + (r ? 0.3 * u(rng) : 0.15 + 0.15 * smooth(3, i, j, k));
        const size_t o = box.at(i, j, k);
        c.medium[o] = physics::tti_medium_point(static_cast<float>(theta), static_cast<float>(phi),
                                                static_cast<float>(1 + 2 * delta));
        c.b[o] = static_cast<float>(2 * (eps - delta));
        float p, q;
        if (smooth_fields) {
          p = static_cast<float>(smooth(0, 2 * i, j, k) + 0.5 * smooth(1, i, 3 * j, k));
          q = static_cast<float>(0.3 * smooth(2, i, j, 2 * k));
        } else {
          p = static_cast<float>(2 * u(rng) - 1);
          q = static_cast<float>(2 * u(rng) - 1);
        }
        c.field[o] = {p + q, p};
      }
  return c;
}

/// sum|w| max|f|: the size of the operator's terms for the case's fields (the tolerances' scale).
double term_scale(const Case& c, const physics::TtiWeights& w) {
  double weight_sum = 0, field_max = 0;
  physics::for_each_tti_neighbour(w, [&](int, int, int, int, float wt) { weight_sum += std::fabs(wt); });
  for (const auto& f : c.field) field_max = std::max({field_max, double(std::fabs(f.s)), double(std::fabs(f.p))});
  return weight_sum * field_max;
}

/// visit(field, medium, b) at every point of the box, with the accessors around it and b there.
template <class Visit>
void for_each_point(const Box& box, const Case& c, const Visit& visit) {
  for (int i = 0; i < box.n; ++i)
    for (int j = 0; j < box.n; ++j)
      for (int k = 0; k < box.n; ++k) {
        const auto field = [&](int di, int dj, int dk) { return c.field[box.at(i + di, j + dj, k + dk)]; };
        const auto medium = [&](int di, int dj, int dk) { return c.medium[box.at(i + di, j + dj, k + dk)]; };
        visit(field, medium, c.b[box.at(i, j, k)]);
      }
}

struct Agreement {
  double worst = 0;  // max |split - pair| over both right-hand sides, relative to the scale
  int i = 0, j = 0, k = 0;
};

/// Both forms at every point of the grid; the error relative to sum|w| * max|f|, the size of the
/// operator's terms for fields of that scale.
Agreement compare(const Box& box, const Case& c, const std::array<double, 3>& h) {
  const physics::TtiStencil st = physics::make_tti_stencil(h);
  const physics::TtiWeights w = physics::make_tti_weights(st);
  const double scale = term_scale(c, w);
  Agreement a;
  for (int i = 0; i < box.n; ++i)
    for (int j = 0; j < box.n; ++j)
      for (int k = 0; k < box.n; ++k) {
        const auto field = [&](int di, int dj, int dk) {
          return c.field[box.at(i + di, j + dj, k + dk)];
        };
        const auto medium = [&](int di, int dj, int dk) {
          return c.medium[box.at(i + di, j + dj, k + dk)];
        };
        const float b = c.b[box.at(i, j, k)];
        const physics::TtiRhs pair = physics::tti_rhs73(field, medium, b, st);
        const physics::TtiRhs split =
            physics::tti_rhs73_split(field, medium, physics::tti_centre(medium, w), b, w);
        double err = 0;
        testing::keep_worst(err, std::fabs(double(split.p) - pair.p) / scale);
        testing::keep_worst(err, std::fabs(double(split.q) - pair.q) / scale);
        if (!(err <= a.worst) && !std::isnan(a.worst)) a = {err, i, j, k};  // a NaN stays, and fails
      }
  return a;
}

// fp32: both forms sum ~150 products of size up to w * |f|; their roundings differ, so a few
// units of 6e-8 of sum|w| max|f| apart. A wrong term (one pair's weight) is >= 1e-3 of it.
constexpr double kTolerance = 2e-6;

struct Params {
  bool rough_medium, smooth_fields;
  std::array<double, 3> h;
};

class TtiSplitForm : public ::testing::TestWithParam<Params> {};

TEST_P(TtiSplitForm, EqualsThePairFormAtEveryPoint) {
  const Box box{14};
  for (unsigned seed : {1u, 2u, 3u}) {
    const Case c = make_case(box, seed, GetParam().rough_medium, GetParam().smooth_fields);
    const Agreement a = compare(box, c, GetParam().h);
    EXPECT_LT(a.worst, kTolerance)
        << "seed " << seed << ", worst at (" << a.i << ", " << a.j << ", " << a.k << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(Media, TtiSplitForm,
                         ::testing::Values(Params{false, false, {10, 10, 10}},
                                           Params{false, true, {10, 12.5, 8}},
                                           Params{true, false, {7, 10, 12}},
                                           Params{true, true, {10, 10, 10}}));

TEST(TtiSplitForm, WrongCentreWeightIsCaught) {
  // The tolerance is meaningful: dropping one of the 72 pairs from kappa is far above it.
  const Box box{6};
  const Case c = make_case(box, 7, false, false);
  const std::array<double, 3> h{10, 10, 10};
  const physics::TtiStencil st = physics::make_tti_stencil(h);
  const physics::TtiWeights w = physics::make_tti_weights(st);
  double weight_sum = 0;
  physics::for_each_tti_neighbour(
      w, [&](int, int, int, int, float wt) { weight_sum += std::fabs(wt); });
  const auto field = [&](int di, int dj, int dk) {
    return c.field[box.at(2 + di, 3 + dj, 3 + dk)];
  };
  const auto medium = [&](int di, int dj, int dk) {
    return c.medium[box.at(2 + di, 3 + dj, 3 + dk)];
  };
  physics::TtiCentre kappa = physics::tti_centre(medium, w);
  const TtiMediumPoint m0 = medium(0, 0, 0), m4 = medium(0, 0, 4);
  kappa.perp +=
      w.z[3] * (physics::perp_own(m0, physics::kZZ) - physics::nn_component(m4, physics::kZZ));
  const auto pair = physics::tti_rhs73(field, medium, 0.2f, st);
  const auto split = physics::tti_rhs73_split(field, medium, kappa, 0.2f, w);
  EXPECT_GT(std::fabs(double(split.p) - pair.p) / (weight_sum * std::fabs(field(0, 0, 0).s)),
            kTolerance);
}

// The VTI form (physics::vti_rhs25 and its rows vti_rows25, 25 points) equals the 73-point pair
// form (tti_rhs73, tti_rows73) wherever the symmetry axis is vertical, delta and eps varying
// (smoothly or point to point), the azimuth anything; and only there: with the medium's own tilt
// it is far off.
TEST(VtiForm, EqualsThePairFormWhereTheAxisIsVertical) {
  const Box box{12};
  const std::array<double, 3> h{10, 12.5, 8};
  const physics::TtiStencil st = physics::make_tti_stencil(h);
  const double scale_weights = [&] {
    double sum = 0;
    physics::for_each_tti_neighbour(physics::make_tti_weights(st), [&](int, int, int, int, float wt) { sum += std::fabs(wt); });
    return sum;
  }();
  for (const bool rough : {false, true}) {
    Case c = make_case(box, 11, rough, !rough);
    double field_max = 0;
    for (const auto& f : c.field) field_max = std::max({field_max, double(std::fabs(f.s)), double(std::fabs(f.p))});
    const double scale = scale_weights * field_max;
    Case vti = c;
    for (size_t o = 0; o < vti.medium.size(); ++o) {
      const float phi = 0.37f * static_cast<float>(o % 17);  // the azimuth of a vertical axis is moot
      ASSERT_TRUE(physics::tti_axis_is_vertical(0.0f, phi));
      vti.medium[o] = physics::tti_medium_point(0.0f, phi, 1.0f / c.medium[o].inv_a);
    }
    double worst = 0, tilted_worst = 0;
    for_each_point(box, vti, [&](const auto& field, const auto& medium, float b) {
      const physics::TtiRhs pair = physics::tti_rhs73(field, medium, b, st);
      const physics::TtiRhs v = physics::vti_rhs25(field, medium, b, st);
      testing::keep_worst(worst, std::fabs(double(v.p) - pair.p) / scale);
      testing::keep_worst(worst, std::fabs(double(v.q) - pair.q) / scale);
      const physics::TtiRows rows = physics::tti_rows73(field, medium, st);
      const physics::TtiRows vrows = physics::vti_rows25(field, medium, st);
      for (int a = 0; a < 3; ++a) {
        testing::keep_worst(worst, std::fabs(double(vrows.perp[a]) - rows.perp[a]) / scale);
        testing::keep_worst(worst, std::fabs(double(vrows.axis[a]) - rows.axis[a]) / scale);
      }
    });
    for_each_point(box, c, [&](const auto& field, const auto& medium, float b) {
      const physics::TtiRhs pair = physics::tti_rhs73(field, medium, b, st);
      const physics::TtiRhs v = physics::vti_rhs25(field, medium, b, st);
      testing::keep_worst(tilted_worst, std::fabs(double(v.p) - pair.p) / scale);
    });
    EXPECT_LT(worst, kTolerance) << (rough ? "rough" : "smooth");
    EXPECT_GT(tilted_worst, 1e-3) << (rough ? "rough" : "smooth");
  }
  EXPECT_FALSE(physics::tti_axis_is_vertical(1e-3f, 0.0f));
  EXPECT_FALSE(physics::tti_axis_is_vertical(3.14159265f, 0.0f));  // sin(pi) is not 0 in float
}

// The constant-axis form (physics::tti_rhs73_axis: three sums of constant weights, what
// swic_split_tma evaluates where the model's axis is constant) equals the pair form wherever the
// axis is the same at every point, delta and eps varying (smoothly or point to point), for tilts
// on and off the grid's planes; the weights a kernel folds (make_tti_axis_weights) are the
// stencil's times the factors, and their kappa_perp is every point's. With the medium's own
// varying axis it is far off.
TEST(TtiAxisForm, EqualsThePairFormWhereTheAxisIsConstant) {
  const Box box{12};
  const std::array<double, 3> h{10, 12.5, 8};
  const physics::TtiStencil st = physics::make_tti_stencil(h);
  const physics::TtiWeights w = physics::make_tti_weights(st);
  const std::pair<float, float> axes[] = {{0.5236f, 0.3491f}, {1.5708f, 0.0f}, {2.3f, 4.1f}, {0.0f, 1.0f}};
  for (const bool rough : {false, true})
    for (const auto& [theta, phi] : axes) {
      SCOPED_TRACE(std::string(rough ? "rough" : "smooth") + " theta " + std::to_string(theta) + " phi " +
                   std::to_string(phi));
      const Case c = make_case(box, 13, rough, !rough);
      const double scale = term_scale(c, w);
      const TtiMediumPoint n = physics::tti_medium_point(theta, phi, 1.0f);
      Case axis = c;
      for (size_t o = 0; o < axis.medium.size(); ++o)
        axis.medium[o] = physics::tti_medium_point(theta, phi, 1.0f / c.medium[o].inv_a);
      // kappa_perp is the same at every point (what the weights carry); kappa_axis is not.
      const float kappa_perp = physics::make_tti_axis_weights(w, n).kappa_perp;
      double worst = 0, varying_worst = 0, kappa_worst = 0;
      for_each_point(box, axis, [&](const auto& field, const auto& medium, float b) {
        const physics::TtiRhs pair = physics::tti_rhs73(field, medium, b, st);
        const physics::TtiCentre kappa{kappa_perp, physics::tti_centre(medium, w).axis};
        const physics::TtiRhs x = physics::tti_rhs73_axis(field, medium, n, kappa, b, w);
        testing::keep_worst(worst, std::fabs(double(x.p) - pair.p) / scale);
        testing::keep_worst(worst, std::fabs(double(x.q) - pair.q) / scale);
        testing::keep_worst(kappa_worst, std::fabs(double(physics::tti_centre(medium, w).perp) - kappa_perp));
      });
      EXPECT_LE(kappa_worst, 1e-6 * std::fabs(kappa_perp));
      for_each_point(box, c, [&](const auto& field, const auto& medium, float b) {
        const physics::TtiRhs pair = physics::tti_rhs73(field, medium, b, st);
        const physics::TtiRhs x = physics::tti_rhs73_axis(field, medium, n, physics::tti_centre(medium, w), b, w);
        testing::keep_worst(varying_worst, std::fabs(double(x.p) - pair.p) / scale);
      });
      EXPECT_LT(worst, kTolerance);
      EXPECT_GT(varying_worst, 1e-3);
    }
  const TtiMediumPoint n = physics::tti_medium_point(0.7f, 2.0f, 1.0f);
  const physics::TtiAxisFactors f = physics::tti_axis_factors(n);
  const physics::TtiAxisWeights aw = physics::make_tti_axis_weights(w, n);
  EXPECT_FLOAT_EQ(aw.w[physics::kXZ][2].s, w.xz[2] * -2.0f * n.nx * n.nz);
  EXPECT_FLOAT_EQ(aw.w[physics::kYY][3].a, w.y[3] * n.ny * n.ny);
  EXPECT_FLOAT_EQ(f.perp[physics::kZZ], 2.0f * (1.0f - n.nz * n.nz));
}

// The rows of the operator (physics::tti_rows73, what the CPML filters axis by axis) add up to
// the pair form at every point, on rough and smooth media and fields.
TEST(TtiRows, AddUpToThePairForm) {
  const Box box{10};
  const std::array<double, 3> h{10, 12.5, 8};
  const physics::TtiStencil st = physics::make_tti_stencil(h);
  for (bool rough : {false, true}) {
    const Case c = make_case(box, 11, rough, !rough);
    double worst = 0;
    for_each_point(box, c, [&](const auto& field, const auto& medium, float b) {
      const physics::TtiRhs pair = physics::tti_rhs73(field, medium, b, st);
      const physics::TtiRows rows = physics::tti_rows73(field, medium, st);
      const double perp = double(rows.perp[0]) + rows.perp[1] + rows.perp[2];
      const double axis = double(rows.axis[0]) + rows.axis[1] + rows.axis[2];
      const double a = 1.0 / medium(0, 0, 0).inv_a;
      testing::keep_worst(worst, std::fabs(a * (perp + axis) - pair.p));
      testing::keep_worst(worst, std::fabs(b * perp - pair.q));
    });
    EXPECT_LT(worst / term_scale(c, physics::make_tti_weights(st)), kTolerance) << (rough ? "rough" : "smooth");
  }
}

// The rows in the constant-axis form (physics::tti_rows73_axis: three sums of each row, what
// swic_split_tma's CPML launch evaluates where the model's axis is constant) equal the pair form's
// rows at every point, row by row, wherever the axis is the same everywhere; with the medium's own
// varying axis they are far off.
TEST(TtiRows, AxisFormEqualsThePairFormRowByRowWhereTheAxisIsConstant) {
  const Box box{10};
  const std::array<double, 3> h{10, 12.5, 8};
  const physics::TtiStencil st = physics::make_tti_stencil(h);
  const physics::TtiWeights w = physics::make_tti_weights(st);
  const std::pair<float, float> axes[] = {{0.5236f, 0.3491f}, {1.5708f, 0.0f}, {2.3f, 4.1f}};
  for (const bool rough : {false, true})
    for (const auto& [theta, phi] : axes) {
      SCOPED_TRACE(std::string(rough ? "rough" : "smooth") + " theta " + std::to_string(theta));
      const Case c = make_case(box, 19, rough, !rough);
      const TtiMediumPoint n = physics::tti_medium_point(theta, phi, 1.0f);
      Case axis = c;
      for (size_t o = 0; o < axis.medium.size(); ++o)
        axis.medium[o] = physics::tti_medium_point(theta, phi, 1.0f / c.medium[o].inv_a);
      double worst = 0, varying_worst = 0;
      const auto compare = [&](const Case& k, double& into) {
        for_each_point(box, k, [&](const auto& field, const auto& medium, float) {
          const physics::TtiRows pair = physics::tti_rows73(field, medium, st);
          const physics::TtiRows x = physics::tti_rows73_axis(field, medium, n, physics::tti_row_centres(medium, w), w);
          for (int a = 0; a < 3; ++a) {
            testing::keep_worst(into, std::fabs(double(x.perp[a]) - pair.perp[a]));
            testing::keep_worst(into, std::fabs(double(x.axis[a]) - pair.axis[a]));
          }
        });
      };
      compare(axis, worst);
      compare(c, varying_worst);
      EXPECT_LT(worst / term_scale(axis, w), kTolerance);
      EXPECT_GT(varying_worst / term_scale(c, w), 1e-3);
    }
  // The row weights: each group's share of a row, exactly.
  const physics::TtiAxisWeights aw = physics::make_tti_axis_weights(w, physics::tti_medium_point(0.7f, 2.0f, 1.0f));
  const physics::TtiAxisWeights rw = physics::make_tti_axis_row_weights(aw);
  EXPECT_EQ(rw.w[physics::kXX][1].s, 0.5f * aw.w[physics::kXX][1].s);
  EXPECT_EQ(rw.w[physics::kYZ][3].a, 0.25f * aw.w[physics::kYZ][3].a);
}

// The rows in the split form (physics::tti_rows73_split, with the static row centre weights
// tti_row_centres: what swic_split_tma's CPML launch evaluates) equal the pair form's rows at every
// point, row by row, to fp32 rounding; a wrong row centre weight is caught.
TEST(TtiRows, SplitFormEqualsThePairFormRowByRow) {
  const Box box{10};
  const std::array<double, 3> h{10, 12.5, 8};
  const physics::TtiStencil st = physics::make_tti_stencil(h);
  const physics::TtiWeights w = physics::make_tti_weights(st);
  for (bool rough : {false, true}) {
    const Case c = make_case(box, 17, rough, !rough);
    double worst = 0, wrong = 0;
    for_each_point(box, c, [&](const auto& field, const auto& medium, float) {
      const physics::TtiRows pair = physics::tti_rows73(field, medium, st);
      physics::TtiRowCentres kappa = physics::tti_row_centres(medium, w);
      const physics::TtiRows split = physics::tti_rows73_split(field, medium, kappa, w);
      for (int a = 0; a < 3; ++a) {
        testing::keep_worst(worst, std::fabs(double(split.perp[a]) - pair.perp[a]));
        testing::keep_worst(worst, std::fabs(double(split.axis[a]) - pair.axis[a]));
      }
      kappa.axis[1] *= 1.01f;  // one row's weight 1% off
      const physics::TtiRows off = physics::tti_rows73_split(field, medium, kappa, w);
      wrong = std::max(wrong, std::fabs(double(off.axis[1]) - pair.axis[1]));
    });
    const double scale = term_scale(c, w);
    EXPECT_LT(worst / scale, kTolerance) << (rough ? "rough" : "smooth");
    EXPECT_GT(wrong / scale, 100 * kTolerance) << (rough ? "rough" : "smooth");
  }
}

// In a constant medium, row a is d_a (C grad f)_a = sum_b C_ab d_a d_b f: exact for a quadratic
// field (the 73-point stencil differentiates quadratics exactly), each row on its own.
TEST(TtiRows, EachRowIsOneComponentOfTheDivergenceInAConstantMedium) {
  const Box box{1};
  const std::array<double, 3> h{10, 12.5, 8};
  const double pi = 3.14159265358979323846;
  const TtiMediumPoint m = physics::tti_medium_point(static_cast<float>(40 * pi / 180),
                                                     static_cast<float>(30 * pi / 180), 1.2f);
  // Hessians of s and p (symmetric), in 1/m^2 after the spacing.
  const double hs[3][3] = {{1.0, 0.3, -0.4}, {0.3, -0.7, 0.5}, {-0.4, 0.5, 0.9}};
  const double hp[3][3] = {{-0.2, 0.6, 0.1}, {0.6, 0.8, -0.3}, {0.1, -0.3, 0.4}};
  const auto quadratic = [&](const double (&H)[3][3], int di, int dj, int dk) {
    const double x[3] = {di * h[0], dj * h[1], dk * h[2]};
    double f = 0;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) f += 0.5 * H[a][b] * x[a] * x[b];
    return f;
  };
  const auto field = [&](int di, int dj, int dk) {
    return physics::TtiFieldPoint{static_cast<float>(quadratic(hs, di, dj, dk)),
                                  static_cast<float>(quadratic(hp, di, dj, dk))};
  };
  const auto medium = [&](int, int, int) { return m; };
  const physics::TtiRows rows = physics::tti_rows73(field, medium, physics::make_tti_stencil(h));
  const double n[3] = {m.nx, m.ny, m.nz};
  for (int a = 0; a < 3; ++a) {
    double perp = 0, axis = 0;
    for (int b = 0; b < 3; ++b) {
      perp += ((a == b ? 1.0 : 0.0) - n[a] * n[b]) * hs[a][b];
      axis += n[a] * n[b] * m.inv_a * hp[a][b];
    }
    EXPECT_NEAR(rows.perp[a], perp, 1e-4) << "row " << a;
    EXPECT_NEAR(rows.axis[a], axis, 1e-4) << "row " << a;
  }
}

}  // namespace
}  // namespace minimod
