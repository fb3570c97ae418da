// Helpers shared by the numerical tests: a config built in code, a run on a chosen backend.
#pragma once
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "app/plan.hpp"
#include "app/run.hpp"
#include "io/config.hpp"
#include "kernels/backends.hpp"

namespace minimod::testing {

/// Homogeneous acoustic model, Ricker source, no output file.
inline io::Config homogeneous_config(std::array<int, 3> shape, double h, double vp, double f) {
  io::Config c;
  c.grid.shape = shape;
  c.grid.spacing = {h, h, h};
  c.model.vp.kind = io::ParameterConfig::Kind::constant;
  c.model.vp.constant = vp;
  c.source.frequency = f;
  c.time.duration = 0.5;
  c.output.file = "";
  return c;
}

struct ShotResult {
  app::RunPlan plan;
  app::RunResult run;
  /// Trace of receiver r.
  std::vector<double> trace(int r) const {
    std::vector<double> t(static_cast<size_t>(run.samples));
    for (int s = 0; s < run.samples; ++s)
      t[static_cast<size_t>(s)] = run.seismogram[static_cast<size_t>(r) * run.samples + s];
    return t;
  }
};

inline ShotResult run_config(const io::Config& c, const std::string& backend = "cpu",
                             const std::string& kernel = "auto") {
  ShotResult r;
  r.plan = app::make_plan(c);
  auto prop = r.plan.tti ? kernels::make_acoustic_tti(r.plan.tti_problem, backend, kernel)
                         : kernels::make_acoustic_iso(r.plan.problem, backend, kernel);
  app::RunOptions opt;
  opt.progress_seconds = 0;
  r.run = app::run_shot(r.plan, *prop, nullptr, opt);
  return r;
}

/// ||a - b|| / ||b|| over the common length.
inline double relative_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double e = 0, n = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    e += (a[i] - b[i]) * (a[i] - b[i]);
    n += b[i] * b[i];
  }
  return std::sqrt(e / n);
}

/// Relative L2 error of the Minimod-compatible mode (configs/minimod-benchmark.yaml, 100³) against
/// Minimod's own final wavefield after `steps` steps (tests/data/minimod, PROVENANCE.md there).
inline double minimod_reference_error(int steps, const std::string& backend) {
  const std::string dir = MINIMOD_SOURCE_DIR;
  const auto c = io::load_config(dir + "/configs/minimod-benchmark.yaml",
                                 {"time.steps=" + std::to_string(steps), "grid.shape=[100,100,100]",
                                  "source.position=[1000,1000,1000]"});
  const auto plan = app::make_plan(c);
  auto prop = kernels::make_acoustic_iso(plan.problem, backend, "auto");
  app::RunOptions opt;
  opt.progress_seconds = 0;
  app::run_shot(plan, *prop, nullptr, opt);
  const size_t n = 100 * 100 * 100;
  std::vector<float> u(n), ref(n);
  prop->read_field("u", plan.problem.grid.box(), {1, 1, 1}, u.data());
  std::ifstream f(dir + "/tests/data/minimod/minimod_smem_u_grid100_nsteps" + std::to_string(steps) +
                      ".raw",
                  std::ios::binary);
  if (!f.read(reinterpret_cast<char*>(ref.data()), static_cast<std::streamsize>(n * 4))) return INFINITY;
  double e = 0, r = 0;
  for (size_t i = 0; i < n; ++i) {
    e += (double(u[i]) - ref[i]) * (double(u[i]) - ref[i]);
    r += double(ref[i]) * ref[i];
  }
  return std::sqrt(e / r);
}

}  // namespace minimod::testing
