// io::OutputFile: HDF5 1.10 C API (serial), temporary file + rename, XDMF for ParaView.
// Every HDF5 call is checked; HDF5's own stack printing is silenced during our calls and its
// innermost message goes into the IoError instead.
#include "io/output_file.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <locale>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>

#include "io/hdf5_handle.hpp"
#include "physics/error.hpp"
#include "physics/log.hpp"

namespace minimod::io {
namespace {

namespace fs = std::filesystem;
using hdf5::Hdf5Quiet;
using hdf5::hdf5_reason;
using hdf5::Hid;
using hdf5::check;
using hdf5::check_id;
using hdf5::create_dataset;
using hdf5::fail;
using hdf5::fsync_file;
using hdf5::quote;
using hdf5::write_double3_attribute;
using hdf5::write_double_attribute;
using hdf5::write_int3_attribute;
using hdf5::write_int_attribute;
using hdf5::write_string_attribute;




void check_field_name(const std::string& field, const std::string& where) {
  if (field.empty() || field.find('/') != std::string::npos || field == "time") {
    throw IoError("invalid field name " + quote(field) + " for " + where +
                  " (must be non-empty, without '/', not 'time')");
  }
}

// Opens dataset `name` of a resumed file, which must have exactly `dims`.
Hid open_dataset_of(hid_t file, const std::string& name, const std::vector<hsize_t>& dims, const std::string& where) {
  const std::string what = "cannot reopen " + quote(name) + " in " + where;
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) throw IoError(what + ": it is missing");
  Hid d(check_id(H5Dopen2(file, name.c_str(), H5P_DEFAULT), what));
  Hid space(check_id(H5Dget_space(d.get()), what));
  std::vector<hsize_t> have(dims.size());
  if (H5Sget_simple_extent_ndims(space.get()) != static_cast<int>(dims.size()) ||
      H5Sget_simple_extent_dims(space.get(), have.data(), nullptr) < 0 || have != dims)
    throw IoError(what + ": its shape is not this run's");
  return d;
}

std::string shape_text(const std::array<int, 3>& s) {
  return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
}

void check_shape(const std::array<int, 3>& shape, const std::string& what) {
  if (shape[0] <= 0 || shape[1] <= 0 || shape[2] <= 0) {
    throw IoError(what + ": shape " + shape_text(shape) + " must be positive on every axis");
  }
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}


}  // namespace

std::string xdmf_path_for(const std::string& h5_path) {
  return fs::path(h5_path).replace_extension(".xmf").string();
}

struct SnapshotSeries {
  Hid dataset;
  int count = 0;
  std::array<int, 3> shape{}, stride{}, first_index{};
  double interval = 0;  // s
  int chunk_planes = 0;    // planes of x a chunk holds
  bool whole_planes = false;  // a chunk holds whole planes (direct chunk writes of chunk_planes)
  std::vector<bool> written;
  std::vector<int> planes_written;  // by snapshot (write_snapshot_part)
};

struct FinalField {  // /final/<field>, written by parts
  Hid dataset;
  std::array<int, 3> shape{};
  std::int64_t written = 0;  // points written so far
  std::int64_t points() const { return static_cast<std::int64_t>(shape[0]) * shape[1] * shape[2]; }
};

struct OutputFile::Impl {
  std::string tmp;  // the file HDF5 writes: <path>.partial
  Hid file;
  std::map<std::string, SnapshotSeries> snapshots;  // by field
  std::map<std::string, FinalField> finals;          // by field
  Hid time_dataset;                                 // /snapshots/time, shared by all fields
  std::vector<double> times;                        // s, NaN where no snapshot was written
  bool have_attributes = false;
  std::array<double, 3> spacing{1, 1, 1};  // m, for the XDMF geometry
  std::array<double, 3> origin{0, 0, 0};   // m
  bool done = false;                       // committed, or failed while committing
  bool keep_temp = false;                  // commit found `path` taken: keep the data
  bool committed = false;                  // renamed to `path`: nothing to clean up

  std::string where() const { return quote(tmp); }
  std::string in(const std::string& dataset) const { return quote(dataset) + " in " + where(); }

  // Closes every open dataset, then the file (H5F_CLOSE_STRONG closes anything left).
  herr_t close() {
    for (auto& [field, series] : snapshots) series.dataset.reset();
    for (auto& [field, f] : finals) f.dataset.reset();
    time_dataset.reset();
    if (file.get() < 0) return 0;
    return H5Fclose(file.release());
  }

