#include "mpi/halo_transport.hpp"

#include <vector>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // OpenMPI: MPIX_Query_cuda_support
#endif
#if defined(MINIMOD_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

#include "kernels/backends.hpp"
#include "mpi/comm.hpp"
#include "physics/error.hpp"

namespace minimod::mpi {

std::unique_ptr<kernels::HaloTransport> make_nccl_transport(MPI_Comm comm,
                                                            const std::array<int, 6>& neighbours);

namespace {

/// Non-blocking MPI sends and receives, one pair per face. A face's message carries the sender's
/// face number as its tag, so the receiver on face f expects tag f ^ 1 (the opposite face).
class MpiTransport final : public kernels::HaloTransport {
 public:
  MpiTransport(MPI_Comm comm, const std::array<int, 6>& neighbours, bool device)
      : comm_(comm), neighbours_(neighbours), device_(device) {}
  const char* name() const override { return device_ ? "cuda_aware_mpi" : "host"; }
  Memory memory() const override { return device_ ? Memory::device : Memory::host; }

  void start(float* const send[6], float* const recv[6], const std::int64_t count[6],
             void* stream) override {
#if defined(MINIMOD_HAVE_CUDA)
    if (device_) {  // MPI cannot see stream order: the packed faces must be complete first
      const cudaError_t e = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
      if (e != cudaSuccess) throw CudaError(std::string("halo pack: ") + cudaGetErrorString(e));
    }
#else
    (void)stream;
#endif
    requests_.clear();
    for (int f = 0; f < 6; ++f) {
      if (count[f] == 0 || neighbours_[static_cast<size_t>(f)] < 0) continue;
      const int n = static_cast<int>(count[f]);
      requests_.emplace_back();
      check(MPI_Irecv(recv[f], n, MPI_FLOAT, neighbours_[static_cast<size_t>(f)], f ^ 1, comm_,
                      &requests_.back()),
            "MPI_Irecv (halo)");
      requests_.emplace_back();
      check(MPI_Isend(send[f], n, MPI_FLOAT, neighbours_[static_cast<size_t>(f)], f, comm_,
                      &requests_.back()),
            "MPI_Isend (halo)");
    }
  }

  void finish(void*) override {
    check(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall (halo)");
    requests_.clear();
  }

 private:
  MPI_Comm comm_;
  std::array<int, 6> neighbours_;
  bool device_;
  std::vector<MPI_Request> requests_;
};

}  // namespace

bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

bool have_nccl() {
#if defined(MINIMOD_HAVE_NCCL)
  return true;
#else
  return false;
#endif
}

std::unique_ptr<kernels::HaloTransport> make_halo_transport(const std::string& kind,
                                                            const std::string& backend, MPI_Comm comm,
                                                            const std::array<int, 6>& neighbours) {
  const bool gpu = backend == "cuda";
  std::string k = kind;
  if (k == "auto") {
    // NCCL needs a GPU of its own per rank: ranks sharing a GPU on a node go through MPI.
    bool own_gpu = false;
    if (gpu) {
      MPI_Comm node;
      check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
      int local = 1, fewest = 0;
      MPI_Comm_size(node, &local);
      MPI_Comm_free(&node);
      const int mine = kernels::cuda_device_count() >= local ? 1 : 0;
      check(MPI_Allreduce(&mine, &fewest, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
      own_gpu = fewest == 1;
    }
    k = !gpu ? "host" : (have_nccl() && own_gpu) ? "nccl" : mpi_is_cuda_aware() ? "cuda_aware_mpi" : "host";
  }
  if (k == "host") return std::make_unique<MpiTransport>(comm, neighbours, false);
  if (!gpu && (k == "nccl" || k == "cuda_aware_mpi"))
    throw ConfigError("config error: execution.transport: '" + k +
                      "' moves GPU memory; the cpu backend uses 'host' (or auto)");
  if (k == "cuda_aware_mpi") {
    if (!mpi_is_cuda_aware())
      throw ConfigError("config error: execution.transport: this MPI is not CUDA-aware "
                        "(MPIX_Query_cuda_support() is 0): use nccl, host or auto");
    return std::make_unique<MpiTransport>(comm, neighbours, true);
  }
  if (k == "nccl") {
    if (!have_nccl())
      throw ConfigError("config error: execution.transport: this minimod was built without NCCL "
                        "(nccl.h not found at build time): use host or auto");
    return make_nccl_transport(comm, neighbours);
  }
  throw ConfigError("config error: execution.transport: unknown transport '" + kind + "' (" +
                    kTransports + ")");
}

#if !defined(MINIMOD_HAVE_NCCL)
std::unique_ptr<kernels::HaloTransport> make_nccl_transport(MPI_Comm, const std::array<int, 6>&) {
  return nullptr;
}
#endif

}  // namespace minimod::mpi
