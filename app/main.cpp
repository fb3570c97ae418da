// minimod: seismic forward modelling from a YAML survey description (README.md, docs/config.md).
#include <omp.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "app/plan.hpp"
#include "app/run.hpp"
#include "io/config.hpp"
#include "io/output_file.hpp"
#include "kernels/backends.hpp"
#include "physics/error.hpp"
#include "physics/log.hpp"

namespace {

using namespace minimod;

constexpr const char* kUsage = R"(usage: minimod --config FILE [options]

Seismic forward modelling (acoustic, 8th order in space, PML) on CPUs and NVIDIA GPUs.

options:
  --config FILE       survey description (YAML; see docs/config.md)
  --set KEY=VALUE     override a config key, e.g. --set time.duration=0.5 (repeatable)
  --dry-run           validate the config, print the plan (grid, dt, steps, memory) and exit
  --list-kernels      print the available backends and kernel families and exit
  --quiet             only warnings and errors on stderr
  --verbose           debug output
  --version           print the version and exit
  --help              this text

exit status: 0 success, 2 bad config or command line, 1 other errors.
)";

struct Cli {
  std::string config;
  std::vector<std::string> overrides;
  bool dry_run = false, list_kernels = false;
};

Cli parse_cli(int argc, char** argv) {
  Cli cli;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto value = [&](const char* name) -> std::string {
      if (a + 1 >= argc) throw ConfigError(std::string("command line: ") + name + " needs a value");
      return argv[++a];
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--version") {
      std::printf("minimod %s (commit %s)\n", MINIMOD_VERSION, MINIMOD_COMMIT);
      std::exit(0);
    } else if (arg == "--config" || arg == "-c") {
      cli.config = value("--config");
    } else if (arg.rfind("--config=", 0) == 0) {
      cli.config = arg.substr(9);
    } else if (arg == "--set") {
      cli.overrides.push_back(value("--set"));
    } else if (arg == "--dry-run") {
      cli.dry_run = true;
    } else if (arg == "--list-kernels") {
      cli.list_kernels = true;
    } else if (arg == "--quiet" || arg == "-q") {
      log::set_level(log::Level::warn);
    } else if (arg == "--verbose" || arg == "-v") {
      log::set_level(log::Level::debug);
    } else {
      throw ConfigError("command line: unknown option '" + arg + "' (see minimod --help)");
    }
  }
  if (cli.config.empty() && !cli.list_kernels)
    throw ConfigError("command line: --config FILE is required (see minimod --help)");
  return cli;
}

int run(int argc, char** argv) {
  const Cli cli = parse_cli(argc, argv);
  if (cli.list_kernels) {
    for (const auto& line : kernels::list_kernels()) std::printf("%s\n", line.c_str());
    return 0;
  }
  const io::Config config = io::load_config(cli.config, cli.overrides);
  const app::RunPlan plan = app::make_plan(config);
  const std::string backend = kernels::resolve_backend(config.execution.backend);
  if (config.execution.threads > 0) omp_set_num_threads(config.execution.threads);
  kernels::check_kernel_name(config.execution.kernel);

  log::info("minimod " + std::string(MINIMOD_VERSION) + " (" + MINIMOD_COMMIT + "), backend " +
            backend + "\n" + app::describe(plan));
  for (const auto& w : plan.warnings) log::warn(w);
  if (cli.dry_run) return 0;

  // Output first: refuse an existing result before spending any time.
  io::OutputFile out(config.output.file, config.output.overwrite);
  auto prop = kernels::make_acoustic_iso(plan.problem, backend, config.execution.kernel);
  log::info("kernel " + prop->kernel() + ", " + std::to_string(omp_get_max_threads()) +
            " CPU threads");
  const app::RunResult r = app::run_shot(plan, *prop, &out);

  out.write_receivers(plan.receiver_positions);
  out.write_seismogram(config.output.record, r.seismogram, plan.receiver_count(), r.samples,
                       plan.record_every * plan.dt);
  if (config.output.final_wavefield) {
    const auto& s = plan.model_shape;
    std::vector<float> u(static_cast<size_t>(s.i) * s.j * s.k);
    prop->read_field("u", {{plan.pad_lo[0], plan.pad_lo[1], plan.pad_lo[2]}, s}, {1, 1, 1}, u.data());
    out.write_final_wavefield(config.output.record, {s.i, s.j, s.k}, u.data());
  }
  io::RunAttributes attr;
  attr.dt = plan.dt;
  attr.spacing = plan.problem.grid.spacing;
  attr.origin = {0, 0, 0};
  attr.propagator = config.propagator;
  attr.backend = prop->backend();
  attr.kernel = prop->kernel();
  attr.version = MINIMOD_VERSION;
  attr.commit = MINIMOD_COMMIT;
  attr.config_text = config.text;
  attr.shape = {plan.model_shape.i, plan.model_shape.j, plan.model_shape.k};
  attr.pml_lo = plan.problem.pml.lo;
  attr.pml_hi = plan.problem.pml.hi;
  out.set_attributes(attr);
  out.commit();

  const auto& g = plan.problem.grid.shape;
  std::printf("summary propagator=%s backend=%s kernel=%s shape=%dx%dx%d ranks=1 steps=%d "
              "seconds=%.3f gpts_per_s=%.3f snapshot_wait_s=%.3f output=%s\n",
              config.propagator.c_str(), prop->backend().c_str(), prop->kernel().c_str(), g.i, g.j,
              g.k, plan.steps, r.seconds, r.gpts_per_s, r.snapshot_wait_seconds,
              config.output.file.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const ConfigError& e) {
    log::error(e.what());
    return 2;
  } catch (const std::exception& e) {
    log::error(e.what());
    return 1;
  }
}
