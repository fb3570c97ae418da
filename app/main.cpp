// minimod: seismic forward modelling from a YAML survey description (README.md, docs/config.md).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "app/checkpoint.hpp"
#include "app/plan.hpp"
#include "app/run.hpp"
#include "app/survey.hpp"
#include "io/config.hpp"
#include "io/output_file.hpp"
#include "kernels/backends.hpp"
#include "kernels/tti_propagator.hpp"
#include "mpi/comm.hpp"
#include "mpi/distributed_propagator.hpp"
#include "mpi/subdomain.hpp"
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

exit status: 0 success, 2 bad config or command line, 1 other errors (a survey: also where a shot
failed; the others are written, and running it again retries the failed ones), 3 stopped by
SIGUSR1 or SIGTERM after writing a checkpoint (config checkpoint:; running it again resumes).
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

/// Ranks per axis for this run: the config's, or the least-surface choice; checked against the
/// rank count.
mpi::Decomposition plan_decomposition(const app::RunPlan& plan, int ranks) {
  const auto& shape = plan.problem.grid.shape;
  const mpi::CutLimits limits =
      plan.tti ? mpi::cut_limits(plan.tti_problem) : mpi::cut_limits(plan.problem);
  const auto& asked = plan.config.execution.decomposition;
  if (asked) {
    const auto& d = *asked;
    if (d[0] * d[1] * d[2] != ranks)
      throw ConfigError("config error: execution.decomposition: [" + std::to_string(d[0]) + ", " +
                        std::to_string(d[1]) + ", " + std::to_string(d[2]) + "] needs " +
                        std::to_string(d[0] * d[1] * d[2]) + " ranks, this run has " +
                        std::to_string(ranks) + " (start it with mpirun -np N or srun -n N)");
  }
  try {
    return mpi::decompose(shape, asked ? *asked : mpi::choose_dims(shape, ranks, limits), limits);
  } catch (const ConfigError& e) {
    // The TTI CPML's limits are the only ones a key lifts: the sponge layer may be cut anywhere.
    if (plan.tti && plan.tti_problem.layer == kernels::TtiLayer::cpml)
      throw ConfigError(std::string(e.what()) + ", or boundary.pml.tti: sponge (no limit on the cuts)");
    throw;
  }
}

/// A survey's shot as one run sees it: its number and the survey's count (shot < 0: no survey).
struct ShotOf {
  int shot = -1, shots = 0;
  bool first = true;  // its group's first: the plan and its warnings are told once a group
};

/// What a shot runs with: its plan, the decomposition over its ranks and, once made, the
/// propagator (kept for the next shot of a survey whose shots share the model).
struct Prepared {
  app::RunPlan plan;
  std::optional<mpi::Decomposition> decomposition;
  std::string backend;
  std::unique_ptr<kernels::Propagator> prop;
  mpi::DistributedPropagator* dist = nullptr;
};

