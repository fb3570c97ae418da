// CUDA backend of the acoustic TTI propagator: one launch of a pluggable kernel family
// (kernels/cuda/registry.hpp: gmem, smem, semi, swic, or `auto`) over the whole grid, each point
// leapfrogged inside the inner region and damped in the PML (kernels/tti_point.hpp); then source
// injection into p, free surfaces on p and q, receivers on p or q, all on the GPU. Memory: 12 arrays
// per point (p, q at two levels, two auxiliary fields, (v dt)^2, b, the medium nx, ny, nz, 1 / a),
// halo included: 1000^3 takes 49 GB; a family that reads the split form's centre weights
// (swic_split) adds kappa_perp, kappa_axis (14 arrays, 57 GB). All of them lie in one allocation
// (GridArray), in the order swic_split_tma's grouped tensor copies need.
// The CPML layer (TtiLayer::cpml): the family runs on the inner box, the layer's points take the
// CPML's two passes (kernels/tti_cpml.hpp, one thread a point, launched per slab of the layer) with
// its 18 fields over the layer's points only, on a stream of their own beside the inner box's
// launch (beside_inner), and, distributed, psi and V over the layer points of the halos shared
// with neighbours too (TtiCpmlHalo).
// Distributed (a subdomain of mpi/subdomain.hpp): p and q exchange their face and edge halos axis
// by axis (kernels/halo.hpp, exchange_by_axis), packed on the GPU and staged through pinned host
// memory for host transports, on a halo stream while the interior is updated (overlapped_step).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "kernels/cuda/autotune.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/field_kernels.cuh"
#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/resources.hpp"
#include "kernels/cuda/snapshot_copies.cuh"
#include "kernels/cuda/step_split_events.hpp"
#include "kernels/tti_cpml.hpp"
#include "kernels/tti_point.hpp"
#include "kernels/tti_propagator.hpp"
#include "physics/error.hpp"

