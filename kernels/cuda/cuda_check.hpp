// MM_CUDA_CHECK(expr): throws CudaError with the expression, file:line and CUDA's message.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string>

#include "physics/error.hpp"

namespace minimod::kernels::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* expr, const char* file,
                                          int line) {
  throw CudaError(std::string("CUDA error: ") + cudaGetErrorString(err) + " in `" + expr + "` at " +
                  file + ":" + std::to_string(line));
}

/// After a launch: the launch error, and with MINIMOD_SYNC_CHECK=1 the kernel's own error.
void check_launch(const char* what, const char* file, int line);

}  // namespace minimod::kernels::cuda

#define MM_CUDA_CHECK(expr)                                                              \
  do {                                                                                   \
    const cudaError_t mm_err_ = (expr);                                                  \
    if (mm_err_ != cudaSuccess)                                                          \
      ::minimod::kernels::cuda::throw_cuda_error(mm_err_, #expr, __FILE__, __LINE__);    \
  } while (0)

#define MM_CUDA_CHECK_LAUNCH(what) ::minimod::kernels::cuda::check_launch(what, __FILE__, __LINE__)
