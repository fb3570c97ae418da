#include "mpi/comm.hpp"

#include <cstdlib>
#include <string>

#include "physics/error.hpp"

namespace minimod::mpi {

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

bool launched_by_mpi() {
  return env("OMPI_COMM_WORLD_SIZE") || env("PMIX_RANK") || env("PMI_RANK") || env("PMI_SIZE") ||
         (env("SLURM_STEP_ID") && env("SLURM_PROCID"));
}

Session::Session(int& argc, char**& argv, bool force) {
  if (!force && !launched_by_mpi()) return;
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  active_ = true;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "PMI_LOCAL_RANK"}) {
    if (const char* v = env(name)) {
      local_rank_ = std::atoi(v);
      return;
    }
  }
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_free(&node);
}

Session::~Session() {
  if (active_) MPI_Finalize();
}

void Session::abort(int code) const {
  if (active_ && size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

Group whole_world(const Session& session) {
  Group g;
  g.rank = session.rank();
  g.size = session.size();
  return g;
}

Group split_groups(const Session& session, int groups) {
  if (groups <= 1 || session.size() <= 1) return whole_world(session);
  if (session.size() % groups != 0)
    throw Error("split_groups: " + std::to_string(session.size()) + " ranks do not split into " +
                std::to_string(groups) + " equal groups");
  Group g;
  g.count = groups;
  const int per_group = session.size() / groups;
  g.index = session.rank() / per_group;
  check(MPI_Comm_split(MPI_COMM_WORLD, g.index, session.rank(), &g.comm), "MPI_Comm_split");
  MPI_Comm_set_errhandler(g.comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(g.comm, &g.rank);
  MPI_Comm_size(g.comm, &g.size);
  return g;
}

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw Error(std::string(what) + " failed: " + std::string(text, static_cast<size_t>(len)));
}

void combine(MPI_Comm comm, std::vector<double>& values, char op) {
  const MPI_Op mpi_op = op == '+' ? MPI_SUM : (op == '<' ? MPI_MIN : MPI_MAX);
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, mpi_op, comm),
        "MPI_Allreduce");
}

std::string first_error(MPI_Comm comm, const std::string& own) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int first = own.empty() ? size : rank;
  check(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == size) return "";
  std::string text = rank == first ? own : std::string();
  int length = static_cast<int>(text.size());
  check(MPI_Bcast(&length, 1, MPI_INT, first, comm), "MPI_Bcast");
  text.resize(static_cast<size_t>(length));
  check(MPI_Bcast(text.data(), length, MPI_CHAR, first, comm), "MPI_Bcast");
  return text;
}

}  // namespace minimod::mpi
