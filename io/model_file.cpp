// Model and wavelet input from HDF5 (HDF5 1.10 C API). Problems with the user's file are
// ConfigErrors naming the config key; HDF5's own stack printing is silenced while we call it.
#include "io/model_file.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>
#include <utility>

#include "io/hdf5_handle.hpp"
#include "physics/error.hpp"

namespace minimod::io {
namespace {

namespace fs = std::filesystem;
using hdf5::Hdf5Quiet;
using hdf5::hdf5_reason;
using hdf5::Hid;


std::string quote(const std::string& s) { return "'" + s + "'"; }

std::string shape_text(const std::vector<hsize_t>& dims) {
  if (dims.empty()) return "scalar";
  std::string s;
  for (std::size_t a = 0; a < dims.size(); ++a) s += (a ? "x" : "") + std::to_string(dims[a]);
  return s;
}

std::string index_text(std::size_t linear, const std::vector<hsize_t>& dims) {
  std::vector<hsize_t> idx(dims.size());
  for (std::size_t a = dims.size(); a-- > 0;) {
    idx[a] = linear % dims[a];
    linear /= dims[a];
  }
  std::string s;
  for (hsize_t i : idx) s += "[" + std::to_string(i) + "]";
  return s;
}

// A dataset of a user's input file, opened and described; the error prefix names key and file.
struct InputDataset {
  std::string key;     // config key path, e.g. "model.vp"
  std::string prefix;  // "config error: <key>: "
  std::string where;   // "dataset 'vp' of 'model.h5'"
  Hid file, dataset;
  std::vector<hsize_t> dims;
  std::size_t type_size = 0;  // bytes per value in the file

  [[noreturn]] void reject(const std::string& what) const {
    throw ConfigError(prefix + where + " " + what);
  }
};

InputDataset open_input(const std::string& file, const std::string& dataset,
                        const std::string& key) {
  InputDataset in;
  in.key = key;
  in.prefix = "config error: " + key + ": ";
  in.where = "dataset " + quote(dataset) + " of " + quote(file);
  std::error_code ec;
  if (!fs::exists(file, ec)) throw ConfigError(in.prefix + quote(file) + " does not exist");
  if (fs::is_directory(file, ec)) throw ConfigError(in.prefix + quote(file) + " is a folder");
  const htri_t is_hdf5 = H5Fis_hdf5(file.c_str());
  if (is_hdf5 == 0) throw ConfigError(in.prefix + quote(file) + " is not an HDF5 file");
  if (is_hdf5 < 0) {
    throw ConfigError(in.prefix + "cannot read " + quote(file) + ": " + hdf5_reason());
  }
  in.file = Hid(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (in.file.get() < 0) {
    throw ConfigError(in.prefix + "cannot open " + quote(file) + ": " + hdf5_reason());
  }

  // H5Lexists fails (rather than says no) when a group on the way is missing: test each prefix.
  const std::string missing = in.prefix + quote(file) + " has no dataset " + quote(dataset);
  const std::string path = (dataset.empty() || dataset[0] != '/') ? "/" + dataset : dataset;
  if (path == "/") throw ConfigError(missing);
  for (std::size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    const std::string part = path.substr(0, pos);
    if (part.back() == '/') continue;  // "a//b"
    const htri_t exists = H5Lexists(in.file.get(), part.c_str(), H5P_DEFAULT);
    if (exists <= 0) {
      H5Eclear2(H5E_DEFAULT);
      throw ConfigError(missing);
    }
  }
  in.dataset = Hid(H5Dopen2(in.file.get(), path.c_str(), H5P_DEFAULT));
  if (in.dataset.get() < 0) {
    throw ConfigError(in.prefix + quote(dataset) + " in " + quote(file) +
                      " is not a dataset (a group?): " + hdf5_reason());
  }

  Hid type(H5Dget_type(in.dataset.get()));
  if (type.get() < 0) in.reject("has an unreadable type: " + hdf5_reason());
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT) {
    const char* name = cls == H5T_INTEGER ? "integer" : cls == H5T_STRING ? "string" : "non-float";
    in.reject(std::string("has ") + name + " values, expected float32 or float64");
  }
  in.type_size = H5Tget_size(type.get());

  Hid space(H5Dget_space(in.dataset.get()));
  if (space.get() < 0) in.reject("has an unreadable shape: " + hdf5_reason());
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) in.reject("has an unreadable shape: " + hdf5_reason());
  in.dims.resize(static_cast<std::size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), in.dims.data(), nullptr) < 0) {
    in.reject("has an unreadable shape: " + hdf5_reason());
  }
  return in;
}

// Reads the whole dataset converted to T (HDF5 converts float64 to float32 if T is float).
template <class T>
void read_all(const InputDataset& in, hid_t mem_type, T* out) {
  if (H5Dread(in.dataset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) {
    throw IoError("cannot read " + in.where + " (" + in.key + "): " + hdf5_reason());
  }
}

// Reads rows [row0, row0 + rows) of axis 0 as double.
void read_rows(const InputDataset& in, hsize_t row0, hsize_t rows, double* out) {
  const std::size_t rank = in.dims.size();
  std::vector<hsize_t> start(rank, 0), count = in.dims;
  start[0] = row0;
  count[0] = rows;
  Hid filespace(H5Dget_space(in.dataset.get()));
  Hid memspace(H5Screate_simple(static_cast<int>(rank), count.data(), nullptr));
  if (filespace.get() < 0 || memspace.get() < 0 ||
      H5Sselect_hyperslab(filespace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                          nullptr) < 0 ||
      H5Dread(in.dataset.get(), H5T_NATIVE_DOUBLE, memspace.get(), filespace.get(), H5P_DEFAULT,
              out) < 0) {
    throw IoError("cannot read " + in.where + " (" + in.key + "): " + hdf5_reason());
  }
}

template <class T>
void reject_non_finite(const InputDataset& in, const T* values, std::size_t n, std::size_t offset) {
  const T* bad = std::find_if(values, values + n, [](T v) { return !std::isfinite(v); });
  if (bad == values + n) return;
  const std::size_t count = static_cast<std::size_t>(
      std::count_if(bad, values + n, [](T v) { return !std::isfinite(v); }));
  std::ostringstream v;
  v << *bad;
  in.reject("holds a non-finite value " + v.str() + " at " +
            index_text(offset + static_cast<std::size_t>(bad - values), in.dims) + " (" +
            std::to_string(count) + " non-finite value" + (count > 1 ? "s" : "") +
            (offset > 0 ? " in this part" : "") + "); models must be finite");
}

}  // namespace

