// Minimod's own output (tests/data/minimod, from reference/minimod/PROVENANCE.md) reproduced by the
// Minimod-compatible mode: configs/minimod-benchmark.yaml with 250 and 1000 steps.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "kernels/backends.hpp"
#include "test_support.hpp"

namespace minimod {
namespace {

std::vector<float> read_raw(const std::string& path, size_t count) {
  std::vector<float> v(count);
  std::ifstream f(path, std::ios::binary);
  if (!f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(count * 4))) v.clear();
  return v;
}

double minimod_error(int steps, const std::string& backend) {
  const auto c = io::load_config(std::string(MINIMOD_SOURCE_DIR) + "/configs/minimod-benchmark.yaml",
                                 {"time.steps=" + std::to_string(steps), "grid.shape=[100,100,100]",
                                  "source.position=[1000,1000,1000]"});
  const auto plan = app::make_plan(c);
  auto prop = kernels::make_acoustic_iso(plan.problem, backend, "auto");
  app::RunOptions opt;
  opt.progress_seconds = 0;
  app::run_shot(plan, *prop, nullptr, opt);
  const size_t n = 100 * 100 * 100;
  std::vector<float> u(n);
  prop->read_field("u", plan.problem.grid.box(), {1, 1, 1}, u.data());
  const auto ref = read_raw(std::string(MINIMOD_SOURCE_DIR) +
                                "/tests/data/minimod/minimod_smem_u_grid100_nsteps" +
                                std::to_string(steps) + ".raw",
                            n);
  if (ref.size() != n) return INFINITY;
  double e = 0, r = 0;
  for (size_t i = 0; i < n; ++i) {
    e += (double(u[i]) - ref[i]) * (double(u[i]) - ref[i]);
    r += double(ref[i]) * ref[i];
  }
  return std::sqrt(e / r);
}

TEST(MinimodReference, Matches250StepsWithin1e4) {
  const double e = minimod_error(250, "cpu");
  std::printf("relative L2 error after 250 steps: %.3e\n", e);
  EXPECT_LE(e, 1e-4);
}

TEST(MinimodReference, Matches1000StepsWithin1e3) {
  const double e = minimod_error(1000, "cpu");
  std::printf("relative L2 error after 1000 steps: %.3e\n", e);
  EXPECT_LE(e, 1e-3);
}

}  // namespace
}  // namespace minimod
