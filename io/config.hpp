// io::Config: the validated run description, as plain structs with defaults (DESIGN.md §6).
// Only io/config_yaml.cpp knows YAML; physics and kernels never see these structs.
// Units: SI inside (m, s, m/s, Hz, rad). Keys with other units carry a suffix in YAML only.
#pragma once
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace minimod::io {

using Vec3 = std::array<double, 3>;  // m, (x, y, z), z = depth positive down

/// One scalar model parameter (vp, epsilon, delta, theta, phi).
struct ParameterConfig {
  enum class Kind { constant, layers, file } kind = Kind::constant;
  double constant = 0;                 // value (SI; angles in rad)
  struct Layer {
    double top = 0;                    // m: depth of the layer's top (first layer top = 0)
    double value = 0;                  // SI
  };
  std::vector<Layer> layers;           // sorted by top; each holds from its top to the next top
  std::string file;                    // HDF5 file (resolved against the config's folder)
  std::string dataset;                 // dataset [x][y][z] of the model's shape
  double scale = 1;                    // file values times this are SI (pi/180: angles in deg);
                                       // constants and layer values are already converted
};

struct GridConfig {
  std::array<int, 3> shape{0, 0, 0};  // model points per axis (PML padding is added around it)
  Vec3 spacing{0, 0, 0};              // m
};

struct ModelConfig {
  ParameterConfig vp;  // m/s (acoustic_tti: along the symmetry axis)
  // acoustic_tti only (each defaults to the constant 0; other propagators reject them): Thomsen
  // epsilon and delta (dimensionless), the tilt theta of the symmetry axis from vertical and its
  // azimuth phi from x towards y (rad; file values times `scale`). Constants and layer values are
  // checked one by one (Thomsen values in (-0.5, 1)); epsilon >= delta is checked per point later.
  ParameterConfig epsilon, delta, theta, phi;
  // m, 0 = none: within this distance of the source, epsilon is set to delta (the medium is
  // elliptic there, so the source excites no shear artefacts).
  double isotropic_radius = 0;
  // What the plan does where epsilon < delta (the pseudo-acoustic system is unstable there):
  // "error" (the default) names the first such point and their count; "clamp" lowers delta to
  // epsilon there (elliptic, horizontal velocity kept) and reports how many points it changed.
  std::string epsilon_below_delta = "error";
  // Degrees, 0 = none: epsilon is set to delta (the medium made elliptic) at the points whose
  // symmetry axis turns by more than this toward a face neighbour. Where the axis turns that
  // sharply in several directions (blocks of differing axes) the pseudo-acoustic system grows
  // without bound; without this key the plan warns of points that turn by more than 30 degrees.
  double elliptic_where_axis_turns = 0;
};

struct TimeConfig {
  double duration = 0;          // s (simulated time); or steps
  std::optional<int> steps;     // explicit number of steps (instead of duration)
  std::optional<double> dt;     // s; empty = auto from the CFL limit
  double cfl = 0.6;             // fraction of the stability limit used by dt: auto
};

struct SourceConfig {
  enum class Wavelet { ricker, minimod_gaussian, file } wavelet = Wavelet::ricker;
  double frequency = 10;             // Hz: Ricker peak frequency / Minimod's fmax
  std::optional<double> delay;       // s: Ricker centre time (default 1.5 / frequency)
  double amplitude = 1;              // scale of the wavelet
  std::string file;                  // wavelet from file: HDF5 file
  std::string dataset;               // ... its 1D dataset, sampled at `file_dt`
  double file_dt = 0;                // s
  Vec3 position{0, 0, 0};            // m (a survey's shot: that shot's position, app::shot_config)
  /// How the source enters the equation: `physical` adds (v dt)^2 s / (dx dy dz) (the analytic
  /// point source); `raw` adds s unscaled to the new field, as Minimod does.
  enum class Injection { physical, raw } injection = Injection::physical;
};

/// Positions given as a group: explicit points, a line or a grid (receivers, a survey's shots).
struct PositionGroupConfig {
  enum class Kind { points, line, grid } kind = Kind::points;
  std::vector<Vec3> points;          // points: explicit positions
  Vec3 start{0, 0, 0}, end{0, 0, 0}; // line: from start to end; grid: opposite corners
  std::array<int, 3> count{1, 1, 1}; // line: count[0] receivers; grid: per axis
};

struct BoundaryConfig {
  int pml_width = 20;                  // points per PML face
  double pml_reflection = 1e-5;        // R of the CPML profile (d = d0 r^4)
  std::optional<double> pml_velocity;  // m/s the profile is tuned for (default: model's max vp)
  /// The acoustic_tti layer: "cpml" (the TTI operator's CPML over a layer made elliptic at depth;
  /// the default, app::kDefaultTtiLayer) or "sponge" (Minimod's damped equation: reflects 12x
  /// more, 1.6x faster on the GPU, no limit on where distributed runs cut). Empty: not set.
  std::string tti_layer;
  /// The symmetry axis in the acoustic_tti CPML layer: "model" (the model's, the layer elliptic at
  /// depth; the default) or "vertical" (the layer elliptic from its edge and its axis turned to
  /// vertical: bounded where the model's axis turns sharply at the layer, reflects more;
  /// kernels::TtiLayerAxis). Empty: not set.
  std::string tti_layer_axis;
  /// Faces that are free surfaces instead of PML, by name: x-, x+, y-, y+, z- (= "top"), z+.
  std::array<bool, 6> free_surface{};
};

struct ExecutionConfig {
  std::string backend = "auto";  // auto | cpu | cuda
  std::string kernel = "auto";   // inner-region family (cuda); cpu always runs `reference`
  std::optional<std::array<int, 3>> decomposition;  // MPI ranks per axis; empty = auto
  std::string transport = "auto";  // halo exchange: auto | host | cuda_aware_mpi | nccl
  int threads = 0;               // OpenMP threads, 0 = default
  /// A survey's shots run by this many groups of ranks at once (the ranks split evenly; each
  /// group decomposes its shot's grid over its own ranks). 1 = every rank on each shot in turn.
  int shot_groups = 1;
};

struct SnapshotConfig {
  int every = 0;                           // steps between snapshots; 0 = none
  std::array<int, 3> stride{1, 1, 1};      // keep every n-th point per axis
  std::optional<std::array<int, 6>> box;   // model-index subvolume [i0, i1, j0, j1, k0, k1) 
};

struct OutputConfig {
  std::string file = "out/shot.h5";  // resolved against the working directory
  bool overwrite = false;
  double seismogram_interval = 0;    // s; 0 = every step
  SnapshotConfig snapshots;
  bool final_wavefield = false;
  std::string record = "p";          // field the receivers record: p, or q (acoustic_tti only)
};

/// Checkpoints of a long shot (app/checkpoint.hpp): the state written every so many steps and when
/// a signal asks the run to stop, so that running the same config again resumes from it.
struct CheckpointConfig {
  bool enabled = false;   // the config has a checkpoint section
  int every = 0;          // steps between checkpoints; 0 = only when a signal asks
  std::string file;       // empty: beside output.file, its extension replaced by .checkpoint.h5
  bool on_signal = true;  // SIGUSR1 or SIGTERM: a checkpoint at the end of the step, then stop (exit 3)
  int stop_at = 0;        // > 0: a checkpoint after this step, then stop (exit 3): a run in jobs of so many steps
  double every_minutes = 0;  // > 0: also a checkpoint once this much wall time passed since the last (or the start)
};

struct Config {
  std::string propagator = "acoustic_iso";
  /// `minimod`: reproduce Minimod's benchmark exactly (PML inside the grid, its dt, wavelet and
  /// raw injection); `standard` (default): PML padding around the model.
  std::string mode = "standard";
  GridConfig grid;
  ModelConfig model;
  TimeConfig time;
  SourceConfig source;
  std::vector<PositionGroupConfig> receivers;
  /// A survey (DESIGN.md §5): one shot per position, each run as the config with the source
  /// there, into a file of its own (app/survey.hpp). Empty: one shot at source.position.
  std::vector<PositionGroupConfig> shots;
  BoundaryConfig boundary;
  ExecutionConfig execution;
  OutputConfig output;
  CheckpointConfig checkpoint;

  std::string text;       // the full YAML text after --set overrides (stored in the output):
                          // as written if there are none, else the tree re-emitted (no comments)
  /// A digest of what the results depend on: the YAML tree after --set overrides without the
  /// `execution` and `checkpoint` sections and output.overwrite, its maps in key order. A
  /// checkpoint resumes only a run of the same fingerprint.
  std::string fingerprint;
  std::string path;       // the config file's path
  std::map<std::string, int> lines;  // key path ("time.dt", "receivers[0].line.count") -> line;
                                     // 0 = the value came from --set (no line in the file)
};

/// Key path -> line number (1-based) in the YAML text, for error messages; 0 = from --set.
using SourceMap = std::map<std::string, int>;

/// The one format of a config error: "config error: <key> (line N): <message>" ("(--set)" for a
/// value from the command line, nothing when the key path is unknown). Checks made after parsing
/// (stability, positions inside the model, files) use it too.
std::string config_error_message(const Config& config, const std::string& key,
                                 const std::string& message);

/// Parse YAML text (with `--set key=value` overrides applied first). Throws ConfigError naming the
/// key path and line for unknown keys (suggesting the nearest valid key), wrong types and
/// out-of-range values. `base_dir` resolves relative file names in the model and source.
Config parse_config(const std::string& yaml_text, const std::vector<std::string>& overrides,
                    const std::string& base_dir, SourceMap* lines = nullptr);

/// Read a file and parse it. Throws ConfigError if the file cannot be read.
Config load_config(const std::string& path, const std::vector<std::string>& overrides);

}  // namespace minimod::io
