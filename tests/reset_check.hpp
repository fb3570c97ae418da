// Propagator::reset (a survey's next shot on the same propagator): after a shot and a reset, the
// next shot runs bit for bit as on a propagator fresh from construction, traces and fields alike.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/propagator.hpp"
#include "random_problem.hpp"

namespace minimod::testing {

/// `make()` twice: one propagator runs a shot at one source, is reset and runs another at a
/// second source; the other runs that second shot fresh. `fields`: those compared at the end.
inline void expect_reset_is_a_fresh_start(const std::function<std::unique_ptr<kernels::Propagator>()>& make,
                                          const physics::Index3& n, const std::vector<std::string>& fields) {
  const physics::Index3 a{n.i / 3, n.j / 2, n.k / 2}, b{2 * n.i / 3, n.j / 3, n.k / 2 + 1};
  std::vector<kernels::NodeWeight> rec;
  for (int r = 0; r < 6; ++r) rec.push_back({{(4 * r + 3) % n.i, (3 * r + 1) % n.j, (5 * r + 2) % n.k}, 1.0f, r});
  const auto shot = [&](kernels::Propagator& p, const physics::Index3& at, int steps) {
    p.set_receivers(rec, 6);
    const std::vector<kernels::NodeWeight> src = {{at, 1.0f, 0}};
    for (int s = 0; s < steps; ++s) p.step(src, std::sin(0.4f * s) * std::exp(-0.02f * s));
    std::vector<float> traces;
    p.take_traces(traces);
    return traces;
  };
  auto reused = make(), fresh = make();
  const auto first = shot(*reused, a, 40);
  reused->reset();
  const auto again = shot(*reused, b, 30);
  const auto expected = shot(*fresh, b, 30);
  ASSERT_EQ(again.size(), expected.size());
  EXPECT_TRUE(std::any_of(expected.begin(), expected.end(), [](float x) { return x != 0.0f; })) << "no signal";
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(again, expected) << "traces after reset differ from a fresh propagator's";
  for (const auto& f : fields)
    EXPECT_EQ(read_all(*reused, f, {{0, 0, 0}, n}), read_all(*fresh, f, {{0, 0, 0}, n})) << f;
}

}  // namespace minimod::testing
