// Checkpoint and restart of one shot (config `checkpoint:`; docs/config.md "checkpoint"): the
// propagator's state (Propagator::state_fields: the wavefields at both levels and the absorbing
// layer's memory) and the seismogram so far, written every checkpoint.every steps and when SIGUSR1
// or SIGTERM asks the run to stop. Running the same config again resumes from the checkpoint, on
// any number of ranks and either backend: the fields are stored by global grid indices (io/
// checkpoint_file.hpp). Same backend, any ranks: the result is bitwise that of an unbroken run.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/plan.hpp"
#include "io/checkpoint_file.hpp"
#include "io/config.hpp"
#include "kernels/propagator.hpp"
#include "physics/error.hpp"

namespace minimod::app {

/// The run stopped after writing a checkpoint, as a signal asked: exit status 3.
struct StoppedAtCheckpoint : Error {
  using Error::Error;
};
constexpr int kStoppedExitCode = 3;

/// checkpoint.file, else output.file with its extension replaced by ".checkpoint.h5".
std::string checkpoint_path(const io::Config& config);

/// The boxes (grid indices of the plan's whole grid) where `field` lives, none of them empty.
std::vector<physics::Box3> state_boxes(const RunPlan& plan, const kernels::StateField& field);

/// The bytes of one checkpoint of the plan (the state fields where they live, the seismogram).
std::int64_t checkpoint_bytes(const RunPlan& plan);

/// The plan's line about checkpoints ("" without a checkpoint section), for the banner and
/// --dry-run: when they are written, where, and their size.
std::string describe_checkpoints(const io::Config& config, const RunPlan& plan);

/// How the ranks of one shot agree while checkpointing; the defaults stand for one rank.
struct RankLink {
  bool root = true;  // the rank that reads and writes the file
  int ranks = 1;
  /// True on every rank when `mine` is true on any (collective).
  std::function<bool(bool mine)> any = [](bool mine) { return mine; };
  /// `bytes` bytes from the root to every rank, in place (collective).
  std::function<void(void* data, std::int64_t bytes)> broadcast = [](void*, std::int64_t) {};
  /// The root's message on every rank (collective): an error the root found, told by all alike.
  std::function<std::string(const std::string& mine)> root_message = [](const std::string& m) { return m; };
};

/// Where a resumed run starts: the steps done, the seismogram so far ([receiver][sample], the
/// samples after `step` zero) and the health record.
struct Resume {
  int step = 0;
  std::vector<float> seismogram;
  double settled = 0, growth = 0;
  int snapshots = 0;  // written before it, in the result's partial file (OutputFile resume)
};

/// SIGUSR1 and SIGTERM from now on set a flag instead of ending the process (Slurm's
/// `--signal=USR1@300`, scancel, a pre-emption), which ShotCheckpoints::due reads.
void watch_stop_signals();
/// Whether such a signal arrived (the flag; for tests).
bool stop_signal_arrived();
void clear_stop_signal();

/// The checkpoints of one shot, as run_shot takes them.
class ShotCheckpoints {
 public:
  ShotCheckpoints(const io::Config& config, const RunPlan& plan, RankLink link);
  const std::string& path() const { return path_; }
  /// After step `done`: whether a checkpoint is due (every `every` steps; `every_minutes` of the
  /// first rank's wall time after the last; checkpoint.stop_at, or a signal on any rank, which
  /// also ask to stop). Collective. Never after the last step.
  bool due(int done);
  /// Whether the run is to stop once the checkpoint is written.
  bool stop_requested() const { return stop_; }
  /// Writes the checkpoint of step `done` (collective): the propagator's state, gathered by
  /// parts, and `seismogram` ([receiver][sample], every sample up to `done`); `snapshots` were
  /// written by then (and flushed to the result's partial file).
  void write(kernels::Propagator& prop, int done, const std::vector<float>& seismogram, double settled,
             double growth, int snapshots);
  /// Whether the checkpoint find() found has snapshots in the result's partial file.
  bool resumes_snapshots() const { return found_snapshots_ > 0; }
  /// Whether this run resumes from a checkpoint (collective; before the propagator is made, so
  /// that a refusal is every rank's alike): false without one or with output.overwrite.
  /// ConfigError naming checkpoint.file when it is not a checkpoint of this config and grid.
  bool find();
  /// The checkpoint find() found, its state set in `prop` (collective; the propagator at rest).
  Resume restore(kernels::Propagator& prop);
  /// Removes the checkpoint (the root; after the result is committed).
  void remove();

 private:
  const io::Config& config_;
  const RunPlan& plan_;
  RankLink link_;
  std::string path_;
  int every_ = 0;
  bool on_signal_ = false, stop_ = false;
  std::chrono::steady_clock::time_point last_;  // the last checkpoint, or the start
  int found_step_ = -1;  // find(): the checkpoint's step
  int found_snapshots_ = 0;
};

}  // namespace minimod::app
