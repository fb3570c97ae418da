// View3<T>: a non-owning view of a 3D array in C order [i][j][k], k contiguous (stride 1).
// Indices are grid indices of the box the view covers; they may be negative inside the halo.
// The raw offset formula lives here and nowhere else.
#pragma once
#include <cstdint>
#include <type_traits>

#include "physics/box3.hpp"
#include "physics/host_device.hpp"

#if defined(MINIMOD_BOUNDS_CHECK) && !defined(__CUDACC__)
#include <stdexcept>
#include <string>
#endif

namespace minimod::physics {

template <class T>
struct View3 {
  T* origin = nullptr;    // address of element (0, 0, 0) (may lie inside the allocation's halo)
  Box3 box;               // the indices this view may address (halo included)
  std::int64_t sx = 0;    // stride of i (elements)
  std::int64_t sy = 0;    // stride of j (elements); the stride of k is 1

  MM_HOST_DEVICE std::int64_t offset(int i, int j, int k) const {
    return static_cast<std::int64_t>(i) * sx + static_cast<std::int64_t>(j) * sy + k;
  }
  MM_HOST_DEVICE T& operator()(int i, int j, int k) const {
#if defined(MINIMOD_BOUNDS_CHECK) && !defined(__CUDACC__)
    if (!box.contains(i, j, k)) {
      throw std::out_of_range("View3 index (" + std::to_string(i) + "," + std::to_string(j) +
                              "," + std::to_string(k) + ") outside box");
    }
#endif
    return origin[offset(i, j, k)];
  }
  MM_HOST_DEVICE T* ptr(int i, int j, int k) const { return origin + offset(i, j, k); }
  template <class U = T, class = std::enable_if_t<!std::is_const_v<U>>>
  MM_HOST_DEVICE operator View3<const U>() const {
    return {origin, box, sx, sy};
  }
};

/// Layout of a field: interior box `interior` plus `halo` points on every side, k rows padded to
/// `align` elements so every row (starting at k = lo.k - halo) begins on an aligned address.
struct FieldLayout {
  Box3 interior;
  int halo = 0;
  std::int64_t nz_alloc = 0;  // row pitch (elements)
  std::int64_t ny_alloc = 0;
  std::int64_t nx_alloc = 0;

  static FieldLayout make(const Box3& interior, int halo, int align = 32) {
    FieldLayout l;
    l.interior = interior;
    l.halo = halo;
    std::int64_t nz = interior.n.k + 2 * halo;
    l.nz_alloc = (nz + align - 1) / align * align;
    l.ny_alloc = interior.n.j + 2 * halo;
    l.nx_alloc = interior.n.i + 2 * halo;
    return l;
  }
  std::int64_t elements() const { return nx_alloc * ny_alloc * nz_alloc; }
  Box3 with_halo() const {
    return {{interior.lo.i - halo, interior.lo.j - halo, interior.lo.k - halo},
            {interior.n.i + 2 * halo, interior.n.j + 2 * halo, interior.n.k + 2 * halo}};
  }
  /// Planes [first, first + count) along i of this allocation as an allocation of their own: the
  /// same rows and pitch, its element 0 this allocation's plane `first` (a host buffer that takes
  /// a large array a slab at a time).
  FieldLayout planes(std::int64_t first, std::int64_t count) const {
    FieldLayout l = *this;
    l.interior.lo.i = static_cast<int>(interior.lo.i + first);  // with_halo() starts at plane `first`
    l.interior.n.i = static_cast<int>(count - 2 * halo);  // below zero for slabs thinner than two halos
    l.nx_alloc = count;
    return l;
  }
  /// View of an allocation `base` (element 0 = (lo - halo)) with this layout.
  template <class T>
  View3<T> view(T* base) const {
    View3<T> v;
    v.sy = nz_alloc;
    v.sx = nz_alloc * ny_alloc;
    v.box = with_halo();
    const Index3 h = v.box.lo;
    v.origin = base - (static_cast<std::int64_t>(h.i) * v.sx + static_cast<std::int64_t>(h.j) * v.sy + h.k);
    return v;
  }
};

}  // namespace minimod::physics
