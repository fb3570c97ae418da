// MPI as minimod uses it: started only when a launcher (mpirun, srun) started this process, the
// world's rank and size, and the node-local rank that picks the GPU. DESIGN.md §5.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

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

/// The ranks that run one shot together: the whole world, or one group of a survey's.
struct Group {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;    // in the group
  int index = 0, count = 1;  // which group of how many
};

/// The world as one group.
Group whole_world(const Session& session);

/// The world split into `groups` groups of equal size, consecutive ranks together (collective
/// where the world has more than one rank; the world's size must be a multiple of `groups`).
Group split_groups(const Session& session, int groups);

/// Throws minimod::Error with the MPI error string unless `code` is MPI_SUCCESS.
void check(int code, const char* what);

/// Elementwise over the ranks of `comm`, in place (collective): op '+' sums, '<' takes the least,
/// '>' the greatest.
void combine(MPI_Comm comm, std::vector<double>& values, char op);

/// The `own` message of the lowest rank whose message is not empty, on every rank of `comm`
/// ("" where every rank's is): an error found by one rank, reported by all alike (collective).
std::string first_error(MPI_Comm comm, const std::string& own);

}  // namespace minimod::mpi
