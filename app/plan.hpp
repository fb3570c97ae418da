// RunPlan: everything a run needs, derived once from a validated Config: the grid with its PML,
// the model on the grid, dt and steps, the wavelet, source and receiver node weights, the output
// plan and the memory estimate. Cross-field checks (stability, positions inside the model,
// model files) happen here and throw ConfigError naming the key.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "kernels/propagator.hpp"
#include "kernels/tti_propagator.hpp"
#include "physics/grid.hpp"
#include "physics/wavelet.hpp"

namespace minimod::app {

/// The acoustic_tti absorbing layer when boundary.pml.tti is not set: the CPML of the TTI operator,
/// which reflects 12x less than the sponge (docs/tti.md), as DESIGN.md §3 asks of the default.
inline constexpr const char* kDefaultTtiLayer = "cpml";

struct RunPlan {
  io::Config config;
  kernels::AcousticIsoProblem problem;  // acoustic_iso (and the grid, PML widths of any run; v2dt2 moves to tti_problem when tti)
  bool tti = false;                     // propagator: acoustic_tti
  kernels::AcousticTtiProblem tti_problem;  // filled when tti
  double eps_max = 0, delta_min = 0, delta_max = 0;  // TTI model ranges (after any clamp)
  std::int64_t delta_clamped = 0;   // TTI: points where delta was lowered to epsilon (epsilon_below_delta: clamp)
  double axis_turn_max = 0;         // TTI: degrees, the largest turn of the symmetry axis between face neighbours
  std::int64_t axis_turn_elliptic = 0;  // TTI: points made elliptic (model.elliptic_where_axis_turns)
  physics::Index3 model_shape;      // the user's model (without padding)
  std::array<int, 3> pad_lo{}, pad_hi{};  // PML points added around the model
  double dt = 0;                    // s
  double dt_limit = 0;              // s: stability limit
  int steps = 0;
  int record_every = 1;             // steps per seismogram sample
  double vp_min = 0, vp_max = 0;    // m/s
  physics::Wavelet wavelet;
  double max_frequency = 0;         // Hz: highest significant frequency of the wavelet
  double points_per_wavelength = 0;  // at vp_min and max_frequency, coarsest spacing
  std::vector<kernels::NodeWeight> source;     // weights include the injection scaling
  /// A survey (config.shots) whose model is every shot's alike (no isotropic zone around the
  /// source): the source's weights at each shot, so that one plan and propagator run them all.
  bool shots_share_model = false;
  std::vector<std::vector<kernels::NodeWeight>> shot_sources;
  std::vector<kernels::NodeWeight> receivers;  // interpolation weights
  std::vector<physics::Point3> receiver_positions;  // m, model coordinates
  int snapshot_every = 0;
  physics::Box3 snapshot_box;       // simulation-grid indices
  physics::Index3 snapshot_stride{1, 1, 1};
  physics::Index3 snapshot_shape;   // points per axis after striding
  std::int64_t field_bytes = 0;     // estimate of the propagator's fields
  std::int64_t memory_bytes = 0;    // estimate of the propagator's memory (fields and traces)
  std::int64_t host_bytes = 0;      // estimate of this process's host memory at its peak (estimate_host_bytes)
  std::vector<std::string> warnings;

