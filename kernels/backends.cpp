#include "kernels/backends.hpp"

#include "kernels/tti_propagator.hpp"
#include "physics/error.hpp"

#if defined(MINIMOD_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_backend.hpp"
#endif

namespace minimod::kernels {

int cuda_device_count() {
#if defined(MINIMOD_HAVE_CUDA)
  return cuda::device_count();
#else
  return 0;
#endif
}

int select_gpu(int local_rank) {
#if defined(MINIMOD_HAVE_CUDA)
  const int n = cuda_device_count();
  if (n == 0) return -1;
  const int d = local_rank % n;
  const cudaError_t e = cudaSetDevice(d);
  if (e != cudaSuccess)
    throw CudaError("cudaSetDevice(" + std::to_string(d) + "): " + cudaGetErrorString(e));
  return d;
#else
  (void)local_rank;
  return -1;
#endif
}

std::string resolve_backend(const std::string& requested) {
  if (requested == "cpu") return "cpu";
  const int gpus = cuda_device_count();
  if (requested == "auto") return gpus > 0 ? "cuda" : "cpu";
  if (requested == "cuda") {
    if (gpus > 0) return "cuda";
#if defined(MINIMOD_HAVE_CUDA)
    throw ConfigError("config error: execution.backend: cuda was asked for but no CUDA device is "
                      "visible (use backend: cpu or auto)");
#else
    throw ConfigError("config error: execution.backend: cuda was asked for but this minimod was "
                      "built without CUDA (nvcc not found at build time)");
#endif
  }
  throw ConfigError("config error: execution.backend: unknown backend '" + requested +
                    "' (auto, cpu, cuda)");
}

std::unique_ptr<Propagator> make_acoustic_tti(const AcousticTtiProblem& problem, const std::string& backend,
                                              const std::string& kernel) {
  require_whole_arrays(problem, "make_acoustic_tti");
  if (backend == "cpu") return make_cpu_acoustic_tti(problem);
#if defined(MINIMOD_HAVE_CUDA)
  if (backend == "cuda") return cuda::make_cuda_acoustic_tti(problem, kernel);
#else
  (void)kernel;
#endif
  throw ConfigError("config error: execution.backend: backend '" + backend + "' is not available");
}

std::unique_ptr<Propagator> make_acoustic_iso(const AcousticIsoProblem& problem,
                                              const std::string& backend,
                                              const std::string& kernel) {
  require_whole_arrays(problem, "make_acoustic_iso");
  if (backend == "cpu") return make_cpu_acoustic_iso(problem);
#if defined(MINIMOD_HAVE_CUDA)
  if (backend == "cuda") return cuda::make_cuda_acoustic_iso(problem, kernel);
#else
  (void)kernel;
#endif
  throw ConfigError("config error: execution.backend: backend '" + backend + "' is not available");
}

void check_kernel_name(const std::string& kernel) {
  const std::string family = kernel.substr(0, kernel.find(':'));
  if (family == "auto") return;
  std::string known = "auto";
  for (const auto& line : list_kernels()) {
    const auto a = line.find(' ');
    const std::string name = line.substr(a + 1, line.find(' ', a + 1) - a - 1);
    if (name == family) return;
    known += ", " + name;
  }
  throw ConfigError("config error: execution.kernel: unknown kernel '" + kernel +
                    "' (this build has: " + known + "; see minimod --list-kernels)");
}

bool two_step_kernel(const AcousticIsoProblem& problem, const std::string& kernel) {
#if defined(MINIMOD_HAVE_CUDA)
  return cuda::two_step_kernel(problem, kernel.substr(0, kernel.find(':')));
#else
  (void)problem, (void)kernel;
  return false;
#endif
}

std::vector<std::string> list_kernels() {
  std::vector<std::string> out = {"cpu reference acoustic_iso (OpenMP, vectorised, cache-blocked)",
                                  "cpu reference acoustic_tti (OpenMP, one pass per step)"};
#if defined(MINIMOD_HAVE_CUDA)
  for (const auto& line : cuda::list_families()) out.push_back(line);
#endif
  return out;
}

}  // namespace minimod::kernels
