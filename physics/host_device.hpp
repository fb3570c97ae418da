// MM_HOST_DEVICE marks pointwise math shared by the CPU reference and the CUDA kernels.
#pragma once

#if defined(__CUDACC__)
#define MM_HOST_DEVICE __host__ __device__
#define MM_FORCE_INLINE __forceinline__
#else
#define MM_HOST_DEVICE
#define MM_FORCE_INLINE inline __attribute__((always_inline))
#endif