namespace minimod::kernels {
namespace cuda {
namespace {

constexpr int kArrays = 12;  // without the split form's centre weights (two more)

/// One grid-sized array of the arena (non-owning): the step's fields and medium lie in one
/// allocation, in an order that keeps the arrays swic_split_tma copies together equally spaced
/// (tensor_map_group: p and q, p_next and q_next, aux_p and aux_q; nx, ny, nz, 1/a, kappa_perp,
/// kappa_axis, b, (v dt)^2), so that one tensor copy lands a box of each.
struct GridArray {
  float* ptr = nullptr;
  std::int64_t count = 0;
  float* data() const { return ptr; }
  std::int64_t bytes() const { return count * 4; }
  void swap(GridArray& o) noexcept {
    std::swap(ptr, o.ptr);
    std::swap(count, o.count);
  }
};

/// The split form's centre weights of every grid point from the medium arrays the kernels read
/// (physics::tti_centre), so that they match the medium exactly, layer included. `kappa_perp`
/// and `kappa_axis` are the views' origins (grid point (0, 0, 0)), like g's arrays: offsets from
/// g.nx apply to them.
__global__ void fill_centre_weights(TtiStepArgs g, physics::Box3 box, float* kappa_perp, float* kappa_axis) {
  const int k = box.lo.k + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = box.lo.j + static_cast<int>(blockIdx.y);
  const int i = box.lo.i + static_cast<int>(blockIdx.z);
  if (k >= box.hi().k) return;
  const std::int64_t o = g.nx.offset(i, j, k);
  const physics::TtiCentre c = tti_centre_at(g, o);
  kappa_perp[o] = c.perp;
  kappa_axis[o] = c.axis;
}

/// The CPML layer's two passes (kernels/tti_cpml.hpp) over the points of one slab of the layer
/// (LayerIndex::slab, in grid coordinates, its first index `start`) inside `part`, a box of the
/// slab, one thread a point in 3D blocks (slab_block), the blocks ordered i fastest, then k, then
/// j (slab_grid).
struct SlabPoint {
  int i, j, k;
  std::int64_t x;  // compact layer index
  bool valid;
};
__device__ MM_FORCE_INLINE SlabPoint slab_point(const physics::Box3& slab, const physics::Box3& part,
                                                std::int64_t start) {
  const int k = part.lo.k + static_cast<int>(blockIdx.y * blockDim.x + threadIdx.x);
  const int j = part.lo.j + static_cast<int>(blockIdx.z * blockDim.y + threadIdx.y);
  const int i = part.lo.i + static_cast<int>(blockIdx.x * blockDim.z + threadIdx.z);
  const physics::Index3 hi = part.hi();
  const bool valid = i < hi.i && j < hi.j && k < hi.k;
  return {i, j, k, start + slab.position(i, j, k), valid};
}
/// Pass 1; Vti (TtiStepArgs::vti): the live rows only (kernels/tti_cpml.hpp, perp_row_live).
template <bool Vti>
__global__ void tti_cpml_psi(TtiStepArgs g, TtiCpmlArgs c, physics::Box3 slab, physics::Box3 part,
                             std::int64_t start) {
  const SlabPoint pt = slab_point(slab, part, start);
  if (pt.valid) tti_cpml_psi_point<Vti>(g, c, pt.i, pt.j, pt.k);
}
/// The rows' centre weights (physics::tti_row_centres) at the points of one slab of the layer, for
/// the families that take the CPML's rows from their split-form sums (TtiCpmlArgs::row_centres).
__global__ void fill_row_centres(TtiStepArgs g, TtiCpmlArgs c, physics::Box3 slab, physics::Box3 part,
                                 std::int64_t start) {
  const SlabPoint pt = slab_point(slab, part, start);
  if (!pt.valid) return;
  const TtiGlobalPoint at{g, g.nx.offset(pt.i, pt.j, pt.k)};
  store_by_rows(c.row_centres, c, pt.x,
                physics::tti_row_centres([&at](int di, int dj, int dk) { return at.medium(di, dj, dk); }, g.weights));
}
// Built for 4 blocks of 256 threads per SM (64 registers, 40 B spilled): 15.69 GPts/s at 1000^3
// on an H200 against 14.69 at 76 registers and 3 blocks (bench/results/2026-11-27-h200-tti-cpml.md).
// The operator's rows by the 73-point form or, Vti (TtiStepArgs::vti), the VTI form, and then the
// live rows' flux derivatives and zeta only: one kernel for each, since both in one spilled 312 B
// instead of 56.
template <bool Vti>
__global__ void __launch_bounds__(256, 4) tti_cpml_layer(TtiStepArgs g, TtiCpmlArgs c, physics::Box3 slab,
                                                         physics::Box3 part, std::int64_t start) {
  const SlabPoint pt = slab_point(slab, part, start);
  if (pt.valid)
    tti_cpml_layer_update<Vti>(g, c, slab, pt.i, pt.j, pt.k, pt.x, tti_rows_of<Vti>(g, g.p.offset(pt.i, pt.j, pt.k)));
}

/// tti_cpml_layer with the rows given (TtiCpmlArgs::rows, from the family's CPML launch). Built
/// for 5 blocks an SM (48 registers, 48 B spilled; 64 registers unbounded): its warps wait on
/// global loads (long scoreboard, 7 of 13 cycles an instruction at 4 blocks, Nsight Compute,
/// 512^3), and the fifth block took the CPML at 1000^3 from 27.26 to 27.48 GPts/s with a 27-point
/// layer and from 36.63 to 36.93 with an 8-point one (H200, session 31).
__global__ void __launch_bounds__(256, 5) tti_cpml_layer_rows(TtiStepArgs g, TtiCpmlArgs c, physics::Box3 slab,
                                                              physics::Box3 part, std::int64_t start) {
  const SlabPoint pt = slab_point(slab, part, start);
  if (pt.valid) tti_cpml_layer_update(g, c, slab, pt.i, pt.j, pt.k, pt.x,
                                       load_by_rows<physics::TtiRows>(c.rows, c, pt.x));
}

/// Whether a CPML step runs the layer's launches on a stream of their own beside the inner box's
/// (beside_inner): yes unless MINIMOD_TTI_LAYER_BESIDE=0 (read once), kept for A/B timing and
/// for ruling the streams out when looking for a race.
bool layer_beside_inner() {
  static const bool beside = [] {
    const char* v = std::getenv("MINIMOD_TTI_LAYER_BESIDE");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return beside;
}

/// 256 threads over a slab: 32 along k (coalesced rows) where the slab is that deep, else the
/// width of 8, 16 or 32 that wastes fewest threads on a thin k face; then j, and 2 along i, so
/// that a block's stencil neighbours along j and i share the cache (one k row a block, over the
/// whole grid, ran the CPML at 5.0 GPts/s at 1000^3 against the sponge's 23.3).
dim3 slab_block(const physics::Box3& slab) {
  int bx = 32;
  if (slab.n.k < 32)
    for (const int w : {16, 8})
      if (static_cast<int>(ceil_div(slab.n.k, w)) * w < static_cast<int>(ceil_div(slab.n.k, bx)) * bx) bx = w;
  return dim3(bx, 128 / bx, 2);
}

/// The blocks over a slab box q: i fastest (gridDim.x), then k, then j, so that the blocks along a
/// line of i, whose derivatives along i read each other's planes (pass 1: p and q, pass 2: V),
/// run in the same wave and find those planes in L2. Ordered k fastest, an i face's plane of
/// blocks (512^2 points at 512^3) ran before the next, and its planes came from DRAM again for
/// each of the 4 planes around: 129 B a point in pass 2 on the i faces against 99 on the j faces,
/// 96 against 65 in pass 1 (Nsight Compute, H100, session 21).
dim3 slab_grid(const physics::Box3& q, const dim3& block) {
  return dim3(ceil_div(q.n.i, block.z), ceil_div(q.n.k, block.x), ceil_div(q.n.j, block.y));
}

/// f(slab, box, q) for each of the six slabs of `layer` (whose corner lies at grid point `lo`):
/// the slab's box and its part q inside `part` (grid coordinates), empty ones skipped.
template <class F>
void for_each_slab(const LayerIndex& layer, const physics::Index3& lo, const physics::Box3& part, const F& f) {
  for (int slab = 0; slab < 6; ++slab) {
    physics::Box3 b = layer.slab(slab);
    for (int a = 0; a < 3; ++a) b.lo[a] += lo[a];
    const physics::Box3 q = physics::intersect(b, part);
    if (!q.empty()) f(slab, b, q);
  }
}

/// launch_on_slabs's default `take`: every slab.
struct EverySlab {
  bool operator()(int) const { return true; }
};
/// `kernel` over the points of the six slabs of `layer` (whose corner lies at grid point `lo` and
/// whose first compact index is `first`) inside `part` (grid coordinates); empty ones skipped, and
/// those for which `take(slab)` is false.
template <class Kernel, class Take = EverySlab>
void launch_on_slabs(Kernel kernel, const char* name, const TtiStepArgs& g, const TtiCpmlArgs& c,
                     const LayerIndex& layer, const physics::Index3& lo, std::int64_t first, const physics::Box3& part,
                     cudaStream_t s, const Take& take = {}) {
  for_each_slab(layer, lo, part, [&](int slab, const physics::Box3& b, const physics::Box3& q) {
    if (!take(slab)) return;
    const dim3 block = slab_block(q);
    kernel<<<slab_grid(q, block), block, 0, s>>>(g, c, b, q, first + layer.start[slab]);
    MM_CUDA_CHECK_LAUNCH(name);
  });
}

/// A family's CPML pass (KernelFamily::launch_tti_cpml_psi, ::launch_tti_cpml_pass2) over each
/// slab of the own layer inside `part`, with the inner box's tile.
using FamilyCpmlPass = void (*)(const TtiStepArgs&, const TtiCpmlArgs&, int, const physics::Box3&, const Tile&,
                                cudaStream_t);
void launch_family_on_slabs(FamilyCpmlPass pass, const KernelFamily& family, const TtiStepArgs& g,
                            const TtiCpmlArgs& c, const physics::Box3& part, const Tile& tile, cudaStream_t s) {
  for_each_slab(c.layer, {0, 0, 0}, part, [&](int slab, const physics::Box3&, const physics::Box3& q) {
    pass(g, c, slab, q, tile, s);
    MM_CUDA_CHECK_LAUNCH(family.name.c_str());
  });
}

/// The CPML's pass 1 (psi and V) at the layer's points and at those of the halos shared with
/// neighbours (TtiCpmlHalo), on stream s; at the layer's by the family's kernel where it has one
/// (KernelFamily::launch_tti_cpml_psi, with the inner box's tile), and not at the slabs the family's
/// CPML launch takes it at (TtiCpmlArgs::psi_by_rows).
void launch_cpml_psi(const TtiStepArgs& g, const TtiCpmlArgs& c, const physics::Box3& grid, const KernelFamily& family,
                     const Tile& tile, cudaStream_t s) {
  const auto kernel = g.vti ? tti_cpml_psi<true> : tti_cpml_psi<false>;
  if (family.launch_tti_cpml_psi != nullptr) {  // the family's kernel at the own layer's points
    launch_family_on_slabs(family.launch_tti_cpml_psi, family, g, c, grid, tile, s);
  } else {
    launch_on_slabs(kernel, "tti_cpml_psi", g, c, c.layer, {0, 0, 0}, 0, grid, s,
                    [&c](int slab) { return !c.psi_by_rows(slab); });
  }
  for (int f = 0; f < 6; ++f)
    launch_on_slabs(kernel, "tti_cpml_psi (halo)", g, c, c.halo.face[f], c.halo.lo[f], c.halo.start[f],
                    c.halo.box(f), s);
}

class CudaAcousticTti final : public Propagator {
 public:
  /// `centre_weights`: allocate and fill kappa_perp, kappa_axis (families that read them);
  /// `family_rows`: with the CPML layer, also the rows and their centre weights, where they fit
  /// (families with KernelFamily::launch_tti_cpml_layer; without them pass 2 evaluates the rows).
  CudaAcousticTti(const AcousticTtiProblem& problem, const KernelFamily& family, const Tile& tile,
                  bool centre_weights, bool family_rows)
      : p_(problem),
        layout_(physics::FieldLayout::make(problem.grid.box(), physics::kRadius)),
        family_(&family),
        tile_(tile),
        arrays_(kArrays + (centre_weights ? 2 : 0)),
        split_(split_shell(problem.grid.shape, problem.halo)) {
    const std::int64_t n = layout_.elements();
    inner_ = inner_box(p_);  // a subdomain's regions are clipped to its box
    if (p_.constant_axis) {
      axis_ = model_axis(problem);
      axis_weights_ = physics::make_tti_axis_weights(physics::make_tti_weights(p_.stencil), axis_);
      axis_row_weights_ = physics::make_tti_axis_row_weights(axis_weights_);
    }
    const bool cpml = p_.layer == TtiLayer::cpml;
    if (cpml) {
      check_cuts_outside_layer(p_.cpml.b, p_.grid.shape, p_.halo.neighbour, kHaloWidth);
      cpml_.layer = LayerIndex::make(p_.grid.shape, inner_);
      cpml_.halo = TtiCpmlHalo::make(p_.grid.shape, inner_, p_.halo.neighbour, cpml_.layer.count, kHaloWidth);
      cpml_.count = cpml_.layer.count + cpml_.halo.count;
    }
    const std::int64_t need = arrays_ * n * 4 + kTtiCpmlFields * cpml_.count * 4;
    const std::int64_t rows = cpml && centre_weights && family_rows ? 2 * kRowCentreArrays * cpml_.layer.count : 0;
    row_centre_count_ = need + rows * 4 + kDeviceMemoryMargin <= device_free_bytes() ? rows : 0;
    check_fits(need + row_centre_count_ * 4);
    // The arena (GridArray): p and q of both levels as pairs (they swap together), then aux_p,
    // aux_q, then the medium (the centre weights between 1/a and b where allocated).
    arena_ = DeviceBuffer<float>(arrays_ * n, "the acoustic_tti fields and medium");
    // On stream_, which the uploads below use: a legacy-stream memset is unordered with them.
    MM_CUDA_CHECK(cudaMemsetAsync(arena_.data(), 0, static_cast<size_t>(arena_.bytes()), stream_.get()));
    {
      GridArray* order[] = {&p1_, &q1_, &p0_, &q0_, &aux_p_, &aux_q_, &nx_, &ny_, &nz_, &inv_a_,
                            &kappa_perp_, &kappa_axis_, &b_, &v2dt2_};
      float* next = arena_.data();
      for (GridArray* a : order) {
        if (!centre_weights && (a == &kappa_perp_ || a == &kappa_axis_)) continue;
        *a = GridArray{next, n};
        next += n;
      }
    }
    upload_dense(v2dt2_, problem.v2dt2.data());
    upload_dense(b_, problem.b.data());
    {
      // The medium by slabs of kTtiMediumSlab planes through one host buffer (1 GB at 1000^3, not 16):
      // array c of a slab at c * slab planes, so that the row padding the fill never writes stays 0.
      const std::int64_t plane = layout_.nz_alloc * layout_.ny_alloc, slab = std::min(kTtiMediumSlab, layout_.nx_alloc);
      std::vector<float> host(static_cast<size_t>(4 * slab * plane), 0.0f);
      GridArray* medium[] = {&nx_, &ny_, &nz_, &inv_a_};
      for (std::int64_t first = 0; first < layout_.nx_alloc; first += slab) {
        const std::int64_t count = std::min(slab, layout_.nx_alloc - first);
        float* m = host.data();
        const std::int64_t apart = slab * plane;
        fill_tti_medium(problem, layout_.planes(first, count), m, m + apart, m + 2 * apart, m + 3 * apart);
        for (int c = 0; c < 4; ++c)
          MM_CUDA_CHECK(cudaMemcpyAsync(medium[c]->data() + first * plane, m + c * apart,
                                        static_cast<size_t>(count * plane) * 4, cudaMemcpyHostToDevice, stream_.get()));
        MM_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));  // before the next slab overwrites `host`
      }
    }
    for (int a = 0; a < 3; ++a) {
      const auto& e = p_.damping.eta[a];
      eta_[a] = DeviceBuffer<float>(static_cast<std::int64_t>(std::max<size_t>(e.size(), 1)), "eta profile");
      if (!e.empty())
        MM_CUDA_CHECK(cudaMemcpy(eta_[a].data(), e.data(), e.size() * 4, cudaMemcpyHostToDevice));
    }
    if (cpml) {
      cpml_fields_ = DeviceBuffer<float>(std::max<std::int64_t>(1, kTtiCpmlFields * cpml_.count), "CPML fields");
      MM_CUDA_CHECK(cudaMemset(cpml_fields_.data(), 0, static_cast<size_t>(cpml_fields_.bytes())));
      cpml_.fields = cpml_fields_.data();
      const auto upload = [](const std::vector<float>& v) {
        DeviceBuffer<float> d(static_cast<std::int64_t>(v.size()), "CPML profile");
        MM_CUDA_CHECK(cudaMemcpy(d.data(), v.data(), v.size() * 4, cudaMemcpyHostToDevice));
        return d;
      };
      for (int c = 0; c < 3; ++c) {
        cpml_a_[c] = upload(p_.cpml.a[c]);
        cpml_b_[c] = upload(p_.cpml.b[c]);
        cpml_.a[c] = cpml_a_[c].data();
        cpml_.b[c] = cpml_b_[c].data();
      }
      cpml_.d1 = pml::make_axis_derivatives(p_.grid.spacing);
      if (row_centre_count_ > 0) {
        row_centres_ = DeviceBuffer<float>(row_centre_count_, "CPML rows and their centre weights");
        cpml_.row_centres = row_centres_.data();
        cpml_.rows = row_centres_.data() + row_centre_count_ / 2;
        launch_on_slabs(fill_row_centres, "fill_row_centres", step_args(), cpml_, cpml_.layer, {0, 0, 0}, 0,
                        p_.grid.box(), nullptr);
        // A family's CPML launch may take pass 1 at the j and k faces if their points are not
        // damped along x (their i range is the inner one, where the profile is zero).
        const auto& bx = p_.cpml.b[0];
        psi_in_rows_possible_ = true;
        for (int i = inner_.lo.i; i < inner_.hi().i; ++i) {
          const auto at = static_cast<size_t>(i);
          psi_in_rows_possible_ = psi_in_rows_possible_ && at < bx.size() && bx[at] == 0.0f;
        }
      }
    }
    {
      // On the legacy stream, after the synchronous copies above; the halo keeps its 0 (the
      // kernels read kappa only at the points they update).
      const Box3 box = p_.grid.box();
      if (centre_weights && !box.empty()) {
        fill_centre_weights<<<dim3(ceil_div(box.n.k, 128), box.n.j, box.n.i), 128>>>(
            step_args(), box, view(kappa_perp_).origin, view(kappa_axis_).origin);
        MM_CUDA_CHECK_LAUNCH("fill_centre_weights");
      }
    }
    scratch_ = DeviceBuffer<unsigned>(2, "health scratch");
    // The memsets and copies above ran on the legacy stream, which stream_ (non-blocking) does
    // not wait for.
    MM_CUDA_CHECK(cudaDeviceSynchronize());
  }