  void require_open(const std::string& action) const {
    if (done || file.get() < 0) {
      throw IoError("cannot " + action + ": " + where() + " was already committed or closed");
    }
  }
};

OutputFile::OutputFile(const std::string& path, bool overwrite, bool resume)
    : path_(path), overwrite_(overwrite), impl_(std::make_unique<Impl>()) {
  Hdf5Quiet quiet;
  impl_->tmp = temporary_path();
  std::error_code ec;
  if (fs::exists(path_, ec) && !overwrite_) {
    throw ConfigError("config error: output.file: '" + path_ +
                      "' already exists; set output.overwrite: true or "
                      "--set output.overwrite=true to replace it");
  }
  if (fs::is_directory(path_, ec)) {
    throw ConfigError("config error: output.file: '" + path_ + "' is a folder, not a file name");
  }
  const fs::path parent = fs::path(path_).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) {
      throw IoError("cannot create folder " + quote(parent.string()) + " for " + quote(path_) +
                    ": " + ec.message());
    }
  }
  const std::string what = (resume ? "cannot reopen " : "cannot create ") + impl_->where();
  Hid fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), what));
  check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), what);
  if (resume) {
    if (!fs::exists(impl_->tmp, ec) || H5Fis_hdf5(impl_->tmp.c_str()) <= 0)
      throw IoError(what + ": it is missing or not HDF5, and it holds the snapshots before the checkpoint");
    impl_->file = Hid(check_id(H5Fopen(impl_->tmp.c_str(), H5F_ACC_RDWR, fapl.get()), what));
    return;
  }
  impl_->file =
      Hid(check_id(H5Fcreate(impl_->tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), what));
}

void OutputFile::flush() {
  Hdf5Quiet quiet;
  impl_->require_open("flush");
  check(H5Fflush(impl_->file.get(), H5F_SCOPE_GLOBAL), "cannot flush " + impl_->where());
  fsync_file(impl_->tmp);
}

void OutputFile::keep_partial() {
  Hdf5Quiet quiet;
  impl_->done = true;
  impl_->keep_temp = true;
  if (impl_->close() < 0) fail("cannot close " + impl_->where());
}

OutputFile::~OutputFile() {
  if (!impl_ || impl_->committed) return;
  try {
    Hdf5Quiet quiet;
    impl_->close();
    H5Eclear2(H5E_DEFAULT);
    if (!impl_->keep_temp) {
      std::error_code ec;
      fs::remove(impl_->tmp, ec);
      fs::remove(xdmf_path_for(path_) + ".partial", ec);
    }
  } catch (...) {
    // A destructor never throws; the temporary name already says the file is incomplete.
  }
}

void OutputFile::write_receivers(const std::vector<std::array<double, 3>>& coords) {
  Hdf5Quiet quiet;
  impl_->require_open("write receivers");
  const std::string name = "/receivers/coordinates";
  const std::string what = "cannot write " + impl_->in(name);
  Hid dataset =
      create_dataset(impl_->file.get(), name, H5T_IEEE_F64LE,
                     {static_cast<hsize_t>(coords.size()), 3}, H5P_DEFAULT, impl_->where());
  if (!coords.empty()) {
    check(H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                   coords.data()->data()),
          what);
  }
  write_string_attribute(dataset.get(), "units", "m", impl_->in(name));
  write_string_attribute(dataset.get(), "axes", "receiver,xyz", impl_->in(name));
}

void OutputFile::write_seismogram(const std::string& field, const std::vector<float>& data,
                                  int receivers, int samples, double interval,
                                  const std::string& units) {
  Hdf5Quiet quiet;
  impl_->require_open("write seismogram " + quote(field));
  const std::string name = "/seismograms/" + field;
  check_field_name(field, impl_->in(name));
  if (receivers < 0 || samples < 0 ||
      data.size() != static_cast<std::size_t>(receivers) * static_cast<std::size_t>(samples)) {
    throw IoError("cannot write " + impl_->in(name) + ": " + std::to_string(data.size()) +
                  " values for " + std::to_string(receivers) + " receivers x " +
                  std::to_string(samples) + " samples");
  }
  const std::string what = "cannot write " + impl_->in(name);
  Hid dataset = create_dataset(impl_->file.get(), name, H5T_IEEE_F32LE,
                               {static_cast<hsize_t>(receivers), static_cast<hsize_t>(samples)},
                               H5P_DEFAULT, impl_->where());
  if (!data.empty()) {
    check(H5Dwrite(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()),
          what);
  }
  write_double_attribute(dataset.get(), "dt", interval, impl_->in(name));
  write_string_attribute(dataset.get(), "units", units, impl_->in(name));
  write_string_attribute(dataset.get(), "axes", "receiver,time", impl_->in(name));
}

