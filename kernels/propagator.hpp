// The propagator interface every backend implements (CPU reference, CUDA), and the plain-number
// description of the acoustic-isotropic problem it is built from. Distribution and I/O see only this.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/halo.hpp"
#include "physics/box3.hpp"
#include "physics/grid.hpp"
#include "physics/stencil.hpp"
#include "pml/cpml.hpp"
#include "pml/profile.hpp"
#include "pml/regions.hpp"

namespace minimod::kernels {

/// One grid node touched by a source or receiver, with its interpolation weight (and any scaling).
struct NodeWeight {
  physics::Index3 node;
  float weight = 0;
  int point = 0;  // which receiver (or source) it belongs to
};

/// Faces, in the order x-, x+, y-, y+, z-, z+.
enum Face { kXLo = 0, kXHi, kYLo, kYHi, kZLo, kZHi };

/// A field that carries a propagator's state from one step to the next, as a checkpoint keeps it
/// (app/checkpoint.hpp): read_field and write_field take its name over boxes of where it lives.
/// Where it lives, the app finds from the global problem, so that a checkpoint does not depend on
/// the ranks that wrote it.
struct StateField {
  enum class Lives {
    grid,        // every grid point
    axis_faces,  // the two faces of `axis`'s absorbing layer only (the isotropic CPML's psi, zeta)
    layer,       // the absorbing layer only: the grid outside the inner box (kernels::LayerIndex)
  };
  std::string name;
  Lives lives = Lives::grid;
  int axis = 0;  // axis_faces: 0, 1, 2 for x, y, z
};

/// Acoustic isotropic problem in plain numbers (no config, no YAML): DESIGN.md §3.
struct AcousticIsoProblem {
  physics::Grid grid;
  pml::PmlWidths pml;
  pml::PmlKind pml_kind = pml::PmlKind::cpml;
  pml::DampingProfiles damping;          // PmlKind::minimod: eta profiles
  pml::CpmlProfiles cpml;                // PmlKind::cpml: a, b profiles
  std::vector<float> v2dt2;              // (v dt)^2 per point of stored_box(), C order [i][j][k]
  /// The box of the grid the per-point arrays cover: empty for the whole grid, which every
  /// propagator takes; a distributed run's plan builds only its rank's window (app::ModelShare),
  /// which mpi::subdomain_problem cuts from.
  physics::Box3 stored;
  std::array<bool, 6> free_surface{};    // per face: pressure-release surface instead of PML
  physics::LaplacianCoeffs laplacian;    // 1/m^2
  std::array<float, 3> inv_4h2{};        // 1/(4 h^2) per axis, for the PML auxiliary update
  pml::AxisDerivatives derivatives{};    // per-axis weights, for the CPML
  /// The regions to update (inner first). Empty: make_regions(grid.shape, pml). A distributed
  /// run's subdomain holds the global regions clipped to its box (mpi/subdomain.hpp).
  std::vector<pml::Region> regions;
  /// Faces shared with a neighbouring subdomain: their halos come from the exchange.
  HaloFaces halo;
};

/// The box of the grid a problem's per-point arrays cover (its `stored` box, else the grid).
template <class Problem>
physics::Box3 stored_box(const Problem& p) {
  return p.stored.empty() ? p.grid.box() : p.stored;
}

/// Throws std::invalid_argument naming `who` unless the problem's arrays cover its whole grid: a
/// propagator takes a whole problem (a distributed run's rank, its subdomain's).
template <class Problem>
void require_whole_arrays(const Problem& p, const char* who) {
  if (!(stored_box(p) == p.grid.box()))
    throw std::invalid_argument(std::string(who) + ": the problem's arrays cover a window of its grid only "
                                "(cut it with mpi::subdomain_problem first)");
}

/// Grid-sized arrays an acoustic-isotropic propagator allocates: u, u_prev, v2dt2, plus Minimod's
/// aux or the CPML's psi and zeta per axis, plus u^{n+1} and u^{n+2} for a family that advances two
/// steps per launch (`two_step`).
inline int iso_wavefield_arrays(pml::PmlKind kind, bool two_step) {
  return (kind == pml::PmlKind::minimod ? 4 : 9) + (two_step ? 2 : 0);
}

/// problem.regions, or the regions of the whole grid when it names none.
std::vector<pml::Region> problem_regions(const AcousticIsoProblem& problem);

/// What an acoustic-isotropic propagator's state is (Propagator::state_fields): u at both levels,
/// and Minimod's aux or the CPML's psi and zeta of each axis over that axis's faces.
inline std::vector<StateField> iso_state_fields(pml::PmlKind kind) {
  std::vector<StateField> f{{"u_prev"}, {"u"}};
  if (kind == pml::PmlKind::minimod) {
    f.push_back({"pml_aux"});
  } else {
    const char* names[] = {"psi_x", "psi_y", "psi_z", "zeta_x", "zeta_y", "zeta_z"};
    for (int n = 0; n < 6; ++n) f.push_back({names[n], StateField::Lives::axis_faces, n % 3});
  }
  return f;
}

/// Fill the derived numbers (laplacian, inv_4h2) from the grid spacing.
void finish_problem(AcousticIsoProblem& problem);

/// Seconds spent per phase of the distributed step, summed over steps (zero without neighbours).
struct StepSplit {
  double shell = 0;             // updating the points neighbours read, and packing them
  double interior = 0;          // updating the deep interior (overlapped with the exchange)
  double exchange_exposed = 0;  // waiting for the halos after the interior was done
  int steps = 0;
};

/// One receiver sample accumulated: acc + weight * value, rounded once (fma) on every backend, so
/// a distributed run that sums the nodes elsewhere gets the same bits.
MM_HOST_DEVICE MM_FORCE_INLINE float accumulate_sample(float acc, float weight, float value) {
#if defined(__CUDA_ARCH__)
  return fmaf(weight, value, acc);
#else
  return std::fma(weight, value, acc);
#endif
}

/// A field larger than this means the scheme went unstable long before it overflows: the run stops
/// (app/run.cpp), and the GPU propagators search the grid for the place.
inline constexpr float kBlowUpLevel = 1e20f;

/// Health of the current wavefield: the blow-up check.
struct FieldHealth {
  bool finite = true;
  float max_abs = 0;
  physics::Index3 where;  // location of the max (or of the first non-finite value)
};

/// A piece of a strided box handed out by Propagator::read_field_by_parts: `count` points of the
/// dense [i][j][k] array of the whole strided box, from `offset` on, at `data` (C order).
struct FieldPart {
  physics::Index3 offset, count;
  const float* data = nullptr;
};
using FieldPartSink = std::function<void(const FieldPart&)>;
/// Floats of one part at most (64 MiB): what a result's final wavefield costs the host at a time.
inline constexpr std::int64_t kFieldPartFloats = std::int64_t{1} << 24;

/// The planes of i that one part of a strided box of `count` points holds: as many as
/// `max_floats` allows, at least one.
inline int planes_per_part(const physics::Index3& count, std::int64_t max_floats) {
  const std::int64_t plane = static_cast<std::int64_t>(count.j) * count.k;
  if (plane <= 0 || count.i <= 1) return count.i > 0 ? count.i : 1;
  const std::int64_t n = max_floats / plane;
  return n < 1 ? 1 : (n > count.i ? count.i : static_cast<int>(n));
}

/// The box's planes [i0, i0 + n) of its strided shape along i: the part planes_per_part cuts.
inline physics::Box3 strided_planes(const physics::Box3& box, const physics::Index3& stride, int i0, int n) {
  physics::Box3 cut = box;
  cut.lo.i = box.lo.i + i0 * stride.i;
  cut.n.i = (n - 1) * stride.i + 1;
  return cut;
}

class Propagator {
 public:
  virtual ~Propagator() = default;
  virtual std::string backend() const = 0;
  virtual std::string kernel() const = 0;
  /// Bytes of field memory this propagator allocated (for the memory estimate check).
  virtual std::int64_t allocated_bytes() const = 0;

