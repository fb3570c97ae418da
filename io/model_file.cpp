// Model and wavelet input from HDF5 (HDF5 1.10 C API). Problems with the user's file are
// ConfigErrors naming the config key; HDF5's own stack printing is silenced while we call it.
#include "io/model_file.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
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

// The box [start, start + count) of a dataset, one entry per axis.
struct Box {
  std::vector<hsize_t> start, count;

  std::size_t size() const {
    std::size_t n = 1;
    for (hsize_t c : count) n *= static_cast<std::size_t>(c);
    return n;
  }
};

Box whole(const std::vector<hsize_t>& dims) { return {std::vector<hsize_t>(dims.size(), 0), dims}; }

// The index in the whole dataset, "[i][j][k]", of value `linear` (C order) of `box`: a message
// about a box read names the point as the user sees it in their file.
std::string index_text(std::size_t linear, const Box& box) {
  std::vector<hsize_t> idx(box.count.size());
  for (std::size_t a = idx.size(); a-- > 0;) {
    idx[a] = box.start[a] + linear % box.count[a];
    linear /= box.count[a];
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

// Reads `box` (not empty) into `out` converted to `mem_type`, C order (HDF5 converts float64 to
// float32 if asked to).
void read_box(const InputDataset& in, const Box& box, hid_t mem_type, void* out) {
  Hid filespace(H5Dget_space(in.dataset.get()));
  Hid memspace(H5Screate_simple(static_cast<int>(box.count.size()), box.count.data(), nullptr));
  if (filespace.get() < 0 || memspace.get() < 0 ||
      H5Sselect_hyperslab(filespace.get(), H5S_SELECT_SET, box.start.data(), nullptr,
                          box.count.data(), nullptr) < 0 ||
      H5Dread(in.dataset.get(), mem_type, memspace.get(), filespace.get(), H5P_DEFAULT, out) < 0) {
    throw IoError("cannot read " + in.where + " (" + in.key + "): " + hdf5_reason());
  }
}

// Rejects the first non-finite value of `values`, the box `box` of the dataset in C order. `part`
// says the count covers less than the dataset.
template <class T>
void reject_non_finite(const InputDataset& in, const T* values, const Box& box, bool part) {
  const std::size_t n = box.size();
  const T* bad = std::find_if(values, values + n, [](T v) { return !std::isfinite(v); });
  if (bad == values + n) return;
  const std::size_t count = static_cast<std::size_t>(
      std::count_if(bad, values + n, [](T v) { return !std::isfinite(v); }));
  std::ostringstream v;
  v << *bad;
  in.reject("holds a non-finite value " + v.str() + " at " +
            index_text(static_cast<std::size_t>(bad - values), box) + " (" + std::to_string(count) +
            " non-finite value" + (count > 1 ? "s" : "") + (part ? " in this part" : "") +
            "); models must be finite");
}

// read_model_dataset of `box`, or of the whole dataset if there is none (the box, if any, lies in
// expected_shape: checked by the caller).
std::vector<float> read_model_box(const std::string& file, const std::string& dataset,
                                  std::array<int, 3> expected_shape, const std::string& key,
                                  const std::optional<Box>& wanted) {
  Hdf5Quiet quiet;
  InputDataset in = open_input(file, dataset, key);
  const std::vector<hsize_t> expected(expected_shape.begin(), expected_shape.end());
  if (in.dims != expected) {
    in.reject("has shape " + shape_text(in.dims) + ", expected " + shape_text(expected) +
              " (grid.shape)");
  }
  const Box box = wanted ? *wanted : whole(in.dims);
  const bool is_whole = box.count == in.dims;
  std::vector<float> out(box.size());
  if (out.empty()) return out;
  if (in.type_size <= 4) {
    read_box(in, box, H5T_NATIVE_FLOAT, out.data());
    reject_non_finite(in, out.data(), box, !is_whole);
    return out;
  }
  // float64: check in double before narrowing (a huge value would silently become inf), and read
  // in slabs of x planes so a big model never needs a second, double-size copy.
  constexpr std::size_t kSlabBytes = std::size_t{64} << 20;
  const std::size_t plane = static_cast<std::size_t>(box.count[1]) * box.count[2];
  const hsize_t rows = std::max<hsize_t>(1, kSlabBytes / (plane * sizeof(double)));
  std::vector<double> buf(std::min<hsize_t>(rows, box.count[0]) * plane);
  for (hsize_t row0 = 0; row0 < box.count[0]; row0 += rows) {
    Box slab = box;
    slab.start[0] += row0;
    slab.count[0] = std::min<hsize_t>(rows, box.count[0] - row0);
    const std::size_t n = slab.size();
    read_box(in, slab, H5T_NATIVE_DOUBLE, buf.data());
    // A whole read's first slab is not called a part: its message is as it was before boxes.
    reject_non_finite(in, buf.data(), slab, !is_whole || row0 > 0);
    for (std::size_t m = 0; m < n; ++m) {
      if (std::abs(buf[m]) > std::numeric_limits<float>::max()) {
        std::ostringstream v;
        v << buf[m];
        in.reject("holds " + v.str() + " at " + index_text(m, slab) +
                  ", outside the float32 range");
      }
      out[static_cast<std::size_t>(row0) * plane + m] = static_cast<float>(buf[m]);
    }
  }
  return out;
}

}  // namespace

std::vector<float> read_model_dataset(const std::string& file, const std::string& dataset,
                                      std::array<int, 3> expected_shape, const std::string& key) {
  return read_model_box(file, dataset, expected_shape, key, std::nullopt);
}

std::vector<float> read_model_dataset(const std::string& file, const std::string& dataset,
                                      std::array<int, 3> expected_shape, const std::string& key,
                                      std::array<int, 3> lo, std::array<int, 3> count) {
  Box box;
  for (std::size_t a = 0; a < 3; ++a) {
    // In long long: lo + count must not overflow int on the way to the check.
    if (lo[a] < 0 || count[a] < 0 ||
        static_cast<long long>(lo[a]) + count[a] > static_cast<long long>(expected_shape[a])) {
      auto text = [](std::array<int, 3> v) {
        return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
      };
      throw std::invalid_argument("read_model_dataset (" + key + "): box at [" +
                                  std::to_string(lo[0]) + "][" + std::to_string(lo[1]) + "][" +
                                  std::to_string(lo[2]) + "] of " + text(count) +
                                  " does not lie in the dataset's shape " + text(expected_shape));
    }
    box.start.push_back(static_cast<hsize_t>(lo[a]));
    box.count.push_back(static_cast<hsize_t>(count[a]));
  }
  return read_model_box(file, dataset, expected_shape, key, box);
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
  read_box(in, whole(in.dims), H5T_NATIVE_DOUBLE, out.data());
  reject_non_finite(in, out.data(), whole(in.dims), false);
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
