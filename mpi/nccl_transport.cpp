// NCCL point-to-point halo transport: the GPUs exchange packed faces directly (NVLink or PCIe
// peer copies on one node, the network between nodes), ordered in the propagator's halo stream,
// with no host round trip. The communicator is built once over the MPI world.
#if defined(MINIMOD_HAVE_NCCL)
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "mpi/comm.hpp"
#include "mpi/halo_transport.hpp"
#include "physics/error.hpp"

namespace minimod::mpi {
namespace {

void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw Error(std::string(what) + " failed: " + ncclGetErrorString(r));
}

class NcclTransport final : public kernels::HaloTransport {
 public:
  NcclTransport(MPI_Comm comm, const std::array<int, 6>& neighbours) : neighbours_(neighbours) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ncclUniqueId id;
    if (rank == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm), "MPI_Bcast (NCCL id)");
    nccl_check(ncclCommInitRank(&comm_, size, id, rank), "ncclCommInitRank");
    warm_up();
  }
  ~NcclTransport() override { ncclCommDestroy(comm_); }
  const char* name() const override { return "nccl"; }
  Memory memory() const override { return Memory::device; }

  void start(float* const send[6], float* const recv[6], const std::int64_t count[6],
             void* stream) override {
    const auto s = static_cast<cudaStream_t>(stream);
    nccl_check(ncclGroupStart(), "ncclGroupStart");
    for (int f = 0; f < 6; ++f) {
      const int nb = neighbours_[static_cast<size_t>(f)];
      if (count[f] == 0 || nb < 0) continue;
      nccl_check(ncclSend(send[f], static_cast<size_t>(count[f]), ncclFloat, nb, comm_, s), "ncclSend");
      nccl_check(ncclRecv(recv[f], static_cast<size_t>(count[f]), ncclFloat, nb, comm_, s), "ncclRecv");
    }
    nccl_check(ncclGroupEnd(), "ncclGroupEnd");
  }
  void finish(void*) override {}  // complete in stream order

 private:
  /// NCCL connects peers lazily, on the first send: that cost (~0.1 s) would land in the first
  /// time step. One tiny exchange with every neighbour here pays it up front.
  void warm_up() {
    float* d = nullptr;
    if (cudaMalloc(&d, 2 * sizeof(float)) != cudaSuccess) throw Error("NCCL warm-up: cudaMalloc failed");
    float* send[6] = {d, d, d, d, d, d};
    float* recv[6] = {d + 1, d + 1, d + 1, d + 1, d + 1, d + 1};
    const std::int64_t count[6] = {1, 1, 1, 1, 1, 1};
    start(send, recv, count, nullptr);  // the legacy default stream: synchronised below
    const cudaError_t e = cudaDeviceSynchronize();
    cudaFree(d);
    if (e != cudaSuccess) throw Error(std::string("NCCL warm-up: ") + cudaGetErrorString(e));
  }

  std::array<int, 6> neighbours_;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

std::unique_ptr<kernels::HaloTransport> make_nccl_transport(MPI_Comm comm,
                                                            const std::array<int, 6>& neighbours) {
  return std::make_unique<NcclTransport>(comm, neighbours);
}

}  // namespace minimod::mpi
#endif