  /// Receivers sampled after every step into an internal trace buffer; `count` receivers.
  virtual void set_receivers(const std::vector<NodeWeight>& nodes, int count) = 0;
  /// One time step: update all regions (u_next), add amplitude * weight at each source node,
  /// apply free surfaces, advance the time levels, record receivers at the new time.
  virtual void step(const std::vector<NodeWeight>& source, float amplitude) = 0;
  /// Recorded samples so far, [sample][receiver], and forget them (bounded buffers).
  virtual void take_traces(std::vector<float>& out) = 0;

  /// Copy the current field `u` (or `u_prev`), box with stride, into a dense host array
  /// [i][j][k] of the strided box.
  virtual void read_field(const std::string& name, const physics::Box3& box,
                          const physics::Index3& stride, float* out) = 0;
  /// read_field by parts: slabs of whole planes of i of the strided box, planes_per_part(its
  /// shape, max_floats) planes each (the last fewer), handed to `sink` one at a time in order of
  /// i, so that the host holds one slab, never the whole box. A distributed propagator gathers
  /// each slab to rank 0 and calls `sink` on no other rank.
  virtual void read_field_by_parts(const std::string& name, const physics::Box3& box,
                                   const physics::Index3& stride, std::int64_t max_floats,
                                   const FieldPartSink& sink);
  /// Back to rest as constructed, for the next shot of a survey on the same model: every
  /// wavefield and absorbing-layer memory field zero (halos included), no samples pending, the
  /// step split's sums zero. The model, receivers' buffers and the kernel stay.
  virtual void reset() = 0;
  /// The fields a restart needs set, besides which the state is the propagator's at rest (reset()):
  /// the wavefields at both time levels and the absorbing layer's memory. Reading a `layer` field
  /// outside the layer gives 0 and writing there does nothing.
  virtual std::vector<StateField> state_fields() const = 0;
  /// After write_field has set every state field (a restart): set what follows from them, the
  /// free surfaces' mirror images in the halos of the current level.
  virtual void finish_state() = 0;
  /// Set u_prev and u on the whole grid (dense C-order host arrays): tests, restarts.
  virtual void write_state(const float* u_prev, const float* u) = 0;
  /// Write a dense [i][j][k] array into a box of a field; the box may cover halo points (a
  /// distributed run sets its halos this way before write_state, which then applies free surfaces).
  virtual void write_field(const std::string& name, const physics::Box3& box, const float* data) = 0;
  virtual FieldHealth health() = 0;

