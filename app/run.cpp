#include "app/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <sstream>

#include "app/checkpoint.hpp"
#include "io/output_file.hpp"
#include "io/snapshot_writer.hpp"
#include "physics/error.hpp"
#include "physics/log.hpp"

namespace minimod::app {
namespace {

using Clock = std::chrono::steady_clock;

kernels::FieldHealth check_health(const RunPlan& plan, kernels::Propagator& prop, int step) {
  const auto h = prop.health();
  if (!h.finite || h.max_abs > kernels::kBlowUpLevel) {
    const auto x = plan.problem.grid.position_of(h.where.i, h.where.j, h.where.k);
    std::ostringstream s;
    s << "the wavefield blew up at step " << step << " (t = " << step * plan.dt << " s): "
      << (h.finite ? "|u| = " + std::to_string(h.max_abs) : std::string("non-finite value"))
      << " at grid point (" << h.where.i << ", " << h.where.j << ", " << h.where.k
      << "), model position (" << x[0] << ", " << x[1] << ", " << x[2]
      << ") m. Check time.dt, the model's velocities and the source amplitude.";
    throw InstabilityError(s.str());
  }
  return h;
}

}  // namespace

RunResult run_shot(const RunPlan& plan, kernels::Propagator& prop, io::OutputFile* out,
                   const RunOptions& opt) {
  const int nrec = plan.receiver_count();
  const int samples = plan.samples();
  RunResult result;
  result.samples = samples;
  result.seismogram.assign(static_cast<size_t>(nrec) * samples, 0.0f);  // sample 0 (t = 0) is 0
  const int first = opt.resume ? opt.resume->step : 0;
  if (opt.resume) result.seismogram = opt.resume->seismogram;
  prop.set_receivers(plan.receivers, nrec);

  // A slot holds a snapshot, or a slab of one where the propagator gathers them (by_parts).
  const auto& snap = plan.snapshot_shape;
  const bool by_parts = prop.snapshots_by_parts();
  const int part_planes = kernels::planes_per_part(snap, opt.snapshot_part_floats);
  const std::int64_t count = static_cast<std::int64_t>(by_parts ? part_planes : snap.i) * snap.j * snap.k;
  std::unique_ptr<io::SnapshotWriter> writer;
  if (out && plan.snapshot_count() > 0) {
    for (int slot = 0; slot < kernels::Propagator::kSnapshotSlots; ++slot)
      prop.snapshot_buffer(slot, count);
    writer = std::make_unique<io::SnapshotWriter>(
        *out, "p", kernels::Propagator::kSnapshotSlots,
        [&prop, count](int slot) -> const float* { return prop.snapshot_buffer(slot, count); },
        [&prop](int slot) { prop.wait_copy(slot); });
    out->begin_snapshots("p", plan.snapshot_count(), {snap.i, snap.j, snap.k},
                         {plan.snapshot_stride.i, plan.snapshot_stride.j, plan.snapshot_stride.k},
                         {plan.snapshot_box.lo.i - plan.pad_lo[0], plan.snapshot_box.lo.j - plan.pad_lo[1],
                          plan.snapshot_box.lo.k - plan.pad_lo[2]},
                         plan.snapshot_every * plan.dt, by_parts ? part_planes : 0,
                         opt.resume ? opt.resume->snapshots : 0);
  }

  std::vector<float> traces;
  int recorded_steps = first;  // steps whose receiver samples were taken from the propagator
  auto drain_traces = [&]() {
    prop.take_traces(traces);
    const int n = nrec > 0 ? static_cast<int>(traces.size()) / nrec : 0;
    for (int s = 0; s < n; ++s) {
      const int step = recorded_steps + s + 1;  // sample of time step * dt
      if (step % plan.record_every != 0) continue;
      const int sample = step / plan.record_every;
      for (int r = 0; r < nrec; ++r)
        result.seismogram[static_cast<size_t>(r) * samples + sample] =
            traces[static_cast<size_t>(s) * nrec + r];
    }
    recorded_steps += n;
  };

  const double points = static_cast<double>(plan.problem.grid.points());
  const double source_end = physics::wavelet_extent(plan.wavelet);
  double settled = 0;  // max |field| at the first health check after the wavelet ended
  if (opt.resume) {
    settled = opt.resume->settled;
    result.growth_after_source = opt.resume->growth;
  }
  const auto start = Clock::now();
  auto last_report = start;
  for (int n = first; n < plan.steps; ++n) {
    prop.step(plan.source, static_cast<float>(plan.wavelet(n * plan.dt)));
    const int done = n + 1;
    const auto output_start = Clock::now();
    if (nrec > 0 && (done % 256 == 0 || done == plan.steps)) drain_traces();
    const bool snapshot_due = plan.snapshot_every > 0 && done % plan.snapshot_every == 0;
    const int index = snapshot_due ? done / plan.snapshot_every - 1 : -1;
    if (snapshot_due && by_parts && (writer || opt.snapshots_without_file)) {  // collective
      prop.read_field_by_parts("u", plan.snapshot_box, plan.snapshot_stride, opt.snapshot_part_floats,
                               [&](const kernels::FieldPart& part) {
                                 if (!writer) return;
                                 const int slot = writer->acquire();
                                 std::copy_n(part.data, static_cast<std::int64_t>(part.count.i) * snap.j * snap.k,
                                             prop.snapshot_buffer(slot, count));
                                 writer->submit_part(slot, index, done * plan.dt, part.offset.i, part.count.i);
                               });
    } else if (snapshot_due && writer) {
      const int slot = writer->acquire();
      prop.copy_field_async("u", plan.snapshot_box, plan.snapshot_stride, slot);
      writer->submit(slot, index, done * plan.dt);
    } else if (snapshot_due && opt.snapshots_without_file) {
      prop.copy_field_async("u", plan.snapshot_box, plan.snapshot_stride, 0);
    }
    result.output_seconds += std::chrono::duration<double>(Clock::now() - output_start).count();
    if ((opt.health_every > 0 && done % opt.health_every == 0) || done == plan.steps) {
      const double size = check_health(plan, prop, done).max_abs;
      if (done * plan.dt >= source_end) {
        if (settled == 0) settled = size;
        else result.growth_after_source = std::max(result.growth_after_source, size / settled);
      }
    }
    if (opt.checkpoints && opt.checkpoints->due(done)) {  // collective
      const auto output_start = Clock::now();
      if (nrec > 0) drain_traces();
      if (writer) {  // every snapshot so far on disk, and the file whole as of now
        writer->finish();
        out->flush();
      }
      opt.checkpoints->write(prop, done, result.seismogram, settled, result.growth_after_source,
                             plan.snapshot_every > 0 ? done / plan.snapshot_every : 0);
      result.output_seconds += std::chrono::duration<double>(Clock::now() - output_start).count();
      if (opt.checkpoints->stop_requested())
        throw StoppedAtCheckpoint("stopped at step " + std::to_string(done) + " of " + std::to_string(plan.steps) +
                                  " as asked (a signal, or checkpoint.stop_at), after writing checkpoint " +
                                  opt.checkpoints->path() +
                                  ": run the same command again to resume");
    }
    const auto now = Clock::now();
    if (opt.progress_seconds > 0 &&
        std::chrono::duration<double>(now - last_report).count() >= opt.progress_seconds) {
      last_report = now;
      const double el = std::chrono::duration<double>(now - start).count();
      std::ostringstream s;
      s.precision(3);
      s << "step " << done << "/" << plan.steps << "  t = " << done * plan.dt << " s  "
        << std::fixed << 100.0 * done / plan.steps << "%  " << points * (done - first) / el / 1e9
        << " GPts/s  ETA " << el / (done - first) * (plan.steps - done) << " s";
      log::info(s.str());
    }
  }
  if (writer) {
    const auto output_start = Clock::now();
    writer->finish();
    result.snapshot_flush_seconds = std::chrono::duration<double>(Clock::now() - output_start).count();
    result.output_seconds += result.snapshot_flush_seconds;
    result.snapshot_wait_seconds = writer->seconds_waited();
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.steps_run = plan.steps - first;
  result.gpts_per_s = points * result.steps_run / result.seconds / 1e9;
  return result;
}

}  // namespace minimod::app
