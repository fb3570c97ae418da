// Propagator::state_fields (a checkpoint's contents, app/checkpoint.hpp): a propagator's state
// read after some steps and written into a fresh one, which then runs on bit for bit as the first
// does, traces and fields alike. A field missing from the list, or one read or written wrong, is
// caught here on every backend and family.
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

/// `make()` twice: the first propagator runs 40 steps, its state goes into the second, and both
/// run 30 more; `fields`: those compared at the end besides the traces.
inline void expect_state_carries_the_run(const std::function<std::unique_ptr<kernels::Propagator>()>& make,
                                         const physics::Index3& n, const std::vector<std::string>& fields) {
  const physics::Box3 grid{{0, 0, 0}, n};
  std::vector<kernels::NodeWeight> rec;
  for (int r = 0; r < 6; ++r) rec.push_back({{(4 * r + 3) % n.i, (3 * r + 1) % n.j, (5 * r + 2) % n.k}, 1.0f, r});
  const std::vector<kernels::NodeWeight> src = {{{n.i / 3, n.j / 2, n.k / 2}, 1.0f, 0}};
  const auto steps = [&](kernels::Propagator& p, int from, int count) {
    for (int s = from; s < from + count; ++s) p.step(src, std::sin(0.4f * s) * std::exp(-0.02f * s));
    std::vector<float> traces;
    p.take_traces(traces);
    return traces;
  };
  auto first = make(), second = make();
  first->set_receivers(rec, 6);
  second->set_receivers(rec, 6);
  steps(*first, 0, 40);
  const auto state = first->state_fields();
  ASSERT_GE(state.size(), 2u);
  bool layer_memory = false;
  for (const auto& f : state) {
    const auto values = read_all(*first, f.name, grid);
    if (f.lives != kernels::StateField::Lives::grid)
      layer_memory = layer_memory || std::any_of(values.begin(), values.end(), [](float x) { return x != 0.0f; });
    second->write_field(f.name, grid, values.data());
  }
  second->finish_state();
  const auto expected = steps(*first, 40, 30);
  const auto carried = steps(*second, 40, 30);
  EXPECT_TRUE(std::any_of(expected.begin(), expected.end(), [](float x) { return x != 0.0f; })) << "no signal";
  EXPECT_EQ(carried, expected) << "traces of the propagator given the state differ";
  for (const auto& f : fields) EXPECT_EQ(read_all(*second, f, grid), read_all(*first, f, grid)) << f;
  for (const auto& f : state)
    if (f.lives != kernels::StateField::Lives::grid)
      EXPECT_EQ(read_all(*second, f.name, grid), read_all(*first, f.name, grid)) << f.name;
  const bool has_layer_fields = std::any_of(state.begin(), state.end(), [](const kernels::StateField& f) {
    return f.lives != kernels::StateField::Lives::grid;
  });
  if (has_layer_fields) EXPECT_TRUE(layer_memory) << "the layer's memory was still zero: the wave never reached it";
}

}  // namespace minimod::testing
