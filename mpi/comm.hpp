// MPI as minimod uses it: started only when a launcher (mpirun, srun) started this process, the
// world's rank and size, and the node-local rank that picks the GPU. DESIGN.md §5.
#pragma once
#include <mpi.h>

#include <string>

namespace minimod::mpi {

/// True when mpirun/mpiexec (OpenMPI, PMIx, PMI) or an srun step started this process.
bool launched_by_mpi();

/// MPI_Init on construction when launched by MPI (or when `force`), MPI_Finalize on destruction.
/// Without MPI it stands for one rank.
class Session {
 public:
  Session(int& argc, char**& argv, bool force = false);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool active() const { return active_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return MPI_COMM_WORLD; }
  /// Rank among the ranks on this node: OpenMPI's, Slurm's, MPICH's variables, else computed.
  int local_rank() const { return local_rank_; }
  /// Stops every rank (after an error on one rank, so the others do not wait forever).
  [[noreturn]] void abort(int code) const;

 private:
  bool active_ = false;
  int rank_ = 0, size_ = 1, local_rank_ = 0;
};

/// Throws minimod::Error with the MPI error string unless `code` is MPI_SUCCESS.
void check(int code, const char* what);

}  // namespace minimod::mpi
