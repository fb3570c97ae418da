// Helpers shared by the numerical tests: a config built in code, a run on a chosen backend.
#pragma once
#include <cmath>
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
  auto prop = kernels::make_acoustic_iso(r.plan.problem, backend, kernel);
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

}  // namespace minimod::testing