  /// Whether `arrays` arrays of the grid's layout fit in the free GPU memory (with a margin for the
  /// context, streams and workspaces).
  static bool fits(const AcousticTtiProblem& problem, int arrays) {
    const std::int64_t need =
        arrays * physics::FieldLayout::make(problem.grid.box(), physics::kRadius).elements() * 4;
    return need + kDeviceMemoryMargin <= device_free_bytes();
  }

  std::string backend() const override { return "cuda"; }
  std::string kernel() const override { return family_->name + " " + tile_string(tile_); }
  std::int64_t allocated_bytes() const override {
    return (arrays_ * layout_.elements() + kTtiCpmlFields * cpml_.count + row_centre_count_) * 4;
  }

  void set_receivers(const std::vector<NodeWeight>& nodes, int count) override {
    receivers_.set(nodes, count, view(p1_), stream_.get());
  }

  void step(const std::vector<NodeWeight>& source, float amplitude) override {
    const cudaStream_t s = stream_.get();
    const TtiStepArgs g = step_args();
    // p and q are only read; p_next, q_next (and the auxiliary fields) are written.
    snapshots_.order_writers({s, halo_stream_.get(), layer_stream_.get()}, {view(p1_).origin, view(q1_).origin});
    if (transport_ != nullptr && p_.halo.any()) {
      overlapped_step(g, source, amplitude);
    } else {
      if (p_.layer == TtiLayer::cpml) {
        cpml_step(g, s);
      } else {
        // One launch over the whole grid: every family's point update takes the damped branch
        // outside g.inner (kernels/tti_point.hpp).
        launch_inner(g, p_.grid.box(), s);
      }
      inject_sources(g.p_next, source, p_.grid.box(), amplitude, s);
    }
    apply_free_surfaces(view(p0_));
    apply_free_surfaces(view(q0_));
    p0_.swap(p1_);
    q0_.swap(q1_);
    receivers_.record(view(p_.record_q ? q1_ : p1_).origin, s);
  }

