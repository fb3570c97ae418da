// Helpers of the cross-rank tests (tests/mpi_ranks/): the world, every factorisation of the rank
// count, random source and receiver nodes, and one run of a propagator from random initial fields
// whose traces, final fields, strided snapshot and health are then compared with the one-rank run.
#pragma once
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kernels/propagator.hpp"
#include "random_problem.hpp"
#include "differences.hpp"

namespace minimod::testing {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

inline std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

/// Every (px, py, pz) with px * py * pz = ranks.
inline std::vector<std::array<int, 3>> factorisations(int ranks) {
  std::vector<std::array<int, 3>> out;
  for (int px = 1; px <= ranks; ++px)
    for (int py = 1; py <= ranks; ++py)
      if (ranks % (px * py) == 0) out.push_back({px, py, ranks / (px * py)});
  return out;
}

/// `count` points of `per` nodes each at random grid positions, random weights.
inline std::vector<kernels::NodeWeight> random_nodes(std::mt19937& rng, Index3 n, int count,
                                                     int per) {
  std::vector<kernels::NodeWeight> v;
  std::uniform_real_distribution<float> w(-1, 1);
  for (int p = 0; p < count; ++p)
    for (int e = 0; e < per; ++e) {
      const Index3 at{static_cast<int>(rng() % static_cast<unsigned>(n.i)),
                      static_cast<int>(rng() % static_cast<unsigned>(n.j)),
                      static_cast<int>(rng() % static_cast<unsigned>(n.k))};
      bool dup = false;  // one node per grid point and receiver, as interpolation gives
      for (const auto& x : v) dup |= x.point == p && x.node == at;
      if (!dup) v.push_back({at, w(rng), p});
    }
  return v;
}

struct Outcome {
  std::vector<float> traces, snapshot;
  std::vector<std::vector<float>> fields;  // whole grid, in the order asked for
  kernels::FieldHealth health;
};

/// What run_from_random_state does and reads back.
struct RunSpec {
  int steps = 9;
  std::vector<std::string> fields;  // read over the whole grid at the end
  std::string snapshot_field;       // read strided over snapshot_box
  Box3 snapshot_box;
  Index3 snapshot_stride{2, 3, 2};
};

/// "n of N differ, first at flat index f": where two arrays part (for failure messages).
inline std::string where_differ(const std::vector<float>& a, const std::vector<float>& b) {
  size_t count = 0, first = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (!(a[i] == b[i]) && count++ == 0) first = i;
  return std::to_string(count) + " of " + std::to_string(a.size()) + " differ, first at flat index " +
         std::to_string(first);
}

/// read_field_by_parts with slabs of two planes of the strided box (the 3 floats more do not make
/// a third): only rank 0 is handed slabs, in order, which cover every point once and equal
/// `whole` (read_field's result there) bit for bit.
inline void expect_parts_equal_the_field(kernels::Propagator& p, const std::string& field, const Box3& b,
                                         const Index3& st, const std::vector<float>& whole) {
  const Index3 sn = physics::strided_shape(b, st);
  const std::int64_t plane = static_cast<std::int64_t>(sn.j) * sn.k;
  const bool root = world_rank() == 0;
  std::vector<float> got(root ? whole.size() : 0, 0.0f);
  std::vector<int> times(got.size(), 0);
  int parts = 0;
  p.read_field_by_parts(field, b, st, 2 * plane + 3, [&](const kernels::FieldPart& part) {
    ASSERT_TRUE(root) << "a part handed to rank " << world_rank();
    EXPECT_EQ(part.offset, (Index3{2 * parts, 0, 0}));
    EXPECT_EQ(part.count, (Index3{std::min(2, sn.i - 2 * parts), sn.j, sn.k}));
    ++parts;
    for (int i = 0; i < part.count.i; ++i)
      for (int j = 0; j < part.count.j; ++j)
        for (int k = 0; k < part.count.k; ++k) {
          const size_t at = (static_cast<size_t>(part.offset.i + i) * sn.j + part.offset.j + j) * sn.k + part.offset.k + k;
          ASSERT_LT(at, got.size());
          got[at] = part.data[(static_cast<size_t>(i) * part.count.j + j) * part.count.k + k];
          ++times[at];
        }
  });
  if (!root) return;
  EXPECT_EQ(parts, (sn.i + 1) / 2) << field;
  EXPECT_EQ(std::count(times.begin(), times.end(), 1), static_cast<std::ptrdiff_t>(times.size()))
      << "points of " << field << " handed out never or more than once";
  EXPECT_EQ(max_difference(got, whole), 0.0) << field << " by parts: " << where_differ(got, whole);
}

/// spec.steps steps from random u (p) and u_prev (p_prev) with one random multi-node source and 23
/// receivers, then the fields and the strided snapshot (rank 0 only in a distributed run).
inline Outcome run_from_random_state(kernels::Propagator& p, Index3 n, unsigned seed,
                                     const RunSpec& spec) {
  std::mt19937 rng(seed);
  const std::int64_t points = static_cast<std::int64_t>(n.i) * n.j * n.k;
  const auto src = random_nodes(rng, n, 1, 8);
  const auto rec = random_nodes(rng, n, 23, 8);
  p.write_state(random_field(seed + 1, points).data(), random_field(seed + 2, points).data());
  p.set_receivers(rec, 23);
  for (int s = 0; s < spec.steps; ++s) p.step(src, std::sin(0.7f * static_cast<float>(s + 1)));
  Outcome o;
  p.take_traces(o.traces);
  const bool root = world_rank() == 0;
  for (const auto& f : spec.fields) {
    o.fields.emplace_back(root ? static_cast<size_t>(points) : 0);
    p.read_field(f, {{0, 0, 0}, n}, {1, 1, 1}, o.fields.back().data());
  }
  const Box3& b = spec.snapshot_box;
  const Index3& st = spec.snapshot_stride;
  const Index3 sn = physics::strided_shape(b, st);
  o.snapshot.resize(root ? static_cast<size_t>(sn.i) * sn.j * sn.k : 0);
  p.read_field(spec.snapshot_field, b, st, o.snapshot.data());
  expect_parts_equal_the_field(p, spec.snapshot_field, b, st, o.snapshot);
  o.health = p.health();
  return o;
}

/// Largest |a - b| relative to max |a| (0 when bitwise equal; NaN where either is not finite).
inline double worst(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (float x : a) m = std::max(m, double(std::fabs(x)));
  const double d = max_difference(a, b);
  return d == 0 ? 0 : d / m;
}

/// Rank 0: `got` equals `ref` within `tol` (relative to each quantity's maximum; 0 = bitwise).
inline void expect_same_outcome(const Outcome& ref, const Outcome& got,
                                const std::vector<std::string>& fields, double tol,
                                const std::string& what, bool check_where) {
  ASSERT_EQ(got.traces.size(), ref.traces.size()) << what;
  EXPECT_LE(worst(ref.traces, got.traces), tol) << what << ": receiver traces";
  for (size_t f = 0; f < fields.size(); ++f)
    EXPECT_LE(worst(ref.fields[f], got.fields[f]), tol) << what << ": final " << fields[f] << " ("
                                                        << where_differ(ref.fields[f], got.fields[f]) << ")";
  EXPECT_LE(worst(ref.snapshot, got.snapshot), tol) << what << ": strided snapshot";
  EXPECT_EQ(got.health.finite, ref.health.finite) << what;
  EXPECT_EQ(got.health.max_abs, ref.health.max_abs) << what;
  if (check_where) EXPECT_EQ(got.health.where, ref.health.where) << what;
}

}  // namespace minimod::testing
