// Benchmark driver (DESIGN.md §8): propagators x kernels x shapes on Minimod's benchmark case
// (configs/minimod-benchmark.yaml: homogeneous, 27-point PML inside the grid), the time loop timed
// after warm-up (CUDA events on a GPU), the machine's bandwidth measured in the same run, one table.
//
//   minimod_bench --backend cuda --kernels gmem,gmem:64x4x2 --shapes 512,1000,1200x800x600 --steps 100
//   minimod_bench --propagator acoustic_tti --backend cuda --kernels swic --shapes 768
// acoustic_tti runs the same case with a tilted VTI medium (eps 0.2, delta 0.1, tilt 30 deg,
// azimuth 20 deg) and its absorbing layer in the same 27 points: the config's default (the CPML)
// unless --set boundary.pml.tti=sponge; the table names it. With --set boundary.pml.width=N the
// layer is N points, the model shrunk to keep the grid's shape.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "app/plan.hpp"
#include "io/config.hpp"
#include "kernels/backends.hpp"
#include "kernels/tti_propagator.hpp"
#include "physics/error.hpp"
#include "pml/regions.hpp"
#if defined(MINIMOD_HAVE_CUDA)
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/registry.hpp"
#endif

namespace {

using namespace minimod;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::array<int, 3> parse_shape(const std::string& s) {
  std::array<int, 3> n{};
  if (std::sscanf(s.c_str(), "%dx%dx%d", &n[0], &n[1], &n[2]) == 3) return n;
  const int c = std::stoi(s);
  return {c, c, c};
}

/// Host triad a = b + c * d over 3 x 512 MiB (3 reads, 1 write): bytes/s.
double cpu_bandwidth() {
  const size_t n = 1u << 27;
  std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f), d(n, 0.5f);
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + c[i] * d[i];
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, 16.0 * n / s);
  }
  return best + a[n / 2] * 0;  // keep `a` alive
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

