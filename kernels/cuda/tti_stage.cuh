// Staging the acoustic-TTI operator's inputs in shared memory, for the TTI kernels of the smem,
// semi and swic families. A staged point is the medium as a float4 (nx, ny, nz, 1 / a) and the
// fields as a float2 (p, q): 24 B, one 128-bit and one 64-bit shared load per stencil neighbour.
// The accessor hands them to physics::tti_rhs73, the formula the CPU reference uses.
#pragma once
#include <cuda_pipeline.h>

#include <atomic>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/tti_point.hpp"

namespace minimod::kernels::cuda {

/// Bytes of shared memory per staged point.
constexpr int kTtiStagedBytes = 24;

/// Shared-memory arrays of staged points: medium[e], field[e].
struct TtiStage {
  float4* medium;
  float2* field;
  /// Carves `points` staged points out of `raw` (16-byte aligned).
  __device__ static TtiStage carve(unsigned char* raw, int points) {
    return {reinterpret_cast<float4*>(raw), reinterpret_cast<float2*>(raw + 16 * points)};
  }
};

/// Copies point `o` (a layout offset) into staged slot e, through registers.
__device__ __forceinline__ void stage_tti_point(const TtiStepArgs& g, std::int64_t o, const TtiStage& s, int e) {
  s.medium[e] = make_float4(__ldg(g.nx.origin + o), __ldg(g.ny.origin + o), __ldg(g.nz.origin + o),
                            __ldg(g.inv_a.origin + o));
  s.field[e] = make_float2(__ldg(g.p.origin + o), __ldg(g.q.origin + o));
}

/// The same with six 4-byte asynchronous copies (cp.async); they land after __pipeline_wait_prior.
__device__ __forceinline__ void stage_tti_point_async(const TtiStepArgs& g, std::int64_t o, const TtiStage& s,
                                                      int e) {
  float* m = reinterpret_cast<float*>(s.medium + e);
  float* f = reinterpret_cast<float*>(s.field + e);
  __pipeline_memcpy_async(m + 0, g.nx.origin + o, 4);
  __pipeline_memcpy_async(m + 1, g.ny.origin + o, 4);
  __pipeline_memcpy_async(m + 2, g.nz.origin + o, 4);
  __pipeline_memcpy_async(m + 3, g.inv_a.origin + o, 4);
  __pipeline_memcpy_async(f + 0, g.p.origin + o, 4);
  __pipeline_memcpy_async(f + 1, g.q.origin + o, 4);
}

__device__ __forceinline__ physics::TtiFieldPoint field_point(const float2 v) { return {v.x + v.y, v.x}; }
__device__ __forceinline__ physics::TtiMediumPoint medium_point(const float4 m) { return {m.x, m.y, m.z, m.w}; }

/// tti_rhs73 on staged points: `index(di, dj, dk)` gives the staged slot of a neighbour.
template <class Index>
__device__ __forceinline__ physics::TtiRhs staged_tti_rhs(const TtiStage& s, const Index& index, float b,
                                                          const physics::TtiStencil& st) {
  return physics::tti_rhs73([&](int di, int dj, int dk) { return field_point(s.field[index(di, dj, dk)]); },
                            [&](int di, int dj, int dk) { return medium_point(s.medium[index(di, dj, dk)]); },
                            b, st);
}

/// Raises kernel K's dynamic shared-memory limit once per device (needed above 48 KB). K is a
/// template argument so that every kernel has its own record (kernels of one signature share a
/// function-pointer type).
template <auto K>
void ensure_smem_limit(int bytes) {
  const auto kernel = K;
  if (bytes <= 48 * 1024) return;
  static std::atomic<unsigned long long> done{0};  // one bit per device (per kernel)
  int dev = 0;
  MM_CUDA_CHECK(cudaGetDevice(&dev));
  const unsigned long long bit = 1ull << (dev & 63);
  if (done.load() & bit) return;
  MM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  done.fetch_or(bit);
}

}  // namespace minimod::kernels::cuda
