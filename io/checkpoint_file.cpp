// io::CheckpointWriter / CheckpointReader: HDF5 1.10 C API (serial), every call checked,
// Fletcher-32 on every dataset, temporary file + fsync + rename.
#include "io/checkpoint_file.hpp"

#include <hdf5.h>

#include <filesystem>

#include "io/hdf5_handle.hpp"
#include "physics/error.hpp"

namespace minimod::io {
namespace {

namespace fs = std::filesystem;
using namespace hdf5;

constexpr const char* kFormat = "minimod checkpoint";

std::string box_name(const std::string& field, int n) { return "/state/" + field + "/" + std::to_string(n); }

std::vector<hsize_t> dims_of(const std::array<int, 3>& s) {
  return {static_cast<hsize_t>(s[0]), static_cast<hsize_t>(s[1]), static_cast<hsize_t>(s[2])};
}

/// The hyperslab of `count` points at `offset` in dataset `d`, and a memory space of its size.
std::pair<Hid, Hid> slab_spaces(hid_t d, const std::array<int, 3>& offset, const std::array<int, 3>& count,
                                const std::string& what) {
  Hid file_space(check_id(H5Dget_space(d), what));
  const auto start = dims_of(offset), n = dims_of(count);
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, n.data(), nullptr), what);
  Hid memory(check_id(H5Screate_simple(3, n.data(), nullptr), what));
  return {std::move(file_space), std::move(memory)};
}

std::string read_string_attribute(hid_t obj, const char* name, const std::string& what) {
  Hid attr(check_id(H5Aopen(obj, name, H5P_DEFAULT), what));
  Hid type(check_id(H5Aget_type(attr.get()), what));
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) <= 0)
    throw IoError(what + ": attribute '" + name + "' is not a string");
  Hid memory(check_id(H5Tcopy(H5T_C_S1), what));
  check(H5Tset_size(memory.get(), H5T_VARIABLE), what);
  check(H5Tset_cset(memory.get(), H5Tget_cset(type.get())), what);
  char* text = nullptr;
  check(H5Aread(attr.get(), memory.get(), &text), what);
  std::string out = text ? text : "";
  Hid space(check_id(H5Aget_space(attr.get()), what));
  H5Dvlen_reclaim(memory.get(), space.get(), H5P_DEFAULT, &text);
  return out;
}

template <class T>
void read_numeric_attribute(hid_t obj, const char* name, hid_t type, T* out, const std::string& what) {
  Hid attr(check_id(H5Aopen(obj, name, H5P_DEFAULT), what));
  check(H5Aread(attr.get(), type, out), what);
}

}  // namespace

struct CheckpointWriter::Impl {
  std::string path, tmp;
  Hid file;
  bool committed = false;
};

CheckpointWriter::CheckpointWriter(const std::string& path, const CheckpointHeader& h)
    : impl_(std::make_unique<Impl>()) {
  Hdf5Quiet quiet;
  impl_->path = path;
  impl_->tmp = path + ".partial";
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  const std::string what = "cannot create checkpoint " + quote(impl_->tmp);
  if (ec) throw IoError(what + ": " + ec.message());
  Hid fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), what));
  check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), what);
  impl_->file = Hid(check_id(H5Fcreate(impl_->tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), what));
  const hid_t f = impl_->file.get();
  const std::string where = quote(impl_->tmp);
  write_string_attribute(f, "format", kFormat, where);
  write_int_attribute(f, "version", h.version, where);
  write_int_attribute(f, "step", h.step, where);
  write_int_attribute(f, "steps", h.steps, where);
  write_string_attribute(f, "fingerprint", h.fingerprint, where);
  write_int3_attribute(f, "grid", h.grid, where);
  write_double_attribute(f, "dt", h.dt, where);
  write_string_attribute(f, "propagator", h.propagator, where);
  write_string_attribute(f, "backend", h.backend, where);
  write_string_attribute(f, "kernel", h.kernel, where);
  write_string_attribute(f, "commit", h.commit, where);
  write_int_attribute(f, "ranks", h.ranks, where);
  write_double_attribute(f, "settled", h.settled, where);
  write_double_attribute(f, "growth", h.growth, where);
  write_int_attribute(f, "snapshots", h.snapshots, where);
}

CheckpointWriter::~CheckpointWriter() {
  if (!impl_ || impl_->committed) return;
  Hdf5Quiet quiet;
  impl_->file.reset();
  H5Eclear2(H5E_DEFAULT);
  std::error_code ec;
  fs::remove(impl_->tmp, ec);
}