void OutputFile::begin_snapshots(const std::string& field, int count, std::array<int, 3> shape,
                                 std::array<int, 3> stride, std::array<int, 3> first_index,
                                 double interval_s, int planes_per_chunk, int written) {
  Hdf5Quiet quiet;
  impl_->require_open("begin snapshots " + quote(field));
  const std::string name = "/snapshots/" + field;
  const std::string what = "cannot create " + impl_->in(name);
  check_field_name(field, impl_->in(name));
  check_shape(shape, what);
  if (count <= 0) throw IoError(what + ": snapshot count " + std::to_string(count) + " <= 0");
  if (stride[0] <= 0 || stride[1] <= 0 || stride[2] <= 0) {
    throw IoError(what + ": stride " + shape_text(stride) + " must be positive");
  }
  if (impl_->snapshots.count(field)) throw IoError(what + ": snapshots already begun");
  if (impl_->time_dataset.get() >= 0 && static_cast<int>(impl_->times.size()) != count) {
    throw IoError(what + ": " + std::to_string(count) + " snapshots, but /snapshots/time has " +
                  std::to_string(impl_->times.size()));
  }

  // One snapshot per chunk, so each write_snapshot is one contiguous chunk write. HDF5 chunks must
  // stay below 4 GiB: split x (then y) if one snapshot is larger than kMaxChunkBytes.
  constexpr hsize_t kMaxChunkBytes = hsize_t{1} << 30;
  const hsize_t plane = static_cast<hsize_t>(shape[1]) * static_cast<hsize_t>(shape[2]) * 4;
  hsize_t chunk[4] = {1, static_cast<hsize_t>(shape[0]), static_cast<hsize_t>(shape[1]),
                      static_cast<hsize_t>(shape[2])};
  if (planes_per_chunk > 0) chunk[1] = std::min<hsize_t>(chunk[1], static_cast<hsize_t>(planes_per_chunk));
  chunk[1] = std::max<hsize_t>(1, std::min<hsize_t>(chunk[1], kMaxChunkBytes / plane));
  if (plane > kMaxChunkBytes) {
    chunk[2] = std::max<hsize_t>(1, kMaxChunkBytes / (static_cast<hsize_t>(shape[2]) * 4));
  }
  Hid dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), what));
  check(H5Pset_chunk(dcpl.get(), 4, chunk), what);
  const float fill = 0.0f;
  check(H5Pset_fill_value(dcpl.get(), H5T_NATIVE_FLOAT, &fill), what);
  // Every chunk is written whole: filling it first would double the bytes written. Chunks never
  // written stay unallocated and still read as the fill value.
  check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), what);

  SnapshotSeries series;
  const std::vector<hsize_t> dims{static_cast<hsize_t>(count), static_cast<hsize_t>(shape[0]),
                                  static_cast<hsize_t>(shape[1]), static_cast<hsize_t>(shape[2])};
  if (written > 0)  // resumed: the series is in the file, its first `written` snapshots with it
    series.dataset = open_dataset_of(impl_->file.get(), name, dims, impl_->where());
  else
    series.dataset = create_dataset(impl_->file.get(), name, H5T_IEEE_F32LE, dims, dcpl.get(), impl_->where());
  series.count = count;
  series.chunk_planes = static_cast<int>(chunk[1]);
  series.whole_planes = plane <= kMaxChunkBytes;
  series.shape = shape;
  series.stride = stride;
  series.first_index = first_index;
  series.interval = interval_s;
  series.written.assign(static_cast<std::size_t>(count), false);
  series.planes_written.assign(static_cast<std::size_t>(count), 0);
  const hid_t ds = series.dataset.get();
  if (written == 0) {
    write_int3_attribute(ds, "stride", stride, impl_->in(name));
    write_int3_attribute(ds, "first_index", first_index, impl_->in(name));
    write_double_attribute(ds, "interval", interval_s, impl_->in(name));
    write_string_attribute(ds, "units", "arbitrary", impl_->in(name));
    write_string_attribute(ds, "axes", "snapshot,x,y,z", impl_->in(name));
  }

  const std::string tname = "/snapshots/time";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (impl_->time_dataset.get() < 0 && written > 0) {
    impl_->time_dataset = open_dataset_of(impl_->file.get(), tname, {static_cast<hsize_t>(count)}, impl_->where());
    impl_->times.assign(static_cast<std::size_t>(count), nan);
    check(H5Dread(impl_->time_dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, impl_->times.data()),
          "cannot read " + impl_->in(tname));
  } else if (impl_->time_dataset.get() < 0) {
    const std::string twhat = "cannot create " + impl_->in(tname);
    Hid tdcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), twhat));
    check(H5Pset_fill_value(tdcpl.get(), H5T_NATIVE_DOUBLE, &nan), twhat);
    check(H5Pset_fill_time(tdcpl.get(), H5D_FILL_TIME_ALLOC), twhat);
    impl_->time_dataset =
        create_dataset(impl_->file.get(), tname, H5T_IEEE_F64LE, {static_cast<hsize_t>(count)},
                       tdcpl.get(), impl_->where());
    write_string_attribute(impl_->time_dataset.get(), "units", "s", impl_->in(tname));
    impl_->times.assign(static_cast<std::size_t>(count), nan);
  }
  for (int i = 0; i < written; ++i) {  // the resumed file's snapshots: each with its time
    if (std::isnan(impl_->times[static_cast<std::size_t>(i)]))
      throw IoError(what + ": snapshot " + std::to_string(i) + " of the " + std::to_string(written) +
                    " written before the checkpoint is missing");
    series.written[static_cast<std::size_t>(i)] = true;
    series.planes_written[static_cast<std::size_t>(i)] = shape[0];
  }
  for (int i = written; i < count; ++i) impl_->times[static_cast<std::size_t>(i)] = nan;  // to be written again
  impl_->snapshots.emplace(field, std::move(series));
}

