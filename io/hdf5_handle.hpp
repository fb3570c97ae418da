// HDF5 helpers shared by io/*.cpp (never included by a header, so HDF5 stays inside io/):
// an error-stack silencer, the innermost error message, an owning identifier, checked calls,
// attributes and datasets, and the flush before a rename.
#pragma once
#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "physics/error.hpp"

namespace minimod::io::hdf5 {

// Silences HDF5's automatic error-stack printing for one call into this file, restoring the
// caller's handler afterwards (the library's only global we touch, and only while we run).
class Hdf5Quiet {
 public:
  Hdf5Quiet() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~Hdf5Quiet() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  Hdf5Quiet(const Hdf5Quiet&) = delete;
  Hdf5Quiet& operator=(const Hdf5Quiet&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// The innermost message on HDF5's error stack (the most specific one), then clears the stack.
inline std::string hdf5_reason() {
  std::string reason;
  auto walk = [](unsigned, const H5E_error2_t* e, void* out) -> herr_t {
    if (e->desc && *e->desc) *static_cast<std::string*>(out) = e->desc;
    return 0;
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk, &reason);
  H5Eclear2(H5E_DEFAULT);
  return reason.empty() ? "HDF5 error" : reason;
}

// Owns one HDF5 identifier of any kind; H5Idec_ref closes it when the count reaches zero.
class Hid {
 public:
  Hid() = default;
  explicit Hid(hid_t id) : id_(id) {}
  ~Hid() { reset(); }
  Hid(Hid&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)) {}
  Hid& operator=(Hid&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  hid_t get() const { return id_; }
  hid_t release() { return std::exchange(id_, H5I_INVALID_HID); }
  void reset() {
    if (id_ >= 0) H5Idec_ref(id_);
    id_ = H5I_INVALID_HID;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

[[noreturn]] inline void fail(const std::string& what) { throw IoError(what + ": " + hdf5_reason()); }

inline hid_t check_id(hid_t id, const std::string& what) {
  if (id < 0) fail(what);
  return id;
}

inline void check(herr_t rc, const std::string& what) {
  if (rc < 0) fail(what);
}


inline std::string quote(const std::string& s) { return "'" + s + "'"; }

// Creates dataset `name` (intermediate groups included) of `type` and `dims`.
inline Hid create_dataset(hid_t file, const std::string& name, hid_t type,
                   const std::vector<hsize_t>& dims, hid_t dcpl, const std::string& where) {
  const std::string what = "cannot create dataset " + quote(name) + " in " + where;
  Hid space(check_id(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), what));
  Hid lcpl(check_id(H5Pcreate(H5P_LINK_CREATE), what));
  check(H5Pset_create_intermediate_group(lcpl.get(), 1), what);
  return Hid(check_id(
      H5Dcreate2(file, name.c_str(), type, space.get(), lcpl.get(), dcpl, H5P_DEFAULT), what));
}

inline void delete_attribute_if_present(hid_t obj, const char* name, const std::string& what) {
  const htri_t exists = H5Aexists(obj, name);
  check(exists, what);
  if (exists > 0) check(H5Adelete(obj, name), what);
}

template <class T>
inline void write_numeric_attribute(hid_t obj, const char* name, hid_t type, const T* values, hsize_t n,
                             bool scalar, const std::string& where) {
  const std::string what = "cannot write attribute " + quote(name) + " of " + where;
  delete_attribute_if_present(obj, name, what);
  Hid space(check_id(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), what));
  Hid attr(check_id(H5Acreate2(obj, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), what));
  check(H5Awrite(attr.get(), type, values), what);
}

inline void write_double_attribute(hid_t obj, const char* name, double v, const std::string& where) {
  write_numeric_attribute(obj, name, H5T_NATIVE_DOUBLE, &v, 1, true, where);
}

inline void write_double3_attribute(hid_t obj, const char* name, const std::array<double, 3>& v,
                             const std::string& where) {
  write_numeric_attribute(obj, name, H5T_NATIVE_DOUBLE, v.data(), 3, false, where);
}

inline void write_int_attribute(hid_t obj, const char* name, int v, const std::string& where) {
  write_numeric_attribute(obj, name, H5T_NATIVE_INT, &v, 1, true, where);
}

inline void write_int3_attribute(hid_t obj, const char* name, const std::array<int, 3>& v,
                          const std::string& where) {
  write_numeric_attribute(obj, name, H5T_NATIVE_INT, v.data(), 3, false, where);
}

// Variable-length UTF-8 string: h5py reads it as str, and its text lives in the global heap, so
// a long config text does not hit the 64 KiB limit of compact attribute storage.
inline void write_string_attribute(hid_t obj, const char* name, const std::string& value,
                            const std::string& where) {
  const std::string what = "cannot write attribute " + quote(name) + " of " + where;
  delete_attribute_if_present(obj, name, what);
  Hid type(check_id(H5Tcopy(H5T_C_S1), what));
  check(H5Tset_size(type.get(), H5T_VARIABLE), what);
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), what);
  Hid space(check_id(H5Screate(H5S_SCALAR), what));
  Hid attr(
      check_id(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), what));
  const char* text = value.c_str();
  check(H5Awrite(attr.get(), type.get(), &text), what);
}

// Flushes the closed file's data to disk, so the rename never publishes a file whose contents a
// power loss could still drop.
inline void fsync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw IoError("cannot open " + quote(path) + " to flush it to disk");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw IoError("cannot flush " + quote(path) + " to disk (fsync failed)");
}

}  // namespace minimod::io::hdf5