/// The plan of `config` on the ranks of `ranks` (the world, or a survey's group), told where
/// `tell`.
Prepared plan_shot(const io::Config& config, const mpi::Group& ranks, bool tell) {
  const bool root = ranks.rank == 0;
  const bool distributed = ranks.size > 1;
  // A one-rank run short of host memory is warned of before the plan builds the model (a TTI
  // run's peak), and again, with the whole figure, after (a distributed run's ranks hold other
  // shares, several to a node: no warning).
  bool warned_of_memory = false;
  const auto warn_of_memory = [&](std::int64_t need) {
    if (distributed || warned_of_memory) return;
    const std::string short_of_memory = app::host_memory_warning(need, app::available_host_bytes());
    if (short_of_memory.empty()) return;
    log::warn(short_of_memory);
    warned_of_memory = true;
  };
  // A distributed run's ranks each build their subdomain's window of the model only: the
  // decomposition is made once the plan has its grid and layer, before the model.
  Prepared p;
  const auto share_of = [&](const app::RunPlan& plan) -> std::optional<app::ModelShare> {
    if (!distributed) return std::nullopt;
    p.decomposition = plan_decomposition(plan, ranks.size);
    app::ModelShare share;
    share.box = p.decomposition->box_of(ranks.rank);
    share.combine = [&ranks](std::vector<double>& v, char op) { mpi::combine(ranks.comm, v, op); };
    share.first_error = [&ranks](const std::string& own) { return mpi::first_error(ranks.comm, own); };
    return share;
  };
  p.plan = app::make_plan(
      config, [&](const app::RunPlan& plan) { warn_of_memory(app::estimate_building_bytes(plan)); }, share_of);
  p.backend = kernels::resolve_backend(config.execution.backend);
  if (config.execution.threads > 0) omp_set_num_threads(config.execution.threads);
  kernels::check_kernel_name(config.execution.kernel);
  if (!p.decomposition) p.decomposition = plan_decomposition(p.plan, ranks.size);

  std::string where = "";
  if (distributed) {
    const auto b = p.decomposition->box_of(0);
    where = "decomposition " + p.decomposition->dims_string() + " over " +
            std::to_string(ranks.size) + " ranks (rank 0 owns " + std::to_string(b.n.i) + "x" +
            std::to_string(b.n.j) + "x" + std::to_string(b.n.k) + " points)\n";
  }
  if (tell) {
    log::info("minimod " + std::string(MINIMOD_VERSION) + " (" + MINIMOD_COMMIT + "), backend " +
              p.backend + "\n" + app::describe(p.plan) + app::describe_checkpoints(config, p.plan) + where);
    if (root)  // the plan's warnings are every rank's alike (its figures are combined): rank 0 gives them
      for (const auto& w : p.plan.warnings) log::warn(w);
  }
  warn_of_memory(p.plan.host_bytes);
  return p;
}

/// The result file of `config`, opened by the first rank of `ranks`: an existing result is
/// refused before any time is spent (the others learn the verdict, so a refusal ends every rank
/// the same way: false on them, ConfigError on the first).
bool open_result(const io::Config& config, const mpi::Group& ranks, std::unique_ptr<io::OutputFile>& out,
                 bool resume = false) {
  const bool root = ranks.rank == 0;
  std::string refusal;
  if (root) {
    try {
      out = std::make_unique<io::OutputFile>(config.output.file, config.output.overwrite, resume);
    } catch (const ConfigError& e) {
      refusal = e.what();
    }
  }
  if (ranks.size > 1) {
    int refused = refusal.empty() ? 0 : 1;
    MPI_Bcast(&refused, 1, MPI_INT, 0, ranks.comm);
    if (refused && !root) return false;
  }
  if (!refusal.empty()) throw ConfigError(refusal);
  return true;
}

/// The propagator of `p`'s plan on the ranks of `ranks`; the plan's model arrays are freed then.
void make_propagator(Prepared& p, const io::Config& config, const mpi::Session& session, const mpi::Group& ranks) {
  const app::RunPlan& plan = p.plan;
  if (ranks.size > 1) {
    mpi::DistributedOptions o;
    o.backend = p.backend;
    o.kernel = config.execution.kernel;
    o.transport = config.execution.transport;
    o.local_rank = session.local_rank();
    auto d = plan.tti ? std::make_unique<mpi::DistributedPropagator>(plan.tti_problem, *p.decomposition, ranks.comm, o)
                      : std::make_unique<mpi::DistributedPropagator>(plan.problem, *p.decomposition, ranks.comm, o);
    p.dist = d.get();
    p.prop = std::move(d);
  } else {
    // A rank alone on its shot among others (a survey's groups of one) takes its node's GPUs in turn.
    if (p.backend == "cuda" && session.size() > 1) kernels::select_gpu(session.local_rank());
    p.prop = plan.tti ? kernels::make_acoustic_tti(plan.tti_problem, p.backend, config.execution.kernel)
                      : kernels::make_acoustic_iso(plan.problem, p.backend, config.execution.kernel);
  }
  app::release_model_arrays(p.plan);  // the propagator has the model in its own layout now
  log::info("kernel " + p.prop->kernel() + ", " + std::to_string(omp_get_max_threads()) +
            " CPU threads" + (p.dist ? ", halo transport " + p.dist->transport() : std::string()) +
            (plan.tti ? std::string(", model: ") + kernels::tti_axis_kind(plan.tti_problem) : std::string()));
}