std::vector<float> read_model_dataset(const std::string& file, const std::string& dataset,
                                      std::array<int, 3> expected_shape, const std::string& key) {
  Hdf5Quiet quiet;
  InputDataset in = open_input(file, dataset, key);
  const std::vector<hsize_t> expected(expected_shape.begin(), expected_shape.end());
  if (in.dims != expected) {
    in.reject("has shape " + shape_text(in.dims) + ", expected " + shape_text(expected) +
              " (grid.shape)");
  }
  const std::size_t plane = static_cast<std::size_t>(in.dims[1]) * in.dims[2];
  std::vector<float> out(plane * in.dims[0]);
  if (out.empty()) return out;
  if (in.type_size <= 4) {
    read_all(in, H5T_NATIVE_FLOAT, out.data());
    reject_non_finite(in, out.data(), out.size(), 0);
    return out;
  }
  // float64: check in double before narrowing (a huge value would silently become inf), and read
  // in slabs of x planes so a big model never needs a second, double-size copy.
  constexpr std::size_t kSlabBytes = std::size_t{64} << 20;
  const hsize_t rows = std::max<hsize_t>(1, kSlabBytes / (plane * sizeof(double)));
  std::vector<double> buf(std::min<hsize_t>(rows, in.dims[0]) * plane);
  for (hsize_t row0 = 0; row0 < in.dims[0]; row0 += rows) {
    const hsize_t n_rows = std::min<hsize_t>(rows, in.dims[0] - row0);
    const std::size_t n = static_cast<std::size_t>(n_rows) * plane;
    read_rows(in, row0, n_rows, buf.data());
    reject_non_finite(in, buf.data(), n, static_cast<std::size_t>(row0) * plane);
    for (std::size_t m = 0; m < n; ++m) {
      if (std::abs(buf[m]) > std::numeric_limits<float>::max()) {
        std::ostringstream v;
        v << buf[m];
        in.reject("holds " + v.str() + " at " +
                  index_text(static_cast<std::size_t>(row0) * plane + m, in.dims) +
                  ", outside the float32 range");
      }
      out[static_cast<std::size_t>(row0) * plane + m] = static_cast<float>(buf[m]);
    }
  }
  return out;
}

std::vector<double> read_wavelet_dataset(const std::string& file, const std::string& dataset,
                                         const std::string& key) {
  Hdf5Quiet quiet;
  InputDataset in = open_input(file, dataset, key);
  if (in.dims.size() != 1) {
    in.reject("has shape " + shape_text(in.dims) + ", expected one axis (time samples)");
  }
  if (in.dims[0] == 0) in.reject("is empty");
  std::vector<double> out(in.dims[0]);
  read_all(in, H5T_NATIVE_DOUBLE, out.data());
  reject_non_finite(in, out.data(), out.size(), 0);
  return out;
}

void write_model_dataset(const std::string& file, const std::string& dataset,
                         std::array<int, 3> shape, const std::vector<float>& data) {
  Hdf5Quiet quiet;
  const std::string what = "cannot write dataset " + quote(dataset) + " of " + quote(file);
  if (shape[0] < 0 || shape[1] < 0 || shape[2] < 0 ||
      data.size() != static_cast<std::size_t>(shape[0]) * shape[1] * shape[2]) {
    throw IoError(what + ": " + std::to_string(data.size()) + " values for shape " +
                  shape_text({hsize_t(std::max(shape[0], 0)), hsize_t(std::max(shape[1], 0)),
                              hsize_t(std::max(shape[2], 0))}));
  }
  const fs::path parent = fs::path(file).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  Hid f(fs::exists(file, ec) ? H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)
                             : H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT));
  if (f.get() < 0) throw IoError(what + ": " + hdf5_reason());
  const hsize_t dims[3] = {static_cast<hsize_t>(shape[0]), static_cast<hsize_t>(shape[1]),
                           static_cast<hsize_t>(shape[2])};
  Hid space(H5Screate_simple(3, dims, nullptr));
  Hid lcpl(H5Pcreate(H5P_LINK_CREATE));
  if (space.get() < 0 || lcpl.get() < 0 || H5Pset_create_intermediate_group(lcpl.get(), 1) < 0) {
    throw IoError(what + ": " + hdf5_reason());
  }
  Hid ds(H5Dcreate2(f.get(), dataset.c_str(), H5T_IEEE_F32LE, space.get(), lcpl.get(), H5P_DEFAULT,
                    H5P_DEFAULT));
  if (ds.get() < 0) throw IoError(what + ": " + hdf5_reason());
  if (!data.empty() &&
      H5Dwrite(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) < 0) {
    throw IoError(what + ": " + hdf5_reason());
  }
}

}  // namespace minimod::io
