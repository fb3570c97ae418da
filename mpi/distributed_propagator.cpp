#include "mpi/distributed_propagator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "kernels/backends.hpp"
#include "mpi/comm.hpp"
#include "mpi/halo_transport.hpp"
#include "mpi/subdomain.hpp"
#include "physics/error.hpp"

namespace minimod::mpi {

using kernels::NodeWeight;
using physics::Box3;
using physics::Index3;

namespace {

constexpr int kTagField = 100, kTagTraces = 101;
constexpr std::int64_t kChunk = std::int64_t{1} << 26;  // floats per message (256 MB)

void send_floats(const float* data, std::int64_t n, int to, int tag, MPI_Comm comm) {
  for (std::int64_t o = 0; o < n; o += kChunk)
    check(MPI_Send(data + o, static_cast<int>(std::min(kChunk, n - o)), MPI_FLOAT, to, tag, comm), "MPI_Send");
}

void recv_floats(float* data, std::int64_t n, int from, int tag, MPI_Comm comm) {
  for (std::int64_t o = 0; o < n; o += kChunk)
    check(MPI_Recv(data + o, static_cast<int>(std::min(kChunk, n - o)), MPI_FLOAT, from, tag, comm,
                   MPI_STATUS_IGNORE),
          "MPI_Recv");
}

/// The part of a strided box inside `owned`, per axis: first global index, count, and the position
/// of that first point in the strided output.
struct StridedPart {
  Box3 box;       // global indices; extent counts points of the original grid
  Index3 count;   // strided points
  Index3 offset;  // in the dense output
  std::int64_t points() const { return static_cast<std::int64_t>(count.i) * count.j * count.k; }
};

StridedPart strided_part(const Box3& box, const Index3& stride, const Box3& owned) {
  StridedPart p;
  for (int a = 0; a < 3; ++a) {
    const int lo = std::max(box.lo[a], owned.lo[a]), hi = std::min(box.hi()[a], owned.hi()[a]);
    const int first = box.lo[a] + (std::max(0, lo - box.lo[a]) + stride[a] - 1) / stride[a] * stride[a];
    p.count[a] = first < hi ? (hi - first + stride[a] - 1) / stride[a] : 0;
    p.box.lo[a] = first;
    p.box.n[a] = p.count[a] > 0 ? (p.count[a] - 1) * stride[a] + 1 : 0;
    p.offset[a] = (first - box.lo[a]) / stride[a];
  }
  return p;
}

/// The factory of a problem type: `global` cut to the rank's box (subdomain_problem), built by
/// `make` on the options' backend and kernel. Holds references: use it within the constructor.
template <class Problem>
LocalPropagatorFactory subdomain_factory(
    const Problem& global, const DistributedOptions& options,
    std::unique_ptr<kernels::Propagator> (*make)(const Problem&, const std::string&,
                                                 const std::string&)) {
  return [&global, &options, make](const Box3& box, const kernels::HaloFaces& faces) {
    return make(subdomain_problem(global, box, faces), options.backend, options.kernel);
  };
}

}  // namespace

DistributedPropagator::DistributedPropagator(const kernels::AcousticIsoProblem& global,
                                             const Decomposition& decomposition, MPI_Comm comm,
                                             const DistributedOptions& options)
    : DistributedPropagator(global.grid.shape, decomposition, comm, options,
                            subdomain_factory(global, options, &kernels::make_acoustic_iso)) {}

DistributedPropagator::DistributedPropagator(const kernels::AcousticTtiProblem& global,
                                             const Decomposition& decomposition, MPI_Comm comm,
                                             const DistributedOptions& options)
    : DistributedPropagator(global.grid.shape, decomposition, comm, options,
                            subdomain_factory(global, options, &kernels::make_acoustic_tti)) {}

DistributedPropagator::DistributedPropagator(const Index3& global_shape,
                                             const Decomposition& decomposition, MPI_Comm comm,
                                             const DistributedOptions& options,
                                             const LocalPropagatorFactory& make_local)
    : comm_(comm), decomposition_(decomposition), global_shape_(global_shape) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  if (decomposition_.ranks() != size_)
    throw ConfigError("config error: execution.decomposition: " + decomposition_.dims_string() +
                      " needs " + std::to_string(decomposition_.ranks()) + " ranks, this run has " +
                      std::to_string(size_));
  box_ = decomposition_.box_of(rank_);
  const auto nb = decomposition_.neighbours_of(rank_);
  for (int f = 0; f < 6; ++f)
    faces_.neighbour[static_cast<size_t>(f)] = nb[static_cast<size_t>(f)] >= 0;
  if (options.backend == "cuda") kernels::select_gpu(options.local_rank);
  local_ = make_local(box_, faces_);
  transport_ = make_halo_transport(options.transport, options.backend, comm_, nb);
  local_->set_halo_transport(transport_.get());
}