/// How the ranks of `ranks` agree while checkpointing.
app::RankLink rank_link(const mpi::Group& ranks) {
  app::RankLink link;
  link.root = ranks.rank == 0;
  link.ranks = ranks.size;
  if (ranks.size == 1) return link;
  const MPI_Comm comm = ranks.comm;
  link.any = [comm](bool mine) {
    int v = mine ? 1 : 0, all = 0;
    mpi::check(MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce (checkpoint)");
    return all != 0;
  };
  link.broadcast = [comm](void* data, std::int64_t bytes) {
    mpi::check(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, comm), "MPI_Bcast (checkpoint)");
  };
  link.root_message = [comm](const std::string& mine) { return mpi::first_error(comm, mine); };
  return link;
}

/// A shot's checkpoints, where the config asks for them, and whether it resumes from one
/// (collective; before the result is opened, so that a refusal is every rank's alike).
struct ShotRestart {
  std::optional<app::ShotCheckpoints> checkpoints;
  bool resume = false;
  /// The result's partial file holds the snapshots before the checkpoint: reopen it.
  bool resumes_snapshots() const { return resume && checkpoints->resumes_snapshots(); }
};
ShotRestart find_checkpoint(const io::Config& config, const app::RunPlan& plan, const mpi::Group& ranks) {
  ShotRestart r;
  if (!config.checkpoint.enabled) {
    if (ranks.rank == 0 && !config.output.overwrite && std::filesystem::exists(app::checkpoint_path(config)))
      log::warn("a checkpoint lies at " + app::checkpoint_path(config) +
                " but the config has no checkpoint section: the run starts from step 0 (add `checkpoint: {}` to resume)");
    return r;
  }
  r.checkpoints.emplace(config, plan, rank_link(ranks));
  r.resume = r.checkpoints->find();
  return r;
}