void OutputFile::write_snapshot(const std::string& field, int index, double time,
                                const float* data) {
  auto it = impl_->snapshots.find(field);
  write_snapshot_part(field, index, time, 0, it == impl_->snapshots.end() ? 0 : it->second.shape[0], data);
}

void OutputFile::write_snapshot_part(const std::string& field, int index, double time, int first_plane,
                                     int planes, const float* data) {
  Hdf5Quiet quiet;
  impl_->require_open("write snapshot of " + quote(field));
  const std::string name = "/snapshots/" + field;
  const std::string what = "cannot write snapshot " + std::to_string(index) + " of " + impl_->in(name);
  auto it = impl_->snapshots.find(field);
  if (it == impl_->snapshots.end()) throw IoError(what + ": begin_snapshots was not called");
  SnapshotSeries& s = it->second;
  if (index < 0 || index >= s.count) {
    throw IoError(what + ": index outside [0, " + std::to_string(s.count) + ")");
  }
  if (first_plane < 0 || planes <= 0 || first_plane + planes > s.shape[0]) {
    throw IoError(what + ": planes [" + std::to_string(first_plane) + ", " + std::to_string(first_plane + planes) +
                  ") outside [0, " + std::to_string(s.shape[0]) + ")");
  }
  if (data == nullptr) throw IoError(what + ": no data");

  const hsize_t start[4] = {static_cast<hsize_t>(index), static_cast<hsize_t>(first_plane), 0, 0};
  const hsize_t count[4] = {1, static_cast<hsize_t>(planes), static_cast<hsize_t>(s.shape[1]),
                            static_cast<hsize_t>(s.shape[2])};
#if H5_VERSION_GE(1, 10, 3)
  // The planes are one whole chunk (a snapshot of one chunk, or a part of write_snapshot_part
  // on a chunk's planes): hand them to the file as they are (no selection). An edge chunk, of
  // fewer planes, is stored whole, so it takes the selection.
  const bool direct = s.whole_planes && first_plane % s.chunk_planes == 0 && planes == s.chunk_planes;
#else
  const bool direct = false;
#endif
  if (direct) {
    const std::size_t bytes = static_cast<std::size_t>(count[1] * count[2] * count[3]) * sizeof(float);
#if H5_VERSION_GE(1, 10, 3)
    check(H5Dwrite_chunk(s.dataset.get(), H5P_DEFAULT, 0, start, bytes, data), what);
#endif
  } else {
    Hid filespace(check_id(H5Dget_space(s.dataset.get()), what));
    check(H5Sselect_hyperslab(filespace.get(), H5S_SELECT_SET, start, nullptr, count, nullptr), what);
    Hid memspace(check_id(H5Screate_simple(4, count, nullptr), what));
    check(H5Dwrite(s.dataset.get(), H5T_NATIVE_FLOAT, memspace.get(), filespace.get(), H5P_DEFAULT,
                   data),
          what);
  }
  int& done = s.planes_written[static_cast<std::size_t>(index)];
  done += planes;
  if (done < s.shape[0]) return;  // its time once every plane is in

  const std::string twhat = "cannot write " + impl_->in("/snapshots/time");
  Hid tspace(check_id(H5Dget_space(impl_->time_dataset.get()), twhat));
  const hsize_t tstart[1] = {static_cast<hsize_t>(index)};
  const hsize_t tcount[1] = {1};
  check(H5Sselect_hyperslab(tspace.get(), H5S_SELECT_SET, tstart, nullptr, tcount, nullptr), twhat);
  Hid tmem(check_id(H5Screate_simple(1, tcount, nullptr), twhat));
  check(H5Dwrite(impl_->time_dataset.get(), H5T_NATIVE_DOUBLE, tmem.get(), tspace.get(),
                 H5P_DEFAULT, &time),
        twhat);
  s.written[static_cast<std::size_t>(index)] = true;
  impl_->times[static_cast<std::size_t>(index)] = time;
}

