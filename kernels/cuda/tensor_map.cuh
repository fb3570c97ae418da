// Tensor maps for Hopper's bulk tensor copies (TMA, `cp.async.bulk.tensor`), shared by the
// families that stage with them (semi_tma.cu, swic_split.cu). One map per array over its whole
// allocation with the halo (k extent without the row padding), fp32, strides in bytes, a box of
// (bx, by, 1) points; coordinates are relative to the halo corner and may be negative or past the
// end (the copy engine fills zeros there). The allocation's base must be 16-B aligned and its row
// pitch a multiple of 16 B (FieldLayout pads rows to 128 B); tensor_map checks both.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

#include "kernels/cuda/cuda_check.hpp"
#include "physics/error.hpp"
#include "physics/view3.hpp"

namespace minimod::kernels::cuda {

/// The driver's cuTensorMapEncodeTiled, looked up once.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    MM_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q));
    if (q == cudaDriverEntryPointSuccess) fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  });
  if (fn == nullptr) throw Error("tensor copies: the driver has no cuTensorMapEncodeTiled (needs CUDA 12 or newer)");
  return fn;
}

/// What a tensor map is made of here (the rest of cuTensorMapEncodeTiled's arguments are fixed):
/// the map is a function of these alone.
struct TensorMapKey {
  const void* corner;
  cuuint64_t dims[3], strides[2];
  cuuint32_t box[2];
  bool operator==(const TensorMapKey& o) const {
    return corner == o.corner && dims[0] == o.dims[0] && dims[1] == o.dims[1] && dims[2] == o.dims[2] &&
           strides[0] == o.strides[0] && strides[1] == o.strides[1] && box[0] == o.box[0] && box[1] == o.box[1];
  }
};

/// Encodes the map of `key` (the driver call, no cache).
inline CUtensorMap encode_tensor_map(const TensorMapKey& key) {
  const cuuint32_t box[3] = {key.box[0], key.box[1], 1};
  const cuuint32_t unit[3] = {1, 1, 1};
  CUtensorMap map{};
  const CUresult rc = tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, const_cast<void*>(key.corner),
                                           key.dims, key.strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                           CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) throw Error("tensor copies: cuTensorMapEncodeTiled failed (" + std::to_string(rc) + ")");
  return map;
}

/// The maps a host thread encoded last (kSlots, replaced in turn): a launch needs 3 (semi_tma) to
/// 18 (swic_split_tma) maps, and a run's wavefields take turns among a few allocations, so after
/// the first steps every launch finds its maps here instead of encoding them again.
class TensorMapCache {
 public:
  static constexpr int kSlots = 96;
  const CUtensorMap& get(const TensorMapKey& key) {
    for (int s = 0; s < used_; ++s)
      if (keys_[s] == key) return maps_[s];
    const int s = next_;
    maps_[s] = encode_tensor_map(key);  // may throw: the slot stays as it was
    keys_[s] = key;
    next_ = (next_ + 1) % kSlots;
    if (used_ < kSlots) ++used_;
    return maps_[s];
  }

 private:
  TensorMapKey keys_[kSlots] = {};
  CUtensorMap maps_[kSlots] = {};
  int used_ = 0, next_ = 0;
};

/// A tensor map over the whole allocation of `v` (halo included), fp32, box (bx, by, 1).
template <class T>
CUtensorMap tensor_map(const physics::View3<T>& v, int bx, int by) {
  const physics::Index3 lo = v.box.lo;
  const void* corner = v.ptr(lo.i, lo.j, lo.k);
  if (reinterpret_cast<std::uintptr_t>(corner) % 16 != 0 || (v.sy * 4) % 16 != 0)
    throw Error("tensor copies: a field is not 16-B aligned (allocation or row pitch)");
  const TensorMapKey key{corner,
                         {static_cast<cuuint64_t>(v.box.n.k), static_cast<cuuint64_t>(v.box.n.j),
                          static_cast<cuuint64_t>(v.box.n.i)},
                         {static_cast<cuuint64_t>(v.sy) * 4, static_cast<cuuint64_t>(v.sx) * 4},
                         {static_cast<cuuint32_t>(bx), static_cast<cuuint32_t>(by)}};
  static const bool cached = [] {  // MINIMOD_TMA_MAP_CACHE=0 encodes at every launch (benchmarks compare)
    const char* e = std::getenv("MINIMOD_TMA_MAP_CACHE");
    return !(e && std::string(e) == "0");
  }();
  if (!cached) return encode_tensor_map(key);
  static thread_local TensorMapCache cache;
  return cache.get(key);
}

/// How far a launch's first tile starts below region.lo.k so that tiles start on 128-B boundaries
/// of the rows (which start at the allocation's k, `alloc`, 128-B aligned): output rows then cover
/// whole 32-B sectors (semi_tma's map_origin, swic_split_tma's launches).
inline int tile_row_shift(const physics::Box3& region, const physics::Box3& alloc) {
  return (region.lo.k - alloc.lo.k) % 32;
}

/// Whether the current device has the tensor copy engine (sm_90+), asked once per device.
inline bool has_tensor_copies() {
  constexpr int kDevices = 64;
  static std::atomic<int> major[kDevices] = {};  // 0: not asked yet
  int dev = 0;
  MM_CUDA_CHECK(cudaGetDevice(&dev));
  int m = dev < kDevices ? major[dev].load(std::memory_order_relaxed) : 0;
  if (m == 0) {
    MM_CUDA_CHECK(cudaDeviceGetAttribute(&m, cudaDevAttrComputeCapabilityMajor, dev));
    if (dev < kDevices) major[dev].store(m, std::memory_order_relaxed);
  }
  return m >= 9;
}

}  // namespace minimod::kernels::cuda
