// MM_HOST_DEVICE marks pointwise math shared by the CPU reference and the CUDA kernels.
#pragma once

#if defined(__CUDACC__)
#define MM_HOST_DEVICE __host__ __device__
#define MM_FORCE_INLINE __forceinline__
#else
#define MM_HOST_DEVICE
#define MM_FORCE_INLINE inline __attribute__((always_inline))
#endif

// MM_UNROLL before a loop of constant trip count: unrolled on the GPU and on the host, where the
// CPU reference's row loops vectorise only once the stencil loops inside them are gone.
#if defined(__CUDACC__)
#define MM_UNROLL _Pragma("unroll")
#elif defined(__clang__)
#define MM_UNROLL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define MM_UNROLL _Pragma("GCC unroll 16")
#else
#define MM_UNROLL
#endif
