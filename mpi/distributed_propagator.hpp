// A propagator over many ranks that looks like one to the time loop (app/run.cpp): each rank runs
// the backend's propagator on its subdomain with halos exchanged every step; receivers, snapshots,
// health and state are gathered to or scattered from rank 0. Collective: every rank calls every
// method in the same order. Any problem type: the rank's propagator comes from a factory given its
// box (acoustic iso and TTI have constructors). DESIGN.md §2, §5.
#pragma once
#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/propagator.hpp"
#include "kernels/tti_propagator.hpp"
#include "mpi/decomposition.hpp"

namespace minimod::mpi {

struct DistributedOptions {
  std::string backend = "cpu";    // resolved: cpu or cuda
  std::string kernel = "auto";
  std::string transport = "auto";
  int local_rank = 0;             // picks the GPU
};

/// Builds the backend propagator of one rank's subdomain: `box` (global indices) with halos
/// exchanged on the faces in `faces`.
using LocalPropagatorFactory = std::function<std::unique_ptr<kernels::Propagator>(
    const physics::Box3& box, const kernels::HaloFaces& faces)>;

class DistributedPropagator final : public kernels::Propagator {
 public:
  DistributedPropagator(const kernels::AcousticIsoProblem& global, const Decomposition& decomposition,
                        MPI_Comm comm, const DistributedOptions& options);
  DistributedPropagator(const kernels::AcousticTtiProblem& global,
                        const Decomposition& decomposition, MPI_Comm comm,
                        const DistributedOptions& options);
  /// Any problem on a grid of `global_shape`: `make_local` builds this rank's propagator (on the
  /// backend of `options`, whose GPU is selected before the call).
  DistributedPropagator(const physics::Index3& global_shape, const Decomposition& decomposition,
                        MPI_Comm comm, const DistributedOptions& options,
                        const LocalPropagatorFactory& make_local);
  ~DistributedPropagator() override;

  std::string backend() const override;
  std::string kernel() const override;
  std::int64_t allocated_bytes() const override;
  std::string transport() const;
  const physics::Box3& box() const { return box_; }

  void set_receivers(const std::vector<kernels::NodeWeight>& nodes, int count) override;
  void step(const std::vector<kernels::NodeWeight>& source, float amplitude) override;
  /// Rank 0 gets the receivers' samples; the other ranks get zeros of the same size.
  void take_traces(std::vector<float>& out) override;
  /// Rank 0 gets the box; `out` is not touched on the other ranks (it may be null there).
  void read_field(const std::string& name, const physics::Box3& box, const physics::Index3& stride,
                  float* out) override;
  /// Rank 0 gets the slabs, each gathered from the ranks that own a part of it; the others send.
  void read_field_by_parts(const std::string& name, const physics::Box3& box, const physics::Index3& stride,
                           std::int64_t max_floats, const kernels::FieldPartSink& sink) override;
  void write_state(const float* u_prev, const float* u) override;
  /// Sets u (p for TTI) with its halos, edges included, and u_prev from whole-grid arrays.
  /// `box` in global indices (every rank passes the whole array): each rank takes its own points
  /// and those of its halos from neighbours (edges included), so that a restart's fields need no
  /// exchange before the next step.
  void write_field(const std::string& name, const physics::Box3& box, const float* data) override;
  kernels::FieldHealth health() override;
  double timed_steps(int first_step, int steps, const std::vector<kernels::NodeWeight>& source,
                     float (*amplitude)(int, const void*), const void* ctx) override;
  float* snapshot_buffer(int slot, std::int64_t count) override;
  void copy_field_async(const std::string& name, const physics::Box3& box,
                        const physics::Index3& stride, int slot) override;
  bool snapshots_by_parts() const override { return true; }
  void set_halo_transport(kernels::HaloTransport*) override;
  /// This rank's phase times (use max_over_ranks for the slowest rank).
  kernels::StepSplit step_split() const override;
  void reset() override;
  std::vector<kernels::StateField> state_fields() const override { return local_->state_fields(); }
  void finish_state() override { local_->finish_state(); }

  /// Largest value of x over the ranks.
  double max_over_ranks(double x) const;

 private:
  std::vector<kernels::NodeWeight> local_source(const std::vector<kernels::NodeWeight>& s) const;

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  Decomposition decomposition_;
  physics::Box3 box_;
  kernels::HaloFaces faces_;
  physics::Index3 global_shape_;
  std::unique_ptr<kernels::HaloTransport> transport_;
  std::unique_ptr<kernels::Propagator> local_;
  // Receivers: each rank records its nodes' raw values; rank 0 weights and sums them in the
  // nodes' global order (the same fma sequence as a one-rank run).
  std::vector<kernels::NodeWeight> receiver_nodes_;  // global
  int receiver_count_ = 0;
  std::vector<int> local_receiver_index_;            // this rank's nodes -> global node index
  std::vector<std::vector<int>> rank_receiver_index_;  // rank 0: every rank's list
  int steps_since_take_ = 0;  // samples pending on every rank (a rank may have no receivers)
  std::vector<float> snapshot_slots_[kSnapshotSlots];
};

}  // namespace minimod::mpi
