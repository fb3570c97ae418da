#include "app/checkpoint.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <sstream>
#include <filesystem>

#include "kernels/tti_cpml.hpp"
#include "kernels/tti_propagator.hpp"
#include "physics/log.hpp"

namespace minimod::app {
namespace {

namespace fs = std::filesystem;
using physics::Box3;
using physics::Index3;

volatile std::sig_atomic_t g_stop_signal = 0;

/// " (G GB, S s)": the checkpoint's size (the root's view) and the seconds since `start`.
std::string size_and_time(const std::string& path, std::chrono::steady_clock::time_point start, bool root) {
  std::ostringstream s;
  s.precision(3);
  std::error_code ec;
  const auto bytes = root ? fs::file_size(path, ec) : 0;
  s << " (" << (ec ? 0.0 : bytes / 1e9) << " GB, "
    << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s)";
  return s.str();
}

extern "C" void on_stop_signal(int) { g_stop_signal = 1; }

std::array<int, 3> array_of(const Index3& x) { return {x.i, x.j, x.k}; }

/// What this run's checkpoint must say of itself to be resumed.
io::CheckpointHeader header_of(const io::Config& config, const RunPlan& plan) {
  io::CheckpointHeader h;
  h.steps = plan.steps;
  h.fingerprint = config.fingerprint;
  h.grid = array_of(plan.problem.grid.shape);
  h.dt = plan.dt;
  h.propagator = config.propagator;
  h.commit = MINIMOD_COMMIT;
  return h;
}

/// Why checkpoint `h` cannot resume this run ("" when it can).
std::string mismatch(const io::CheckpointHeader& h, const io::CheckpointHeader& want) {
  if (h.fingerprint != want.fingerprint)
    return "was written by another config (fingerprint " + h.fingerprint + ", this config's " + want.fingerprint +
           "; only execution, checkpoint and output.overwrite may change between the runs)";
  if (h.grid != want.grid || h.steps != want.steps || h.dt != want.dt || h.propagator != want.propagator)
    return "was written for another grid, time step or propagator";
  if (h.step <= 0 || h.step >= h.steps)
    return "holds step " + std::to_string(h.step) + ", not one between the first and the last (" +
           std::to_string(h.steps) + ")";
  return "";
}

}  // namespace

void watch_stop_signals() {
  struct sigaction a {};
  a.sa_handler = on_stop_signal;
  sigemptyset(&a.sa_mask);
  a.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &a, nullptr);
  sigaction(SIGTERM, &a, nullptr);
}

bool stop_signal_arrived() { return g_stop_signal != 0; }
void clear_stop_signal() { g_stop_signal = 0; }

std::string checkpoint_path(const io::Config& config) {
  if (!config.checkpoint.file.empty()) return config.checkpoint.file;
  return fs::path(config.output.file).replace_extension(".checkpoint.h5").string();
}

std::vector<Box3> state_boxes(const RunPlan& plan, const kernels::StateField& field) {
  const physics::Grid& grid = plan.problem.grid;
  std::vector<Box3> boxes;
  switch (field.lives) {
    case kernels::StateField::Lives::grid:
      boxes.push_back(grid.box());
      break;
    case kernels::StateField::Lives::axis_faces: {
      const int a = field.axis;
      const auto& pml = plan.problem.pml;
      Box3 lo = grid.box(), hi = grid.box();
      lo.n[a] = std::min(pml.lo[static_cast<size_t>(a)], grid.shape[a]);
      hi.n[a] = std::min(pml.hi[static_cast<size_t>(a)], grid.shape[a] - lo.n[a]);
      hi.lo[a] = grid.shape[a] - hi.n[a];
      boxes = {lo, hi};
      break;
    }
    case kernels::StateField::Lives::layer: {
      const auto layer = kernels::LayerIndex::make(grid.shape, kernels::inner_box(plan.tti_problem));
      for (int s = 0; s < 6; ++s) boxes.push_back(layer.slab(s));
      break;
    }
  }
  boxes.erase(std::remove_if(boxes.begin(), boxes.end(), [](const Box3& b) { return b.empty(); }), boxes.end());
  return boxes;
}