void OutputFile::write_final_wavefield(const std::string& field, std::array<int, 3> shape,
                                       const float* data) {
  begin_final_wavefield(field, shape);
  write_final_part(field, {0, 0, 0}, shape, data);
}

void OutputFile::begin_final_wavefield(const std::string& field, std::array<int, 3> shape) {
  Hdf5Quiet quiet;
  impl_->require_open("write final wavefield " + quote(field));
  const std::string name = "/final/" + field;
  const std::string what = "cannot write " + impl_->in(name);
  check_field_name(field, impl_->in(name));
  check_shape(shape, what);
  if (impl_->finals.count(field)) throw IoError(what + ": already begun");
  FinalField f;
  f.shape = shape;
  f.dataset = create_dataset(impl_->file.get(), name, H5T_IEEE_F32LE,
                             {static_cast<hsize_t>(shape[0]), static_cast<hsize_t>(shape[1]),
                              static_cast<hsize_t>(shape[2])},
                             H5P_DEFAULT, impl_->where());
  write_string_attribute(f.dataset.get(), "axes", "x,y,z", impl_->in(name));
  impl_->finals.emplace(field, std::move(f));
}

void OutputFile::write_final_part(const std::string& field, std::array<int, 3> offset,
                                  std::array<int, 3> count, const float* data) {
  Hdf5Quiet quiet;
  impl_->require_open("write final wavefield " + quote(field));
  const std::string name = "/final/" + field;
  const std::string what = "cannot write part " + shape_text(offset) + " + " + shape_text(count) + " of " +
                           impl_->in(name);
  auto it = impl_->finals.find(field);
  if (it == impl_->finals.end()) throw IoError(what + ": begin_final_wavefield was not called");
  FinalField& f = it->second;
  for (int a = 0; a < 3; ++a)
    if (offset[a] < 0 || count[a] <= 0 || offset[a] + count[a] > f.shape[a])
      throw IoError(what + ": outside its shape " + shape_text(f.shape));
  if (data == nullptr) throw IoError(what + ": no data");
  const hsize_t start[3] = {static_cast<hsize_t>(offset[0]), static_cast<hsize_t>(offset[1]),
                            static_cast<hsize_t>(offset[2])};
  const hsize_t n[3] = {static_cast<hsize_t>(count[0]), static_cast<hsize_t>(count[1]),
                        static_cast<hsize_t>(count[2])};
  Hid filespace(check_id(H5Dget_space(f.dataset.get()), what));
  check(H5Sselect_hyperslab(filespace.get(), H5S_SELECT_SET, start, nullptr, n, nullptr), what);
  Hid memspace(check_id(H5Screate_simple(3, n, nullptr), what));
  check(H5Dwrite(f.dataset.get(), H5T_NATIVE_FLOAT, memspace.get(), filespace.get(), H5P_DEFAULT, data), what);
  f.written += static_cast<std::int64_t>(count[0]) * count[1] * count[2];
}