void CheckpointWriter::begin_box(const std::string& field, int n, std::array<int, 3> lo, std::array<int, 3> shape) {
  Hdf5Quiet quiet;
  const std::string name = box_name(field, n);
  const std::string what = "cannot create " + quote(name) + " in " + quote(impl_->tmp);
  for (int a = 0; a < 3; ++a)
    if (shape[a] <= 0) throw IoError(what + ": an empty box");
  // Chunks of whole planes of at most ~16 MiB (HDF5 limits a chunk to 4 GiB), as even as may be:
  // HDF5 stores the last chunk whole, so 20 planes in chunks of 14 would take the room of 28.
  const hsize_t plane = static_cast<hsize_t>(shape[1]) * static_cast<hsize_t>(shape[2]);
  const hsize_t most = std::max<hsize_t>(1, (hsize_t{1} << 22) / std::max<hsize_t>(plane, 1));
  const hsize_t chunks = (static_cast<hsize_t>(shape[0]) + most - 1) / most;
  hsize_t chunk[3] = {(static_cast<hsize_t>(shape[0]) + chunks - 1) / chunks, static_cast<hsize_t>(shape[1]),
                      static_cast<hsize_t>(shape[2])};
  if (plane > (hsize_t{1} << 28)) chunk[1] = std::max<hsize_t>(1, (hsize_t{1} << 28) / shape[2]);
  Hid dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), what));
  check(H5Pset_chunk(dcpl.get(), 3, chunk), what);
  check(H5Pset_fletcher32(dcpl.get()), what);
  Hid d = create_dataset(impl_->file.get(), name, H5T_IEEE_F32LE, dims_of(shape), dcpl.get(), quote(impl_->tmp));
  const std::array<int, 6> box{lo[0], lo[1], lo[2], shape[0], shape[1], shape[2]};
  write_numeric_attribute(d.get(), "box", H5T_NATIVE_INT, box.data(), 6, false, quote(name));
}

void CheckpointWriter::write_part(const std::string& field, int n, std::array<int, 3> offset,
                                  std::array<int, 3> count, const float* data) {
  Hdf5Quiet quiet;
  const std::string name = box_name(field, n);
  const std::string what = "cannot write " + quote(name) + " in " + quote(impl_->tmp);
  Hid d(check_id(H5Dopen2(impl_->file.get(), name.c_str(), H5P_DEFAULT), what));
  auto [file_space, memory] = slab_spaces(d.get(), offset, count, what);
  check(H5Dwrite(d.get(), H5T_NATIVE_FLOAT, memory.get(), file_space.get(), H5P_DEFAULT, data), what);
}

void CheckpointWriter::write_seismogram(const std::vector<float>& data, int receivers, int samples) {
  Hdf5Quiet quiet;
  const std::string what = "cannot write '/seismogram' in " + quote(impl_->tmp);
  if (data.size() != static_cast<size_t>(receivers) * static_cast<size_t>(samples))
    throw IoError(what + ": " + std::to_string(data.size()) + " values for " + std::to_string(receivers) + " x " +
                  std::to_string(samples));
  const std::vector<hsize_t> dims{static_cast<hsize_t>(receivers), static_cast<hsize_t>(samples)};
  Hid dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), what));
  if (!data.empty()) {  // chunks of whole traces, ~4 MiB (a chunk must stay below 4 GiB)
    const hsize_t chunk[2] = {std::max<hsize_t>(1, std::min<hsize_t>(dims[0], (hsize_t{1} << 20) / dims[1])), dims[1]};
    check(H5Pset_chunk(dcpl.get(), 2, chunk), what);
    check(H5Pset_fletcher32(dcpl.get()), what);
  }
  Hid d = create_dataset(impl_->file.get(), "/seismogram", H5T_IEEE_F32LE, dims, dcpl.get(), quote(impl_->tmp));
  if (!data.empty()) check(H5Dwrite(d.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), what);
}

void CheckpointWriter::commit() {
  Hdf5Quiet quiet;
  const std::string what = "cannot close checkpoint " + quote(impl_->tmp);
  check(H5Fclose(impl_->file.release()), what);
  fsync_file(impl_->tmp);
  std::error_code ec;
  fs::rename(impl_->tmp, impl_->path, ec);
  if (ec) throw IoError("cannot rename " + quote(impl_->tmp) + " to " + quote(impl_->path) + ": " + ec.message());
  impl_->committed = true;
}

struct CheckpointReader::Impl {
  std::string path;
  Hid file;
  CheckpointHeader header;
};

