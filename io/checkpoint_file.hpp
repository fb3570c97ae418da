// io::CheckpointFile: one checkpoint of a shot (app/checkpoint.hpp) as an HDF5 file. Layout: root
// attributes (CheckpointHeader), /state/<field>/<n> [x][y][z] float32 for the n-th box a field
// lives on (attribute `box`: lo x, y, z then n x, y, z in grid indices), /seismogram [receiver]
// [sample] of the samples so far. Every dataset carries HDF5's Fletcher-32 checksum, so a file
// damaged on disk fails to read instead of resuming wrong. Written to `<path>.partial`, fsynced
// and renamed over `<path>` by commit(): the last checkpoint stays whole until the next is.
#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

namespace minimod::io {

/// What a checkpoint says of itself (root attributes).
struct CheckpointHeader {
  static constexpr int kVersion = 1;  // of this layout; a reader refuses others
  int version = kVersion;
  int step = 0;                       // steps done: the state is that after step `step`
  int steps = 0;                      // the run's steps in all
  std::string fingerprint;            // io::Config::fingerprint of the run that wrote it
  std::array<int, 3> grid{0, 0, 0};   // grid points per axis, padding included
  double dt = 0;                      // s
  std::string propagator, backend, kernel, commit;
  int ranks = 1;
  /// The time loop's health record so far (app::RunResult::growth_after_source and the field's
  /// size it is measured against), so that a resumed run reports what an unbroken one would.
  double settled = 0, growth = 0;
  /// Snapshots written by then: they lie in the result's `<output.file>.partial`, kept for the
  /// resumed run to go on writing.
  int snapshots = 0;
};

class CheckpointWriter {
 public:
  /// Creates `<path>.partial` (parent folders too; a stale one is truncated).
  CheckpointWriter(const std::string& path, const CheckpointHeader& header);
  /// Without commit(): closes and deletes the temporary file. Never throws.
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  /// Creates /state/<field>/<n> for the box at `lo` of `shape` points (chunks of whole planes).
  void begin_box(const std::string& field, int n, std::array<int, 3> lo, std::array<int, 3> shape);
  /// Writes `count` points at `offset` inside that box from data (C order).
  void write_part(const std::string& field, int n, std::array<int, 3> offset, std::array<int, 3> count,
                  const float* data);
  /// /seismogram [receivers][samples] from data[r * samples + t].
  void write_seismogram(const std::vector<float>& data, int receivers, int samples);
  /// Closes, fsyncs and renames over `path`. The object is finished afterwards.
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class CheckpointReader {
 public:
  /// Opens `path`; IoError naming it when it is not a readable checkpoint of this layout.
  explicit CheckpointReader(const std::string& path);
  ~CheckpointReader();
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;

  const CheckpointHeader& header() const;
  /// The box of /state/<field>/<n> (lo, shape); IoError naming the dataset when it is missing.
  std::array<std::array<int, 3>, 2> box(const std::string& field, int n) const;
  /// Reads `count` points at `offset` of that box into out (C order); IoError on a checksum
  /// mismatch or a short read.
  void read_part(const std::string& field, int n, std::array<int, 3> offset, std::array<int, 3> count,
                 float* out) const;
  /// /seismogram, [receiver][sample]; IoError unless it is receivers x samples.
  std::vector<float> read_seismogram(int receivers, int samples) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace minimod::io
