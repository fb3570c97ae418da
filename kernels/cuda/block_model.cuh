// The execution model a staged kernel's block body is written against, so that one body runs on
// the GPU and, for tests without one, on the host (kernels/cuda/block_emulation.hpp):
//   blk.tx, blk.ty, blk.bx, blk.by, blk.bz   thread and block indices
//   blk.sync()                               the block barrier (__syncthreads)
//   blk.mbarrier_init(bar, count)            an mbarrier expecting `count` arrivals per phase
//   blk.fence_init()                         mbarrier inits visible to the copy engine
//   blk.fence_proxy()                        earlier generic accesses ordered before async copies
//   blk.expect_bytes(bar, bytes)             arrive once and announce `bytes` of copies
//   blk.arrive(bar)                          arrive once (this thread)
//   blk.copy_3d(dst, map, c0, c1, c2, bar)   a tensor-map box into shared memory, completing on bar
//   blk.copy_group(dst, map, c0, c1, c2, bar) the same box of each array of a group map
//                                            (tensor_map_group), one after another in dst
//   blk.wait(bar, parity)                    until the phase of that parity has completed (traps
//                                            rather than hang when it never does)
// DeviceBlock maps them to CUDA (sm_90: mbarrier and cp.async.bulk.tensor, TMA).
#pragma once
#include <cuda.h>

#include <cstdint>

#include "physics/host_device.hpp"

namespace minimod::kernels::cuda {

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// `raw` (a kernel's dynamic shared memory) advanced to the next 128-B boundary. The result is
/// `raw` plus an offset, so the compiler still knows it points to shared memory and reads and
/// writes it with LDS/STS: a pointer rebuilt from an integer (uintptr_t arithmetic) is generic,
/// and every access through it a generic LD/ST (the L1TEX path, long-scoreboard stalls; Nsight
/// Compute on swic_split_tma, 2026-11-24). Host and device.
MM_HOST_DEVICE MM_FORCE_INLINE unsigned char* align_128(unsigned char* raw) {
  return raw + ((128u - static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(raw) & 127u)) & 127u);
}

struct DeviceBlock {
  int tx, ty, bx, by, bz;
  __device__ __forceinline__ DeviceBlock()
      : tx(static_cast<int>(threadIdx.x)),
        ty(static_cast<int>(threadIdx.y)),
        bx(static_cast<int>(blockIdx.x)),
        by(static_cast<int>(blockIdx.y)),
        bz(static_cast<int>(blockIdx.z)) {}

  __device__ __forceinline__ void sync() const { __syncthreads(); }
  __device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, unsigned count) const {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(count) : "memory");
  }
  __device__ __forceinline__ void fence_init() const {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __device__ __forceinline__ void fence_proxy() const {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __device__ __forceinline__ void expect_bytes(std::uint64_t* bar, unsigned bytes) const {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)), "r"(bytes)
                 : "memory");
  }
  __device__ __forceinline__ void arrive(std::uint64_t* bar) const {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_address(bar)) : "memory");
  }
  __device__ __forceinline__ void copy_3d(void* dst, const CUtensorMap& map, int c0, int c1, int c2,
                                          std::uint64_t* bar) const {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
        "[%5];" ::"r"(smem_address(dst)),
        "l"(&map), "r"(c0), "r"(c1), "r"(c2), "r"(smem_address(bar))
        : "memory");
  }
  /// A group map's box (tensor_map_group: its 4th coordinate runs over the arrays) from array 0:
  /// the box of each array, one after another. One copy instead of one per array: each costs
  /// the issuing warp ~13 instructions (swic_split_tma issued 18 a plane, session 20).
  __device__ __forceinline__ void copy_group(void* dst, const CUtensorMap& map, int c0, int c1, int c2,
                                             std::uint64_t* bar) const {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
        "%5}], [%6];" ::"r"(smem_address(dst)),
        "l"(&map), "r"(c0), "r"(c1), "r"(c2), "r"(0), "r"(smem_address(bar))
        : "memory");
  }
  /// Returns whether the phase of that parity has completed (mbarrier.try_wait suspends the
  /// thread for a while before it gives up).
  __device__ __forceinline__ bool try_wait(std::uint64_t* bar, unsigned parity) const {
    unsigned done = 0;
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(smem_address(bar)), "r"(parity)
        : "memory");
    return done != 0;
  }
  /// Waits for the phase; a copy that never lands (a wrong byte count or tensor map) traps after
  /// ~2^22 tries (seconds) instead of hanging the GPU: the launch then fails with an error.
  __device__ __forceinline__ void wait(std::uint64_t* bar, unsigned parity) const {
    for (unsigned tries = 0; !try_wait(bar, parity); ++tries)
      if (tries > (1u << 22)) __trap();
  }
};

}  // namespace minimod::kernels::cuda