/// Runs `p`'s plan on its propagator (at rest, or set from the checkpoint `restart` found) and
/// writes the result of `config` into `out` (the first rank's; null on the others), with its
/// summary line; the checkpoint is removed once the result is committed.
void run_and_write(Prepared& p, const io::Config& config, io::OutputFile* out, const mpi::Group& ranks, ShotOf shot,
                   ShotRestart& restart) {
  const bool root = ranks.rank == 0;
  const app::RunPlan& plan = p.plan;
  kernels::Propagator* prop = p.prop.get();
  mpi::DistributedPropagator* dist = p.dist;
  const mpi::Decomposition& decomposition = *p.decomposition;
  app::RunOptions options;
  if (!root) options.progress_seconds = 0;
  options.snapshots_without_file = !root;
  std::optional<app::Resume> resume;
  if (restart.resume) resume = restart.checkpoints->restore(*prop);
  options.checkpoints = restart.checkpoints ? &*restart.checkpoints : nullptr;
  options.resume = resume ? &*resume : nullptr;
  app::RunResult r;
  try {
    r = app::run_shot(plan, *prop, out, options);
  } catch (const app::StoppedAtCheckpoint&) {
    // The snapshots so far stay in the partial file, which the resumed run goes on writing.
    if (out && plan.snapshot_count() > 0) out->keep_partial();
    throw;
  }

  const auto& s = plan.model_shape;
  if (config.output.final_wavefield) {  // collective in a distributed run
    // The field named by output.record (TTI: p or q), as /final/<record> says, written by parts
    // as they come (from every rank in turn): the host never holds the whole field.
    if (root) out->begin_final_wavefield(config.output.record, {s.i, s.j, s.k});
    prop->read_field_by_parts(config.output.record == "q" ? "q" : "u",
                              {{plan.pad_lo[0], plan.pad_lo[1], plan.pad_lo[2]}, s}, {1, 1, 1},
                              kernels::kFieldPartFloats, [&](const kernels::FieldPart& part) {
                                out->write_final_part(config.output.record,
                                                      {part.offset.i, part.offset.j, part.offset.k},
                                                      {part.count.i, part.count.j, part.count.k}, part.data);
                              });
  }
  const kernels::StepSplit split = prop->step_split();
  auto per_step_ms = [&](double seconds) {
    const double worst = dist ? dist->max_over_ranks(seconds) : seconds;
    return r.steps_run > 0 ? 1e3 * worst / r.steps_run : 0.0;
  };
  const double interior_ms = per_step_ms(split.interior), shell_ms = per_step_ms(split.shell),
               exposed_ms = per_step_ms(split.exchange_exposed), output_ms = per_step_ms(r.output_seconds),
               step_ms = per_step_ms(r.seconds);
  if (!root) return;
  if (r.growth_after_source > app::kGrowthWarning) {
    std::ostringstream w;
    w.precision(3);
    w << "the wavefield grew to " << r.growth_after_source
      << " times its size when the source ended: the run is probably unstable (absorbing layer or "
         "time step), and its results wrong";
    log::warn(w.str());
  }

  out->write_receivers(plan.receiver_positions);
  out->write_seismogram(config.output.record, r.seismogram, plan.receiver_count(), r.samples,
                        plan.record_every * plan.dt);
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
  attr.pml_lo = plan.problem.pml.lo;  // the TTI run uses the same padding
  attr.pml_hi = plan.problem.pml.hi;
  attr.growth_after_source = r.growth_after_source;
  attr.source_position = config.source.position;
  attr.shot = shot.shot;
  attr.shots = shot.shots;
  out->set_attributes(attr);
  out->commit();
  if (restart.checkpoints) restart.checkpoints->remove();

  const auto& g = plan.problem.grid.shape;
  std::printf("summary propagator=%s backend=%s kernel=%s shape=%dx%dx%d ranks=%d decomposition=%s "
              "transport=%s steps=%d seconds=%.3f gpts_per_s=%.3f step_ms=%.4f interior_ms=%.4f "
              "shell_ms=%.4f exchange_exposed_ms=%.4f output_ms=%.4f snapshot_wait_s=%.3f "
              "snapshot_flush_s=%.3f growth_after_source=%.3g host_peak_gib=%.3f output=%s%s\n",
              config.propagator.c_str(), prop->backend().c_str(), prop->kernel().c_str(), g.i, g.j,
              g.k, ranks.size, decomposition.dims_string().c_str(),
              dist ? dist->transport().c_str() : "none", r.steps_run, r.seconds, r.gpts_per_s, step_ms,
              interior_ms, shell_ms, exposed_ms, output_ms, r.snapshot_wait_seconds,
              r.snapshot_flush_seconds, r.growth_after_source, app::peak_resident_bytes() / double(1 << 30),
              config.output.file.c_str(), shot.shot >= 0 ? (" shot=" + std::to_string(shot.shot)).c_str() : "");
}

/// One shot of `config` on the ranks of `ranks`, from its plan to its committed result.
int run_one_shot(const io::Config& config, const Cli& cli, const mpi::Session& session, const mpi::Group& ranks,
                 bool& uniform, ShotOf shot) {
  Prepared p = plan_shot(config, ranks, shot.first);
  if (cli.dry_run) return 0;
  ShotRestart restart = find_checkpoint(config, p.plan, ranks);
  std::unique_ptr<io::OutputFile> out;
  if (!open_result(config, ranks, out, restart.resumes_snapshots())) return 2;
  uniform = false;  // from here on, an error may strike one rank only
  make_propagator(p, config, session, ranks);
  run_and_write(p, config, out.get(), ranks, shot, restart);
  return 0;
}

std::string position_text(const physics::Point3& x) {
  std::ostringstream s;
  s << "(" << x[0] << ", " << x[1] << ", " << x[2] << ") m";
  return s.str();
}