DistributedPropagator::~DistributedPropagator() = default;

std::string DistributedPropagator::backend() const { return local_->backend(); }
std::string DistributedPropagator::kernel() const { return local_->kernel(); }
std::int64_t DistributedPropagator::allocated_bytes() const { return local_->allocated_bytes(); }
std::string DistributedPropagator::transport() const { return transport_->name(); }

std::vector<NodeWeight> DistributedPropagator::local_source(const std::vector<NodeWeight>& s) const {
  return nodes_in(s, box_);
}

void DistributedPropagator::set_receivers(const std::vector<NodeWeight>& nodes, int count) {
  receiver_nodes_ = nodes;
  receiver_count_ = count;
  auto local = nodes_in(nodes, box_, &local_receiver_index_);
  for (size_t q = 0; q < local.size(); ++q) {  // raw values: each node its own receiver
    local[q].weight = 1.0f;
    local[q].point = static_cast<int>(q);
  }
  local_->set_receivers(local, static_cast<int>(local.size()));
  // Rank 0 learns which global node each rank's samples belong to.
  int n = static_cast<int>(local_receiver_index_.size());
  std::vector<int> counts(static_cast<size_t>(size_)), displs(static_cast<size_t>(size_));
  check(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_), "MPI_Gather");
  std::vector<int> all;
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r) displs[static_cast<size_t>(r)] = displs[static_cast<size_t>(r) - 1] + counts[static_cast<size_t>(r) - 1];
    all.resize(static_cast<size_t>(displs.back() + counts.back()));
  }
  check(MPI_Gatherv(local_receiver_index_.data(), n, MPI_INT, all.data(), counts.data(),
                    displs.data(), MPI_INT, 0, comm_),
        "MPI_Gatherv");
  rank_receiver_index_.clear();
  if (rank_ == 0) {
    for (int r = 0; r < size_; ++r)
      rank_receiver_index_.emplace_back(all.begin() + displs[static_cast<size_t>(r)],
                                        all.begin() + displs[static_cast<size_t>(r)] + counts[static_cast<size_t>(r)]);
  }
  steps_since_take_ = 0;
}

void DistributedPropagator::step(const std::vector<NodeWeight>& source, float amplitude) {
  local_->step(local_source(source), amplitude);
  ++steps_since_take_;
}

void DistributedPropagator::take_traces(std::vector<float>& out) {
  std::vector<float> mine;
  local_->take_traces(mine);
  const int samples = receiver_count_ > 0 ? steps_since_take_ : 0;
  steps_since_take_ = 0;
  out.assign(static_cast<size_t>(samples) * static_cast<size_t>(receiver_count_), 0.0f);
  if (samples == 0) return;
  if (rank_ != 0) {
    if (!mine.empty()) send_floats(mine.data(), static_cast<std::int64_t>(mine.size()), 0, kTagTraces, comm_);
    return;
  }
  // value[s][e]: every node's raw sample; then each receiver's nodes in their global order.
  const size_t nodes = receiver_nodes_.size();
  std::vector<float> value(static_cast<size_t>(samples) * nodes), part;
  for (int r = 0; r < size_; ++r) {
    const auto& index = rank_receiver_index_[static_cast<size_t>(r)];
    if (index.empty()) continue;
    if (r == 0) {
      part = mine;
    } else {
      part.resize(static_cast<size_t>(samples) * index.size());
      recv_floats(part.data(), static_cast<std::int64_t>(part.size()), r, kTagTraces, comm_);
    }
    for (int s = 0; s < samples; ++s)
      for (size_t q = 0; q < index.size(); ++q)
        value[static_cast<size_t>(s) * nodes + static_cast<size_t>(index[q])] = part[static_cast<size_t>(s) * index.size() + q];
  }
  for (int s = 0; s < samples; ++s) {
    float* row = out.data() + static_cast<size_t>(s) * static_cast<size_t>(receiver_count_);
    for (size_t e = 0; e < nodes; ++e) {
      const auto& nw = receiver_nodes_[e];
      row[nw.point] = kernels::accumulate_sample(row[nw.point], nw.weight, value[static_cast<size_t>(s) * nodes + e]);
    }
  }
}