float amplitude(int step, const void* ctx) {
  const auto* plan = static_cast<const app::RunPlan*>(ctx);
  return static_cast<float>(plan->wavelet(step * plan->dt));
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "cpu", kernels_arg = "reference", shapes_arg = "256", propagator = "acoustic_iso";
  int steps = 50, warmup = 5;
  std::vector<std::string> sets;  // extra --set overrides of the benchmark config
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto next = [&]() -> std::string { return a + 1 < argc ? argv[++a] : ""; };
    if (arg == "--backend") backend = next();
    else if (arg == "--kernels") kernels_arg = next();
    else if (arg == "--shapes") shapes_arg = next();
    else if (arg == "--steps") steps = std::stoi(next());
    else if (arg == "--warmup") warmup = std::stoi(next());
    else if (arg == "--set") sets.push_back(next());
    else if (arg == "--propagator") propagator = next();
    else {
      std::fprintf(stderr, "usage: minimod_bench [--backend cpu|cuda] [--kernels a,b:XxYxZ] "
                           "[--shapes 256,1200x800x600] [--steps N] [--warmup N] [--set key=value] "
                           "[--propagator acoustic_iso|acoustic_tti]\n");
      return 2;
    }
  }
  try {
    std::string device;
    double bandwidth = 0;
    if (backend == "cpu") {
      device = "CPU, " + std::to_string(omp_get_max_threads()) + " threads";
      bandwidth = cpu_bandwidth();
    } else {
#if defined(MINIMOD_HAVE_CUDA)
      device = kernels::cuda::device_name();
      bandwidth = kernels::cuda::measure_copy_bandwidth();
#else
      throw Error("built without CUDA");
#endif
    }
    std::printf("# %s, measured bandwidth %.1f GB/s (%s), commit %s\n", device.c_str(),
                bandwidth / 1e9, backend == "cpu" ? "triad a = b + c*d" : "cudaMemcpy D2D",
                MINIMOD_COMMIT);
    std::printf("| propagator | kernel | shape | steps | GPts/s | GB/s | %% of floor | resources |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    std::fflush(stdout);
    for (const auto& shape_s : split(shapes_arg, ',')) {
      const auto n = parse_shape(shape_s);
      const bool tti = propagator == "acoustic_tti";
      // TTI runs in standard mode, whose layer pads the model: a model 54 points smaller gives
      // the same grid with the same 27-point layer inside it (2 N smaller with --set
      // boundary.pml.width=N, read here from the config those settings give).
      constexpr int kTtiLayer = 27;
      const std::string case_file = std::string(MINIMOD_SOURCE_DIR) + "/configs/minimod-benchmark.yaml";
      const std::vector<std::string> tti_sets = {"propagator=acoustic_tti", "mode=standard",
                                                 "boundary.pml.width=" + std::to_string(kTtiLayer)};
      int pad = 0;
      if (tti) {  // the validated width the settings give (the shape is set once it is known)
        std::vector<std::string> probe = tti_sets;
        probe.insert(probe.end(), sets.begin(), sets.end());
        pad = 2 * io::load_config(case_file, probe).boundary.pml_width;
      }
      std::ostringstream shape_set, pos_set;
      shape_set << "grid.shape=[" << n[0] - pad << "," << n[1] - pad << "," << n[2] - pad << "]";
      pos_set << "source.position=[" << (n[0] - pad) / 2 * 20 << "," << (n[1] - pad) / 2 * 20 << ","
              << (n[2] - pad) / 2 * 20 << "]";
      std::vector<std::string> overrides = {shape_set.str(), pos_set.str(),
                                            "time.steps=" + std::to_string(steps + warmup)};
      if (tti) {
        overrides.insert(overrides.end(), tti_sets.begin(), tti_sets.end());
        overrides.insert(overrides.end(), {"model.epsilon.constant=0.2", "model.delta.constant=0.1",
                                           "model.theta.constant=30", "model.phi.constant=20"});
      }
      overrides.insert(overrides.end(), sets.begin(), sets.end());
      const auto plan_start = std::chrono::steady_clock::now();
      auto config = io::load_config(case_file, overrides);
      config.receivers.clear();
      const app::RunPlan plan = app::make_plan(config);
      const double plan_s = seconds_since(plan_start);
      const physics::Index3 grid = plan.problem.grid.shape;
      if (grid.i != n[0] || grid.j != n[1] || grid.k != n[2])
        throw Error("the grid is " + std::to_string(grid.i) + "x" + std::to_string(grid.j) + "x" +
                    std::to_string(grid.k) + ", not the shape asked for (" + shape_s + ")");
      // Compulsory bytes: inner points read u, u_prev, v2dt2 and write u_next (16 B); PML points
      // also read and write the auxiliary field (24 B), eta being rebuilt from 1D profiles.
      // TTI: p, q, p_prev, q_prev, (v dt)^2, b, nx, ny, nz, 1/a read and p, q written (48 B);
      // sponge points also read and write aux_p, aux_q (64 B); CPML points write and read V of
      // both tensors (48 B more) and, per axis damped there, read and write psi and zeta of both
      // fields (32 B more): summed over the layer as the damped indices of each axis times the
      // points of a plane across it.
      const bool cpml = tti && plan.tti_problem.layer == kernels::TtiLayer::cpml;
      double bytes = 0;
      for (const auto& r : pml::make_regions(plan.problem.grid.shape, plan.problem.pml))
        bytes += static_cast<double>(r.box.points()) *
                 (tti ? (r.is_pml ? (cpml ? 96.0 : 64.0) : 48.0) : (r.is_pml ? 24.0 : 16.0));
      const double points = static_cast<double>(plan.problem.grid.points());
      if (cpml)
        for (int a = 0; a < 3; ++a) {
          const auto& b = plan.tti_problem.cpml.b[static_cast<size_t>(a)];
          const double damped = static_cast<double>(std::count_if(b.begin(), b.end(), [](float x) { return x != 0.0f; }));
          bytes += 32.0 * damped * points / static_cast<double>(b.size());
        }
      const std::string width = pad == 2 * kTtiLayer ? "" : ", " + std::to_string(pad / 2) + " points";
      const std::string axis = std::string(", ") + kernels::tti_axis_kind(plan.tti_problem);
      const std::string layer_axis =
          cpml && plan.tti_problem.layer_axis == kernels::TtiLayerAxis::vertical ? ", its axis vertical" : "";
      const std::string label =
          tti ? propagator + (cpml ? " (cpml" : " (sponge") + width + layer_axis + axis + ")" : propagator;
      const double floor_gpts = bandwidth / (bytes / points) / 1e9;
      for (const auto& kernel : split(kernels_arg, ',')) {
        const auto made_start = std::chrono::steady_clock::now();
        auto prop = tti ? kernels::make_acoustic_tti(plan.tti_problem, backend, kernel)
                        : kernels::make_acoustic_iso(plan.problem, backend, kernel);
        const double made_s = seconds_since(made_start);
        const double warmup_s = prop->timed_steps(0, warmup, plan.source, &amplitude, &plan);
        const double s = prop->timed_steps(warmup, steps, plan.source, &amplitude, &plan);
        // Where a run's wall time goes besides the timed steps (on stderr: the table stays clean).
        std::fprintf(stderr, "# %s %s: setup %.1f s (the plan %.1f, the propagator %.1f), warm-up %.1f s, steps %.1f s\n",
                     shape_s.c_str(), kernel.c_str(), plan_s + made_s, plan_s, made_s, warmup_s, s);
        const auto health = prop->health();
        if (!health.finite || health.max_abs == 0) throw Error("benchmark field is zero or non-finite");
        const double gpts = points * steps / s / 1e9;
        std::string res = "-";
#if defined(MINIMOD_HAVE_CUDA)
        if (backend == "cuda") {
          std::string chosen = prop->kernel();  // "family XxYxZ"
          chosen[chosen.find(' ')] = ':';
          res = kernels::cuda::kernel_resources(chosen, tti, tti && plan.tti_problem.constant_axis);
        }
#endif
        std::printf("| %s | %s | %dx%dx%d | %d | %.2f | %.0f | %.0f%% | %s |\n", label.c_str(),
                    prop->kernel().c_str(), n[0], n[1], n[2], steps, gpts,
                    bytes * steps / s / 1e9, 100.0 * gpts / floor_gpts, res.c_str());
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "minimod_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