void OutputFile::set_attributes(const RunAttributes& a) {
  Hdf5Quiet quiet;
  impl_->require_open("write attributes");
  const hid_t root = impl_->file.get();
  const std::string where = "the root group of " + impl_->where();
  write_double_attribute(root, "dt", a.dt, where);
  write_double3_attribute(root, "spacing", a.spacing, where);
  write_double3_attribute(root, "origin", a.origin, where);
  write_string_attribute(root, "units", a.units, where);
  write_string_attribute(root, "propagator", a.propagator, where);
  write_string_attribute(root, "backend", a.backend, where);
  write_string_attribute(root, "kernel", a.kernel, where);
  write_string_attribute(root, "version", a.version, where);
  write_string_attribute(root, "commit", a.commit, where);
  write_string_attribute(root, "config", a.config_text, where);
  write_int3_attribute(root, "shape", a.shape, where);
  write_int3_attribute(root, "pml_lo", a.pml_lo, where);
  write_int3_attribute(root, "pml_hi", a.pml_hi, where);
  write_double_attribute(root, "growth_after_source", a.growth_after_source, where);
  write_double3_attribute(root, "source_position", a.source_position, where);
  if (a.shot >= 0) {
    write_int_attribute(root, "shot", a.shot, where);
    write_int_attribute(root, "shots", a.shots, where);
  }
  write_string_attribute(root, "axes", "x,y,z (z = depth, positive down); arrays C order", where);
  impl_->have_attributes = true;
  impl_->spacing = a.spacing;
  impl_->origin = a.origin;
}

namespace {

// XDMF 2 for ParaView: one temporal collection per snapshot geometry, one uniform grid per written
// snapshot, each field a hyperslab of /snapshots/<field>. XDMF lists dimensions slowest first, so
// ParaView's X axis is minimod's z (depth) and its Z axis minimod's x; the geometry is consistent.
std::string xdmf_text(const std::string& h5_name, const std::map<std::string, SnapshotSeries>& all,
                      const std::vector<double>& times, const std::array<double, 3>& origin,
                      const std::array<double, 3>& spacing) {
  using Key = std::tuple<int, std::array<int, 3>, std::array<int, 3>, std::array<int, 3>>;
  std::map<Key, std::vector<const std::pair<const std::string, SnapshotSeries>*>> groups;
  for (const auto& entry : all) {
    const SnapshotSeries& s = entry.second;
    groups[Key{s.count, s.shape, s.stride, s.first_index}].push_back(&entry);
  }
  std::ostringstream x;
  x.imbue(std::locale::classic());
  x.precision(15);  // digits10: prints 0.1 as 0.1, still exact to 1e-15
  x << "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
    << "<!-- minimod snapshots of " << xml_escape(h5_name) << ". Arrays are [x][y][z], z fastest:"
    << " ParaView shows minimod z (depth) as its X axis and minimod x as its Z axis. -->\n"
    << "<Xdmf Version=\"2.0\">\n  <Domain>\n";
  for (const auto& [key, fields] : groups) {
    const SnapshotSeries& s = fields.front()->second;
    std::string names;
    for (const auto* f : fields) names += (names.empty() ? "" : ",") + f->first;
    const std::string dims = std::to_string(s.shape[0]) + " " + std::to_string(s.shape[1]) + " " +
                             std::to_string(s.shape[2]);
    x << "    <Grid Name=\"snapshots " << xml_escape(names)
      << "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (int i = 0; i < s.count; ++i) {
      bool any = false;
      for (const auto* f : fields) any = any || f->second.written[static_cast<std::size_t>(i)];
      if (!any) continue;
      x << "      <Grid Name=\"snapshot " << i << "\" GridType=\"Uniform\">\n"
        << "        <Time Value=\"" << times[static_cast<std::size_t>(i)] << "\"/>\n"
        << "        <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" << dims << "\"/>\n"
        << "        <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
        << "          <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
           "Format=\"XML\">";
      for (int a = 0; a < 3; ++a) {
        x << (a ? " " : "") << origin[a] + s.first_index[a] * spacing[a];
      }
      x << "</DataItem>\n"
        << "          <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
           "Format=\"XML\">";
      for (int a = 0; a < 3; ++a) x << (a ? " " : "") << spacing[a] * s.stride[a];
      x << "</DataItem>\n        </Geometry>\n";
      for (const auto* f : fields) {
        if (!f->second.written[static_cast<std::size_t>(i)]) continue;
        x << "        <Attribute Name=\"" << xml_escape(f->first)
          << "\" AttributeType=\"Scalar\" Center=\"Node\">\n"
          << "          <DataItem ItemType=\"HyperSlab\" Dimensions=\"" << dims
          << "\" Type=\"HyperSlab\">\n"
          << "            <DataItem Dimensions=\"3 4\" Format=\"XML\">" << i << " 0 0 0 1 1 1 1 1 "
          << dims << "</DataItem>\n"
          << "            <DataItem Dimensions=\"" << s.count << " " << dims
          << "\" NumberType=\"Float\" Precision=\"4\" Format=\"HDF\">" << xml_escape(h5_name)
          << ":/snapshots/" << xml_escape(f->first) << "</DataItem>\n"
          << "          </DataItem>\n        </Attribute>\n";
      }
      x << "      </Grid>\n";
    }
    x << "    </Grid>\n";
  }
  x << "  </Domain>\n</Xdmf>\n";
  return x.str();
}

}  // namespace