  int receiver_count() const { return static_cast<int>(receiver_positions.size()); }
  int samples() const { return steps / record_every + 1; }
  int snapshot_count() const { return snapshot_every > 0 ? steps / snapshot_every : 0; }
};

/// A distributed run's rank builds only the part of the model its subdomain reads: `box`, its
/// part of the grid, grown by the stencil radius (the problems' stored window,
/// kernels::AcousticIsoProblem::stored, which mpi::subdomain_problem cuts from). What every rank
/// needs alike (velocity and anisotropy ranges, counts, the first bad point, the source's weights,
/// the axis flags) comes from each rank's own points combined over the ranks, and an error in one
/// rank's part (a bad value in a model file) reaches every rank, so that all stop alike.
struct ModelShare {
  physics::Box3 box;
  /// Elementwise over the ranks, in place (collective): op '+' sums, '<' the least, '>' the greatest.
  std::function<void(std::vector<double>&, char op)> combine;
  /// The message of the lowest rank whose `own` is not empty, on every rank ("" where none).
  std::function<std::string(const std::string& own)> first_error;
};

/// The positions of a list of groups (receivers, a survey's shots), group by group: a line's from
/// start to end, a grid's with x slowest and z fastest.
std::vector<physics::Point3> positions_of(const std::vector<io::PositionGroupConfig>& groups);

/// Every shot of a survey (at `positions`, positions_of its shots) inside the model, or
/// ConfigError naming the first that is not ("shots ... (shot 7 of 40)"); make_plan checks this too.
void check_shot_positions(const io::Config& config, const std::vector<physics::Point3>& positions);

/// `before_model`, where given, is called once the grid and its layer are planned and before the
/// model is built (a TTI run's peak of host memory): estimate_building_bytes takes that plan.
/// `share_of`, where given, is called then too (its plan has the grid, the layer's kind and
/// widths, enough for a decomposition): a share makes the plan build that rank's window only.
using ShareOf = std::function<std::optional<ModelShare>(const RunPlan&)>;
RunPlan make_plan(const io::Config& config, const std::function<void(const RunPlan&)>& before_model = {},
                  const ShareOf& share_of = {});

/// Host memory a one-rank run of `plan` holds at its peak, besides the program itself, whichever
/// is more of:
///  - the plan's model arrays while it builds them (TTI: some six grid-sized arrays; v, epsilon,
///    delta and the angles, padded one after another, then a and b in epsilon's and delta's places);
///  - those it keeps (TTI: (v dt)^2, b, the angles and a; isotropic: (v dt)^2, and the propagator's
///    copy of it while it lays it out), the backend's host arrays (the CPU backend's fields,
///    field_bytes; the CUDA TTI propagator's upload slabs) and the traces.
/// For one rank over the whole grid; a distributed run's plan (ModelShare) scales it by its
/// window's share of the grid.
std::int64_t estimate_host_bytes(const RunPlan& plan, bool gpu);

/// The first of the two: the model's arrays while the plan builds them, from the grid's and the
/// model's shapes alone, so that it can be given before they exist (make_plan's before_model).
std::int64_t estimate_building_bytes(const RunPlan& plan);

/// Frees the plan's model arrays ((v dt)^2; TTI: also b, the angles and a) once the propagator
/// has taken them into its own layout: the rest of the plan (grid, layer, sources, receivers)
/// stays. A TTI run at 1000^3 holds 20 GB less while it steps.
void release_model_arrays(RunPlan& plan);

/// This process's peak resident memory so far (VmHWM of /proc/self/status), in bytes; 0 where it
/// cannot be read. The run's summary prints it (host_peak_gib) beside the plan's figure.
std::int64_t peak_resident_bytes();

/// The machine's available memory (MemAvailable of /proc/meminfo) in bytes; 0 where unknown.
std::int64_t available_host_bytes();

/// The warning for a host figure `need` above the `available` bytes (0: unknown, no warning);
/// empty otherwise. minimod gives it for a one-rank run, once the plan is made and before the
/// propagator allocates (a distributed run's ranks hold other shares, several to a node).
std::string host_memory_warning(std::int64_t need, std::int64_t available);

/// Human-readable plan (for --dry-run and the run banner).
std::string describe(const RunPlan& plan);

/// Bytes of field memory a propagator of this plan allocates (same layout as the backends);
/// `two_step`: with the two spare wavefields of a CUDA family that advances two steps per launch.
std::int64_t estimate_field_bytes(const physics::Index3& shape, pml::PmlKind kind, bool two_step = false);
/// The same for the acoustic TTI propagators (the CUDA one's, the larger).
std::int64_t estimate_tti_bytes(const physics::Index3& shape);

}  // namespace minimod::app