CheckpointReader::CheckpointReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  Hdf5Quiet quiet;
  impl_->path = path;
  const std::string what = "cannot read checkpoint " + quote(path);
  if (H5Fis_hdf5(path.c_str()) <= 0) throw IoError(what + ": not an HDF5 file");
  impl_->file = Hid(check_id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), what));
  const hid_t f = impl_->file.get();
  if (H5Aexists(f, "format") <= 0 || read_string_attribute(f, "format", what) != kFormat)
    throw IoError(what + ": not a minimod checkpoint (no format attribute '" + kFormat + "')");
  CheckpointHeader& h = impl_->header;
  read_numeric_attribute(f, "version", H5T_NATIVE_INT, &h.version, what);
  if (h.version != CheckpointHeader::kVersion)
    throw IoError(what + ": layout version " + std::to_string(h.version) + ", this minimod reads version " +
                  std::to_string(CheckpointHeader::kVersion));
  read_numeric_attribute(f, "step", H5T_NATIVE_INT, &h.step, what);
  read_numeric_attribute(f, "steps", H5T_NATIVE_INT, &h.steps, what);
  h.fingerprint = read_string_attribute(f, "fingerprint", what);
  read_numeric_attribute(f, "grid", H5T_NATIVE_INT, h.grid.data(), what);
  read_numeric_attribute(f, "dt", H5T_NATIVE_DOUBLE, &h.dt, what);
  h.propagator = read_string_attribute(f, "propagator", what);
  h.backend = read_string_attribute(f, "backend", what);
  h.kernel = read_string_attribute(f, "kernel", what);
  h.commit = read_string_attribute(f, "commit", what);
  read_numeric_attribute(f, "ranks", H5T_NATIVE_INT, &h.ranks, what);
  read_numeric_attribute(f, "settled", H5T_NATIVE_DOUBLE, &h.settled, what);
  read_numeric_attribute(f, "growth", H5T_NATIVE_DOUBLE, &h.growth, what);
  read_numeric_attribute(f, "snapshots", H5T_NATIVE_INT, &h.snapshots, what);
}

CheckpointReader::~CheckpointReader() = default;

const CheckpointHeader& CheckpointReader::header() const { return impl_->header; }

std::array<std::array<int, 3>, 2> CheckpointReader::box(const std::string& field, int n) const {
  Hdf5Quiet quiet;
  const std::string name = box_name(field, n);
  const std::string what = "cannot read " + quote(name) + " of checkpoint " + quote(impl_->path);
  if (H5Lexists(impl_->file.get(), ("/state/" + field).c_str(), H5P_DEFAULT) <= 0 ||
      H5Lexists(impl_->file.get(), name.c_str(), H5P_DEFAULT) <= 0)
    throw IoError(what + ": it is missing");
  Hid d(check_id(H5Dopen2(impl_->file.get(), name.c_str(), H5P_DEFAULT), what));
  std::array<int, 6> b{};
  read_numeric_attribute(d.get(), "box", H5T_NATIVE_INT, b.data(), what);
  return {{{b[0], b[1], b[2]}, {b[3], b[4], b[5]}}};
}

void CheckpointReader::read_part(const std::string& field, int n, std::array<int, 3> offset,
                                 std::array<int, 3> count, float* out) const {
  Hdf5Quiet quiet;
  const std::string name = box_name(field, n);
  const std::string what = "cannot read " + quote(name) + " of checkpoint " + quote(impl_->path) +
                           " (damaged: its checksum or size does not match)";
  Hid d(check_id(H5Dopen2(impl_->file.get(), name.c_str(), H5P_DEFAULT), what));
  auto [file_space, memory] = slab_spaces(d.get(), offset, count, what);
  check(H5Dread(d.get(), H5T_NATIVE_FLOAT, memory.get(), file_space.get(), H5P_DEFAULT, out), what);
}

std::vector<float> CheckpointReader::read_seismogram(int receivers, int samples) const {
  Hdf5Quiet quiet;
  const std::string what = "cannot read '/seismogram' of checkpoint " + quote(impl_->path);
  Hid d(check_id(H5Dopen2(impl_->file.get(), "/seismogram", H5P_DEFAULT), what));
  Hid space(check_id(H5Dget_space(d.get()), what));
  hsize_t dims[2] = {0, 0};
  if (H5Sget_simple_extent_ndims(space.get()) != 2 || H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0 ||
      dims[0] != static_cast<hsize_t>(receivers) || dims[1] != static_cast<hsize_t>(samples))
    throw IoError(what + ": not " + std::to_string(receivers) + " receivers x " + std::to_string(samples) + " samples");
  std::vector<float> out(static_cast<size_t>(receivers) * static_cast<size_t>(samples));
  if (!out.empty()) check(H5Dread(d.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), what);
  return out;
}

}  // namespace minimod::io