void OutputFile::commit() {
  Hdf5Quiet quiet;
  impl_->require_open("commit");
  impl_->done = true;  // from here on, a failure leaves nothing that looks complete
  for (const auto& [field, s] : impl_->snapshots) {
    const auto missing = std::count(s.written.begin(), s.written.end(), false);
    if (missing > 0) {
      log::warn(quote(path_) + ": " + std::to_string(missing) + " of " + std::to_string(s.count) +
                " snapshots of " + quote(field) + " were never written (they read as zeros)");
    }
  }
  for (const auto& [field, f] : impl_->finals) {
    if (f.written != f.points()) {  // a gather that lost a part: the file must not look complete
      throw IoError("cannot commit " + impl_->where() + ": " + std::to_string(f.written) + " of " +
                    std::to_string(f.points()) + " points of " + quote("/final/" + field) + " were written");
    }
  }
  if (impl_->close() < 0) fail("cannot close " + impl_->where());
  fsync_file(impl_->tmp);

  std::error_code ec;
  if (!overwrite_ && fs::exists(path_, ec)) {
    impl_->keep_temp = true;
    throw IoError(quote(path_) +
                  " appeared while this run was writing; not replacing it. The "
                  "result is in " +
                  impl_->where());
  }
  fs::rename(impl_->tmp, path_, ec);
  if (ec) {
    throw IoError("cannot rename " + impl_->where() + " to " + quote(path_) + ": " + ec.message());
  }
  impl_->committed = true;

  const std::string xmf = xdmf_path_for(path_);
  if (impl_->snapshots.empty()) {
    if (overwrite_) fs::remove(xmf, ec);  // a stale one would point at snapshots no longer there
    return;
  }
  if (!impl_->have_attributes) {
    log::warn(quote(xmf) + ": no run attributes were set; using origin 0 and spacing 1 m");
  }
  const std::string xmf_tmp = xmf + ".partial";
  {
    std::ofstream out(xmf_tmp, std::ios::binary | std::ios::trunc);
    out << xdmf_text(fs::path(path_).filename().string(), impl_->snapshots, impl_->times,
                     impl_->origin, impl_->spacing);
    out.close();
    if (!out) {
      fs::remove(xmf_tmp, ec);
      throw IoError("wrote " + quote(path_) + " but cannot write " + quote(xmf_tmp));
    }
  }
  fs::rename(xmf_tmp, xmf, ec);
  if (ec) {
    fs::remove(xmf_tmp, ec);
    throw IoError("wrote " + quote(path_) + " but cannot rename " + quote(xmf_tmp) + " to " +
                  quote(xmf) + ": " + ec.message());
  }
}

}  // namespace minimod::io