std::int64_t checkpoint_bytes(const RunPlan& plan) {
  const auto fields = plan.tti ? kernels::tti_state_fields(plan.tti_problem.layer)
                               : kernels::iso_state_fields(plan.problem.pml_kind);
  constexpr std::int64_t kDatasetBytes = 4096;  // HDF5's headers, chunk index and checksums of one box
  std::int64_t bytes = 4 * static_cast<std::int64_t>(plan.receiver_count()) * plan.samples() + kDatasetBytes;
  for (const auto& f : fields)
    for (const auto& b : state_boxes(plan, f)) bytes += 4 * b.points() + kDatasetBytes;
  return bytes;
}

std::string describe_checkpoints(const io::Config& config, const RunPlan& plan) {
  const auto& c = config.checkpoint;
  if (!c.enabled) return "";
  std::ostringstream s;
  s.precision(3);
  std::string when;
  const auto add = [&when](const std::string& w) { when += (when.empty() ? "" : ", ") + w; };
  if (c.every > 0) add("every " + std::to_string(c.every) + " steps");
  if (c.every_minutes > 0) {
    std::ostringstream m;
    m << "every " << c.every_minutes << " min";
    add(m.str());
  }
  if (c.on_signal) add("on SIGUSR1 or SIGTERM (then stop)");
  if (c.stop_at > 0) add("after step " + std::to_string(c.stop_at) + " (then stop)");
  if (when.empty()) when = "never (checkpoint.every, every_minutes, on_signal and stop_at all off)";
  s << "checkpoint   " << when << " -> " << checkpoint_path(config) << ", " << checkpoint_bytes(plan) / 1e9
    << " GB each\n";
  return s.str();
}

ShotCheckpoints::ShotCheckpoints(const io::Config& config, const RunPlan& plan, RankLink link)
    : config_(config), plan_(plan), link_(std::move(link)), path_(checkpoint_path(config)),
      every_(config.checkpoint.every), on_signal_(config.checkpoint.on_signal), last_(std::chrono::steady_clock::now()) {}

bool ShotCheckpoints::due(int done) {
  if (done >= plan_.steps) return false;
  if (done == config_.checkpoint.stop_at || (on_signal_ && link_.any(stop_signal_arrived()))) {
    stop_ = true;
    return true;
  }
  if (every_ > 0 && done % every_ == 0) return true;
  const double minutes = config_.checkpoint.every_minutes;
  if (minutes <= 0) return false;
  const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_).count();
  return link_.any(link_.root && since >= 60 * minutes);  // the first rank's clock decides
}

void ShotCheckpoints::write(kernels::Propagator& prop, int done, const std::vector<float>& seismogram,
                            double settled, double growth, int snapshots) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<io::CheckpointWriter> file;
  if (link_.root) {
    io::CheckpointHeader h = header_of(config_, plan_);
    h.step = done;
    h.backend = prop.backend();
    h.kernel = prop.kernel();
    h.ranks = link_.ranks;
    h.settled = settled;
    h.growth = growth;
    h.snapshots = snapshots;
    file = std::make_unique<io::CheckpointWriter>(path_, h);
  }
  for (const auto& field : prop.state_fields()) {
    const auto boxes = state_boxes(plan_, field);
    for (int n = 0; n < static_cast<int>(boxes.size()); ++n) {
      const Box3& box = boxes[static_cast<size_t>(n)];
      if (file) file->begin_box(field.name, n, array_of(box.lo), array_of(box.n));
      prop.read_field_by_parts(field.name, box, {1, 1, 1}, kernels::kFieldPartFloats,
                               [&](const kernels::FieldPart& part) {
                                 if (file)
                                   file->write_part(field.name, n, array_of(part.offset), array_of(part.count),
                                                    part.data);
                               });
    }
  }
  if (file) {
    file->write_seismogram(seismogram, plan_.receiver_count(), plan_.samples());
    file->commit();
  }
  last_ = std::chrono::steady_clock::now();
  log::info("checkpoint at step " + std::to_string(done) + "/" + std::to_string(plan_.steps) + ": " + path_ +
            size_and_time(path_, start, link_.root));
}

