// Choosing a backend: `cpu`, `cuda`, or `auto` (CUDA when a GPU is present).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kernels/propagator.hpp"
#include "kernels/tti_propagator.hpp"

namespace minimod::kernels {

/// Number of usable CUDA devices (0 when built without CUDA or without a GPU).
int cuda_device_count();

/// Makes GPU `local_rank % count` this process's device (one GPU per rank on a node); returns
/// its index, or -1 without GPUs.
int select_gpu(int local_rank);

/// "cpu" or "cuda" for a requested backend ("auto", "cpu", "cuda"). Throws ConfigError if the
/// request cannot be met (cuda without a GPU or without a CUDA build).
std::string resolve_backend(const std::string& requested);

/// Builds the propagator for a resolved backend and kernel family name.
std::unique_ptr<Propagator> make_acoustic_iso(const AcousticIsoProblem& problem,
                                              const std::string& backend, const std::string& kernel);

/// The same for the acoustic TTI propagator (kernels/tti_propagator.hpp).
std::unique_ptr<Propagator> make_acoustic_tti(const AcousticTtiProblem& problem, const std::string& backend,
                                              const std::string& kernel);

/// Throws ConfigError unless `kernel` ("auto", "reference", or "family[:XxYxZ]") names a kernel
/// listed by --list-kernels, whatever the backend (a typo is reported even on a CPU-only machine).
void check_kernel_name(const std::string& kernel);

/// Lines for --list-kernels: "<backend> <family> <propagators> <tunables>".
std::vector<std::string> list_kernels();

/// Whether the CUDA propagator runs `kernel` (execution.kernel, "family" or "family:XxYxZ") on
/// `problem` two steps per launch, so that it keeps two more wavefields (the run planner counts
/// them): a family with two-step launches, Minimod's layer, no free surface, no halo exchange.
bool two_step_kernel(const AcousticIsoProblem& problem, const std::string& kernel);

}  // namespace minimod::kernels