  void take_traces(std::vector<float>& out) override { receivers_.take(out, stream_.get()); }

  float* snapshot_buffer(int slot, std::int64_t count) override { return snapshots_.buffer(slot, count); }

  /// Gathered and copied out on the copy stream after the steps queued so far, beside the next
  /// ones: the second step after this one (which overwrites the field) waits for the gather.
  void copy_field_async(const std::string& name, const Box3& box, const Index3& stride, int slot) override {
    MM_CUDA_CHECK(cudaEventRecord(snapshot_ready_.get(), stream_.get()));
    snapshots_.start(view(field(name)), box, stride, slot, snapshot_ready_.get());
  }

  void wait_copy(int slot) override { snapshots_.wait(slot); }

  StepSplit step_split() const override { return split_events_.total(); }

  double timed_steps(int first, int steps, const std::vector<NodeWeight>& source,
                     float (*amplitude)(int, const void*), const void* ctx) override {
    Event start(true), stop(true);
    const cudaStream_t s = stream_.get();
    MM_CUDA_CHECK(cudaEventRecord(start.get(), s));
    for (int n = first; n < first + steps; ++n) step(source, amplitude(n, ctx));
    MM_CUDA_CHECK(cudaEventRecord(stop.get(), s));
    MM_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    MM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return ms * 1e-3;
  }

