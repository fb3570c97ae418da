// The time loop of one shot: inject, step, record, snapshot, check health, report progress.
#pragma once
#include <string>
#include <vector>

#include "app/plan.hpp"
#include "kernels/propagator.hpp"

namespace minimod::io {
class OutputFile;
}

namespace minimod::app {

class ShotCheckpoints;
struct Resume;

struct RunResult {
  std::vector<float> seismogram;  // [receiver][sample]
  int samples = 0;
  double seconds = 0;             // wall time of the time loop
  int steps_run = 0;              // steps it took (a resumed run: those after its checkpoint)
  double gpts_per_s = 0;          // grid points updated per second (PML included)
  double snapshot_wait_seconds = 0;  // time the loop waited for the snapshot writer
  double output_seconds = 0;      // time the loop spent on receivers and snapshots (waits included)
  double snapshot_flush_seconds = 0;  // of which: writing the snapshots still queued at the end
  /// The largest max |field| at a health check after the wavelet ended, over its value at the
  /// first such check (0 when there was none). Without sources an absorbing medium only loses
  /// energy: above kGrowthWarning the scheme (absorbing layer, time step) is slowly unstable
  /// although nothing has overflowed yet.
  double growth_after_source = 0;
};

/// growth_after_source above which a run is reported as probably unstable.
constexpr double kGrowthWarning = 10;

struct RunOptions {
  double progress_seconds = 5.0;  // progress line at most this often (stderr); <= 0: never
  int health_every = 100;         // steps between blow-up checks
  /// Ranks other than the writer in a distributed run: take part in every snapshot copy (it is
  /// collective) although `out` is null here.
  bool snapshots_without_file = false;
  /// Floats of a slab at most where snapshots come by parts (Propagator::snapshots_by_parts): a
  /// slot's size, and at most that many planes of x a chunk of /snapshots/<field>.
  std::int64_t snapshot_part_floats = kernels::kFieldPartFloats;
  /// Checkpoints to write as they fall due (app/checkpoint.hpp); after one a signal asked for,
  /// run_shot throws StoppedAtCheckpoint.
  ShotCheckpoints* checkpoints = nullptr;
  /// Where to resume: its steps are done, its state is the propagator's, its seismogram so far.
  const Resume* resume = nullptr;
};

/// Runs the plan on `propagator`; writes snapshots to `out` if given (seismograms are returned).
RunResult run_shot(const RunPlan& plan, kernels::Propagator& propagator, io::OutputFile* out,
                   const RunOptions& options = {});

}  // namespace minimod::app
