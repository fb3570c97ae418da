// The halo transports: MPI on host buffers (portable; the GPU backend stages through pinned memory),
// MPI on device buffers (CUDA-aware MPI only), and NCCL point-to-point between GPUs (direct over
// NVLink/PCIe on one node). `auto` picks the fastest one this build and MPI can do. DESIGN.md §5.
#pragma once
#include <mpi.h>

#include <array>
#include <memory>
#include <string>

#include "kernels/halo.hpp"

namespace minimod::mpi {

/// Transport names accepted by execution.transport.
constexpr const char* kTransports = "auto, host, cuda_aware_mpi, nccl";

/// Whether the MPI library says it can take device pointers (OpenMPI's MPIX_Query_cuda_support).
bool mpi_is_cuda_aware();
/// Whether this build has the NCCL transport.
bool have_nccl();

/// The transport `kind` for a rank whose face neighbours are `neighbours` (-1: none) in `comm`;
/// `backend` is "cpu" or "cuda". Collective over `comm` (NCCL builds its communicator).
/// Throws ConfigError naming execution.transport when `kind` cannot work here.
std::unique_ptr<kernels::HaloTransport> make_halo_transport(const std::string& kind,
                                                            const std::string& backend, MPI_Comm comm,
                                                            const std::array<int, 6>& neighbours);

}  // namespace minimod::mpi