  // --- For `kernel: auto` ---
  void set_inner_kernel(const KernelFamily& family, const Tile& tile) {
    family_ = &family;
    tile_ = tile;
  }
  /// p, q at both levels = smooth non-zero fields, for timing candidates on real-looking data.
  void fill_for_tuning() {
    fill_smooth_fields({view(p0_), view(p1_), view(q0_), view(q1_)}, p_.grid.shape, stream_.get());
  }
  /// Back to rest, exactly as constructed.
  void reset_state() {
    snapshots_.drain();
    MM_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    for (const auto* b : {&p0_, &p1_, &q0_, &q1_, &aux_p_, &aux_q_})
      MM_CUDA_CHECK(cudaMemsetAsync(b->data(), 0, static_cast<size_t>(b->bytes()), stream_.get()));
    if (cpml_fields_.data() != nullptr)
      MM_CUDA_CHECK(cudaMemsetAsync(cpml_fields_.data(), 0, static_cast<size_t>(cpml_fields_.bytes()), stream_.get()));
    MM_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    receivers_.clear();
  }
  std::vector<StateField> state_fields() const override { return tti_state_fields(p_.layer); }
  void finish_state() override {
    apply_free_surfaces(view(p1_));
    apply_free_surfaces(view(q1_));
    MM_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }
  void reset() override {
    split_events_.clear();
    reset_state();
  }
  void settle_after_failed_step() {  // every stream: a step may have queued work on each
    MM_CUDA_CHECK(cudaStreamSynchronize(halo_stream_.get()));
    MM_CUDA_CHECK(cudaStreamSynchronize(layer_stream_.get()));
    MM_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  void read_field(const std::string& name, const Box3& box, const Index3& stride, float* out) override {
    if (const int f = cpml_field(name); f >= 0) {
      std::vector<float> layer = download_cpml_field(f);
      return copy_layer_box(cpml_, box, stride, layer.data(), out, true);
    }
    const Index3 on = physics::strided_shape(box, stride);
    const std::int64_t count = static_cast<std::int64_t>(on.i) * on.j * on.k;
    if (count == 0) return;
    DeviceBuffer<float> dense(count, "field copy");
    const cudaStream_t s = stream_.get();
    launch_gather(view(field(name)), box, stride, dense.data(), s);
    MM_CUDA_CHECK(cudaMemcpyAsync(out, dense.data(), static_cast<size_t>(count) * 4, cudaMemcpyDeviceToHost, s));
    MM_CUDA_CHECK(cudaStreamSynchronize(s));
  }

  void write_state(const float* p_prev, const float* p) override {
    write_field("p_prev", p_.grid.box(), p_prev);
    write_field("p", p_.grid.box(), p);
    apply_free_surfaces(view(p1_));
    MM_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  void write_field(const std::string& name, const Box3& box, const float* data) override {
    if (box.empty()) return;
    const cudaStream_t s = stream_.get();
    snapshots_.drain();  // no snapshot still reading what this overwrites
    MM_CUDA_CHECK(cudaStreamSynchronize(s));
    if (const int f = cpml_field(name); f >= 0) {  // the field's own layer points, the rest kept
      std::vector<float> layer = download_cpml_field(f);
      copy_layer_box(cpml_, box, {1, 1, 1}, layer.data(), const_cast<float*>(data), false);
      MM_CUDA_CHECK(cudaMemcpyAsync(cpml_fields_.data() + f * cpml_.count, layer.data(), layer.size() * 4,
                                    cudaMemcpyHostToDevice, s));
      MM_CUDA_CHECK(cudaStreamSynchronize(s));
      return;
    }
    DeviceBuffer<float> dense(box.points(), "field upload");
    // On the stream that scatters: a legacy-stream cudaMemcpy from pageable memory may return
    // before its DMA has landed, and s (non-blocking) would not wait for it.
    MM_CUDA_CHECK(cudaMemcpyAsync(dense.data(), data, static_cast<size_t>(box.points()) * 4,
                                  cudaMemcpyHostToDevice, s));
    scatter<<<dim3(ceil_div(box.n.k, 128), box.n.j, box.n.i), 128, 0, s>>>(view(field(name)), box, dense.data());
    MM_CUDA_CHECK_LAUNCH("scatter");
    MM_CUDA_CHECK(cudaStreamSynchronize(s));
  }

  FieldHealth health() override {
    const cudaStream_t s = stream_.get();
    const Index3 n = p_.grid.shape;
    MM_CUDA_CHECK(cudaMemsetAsync(scratch_.data(), 0, 8, s));
    for (const auto* f : {&p1_, &q1_}) {
      max_abs<<<dim3(1, n.j, n.i), 128, 0, s>>>(view(*f), n, scratch_.data(), scratch_.data() + 1);
      MM_CUDA_CHECK_LAUNCH("max_abs");
    }
    unsigned h[2];
    MM_CUDA_CHECK(cudaMemcpyAsync(h, scratch_.data(), 8, cudaMemcpyDeviceToHost, s));
    MM_CUDA_CHECK(cudaStreamSynchronize(s));
    FieldHealth out;
    std::memcpy(&out.max_abs, &h[0], 4);
    out.finite = h[1] == 0;
    if (!out.finite || out.max_abs > kBlowUpLevel) {  // rare: find the place on the host, in p, else q
      std::vector<float> all(static_cast<size_t>(p_.grid.points()));
      for (const char* f : {"p", "q"}) {
        read_field(f, p_.grid.box(), {1, 1, 1}, all.data());
        if (locate_blow_up(all, n, out.max_abs, out.where)) break;
      }
    }
    return out;
  }

  void set_halo_transport(HaloTransport* transport) override { transport_ = transport; }

 private:
  View3<float> view(const GridArray& b) const { return layout_.view(b.data()); }

  /// What a step's kernels read: p, q of level n, p_next, q_next holding level n - 1.
  TtiStepArgs step_args() const {
    TtiStepArgs g{};
    g.p = view(p1_);
    g.q = view(q1_);
    g.p_next = view(p0_);
    g.q_next = view(q0_);
    g.aux_p = view(aux_p_);
    g.aux_q = view(aux_q_);
    g.v2dt2 = view(v2dt2_);
    g.b = view(b_);
    g.nx = view(nx_);
    g.ny = view(ny_);
    g.nz = view(nz_);
    g.inv_a = view(inv_a_);
    if (kappa_perp_.data() != nullptr) {  // else the views stay empty: the family must not read them
      g.kappa_perp = view(kappa_perp_);
      g.kappa_axis = view(kappa_axis_);
    }
    for (int a = 0; a < 3; ++a) {
      g.eta[a] = eta_[a].data();
      g.inv_4h2[a] = p_.inv_4h2[static_cast<size_t>(a)];
    }
    g.stencil = p_.stencil;
    g.weights = physics::make_tti_weights(p_.stencil);
    g.vti = p_.vti;
    g.constant_axis = p_.constant_axis;
    g.axis_weights = axis_weights_;
    g.axis_row_weights = axis_row_weights_;
    g.axis = axis_;
    g.inner = inner_;
    return g;
  }
  /// A CPML memory field named as in kTtiCpmlState (TtiCpmlField + axis), or -1 for other names.
  int cpml_field(const std::string& name) const {
    const int f = tti_cpml_field_named(name);
    if (f >= 0 && p_.layer != TtiLayer::cpml)
      throw std::invalid_argument("no field named '" + name + "' in the acoustic_tti propagator without the CPML");
    return f;
  }
  /// Memory field f of the CPML (its count floats, the own layer's first), copied to the host
  /// once the queued steps are done.
  std::vector<float> download_cpml_field(int f) const {
    std::vector<float> h(static_cast<size_t>(cpml_.count));
    for (const cudaStream_t q : {halo_stream_.get(), layer_stream_.get(), stream_.get()})
      MM_CUDA_CHECK(cudaStreamSynchronize(q));
    MM_CUDA_CHECK(cudaMemcpyAsync(h.data(), cpml_fields_.data() + f * cpml_.count, h.size() * 4,
                                  cudaMemcpyDeviceToHost, stream_.get()));
    MM_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    return h;
  }
  const GridArray& field(const std::string& name) const {
    if (name == "p" || name == "u") return p1_;
    if (name == "p_prev" || name == "u_prev") return p0_;
    if (name == "q") return q1_;
    if (name == "q_prev") return q0_;
    if (name == "aux_p" || name == "pml_aux") return aux_p_;
    if (name == "aux_q") return aux_q_;
    throw std::invalid_argument("no field named '" + name + "' in the acoustic_tti propagator");
  }

  /// Refuse before allocating anything if the fields do not fit in the free GPU memory.
  static void check_fits(std::int64_t need) {
    const std::int64_t free = device_free_bytes();
    if (need + kDeviceMemoryMargin > free)
      throw ConfigError("config error: grid.shape: this acoustic_tti run needs " + gib(need) +
                        " on the GPU, " + gib(free) +
                        " free: use a smaller grid or more ranks (mpirun -np N)");
  }

  void upload_dense(GridArray& dst, const float* src) {
    cuda::upload_dense(view(dst), p_.grid.shape, src, stream_.get());
  }

  /// `layer(stream)` and `inner(stream)`, work on the CPML layer's points and on the inner box
  /// that neither reads what the other writes (both read p and q, each writes p_next and q_next at
  /// its own points): the layer on the high-priority layer stream beside the inner box on s
  /// (layer_beside_inner), so that its short, latency-bound launches take SM slots as the inner
  /// box's blocks retire instead of queueing behind them; s waits for both. Else both in turn on s.
  template <class Layer, class Inner>
  void beside_inner(cudaStream_t s, const Layer& layer, const Inner& inner) {
    if (!layer_beside_inner()) {
      layer(s);
      inner(s);
      return;
    }
    const cudaStream_t sl = layer_stream_.get();
    MM_CUDA_CHECK(cudaEventRecord(layer_fork_.get(), s));
    MM_CUDA_CHECK(cudaStreamWaitEvent(sl, layer_fork_.get(), 0));
    layer(sl);
    inner(s);
    MM_CUDA_CHECK(cudaEventRecord(layer_done_.get(), sl));
    MM_CUDA_CHECK(cudaStreamWaitEvent(s, layer_done_.get(), 0));
  }

  /// A one-rank CPML step on stream s: the layer's passes (psi and V first, which the layer's
  /// update reads around each point, at the j and k faces from the family's CPML launch where it
  /// takes pass 1 there; then the layer's points by the CPML update) beside the family over the
  /// inner box.
  void cpml_step(const TtiStepArgs& g, cudaStream_t s) {
    cpml_.psi_in_rows = psi_in_rows_possible_ && family_->launch_tti_cpml_layer != nullptr && cpml_.rows != nullptr;
    beside_inner(
        s,
        [&](cudaStream_t sl) {
          launch_cpml_psi(g, cpml_, p_.grid.box(), *family_, tile_, sl);
          cpml_layer(g, p_.grid.box(), sl);
        },
        [&](cudaStream_t si) { launch_inner(g, inner_, si); });
  }

  /// The family's launch over `box` on stream s.
  void launch_inner(const TtiStepArgs& g, const Box3& box, cudaStream_t s) {
    family_->launch_tti(g, box, tile_, s);
    MM_CUDA_CHECK_LAUNCH(family_->name.c_str());
  }

  /// A distributed step, the exchange hidden behind the interior: the shell (own points within the
  /// halo width of an exchanged face, kernels/halo.hpp split_shell) with its sources on the
  /// high-priority halo stream, the interior with its sources on the compute stream, queued before
  /// the host waits for anything; then the exchange axis by axis on the halo stream (its packing
  /// reads only the shell and earlier phases' halos, its unpacking writes only halos, which the
  /// interior does not read), and the compute stream waits for it. Every point takes the update of
  /// a one-rank step.
  void overlapped_step(const TtiStepArgs& g, const std::vector<NodeWeight>& source, float amplitude) {
    const cudaStream_t s = stream_.get(), sh = halo_stream_.get();
    StepSplitEvents::Step& ev = split_events_.next();
    // The CPML's psi and V (own and halo points) before both parts, which read V around their
    // points: all of it here, none in the family's CPML launch of either part.
    cpml_.psi_in_rows = false;
    if (p_.layer == TtiLayer::cpml) launch_cpml_psi(g, cpml_, p_.grid.box(), *family_, tile_, s);
    MM_CUDA_CHECK(cudaEventRecord(step_start_.get(), s));  // the last step (free surfaces) is done
    MM_CUDA_CHECK(cudaStreamWaitEvent(sh, step_start_.get(), 0));
    MM_CUDA_CHECK(cudaEventRecord(ev.start.get(), sh));
    for (const auto& b : split_.shell) {
      update_part(g, b, sh);
      inject_sources(g.p_next, source, b, amplitude, sh);
    }
    MM_CUDA_CHECK(cudaEventRecord(ev.shell.get(), sh));
    if (!split_.interior.empty()) {
      update_part(g, split_.interior, s, true);
      inject_sources(g.p_next, source, split_.interior, amplitude, s);
    }
    MM_CUDA_CHECK(cudaEventRecord(ev.interior.get(), s));
    exchange_halos(sh);
    MM_CUDA_CHECK(cudaEventRecord(ev.halo.get(), sh));
    MM_CUDA_CHECK(cudaStreamWaitEvent(s, ev.halo.get(), 0));
  }

  /// The step's update of the points of `part` on stream s: the family over the whole part, its
  /// layer points damped (the sponge), or over the part's inner points and the CPML's pass 2 over
  /// its layer points, the latter beside the former where `beside` (beside_inner).
  void update_part(const TtiStepArgs& g, const Box3& part, cudaStream_t s, bool beside = false) {
    if (p_.layer != TtiLayer::cpml) return launch_inner(g, part, s);
    const Box3 in = physics::intersect(part, inner_);
    const auto layer = [&](cudaStream_t sl) { cpml_layer(g, part, sl); };
    const auto inner = [&](cudaStream_t si) {
      if (!in.empty()) launch_inner(g, in, si);
    };
    if (beside) return beside_inner(s, layer, inner);
    inner(s);
    layer(s);
  }

  /// The CPML's pass 2 at the layer's points inside `part`. Where the family gives the rows from
  /// its own sums, it writes them slab by slab and the layer kernel reads them; a family without
  /// such a launch leaves the rows to the layer kernel (the pair form, one thread a point). On the
  /// k faces, as deep along k as the layer, the family's 32-wide k tiles were slower than the
  /// layer kernel while the tile at k = 0 read boxes outside the allocation (the copy engine's
  /// zero fill: 1.11 ms against 0.65 for the face at the far end, 512^3, H100); with that tile
  /// starting at k = 0 (cpml_grid, swic_split.cu) they are as fast as it at 512^3 and faster at
  /// 1000^3 (bench/results/2026-11-27-session19-tti-cpml-k-faces.md).
  void cpml_layer(const TtiStepArgs& g, const Box3& part, cudaStream_t s) {
    if (family_->launch_tti_cpml_pass2 != nullptr) {  // the family's kernel takes all of pass 2
      launch_family_on_slabs(family_->launch_tti_cpml_pass2, *family_, g, cpml_, part, tile_, s);
      return;
    }
    if (family_->launch_tti_cpml_layer == nullptr || cpml_.rows == nullptr) {
      launch_on_slabs(g.vti ? tti_cpml_layer<true> : tti_cpml_layer<false>, "tti_cpml_layer", g, cpml_, cpml_.layer,
                      {0, 0, 0}, 0, part, s);
      return;
    }
    for_each_slab(cpml_.layer, {0, 0, 0}, part, [&](int slab, const Box3&, const Box3& q) {
      family_->launch_tti_cpml_layer(g, cpml_, slab, q, s);
      MM_CUDA_CHECK_LAUNCH(family_->name.c_str());
    });
    launch_on_slabs(tti_cpml_layer_rows, "tti_cpml_layer_rows", g, cpml_, cpml_.layer, {0, 0, 0}, 0, part, s);
  }

  /// p_next and q_next (p0_, q0_) into the neighbours' halos, faces and edges, one message per
  /// face: packed on the GPU, through pinned host buffers when the transport wants host memory.
  void exchange_halos(cudaStream_t s) {
    const bool staged = transport_->memory() == HaloTransport::Memory::host;
    const View3<float> fields[2] = {view(p0_), view(q0_)};
    const Index3 n = p_.grid.shape;
    PhasedHaloOps ops;
    ops.pack = [&](int f, std::int64_t floats) {
      HaloBuffers& h = halo_[f];
      if (h.send.size() < floats) {
        h.send = DeviceBuffer<float>(floats, "halo send");
        h.recv = DeviceBuffer<float>(floats, "halo receive");
        if (staged) {
          h.send_host = PinnedBuffer<float>(floats);
          h.recv_host = PinnedBuffer<float>(floats);
        }
      }
      const Box3 b = phased_send_box(n, p_.halo, f);
      for (int c = 0; c < 2; ++c)
        launch_copy_box(fields[c], b, h.send.data() + c * b.points(), true, s);
      if (!staged) return h.send.data();  // complete in stream order
      MM_CUDA_CHECK(cudaMemcpyAsync(h.send_host.data(), h.send.data(),
                                    static_cast<size_t>(floats) * 4, cudaMemcpyDeviceToHost, s));
      MM_CUDA_CHECK(cudaStreamSynchronize(s));  // host transports read it at once
      return h.send_host.data();
    };
    ops.receive_buffer = [&](int f, std::int64_t) {
      return staged ? halo_[f].recv_host.data() : halo_[f].recv.data();
    };
    ops.unpack = [&](int f, const float* data) {
      HaloBuffers& h = halo_[f];
      const Box3 b = phased_recv_box(n, p_.halo, f);
      // The next step's pack synchronises the stream before the transport refills recv_host.
      if (staged)
        MM_CUDA_CHECK(cudaMemcpyAsync(h.recv.data(), data, static_cast<size_t>(2 * b.points()) * 4,
                                      cudaMemcpyHostToDevice, s));
      for (int c = 0; c < 2; ++c)
        launch_copy_box(fields[c], b, h.recv.data() + c * b.points(), false, s);
    };
    exchange_by_axis(*transport_, n, p_.halo, 2, s, ops);
  }

  void apply_free_surfaces(const View3<float>& f) {
    launch_free_surfaces(f, p_.grid.shape, p_.free_surface, halo_span(p_.grid.shape, p_.halo), stream_.get());
  }

  TtiProblemSettings p_;  // the model's arrays are in the propagator's own layout
  physics::FieldLayout layout_;
  const KernelFamily* family_;
  Tile tile_;
  int arrays_;  // device arrays of the grid's size: kArrays, + 2 with the centre weights
  ShellSplit split_;  // the shell and interior of a distributed step (fixed by the halo faces)
  Stream stream_, halo_stream_ = Stream::high_priority();
  Stream layer_stream_ = Stream::high_priority();  // the CPML layer beside the inner box (beside_inner)
  Event step_start_;  // ordering between the compute and the halo stream
  Event layer_fork_, layer_done_;  // the layer stream's start and end in a step (beside_inner)
  Event snapshot_ready_;  // the steps a snapshot copies from are done
  SnapshotCopies snapshots_;  // asynchronous snapshots on a copy stream of their own
  StepSplitEvents split_events_;  // the timing split of exchanging steps
  DeviceBuffer<float> arena_;  // the arrays below, one after another (GridArray)
  GridArray p0_, p1_, q0_, q1_, aux_p_, aux_q_, v2dt2_, b_, nx_, ny_, nz_, inv_a_, kappa_perp_, kappa_axis_;
  DeviceBuffer<float> eta_[3];
  DeviceBuffer<unsigned> scratch_;
  Box3 inner_;
  physics::TtiMediumPoint axis_{};          // AcousticTtiProblem::constant_axis: TtiStepArgs::axis
  physics::TtiAxisWeights axis_weights_{}, axis_row_weights_{};  // and ::axis_weights, ::axis_row_weights
  TtiCpmlArgs cpml_{};  // TtiLayer::cpml: the layer's points, fields and profiles (kernels/tti_cpml.hpp)
  DeviceBuffer<float> cpml_fields_, cpml_a_[3], cpml_b_[3];
  static constexpr int kRowCentreArrays = 6;  // physics::TtiRowCentres, physics::TtiRows
  std::int64_t row_centre_count_ = 0;         // floats in row_centres_: the centre weights, then the rows
  bool psi_in_rows_possible_ = false;         // TtiCpmlArgs::psi_in_rows allowed (x undamped over the inner i range)
  DeviceBuffer<float> row_centres_;           // TtiCpmlArgs::row_centres and ::rows
  DeviceReceivers receivers_;
  HaloTransport* transport_ = nullptr;
  struct HaloBuffers {
    DeviceBuffer<float> send, recv;
    PinnedBuffer<float> send_host, recv_host;  // host-memory transports
  };
  HaloBuffers halo_[6];
};

}  // namespace

std::unique_ptr<Propagator> make_cuda_acoustic_tti(const AcousticTtiProblem& problem, const std::string& kernel) {
  if (kernel == "auto") {
    // The centre weights when some candidate reads them (auto times the verified families) and
    // they fit: without them those families' launches refuse and auto skips them, so a grid
    // that fits the 12 arrays of the others still runs.
    // Likewise the CPML's rows, when some candidate takes them from its sums.
    bool weights = false, rows = false;
    for (const auto& f : families()) {
      const bool candidate = implements(f, PropagatorKind::acoustic_tti) && !f.unverified && f.tti_reads_centre_weights;
      weights |= candidate;
      rows |= candidate && f.launch_tti_cpml_layer != nullptr;
    }
    weights = weights && CudaAcousticTti::fits(problem, kArrays + 2);
    const KernelFamily& start = find_family("gmem", PropagatorKind::acoustic_tti);
    auto prop = std::make_unique<CudaAcousticTti>(problem, start, start.tti_tunables.front(), weights, rows);
    // With the CPML layer the family runs on the inner box only: a choice of its own; a VTI
    // model (which families only for VTI may take) too, and a model of one tilted axis
    // (swic_split_tma's constant-axis form, whose best tile differs).
    const std::string kind = std::string(problem.layer == TtiLayer::cpml ? "acoustic_tti cpml" : "acoustic_tti minimod") +
                             (problem.vti ? " vti" : (problem.constant_axis ? " constant-axis" : ""));
    tune_in_place(*prop, PropagatorKind::acoustic_tti, problem.grid.shape,
                  layer_key(kind, problem.pml.lo, problem.pml.hi));
    return prop;
  }
  const auto [family, tile] = parse_kernel(kernel, PropagatorKind::acoustic_tti);
  if (family->tti_vti_only && !problem.vti)
    throw ConfigError("config error: execution.kernel: " + family->name +
                      " runs acoustic_tti only where the model is VTI (theta = 0 everywhere); this model's axis "
                      "is tilted: choose another family or auto");
  return std::make_unique<CudaAcousticTti>(problem, *family, tile, family->tti_reads_centre_weights,
                                           family->launch_tti_cpml_layer != nullptr);
}

}  // namespace cuda
}  // namespace minimod::kernels