/// A survey (config.shots): each group of ranks runs its shots one after another, skipping those
/// whose result exists; a shot that blows up is reported and the survey goes on. Exit status 1
/// where a shot failed.
int run_survey(const io::Config& config, const Cli& cli, const mpi::Session& session, log::Level chosen,
               bool& uniform) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto positions = app::shot_positions(config);
  const int count = static_cast<int>(positions.size());
  const int groups = config.execution.shot_groups;
  if (session.size() % groups != 0)
    throw ConfigError(io::config_error_message(
        config, "execution.shot_groups",
        std::to_string(groups) + " groups cannot share " + std::to_string(session.size()) +
            " ranks evenly: start a multiple of " + std::to_string(groups) + " ranks"));
  app::check_shot_positions(config, positions);  // before the groups part: every rank gives the same error
  const mpi::Group group = mpi::split_groups(session, groups);
  // One voice per group (its first rank), and only rank 0 for a dry run.
  const bool voice = group.rank == 0 && !(cli.dry_run && session.rank() != 0);
  log::set_level(voice ? chosen : std::min(chosen, log::Level::warn));
  const bool root = session.rank() == 0;
  // The shots still to run, as rank 0 finds them (a result exists: done), shared out evenly.
  std::vector<int> pending;
  if (root)
    for (int s = 0; s < count; ++s)
      if (config.output.overwrite || !std::filesystem::exists(app::shot_file(config.output.file, s, count)))
        pending.push_back(s);
  if (session.size() > 1) {
    int n = static_cast<int>(pending.size());
    mpi::check(MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast (survey)");
    pending.resize(static_cast<size_t>(n));
    mpi::check(MPI_Bcast(pending.data(), n, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast (survey)");
  }
  const int done = count - static_cast<int>(pending.size());
  if (root) {
    log::info("survey: " + std::to_string(count) + " shots, " + std::to_string(groups) + " group" +
              (groups > 1 ? "s" : "") + " of " + std::to_string(session.size() / groups) + " rank" +
              (session.size() / groups > 1 ? "s" : "") + "; results " + app::shot_file(config.output.file, 0, count) +
              (count > 1 ? " .. " + app::shot_file(config.output.file, count - 1, count) : std::string()) +
              (done > 0 ? "; " + std::to_string(done) + " already there (skipped)" : std::string()));
    if (groups > count)
      log::warn("execution.shot_groups: " + std::to_string(groups) + " groups for " + std::to_string(count) +
                " shots: " + std::to_string(groups - count) + " groups have none");
  }
  if (cli.dry_run) return run_one_shot(app::shot_config(config, positions, 0), cli, session, group, uniform, {0, count});
  if (groups > 1) log::set_prefix("[group " + std::to_string(group.index) + "] ");
  // From here on the groups go their own ways (a group may have no shot and wait for the totals):
  // an error in one group stops the whole run rather than leave the others waiting.
  if (groups > 1) uniform = false;

  // Shots run and failed by this group (counted by its first rank).
  std::vector<double> tally(3, 0.0);  // run, failed, stopped at a checkpoint
  std::string failed;
  const app::RankLink link = rank_link(group);
  // One plan and propagator for all the group's shots where the model is every shot's alike
  // (plan.shots_share_model): reset to rest between shots, the source moved; else each anew.
  std::optional<Prepared> kept;
  bool first = true;
  for (const int s : app::shots_of_group(pending, group.index, groups)) {
    // A signal that asked to stop between shots: the shots not begun stay for the next run.
    if (config.checkpoint.enabled && config.checkpoint.on_signal && link.any(app::stop_signal_arrived())) {
      if (group.rank == 0) log::warn("stopped before shot " + std::to_string(s) + " as a signal asked: run the same command again to go on");
      tally[2] += group.rank == 0 ? 1 : 0;
      break;
    }
    const io::Config c = app::shot_config(config, positions, s);
    const std::string name = "shot " + std::to_string(s) + " of " + std::to_string(count);
    log::info(name + ": source at " + position_text(c.source.position) + " -> " + c.output.file);
    try {
      if (!kept || !kept->plan.shots_share_model) kept = plan_shot(c, group, first);
      Prepared& p = *kept;
      if (p.plan.shots_share_model) p.plan.source = p.plan.shot_sources.at(static_cast<size_t>(s));
      ShotRestart restart = find_checkpoint(c, p.plan, group);
      std::unique_ptr<io::OutputFile> out;
      if (!open_result(c, group, out, restart.resumes_snapshots()))
        throw ConfigError("");  // the first rank names the file
      uniform = false;  // from here on, an error may strike one rank only
      if (p.prop) p.prop->reset();
      else make_propagator(p, c, session, group);
      run_and_write(p, c, out.get(), group, {s, count, first}, restart);
      first = false;
      tally[0] += group.rank == 0 ? 1 : 0;
    } catch (const InstabilityError& e) {  // every rank of the group alike (health is collective)
      if (group.rank == 0) log::error(name + " failed (no result written): " + e.what());
      tally[1] += group.rank == 0 ? 1 : 0;
      failed += (failed.empty() ? "" : ",") + std::to_string(s);
    } catch (const app::StoppedAtCheckpoint& e) {  // every rank of the group alike (the signal is agreed)
      if (group.rank == 0) log::warn(name + ": " + e.what());
      tally[2] += group.rank == 0 ? 1 : 0;
      break;
    }
  }
  if (session.size() > 1) mpi::combine(MPI_COMM_WORLD, tally, '+');
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (group.rank == 0 && !failed.empty())
    log::warn("failed shots (run again to retry them): " + failed);
  if (root)
    std::printf("survey shots=%d run=%d skipped=%d failed=%d groups=%d ranks_per_group=%d seconds=%.3f "
                "shots_per_hour=%.3f\n",
                count, static_cast<int>(tally[0]), done, static_cast<int>(tally[1]), groups, session.size() / groups,
                seconds, seconds > 0 ? 3600.0 * tally[0] / seconds : 0.0);
  if (tally[2] > 0) return app::kStoppedExitCode;
  return tally[1] > 0 ? 1 : 0;
}

int run(int argc, char** argv, const mpi::Session& session, bool& uniform) {
  const Cli cli = parse_cli(argc, argv);
  const bool root = session.rank() == 0;
  if (cli.list_kernels) {
    if (root)
      for (const auto& line : kernels::list_kernels()) std::printf("%s\n", line.c_str());
    return 0;
  }
  const log::Level chosen = log::level();  // the command line's
  if (!root) log::set_level(log::Level::warn);  // one voice: rank 0 reports (a survey: each group's first)
  const io::Config config = io::load_config(cli.config, cli.overrides);
  if (config.checkpoint.enabled && config.checkpoint.on_signal && !cli.dry_run) app::watch_stop_signals();
  if (!config.shots.empty()) return run_survey(config, cli, session, chosen, uniform);
  return run_one_shot(config, cli, session, mpi::whole_world(session), uniform, {});
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<mpi::Session> session;
  try {
    session = std::make_unique<mpi::Session>(argc, argv);
  } catch (const std::exception& e) {
    log::error(e.what());
    return 1;
  }
  bool uniform = true;  // errors so far strike every rank alike (config, plan): rank 0 reports
  auto fail = [&](const std::exception& e, int code) {
    if (session->size() == 1 || uniform) {
      if (session->rank() == 0) log::error(e.what());
      return code;
    }
    log::error("rank " + std::to_string(session->rank()) + " of " + std::to_string(session->size()) +
               ": " + e.what());
    session->abort(code);  // the other ranks would wait for this one forever
  };
  try {
    return run(argc, argv, *session, uniform);
  } catch (const app::StoppedAtCheckpoint& e) {  // every rank alike: the signal is agreed on
    if (session->rank() == 0) log::warn(e.what());
    return app::kStoppedExitCode;
  } catch (const ConfigError& e) {
    return fail(e, 2);
  } catch (const std::exception& e) {
    return fail(e, 1);
  }
}
