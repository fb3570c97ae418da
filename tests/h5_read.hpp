// Reading results back in tests: a float dataset, a root attribute (HDF5's C API, no checks
// beyond "empty on failure": the tests compare what they read).
#pragma once
#include <hdf5.h>

#include <array>
#include <string>
#include <vector>

namespace minimod::testing {

/// The whole of float dataset `name` of `file`; empty where the file or dataset cannot be read.
inline std::vector<float> read_dataset(const std::string& file, const char* name) {
  std::vector<float> v;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return v;
  const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  if (d >= 0) {
    const hid_t s = H5Dget_space(d);
    v.resize(static_cast<size_t>(H5Sget_simple_extent_npoints(s)));
    if (H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) v.clear();
    H5Sclose(s);
    H5Dclose(d);
  }
  H5Fclose(f);
  return v;
}

/// Root attribute `name` of `file` as doubles (its every element); empty where it is absent.
inline std::vector<double> read_root_attribute(const std::string& file, const char* name) {
  std::vector<double> v;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return v;
  if (H5Aexists(f, name) > 0) {
    const hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    const hid_t s = H5Aget_space(a);
    v.resize(static_cast<size_t>(H5Sget_simple_extent_npoints(s)));
    if (H5Aread(a, H5T_NATIVE_DOUBLE, v.data()) < 0) v.clear();
    H5Sclose(s);
    H5Aclose(a);
  }
  H5Fclose(f);
  return v;
}

}  // namespace minimod::testing
