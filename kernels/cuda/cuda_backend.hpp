// Host-side entry points of the CUDA backend (compiled only when nvcc is found).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kernels/propagator.hpp"
#include "kernels/tti_propagator.hpp"

namespace minimod::kernels::cuda {

int device_count();
std::vector<std::string> list_families();
/// Whether the acoustic-iso propagator advances two steps per launch on `problem` with the family
/// `name` (KernelFamily::launch_pair, under the propagator's own conditions).
bool two_step_kernel(const AcousticIsoProblem& problem, const std::string& name);
/// The acoustic-iso propagator on the current GPU with the named inner-region kernel
/// ("family[:XxYxZ]", or "auto": timed on this problem, cached; kernels/cuda/autotune.hpp).
/// Refuses clearly if the plan does not fit.
std::unique_ptr<Propagator> make_cuda_acoustic_iso(const AcousticIsoProblem& problem,
                                                   const std::string& family);
/// The acoustic-TTI propagator on the current GPU with the named inner-region kernel, as above.
std::unique_ptr<Propagator> make_cuda_acoustic_tti(const AcousticTtiProblem& problem,
                                                   const std::string& family);
/// "R regs, S B smem/block" of a kernel spec ("family" or "family:XxYxZ") of that propagator;
/// `constant_axis`: of the kernel it launches on a TTI model of one axis, where it has one of its own.
std::string kernel_resources(const std::string& kernel, bool tti = false, bool constant_axis = false);
/// Device-to-device copy bandwidth (bytes/s, read + write counted) of the current GPU.
double measure_copy_bandwidth();
/// "NVIDIA H100 80GB HBM3" etc.
std::string device_name();

/// Bytes the CUDA propagator allocates for this problem (the memory plan); `two_step`: with the
/// two spare wavefields of a two-step family (KernelFamily::launch_pair).
std::int64_t cuda_memory_plan(const AcousticIsoProblem& problem, int receivers, bool two_step = false);

}  // namespace minimod::kernels::cuda
