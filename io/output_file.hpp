// io::OutputFile: one HDF5 result file (DESIGN.md §6), written to `<path>.partial` and renamed to
// `<path>` only by commit(), so a crash or an error never leaves a file that looks complete.
// Layout: /receivers/coordinates [n][3], /seismograms/<field> [receiver][time],
// /snapshots/<field> [snapshot][x][y][z] + /snapshots/time, /final/<field> [x][y][z]; root
// attributes from RunAttributes. Arrays C order, z contiguous, float32 fields; SI units.
#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

namespace minimod::io {

/// Run description stored as root attributes of the result file.
struct RunAttributes {
  double dt = 0;                           // s: time step
  std::array<double, 3> spacing{0, 0, 0};  // m: grid spacing (x, y, z)
  std::array<double, 3> origin{0, 0, 0};   // m: position of model point (0, 0, 0)
  std::string units = "SI (m, s, m/s)";
  std::string propagator, backend, kernel, version, commit;
  std::string config_text;                              // the full YAML after --set overrides
  std::array<int, 3> shape{0, 0, 0};                    // model points per axis (PML excluded)
  std::array<int, 3> pml_lo{0, 0, 0}, pml_hi{0, 0, 0};  // PML points below/above the model
  /// app::RunResult::growth_after_source: above 10 the run was probably unstable, so the file
  /// says so itself.
  double growth_after_source = 0;
  std::array<double, 3> source_position{0, 0, 0};  // m, model coordinates
  /// A survey's shot: its number and the survey's count of shots (written only where shot >= 0).
  int shot = -1, shots = 0;
};

/// Writes one result file safely: temporary name, every HDF5 call checked (IoError names the file
/// and dataset), rename on commit(). Not thread-safe: one thread at a time may call it (the
/// snapshot writer thread, say), and no other thread may use HDF5 meanwhile (serial HDF5).
class OutputFile {
 public:
  /// Throws ConfigError if `path` exists and !overwrite; creates parent folders; opens
  /// `<path>.partial` for writing (a stale one from a crashed run is truncated). `resume`: opens
  /// the `<path>.partial` a run stopped at a checkpoint kept, to go on writing its snapshots
  /// (IoError naming it where it is missing or unreadable).
  OutputFile(const std::string& path, bool overwrite, bool resume = false);
  /// Without commit(): closes and deletes the temporary file. Never throws.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// /receivers/coordinates [n][3] float64, m (x, y, z).
  void write_receivers(const std::vector<std::array<double, 3>>& coords);
  /// /seismograms/<field> [receiver][time] float32 from data[r * samples + t]; attributes dt
  /// (interval, s) and units.
  void write_seismogram(const std::string& field, const std::vector<float>& data, int receivers,
                        int samples, double interval, const std::string& units = "arbitrary");

  /// Creates /snapshots/<field> [count][nx][ny][nz] float32 (one chunk per snapshot) and, once,
  /// /snapshots/time [count] float64 (s, NaN until written). Snapshot point (a, b, c) is model
  /// grid index first_index + (a, b, c) * stride (first_index may be negative inside the PML).
  /// `planes_per_chunk` > 0: a chunk holds at most that many planes of x (the parts of
  /// write_snapshot_part, each then one chunk).
  /// `written` > 0 (a resumed file): the dataset is there already with its first `written`
  /// snapshots, which must match (IoError naming it otherwise).
  void begin_snapshots(const std::string& field, int count, std::array<int, 3> shape,
                       std::array<int, 3> stride, std::array<int, 3> first_index,
                       double interval_s, int planes_per_chunk = 0, int written = 0);
  /// Writes snapshot `index` (0-based) of `field`: nx*ny*nz floats, C order; time in s.
  void write_snapshot(const std::string& field, int index, double time, const float* data);
  /// Writes planes [first_plane, first_plane + planes) of x of snapshot `index` from
  /// data[planes][ny][nz]; its time is written once all its planes are (they must not overlap).
  void write_snapshot_part(const std::string& field, int index, double time, int first_plane, int planes,
                           const float* data);

  /// /final/<field> [nx][ny][nz] float32.
  void write_final_wavefield(const std::string& field, std::array<int, 3> shape, const float* data);
  /// The same by parts: begin_final_wavefield creates it, each write_final_part writes the box of
  /// `count` points at `offset` from data[count] (C order). commit() fails, naming the dataset,
  /// unless the parts wrote as many points as it holds (parts must not overlap).
  void begin_final_wavefield(const std::string& field, std::array<int, 3> shape);
  void write_final_part(const std::string& field, std::array<int, 3> offset, std::array<int, 3> count,
                        const float* data);

  /// Root attributes (replaces earlier ones); also gives the XDMF file its origin and spacing.
  void set_attributes(const RunAttributes& attributes);

  /// Writes what HDF5 holds in memory to the temporary file and flushes it to disk: the file is
  /// whole as of now (a checkpoint's moment).
  void flush();
  /// Closes the temporary file and keeps it (for a resumed run to go on); nothing is committed.
  void keep_partial();

  /// Closes the file, fsyncs it and renames it to `path`; writes `<stem>.xmf` beside it (also via
  /// a temporary name) when snapshots were begun. The object is finished afterwards.
  void commit();

  const std::string& path() const { return path_; }
  std::string temporary_path() const { return path_ + ".partial"; }

 private:
  struct Impl;
  std::string path_;
  bool overwrite_;
  std::unique_ptr<Impl> impl_;
};

/// The XDMF file name commit() writes beside `h5_path`: its extension replaced by ".xmf".
std::string xdmf_path_for(const std::string& h5_path);

}  // namespace minimod::io