void DistributedPropagator::read_field(const std::string& name, const Box3& box, const Index3& stride,
                                       float* out) {
  read_field_by_parts(name, box, stride, kernels::kFieldPartFloats, [&](const kernels::FieldPart& p) {
    std::memcpy(out + static_cast<std::int64_t>(p.offset.i) * p.count.j * p.count.k, p.data,
                sizeof(float) * static_cast<size_t>(p.count.i) * p.count.j * p.count.k);
  });
}

void DistributedPropagator::read_field_by_parts(const std::string& name, const Box3& box, const Index3& stride,
                                                std::int64_t max_floats, const kernels::FieldPartSink& sink) {
  // Slab by slab of the strided box (whole planes, as a one-process propagator hands them out):
  // every rank whose box meets the slab sends its part of it, rank 0 places them, then hands the
  // slab on. Every rank cuts the slabs alike (planes_per_part).
  const Index3 shape = strided_shape(box, stride);
  if (static_cast<std::int64_t>(shape.i) * shape.j * shape.k <= 0) return;
  const int planes = kernels::planes_per_part(shape, max_floats);
  std::vector<float> slab, part;
  for (int i0 = 0; i0 < shape.i; i0 += planes) {
    const int n = std::min(planes, shape.i - i0);
    const Box3 cut = kernels::strided_planes(box, stride, i0, n);
    if (rank_ == 0) slab.resize(static_cast<size_t>(n) * shape.j * shape.k);
    for (int r = 0; r < size_; ++r) {
      if (rank_ != 0 && rank_ != r) continue;
      const Box3 owned = decomposition_.box_of(r);
      const StridedPart p = strided_part(cut, stride, owned);
      if (p.points() == 0) continue;
      part.resize(static_cast<size_t>(p.points()));
      if (r == rank_) {
        Box3 local = p.box;
        for (int a = 0; a < 3; ++a) local.lo[a] -= owned.lo[a];
        local_->read_field(name, local, stride, part.data());
        if (rank_ != 0) send_floats(part.data(), p.points(), 0, kTagField, comm_);
      } else {
        recv_floats(part.data(), p.points(), r, kTagField, comm_);
      }
      if (rank_ != 0) continue;
      for (int i = 0; i < p.count.i; ++i)
        for (int j = 0; j < p.count.j; ++j)
          std::memcpy(&slab[(static_cast<size_t>(p.offset.i + i) * shape.j + p.offset.j + j) * shape.k + p.offset.k],
                      &part[(static_cast<size_t>(i) * p.count.j + j) * p.count.k],
                      sizeof(float) * static_cast<size_t>(p.count.k));
    }
    if (rank_ == 0) sink({{i0, 0, 0}, {n, shape.j, shape.k}, slab.data()});
  }
}

void DistributedPropagator::write_state(const float* u_prev, const float* u) {
  const Index3 n = global_shape_;
  // The part of a global dense array in box b (global indices) -> dense [i][j][k].
  auto cut = [&](const float* global, const Box3& b) {
    std::vector<float> d(static_cast<size_t>(b.points()));
    for (int i = 0; i < b.n.i; ++i)
      for (int j = 0; j < b.n.j; ++j)
        std::memcpy(&d[(static_cast<size_t>(i) * b.n.j + j) * b.n.k],
                    global + (static_cast<size_t>(b.lo.i + i) * n.j + b.lo.j + j) * n.k + b.lo.k,
                    sizeof(float) * static_cast<size_t>(b.n.k));
    return d;
  };
  // u over the own points and the halos of faces with a neighbour, edges included (what the
  // neighbours' last exchange would have left; the TTI stencil reads the edges), then the own
  // points again through write_state, which applies the free surfaces over the halos as well.
  if (faces_.any()) {
    const Box3 local = kernels::halo_span(box_.n, faces_);
    Box3 global = local;
    for (int a = 0; a < 3; ++a) global.lo[a] += box_.lo[a];
    local_->write_field("u", local, cut(u, global).data());
  }
  local_->write_state(cut(u_prev, box_).data(), cut(u, box_).data());
}