bool ShotCheckpoints::find() {
  std::string refusal;
  int found[2] = {-1, 0};  // step, snapshots
  if (link_.root && config_.output.overwrite && fs::exists(path_))
    log::warn("output.overwrite: true, so the run starts from step 0 and does not resume from checkpoint " + path_);
  if (link_.root && !config_.output.overwrite && fs::exists(path_)) {
    try {
      const io::CheckpointReader file(path_);
      refusal = mismatch(file.header(), header_of(config_, plan_));
      const std::string partial = config_.output.file + ".partial";
      if (refusal.empty() && file.header().snapshots > 0 && !fs::exists(partial))
        refusal = "holds " + std::to_string(file.header().snapshots) + " snapshots written to " + partial +
                  ", which is gone";
      if (refusal.empty()) found[0] = file.header().step, found[1] = file.header().snapshots;
      else refusal = io::config_error_message(config_, "checkpoint.file", "'" + path_ + "' " + refusal +
                                              ": remove it, or set output.overwrite: true to start over");
    } catch (const IoError& e) {
      refusal = io::config_error_message(config_, "checkpoint.file",
                                         std::string(e.what()) + ": remove it to start over");
    }
  }
  refusal = link_.root_message(refusal);
  if (!refusal.empty()) throw ConfigError(refusal);
  link_.broadcast(found, sizeof found);
  found_step_ = found[0];
  found_snapshots_ = found[1];
  return found_step_ > 0;
}

Resume ShotCheckpoints::restore(kernels::Propagator& prop) {
  const auto start = std::chrono::steady_clock::now();
  Resume r;
  r.step = found_step_;
  r.snapshots = found_snapshots_;
  if (r.step <= 0) throw std::logic_error("ShotCheckpoints::restore without a checkpoint found");
  std::unique_ptr<io::CheckpointReader> file;
  if (link_.root) file = std::make_unique<io::CheckpointReader>(path_);
  std::vector<float> part;
  for (const auto& field : prop.state_fields()) {
    const auto boxes = state_boxes(plan_, field);
    for (int n = 0; n < static_cast<int>(boxes.size()); ++n) {
      const Box3& box = boxes[static_cast<size_t>(n)];
      if (file && file->box(field.name, n) != std::array<std::array<int, 3>, 2>{array_of(box.lo), array_of(box.n)})
        throw IoError("checkpoint '" + path_ + "': /state/" + field.name + "/" + std::to_string(n) +
                      " covers another box than this run's");
      const int planes = kernels::planes_per_part(box.n, kernels::kFieldPartFloats);
      for (int i0 = 0; i0 < box.n.i; i0 += planes) {
        const Box3 cut = kernels::strided_planes(box, {1, 1, 1}, i0, std::min(planes, box.n.i - i0));
        part.resize(static_cast<size_t>(cut.points()));
        if (file) file->read_part(field.name, n, {i0, 0, 0}, array_of(cut.n), part.data());
        link_.broadcast(part.data(), static_cast<std::int64_t>(part.size() * sizeof(float)));
        prop.write_field(field.name, cut, part.data());
      }
    }
  }
  prop.finish_state();
  if (file) {
    r.seismogram = file->read_seismogram(plan_.receiver_count(), plan_.samples());
    r.settled = file->header().settled;
    r.growth = file->header().growth;
  } else {
    r.seismogram.assign(static_cast<size_t>(plan_.receiver_count()) * plan_.samples(), 0.0f);
  }
  double health[2] = {r.settled, r.growth};
  link_.broadcast(health, sizeof health);
  r.settled = health[0];
  r.growth = health[1];
  log::info("resumed from checkpoint " + path_ + " at step " + std::to_string(r.step) + "/" +
            std::to_string(plan_.steps) + size_and_time(path_, start, link_.root));
  return r;
}

void ShotCheckpoints::remove() {
  if (!link_.root) return;
  std::error_code ec;
  fs::remove(path_, ec);
}

}  // namespace minimod::app