  /// Seconds that `steps` steps take, timed on the device (CUDA events) or by the wall clock;
  /// amplitude(n) is the source amplitude of step n. For benchmarks.
  virtual double timed_steps(int first_step, int steps, const std::vector<NodeWeight>& source,
                             float (*amplitude)(int step, const void* ctx), const void* ctx);

  // Asynchronous snapshots: copy_field_async starts copying a strided box of a field into the host
  // buffer of `slot` (pinned memory on a GPU) and returns at once; wait_copy(slot) blocks until it
  // has landed and may be called from another thread (the snapshot writer).
  static constexpr int kSnapshotSlots = 3;
  virtual float* snapshot_buffer(int slot, std::int64_t count);
  virtual void copy_field_async(const std::string& name, const physics::Box3& box,
                                const physics::Index3& stride, int slot);
  virtual void wait_copy(int slot);
  /// Whether snapshots had better come by read_field_by_parts, a slot a slab, than whole by
  /// copy_field_async: where a snapshot is gathered (a distributed propagator), so that rank 0
  /// holds slabs, not snapshots.
  virtual bool snapshots_by_parts() const { return false; }

  /// Distributed runs: the transport that fills the halos of problem.halo's faces every step
  /// (it must outlive the propagator's steps). Without one, faces with a neighbour are not updated.
  virtual void set_halo_transport(HaloTransport* transport) = 0;
  /// Time per phase of the distributed step so far.
  virtual StepSplit step_split() const { return {}; }

 private:
  std::vector<float> host_slots_[kSnapshotSlots];
};

/// Builds the CPU reference propagator.
std::unique_ptr<Propagator> make_cpu_acoustic_iso(const AcousticIsoProblem& problem);

}  // namespace minimod::kernels