void DistributedPropagator::write_field(const std::string& name, const Box3& box, const float* data) {
  Box3 span = kernels::halo_span(box_.n, faces_);  // own points and neighbours' halos, global indices
  for (int a = 0; a < 3; ++a) span.lo[a] += box_.lo[a];
  const Box3 part = physics::intersect(box, span);
  if (part.empty()) return;
  std::vector<float> d(static_cast<size_t>(part.points()));
  for (int i = 0; i < part.n.i; ++i)
    for (int j = 0; j < part.n.j; ++j)
      std::memcpy(&d[(static_cast<size_t>(i) * part.n.j + j) * part.n.k],
                  data + (static_cast<size_t>(part.lo.i - box.lo.i + i) * box.n.j + part.lo.j - box.lo.j + j) *
                             box.n.k + part.lo.k - box.lo.k,
                  sizeof(float) * static_cast<size_t>(part.n.k));
  Box3 local = part;
  for (int a = 0; a < 3; ++a) local.lo[a] -= box_.lo[a];
  local_->write_field(name, local, d.data());
}

kernels::FieldHealth DistributedPropagator::health() {
  kernels::FieldHealth h = local_->health();
  for (int a = 0; a < 3; ++a) h.where[a] += box_.lo[a];
  struct {
    float value;
    int rank;
  } mine{h.finite ? h.max_abs : std::numeric_limits<float>::infinity(), rank_}, best{};
  check(MPI_Allreduce(&mine, &best, 1, MPI_FLOAT_INT, MPI_MAXLOC, comm_), "MPI_Allreduce (health)");
  int packed[5] = {h.finite ? 1 : 0, h.where.i, h.where.j, h.where.k, 0};
  float value = h.max_abs;
  check(MPI_Bcast(packed, 5, MPI_INT, best.rank, comm_), "MPI_Bcast (health)");
  check(MPI_Bcast(&value, 1, MPI_FLOAT, best.rank, comm_), "MPI_Bcast (health)");
  return {packed[0] == 1, value, {packed[1], packed[2], packed[3]}};
}

double DistributedPropagator::timed_steps(int first, int steps, const std::vector<NodeWeight>& source,
                                          float (*amplitude)(int, const void*), const void* ctx) {
  check(MPI_Barrier(comm_), "MPI_Barrier");
  const double t = local_->timed_steps(first, steps, local_source(source), amplitude, ctx);
  steps_since_take_ += steps;
  return max_over_ranks(t);
}

float* DistributedPropagator::snapshot_buffer(int slot, std::int64_t count) {
  auto& b = snapshot_slots_[slot];
  if (rank_ == 0 && static_cast<std::int64_t>(b.size()) < count) b.resize(static_cast<size_t>(count));
  return rank_ == 0 ? b.data() : nullptr;
}

void DistributedPropagator::copy_field_async(const std::string& name, const Box3& box,
                                             const Index3& stride, int slot) {
  read_field(name, box, stride, rank_ == 0 ? snapshot_slots_[slot].data() : nullptr);
}

void DistributedPropagator::set_halo_transport(kernels::HaloTransport*) {
  throw std::logic_error("a distributed propagator owns its halo transport");
}

kernels::StepSplit DistributedPropagator::step_split() const { return local_->step_split(); }

void DistributedPropagator::reset() { local_->reset(); }

double DistributedPropagator::max_over_ranks(double x) const {
  double m = x;
  check(MPI_Allreduce(&x, &m, 1, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
  return m;
}

}  // namespace minimod::mpi
