// Tensor maps for Hopper's bulk tensor copies (TMA, `cp.async.bulk.tensor`), shared by the
// families that stage with them (semi_tma.cu, swic_split.cu). One map per array over its whole
// allocation with the halo (k extent without the row padding), fp32, strides in bytes, a box of
// (bx, by, bz) points (bz planes along i, 1 unless asked); coordinates are relative to the halo
// corner and may be negative or past the end (the copy engine fills zeros there). The
// allocation's base must be 16-B aligned and its row pitch a multiple of 16 B (FieldLayout pads
// rows to 128 B); tensor_map checks both.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <cstdint>
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

/// An fp32 tensor map of `rank` (3 or 4) dimensions from `corner` (dimension 0 fastest, unit
/// element strides): extents `dims`, byte strides of dimensions 1.. `strides`, box `box`; L2
/// promotion of 256 B, no swizzle, no fill. `what` names the map in the error.
inline CUtensorMap encode_fp32_map(cuuint32_t rank, const void* corner, const cuuint64_t* dims,
                                   const cuuint64_t* strides, const cuuint32_t* box, const std::string& what) {
  const cuuint32_t unit[4] = {1, 1, 1, 1};
  CUtensorMap map{};
  const CUresult rc =
      tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, rank, const_cast<void*>(corner), dims, strides, box,
                           unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS)
    throw Error("tensor copies: cuTensorMapEncodeTiled" + what + " failed (" + std::to_string(rc) + ")");
  return map;
}

/// A tensor map over the whole allocation of `v` (halo included), fp32, box (bx, by, bz).
template <class T>
CUtensorMap tensor_map(const physics::View3<T>& v, int bx, int by, int bz = 1) {
  const physics::Index3 lo = v.box.lo;
  const void* corner = v.ptr(lo.i, lo.j, lo.k);
  if (reinterpret_cast<std::uintptr_t>(corner) % 16 != 0 || (v.sy * 4) % 16 != 0)
    throw Error("tensor copies: a field is not 16-B aligned (allocation or row pitch)");
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(v.box.n.k), static_cast<cuuint64_t>(v.box.n.j),
                              static_cast<cuuint64_t>(v.box.n.i)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(v.sy) * 4, static_cast<cuuint64_t>(v.sx) * 4};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(bx), static_cast<cuuint32_t>(by), static_cast<cuuint32_t>(bz)};
  return encode_fp32_map(3, corner, dims, strides, box, "");
}

/// One map over `count` arrays of one layout that lie equally spaced in one allocation (a
/// multiple of 16 B apart, in this order): a 4D tensor whose 4th coordinate is the array, a box
/// of (bx, by, bz) points in all `count` of them, so that one copy (DeviceBlock::copy_group)
/// lands the box of each array one after another. Throws when the arrays are not so placed.
template <class T>
CUtensorMap tensor_map_group(const physics::View3<T>* views, int count, int bx, int by, int bz = 1) {
  const physics::View3<T>& v = views[0];
  const physics::Index3 lo = v.box.lo;
  const auto corner = [&](int a) { return reinterpret_cast<std::intptr_t>(views[a].ptr(lo.i, lo.j, lo.k)); };
  const std::intptr_t apart = count > 1 ? corner(1) - corner(0) : 16;
  bool placed = count >= 1 && count <= 8 && apart > 0 && apart % 16 == 0 && corner(0) % 16 == 0 && (v.sy * 4) % 16 == 0;
  for (int a = 1; a < count && placed; ++a)
    placed = views[a].sx == v.sx && views[a].sy == v.sy && views[a].box == v.box && corner(a) - corner(0) == a * apart;
  if (!placed)
    throw Error("tensor copies: a group's arrays must share one layout and lie equally spaced in one allocation");
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(v.box.n.k), static_cast<cuuint64_t>(v.box.n.j),
                              static_cast<cuuint64_t>(v.box.n.i), static_cast<cuuint64_t>(count)};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(v.sy) * 4, static_cast<cuuint64_t>(v.sx) * 4,
                                 static_cast<cuuint64_t>(apart)};
  const cuuint32_t box[4] = {static_cast<cuuint32_t>(bx), static_cast<cuuint32_t>(by), static_cast<cuuint32_t>(bz),
                             static_cast<cuuint32_t>(count)};
  return encode_fp32_map(4, reinterpret_cast<const void*>(corner(0)), dims, strides, box,
                         " (group of " + std::to_string(count) + ")");
}

/// How far a launch's first tile starts below region.lo.k so that tiles start on 128-B boundaries
/// of the rows (which start at the allocation's k, `alloc`, 128-B aligned): output rows then cover
/// whole 32-B sectors (map_origin below: the isotropic families). swic_split_tma's tiles start on
/// 16-B boundaries instead (tile_shift in swic_split.cu): it is bound by instruction issue, and
/// fewer tiles won there.
inline int tile_row_shift(const physics::Box3& region, const physics::Box3& alloc) {
  return (region.lo.k - alloc.lo.k) % 32;
}

/// The halo corner of a view: tensor coordinates are relative to it; `shift` how far the first
/// tile starts below region.lo.k (map_origin). The tensor-copy families' launches (semi_tma,
/// temporal_tma) pass it to their kernels.
struct MapOrigin {
  int i, j, k;
  int shift;
};

/// The map origin of a view over `alloc` for `region`: the first tile starts at or below region.lo.k on a
/// 128-B boundary of the allocation, so that every tile's output rows (u_next stores, u_prev and
/// v2dt2 boxes) cover whole 32-B sectors. With rows starting mid-sector (16-B aligned, before
/// 2026-11-24) two sectors per row and tile were written in halves by neighbouring blocks and
/// moved more DRAM bytes (32x32x32 at 1000^3: reads 16.4 -> 14.7 GB, writes 3.61 -> 3.43 GB).
/// H100, 1000^3 end to end: 64x32x64 131.5 -> 135.2 GPts/s, 32x32x32 105.9 -> 118.7
/// (bench/results/2026-11-24-h100-session4.md).
inline MapOrigin map_origin(const physics::Box3& region, const physics::Box3& alloc) {
  MapOrigin o{alloc.lo.i, alloc.lo.j, alloc.lo.k, 0};
  o.shift = tile_row_shift(region, alloc);
  return o;
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
