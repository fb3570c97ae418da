// HDF5 helpers shared by io/*.cpp (never included by a header, so HDF5 stays inside io/):
// an error-stack silencer, the innermost error message, and an owning identifier.
#pragma once
#include <hdf5.h>

#include <string>
#include <utility>

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

}  // namespace minimod::io::hdf5
