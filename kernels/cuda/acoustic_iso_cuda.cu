// CUDA backend of the acoustic-isotropic propagator: fields in device memory (rows padded to 128 B),
// the inner region on one stream with the chosen family, the PML slabs on a second stream, then
// source injection, free surfaces and receiver sampling in kernels: no host round trip per step.
// `kernel: auto` times the candidate families on this one propagator, then resets it (autotune.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>

#include "kernels/cuda/autotune.hpp"
#include "kernels/cuda/field_kernels.cuh"
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/pml_kernel.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/resources.hpp"
#include "kernels/cuda/snapshot_copies.cuh"
#include "kernels/cuda/step_split_events.hpp"
#include "physics/view3.hpp"

namespace minimod::kernels::cuda {
namespace {

using physics::Box3;
using physics::FieldLayout;
using physics::Index3;
using physics::View3;

/// Minimod's layer goes into the family's own launch when the family can take it
/// (KernelFamily::fuses_minimod_layer) and MINIMOD_FUSED_LAYER is not 0 (benchmarks compare).
bool fuses_layer(const KernelFamily& family, const AcousticIsoProblem& p) {
  static const bool enabled = [] {
    const char* v = std::getenv("MINIMOD_FUSED_LAYER");
    return !(v && std::string(v) == "0");
  }();
  return enabled && p.pml_kind != pml::PmlKind::cpml && family.fuses_minimod_layer;
}

/// Whether `family` advances in pairs on `p`: it has launch_pair, Minimod's PML, no free surface,
/// no halo exchange (`exchanging`), and does not take the layer into its own launch.
bool advances_in_pairs(const KernelFamily& family, const AcousticIsoProblem& p, bool exchanging) {
  const bool free_surface = std::any_of(p.free_surface.begin(), p.free_surface.end(), [](bool f) { return f; });
  return family.launch_pair != nullptr && p.pml_kind == pml::PmlKind::minimod && !free_surface && !exchanging &&
         !fuses_layer(family, p);
}

class CudaAcousticIso final : public Propagator {
 public:
  CudaAcousticIso(const AcousticIsoProblem& problem, const KernelFamily& family, const Tile& tile)
      : p_(problem),
        family_(&family),
        tile_(tile),
        layout_(FieldLayout::make(problem.grid.box(), physics::kRadius)),
        regions_(problem_regions(problem)),
        split_(split_shell(problem.grid.shape, problem.halo)),
        shell_family_(&find_family("gmem", PropagatorKind::acoustic_iso)) {
    // A two-step family on one whole grid (the usual case) adds two wavefields at its first pair:
    // counted here, so that a grid without room for them fails before the run starts.
    check_fits(cuda_memory_plan(problem, 0, advances_in_pairs(family, problem, problem.halo.any())));
    const std::int64_t n = layout_.elements();
    u_ = DeviceBuffer<float>(n, "u");
    u_prev_ = DeviceBuffer<float>(n, "u_prev");
    v2dt2_ = DeviceBuffer<float>(n, "v2dt2");
    auto upload = [](const std::vector<float>& h, const char* name) {
      DeviceBuffer<float> d(static_cast<std::int64_t>(h.size()), name);
      if (!h.empty())
        MM_CUDA_CHECK(cudaMemcpy(d.data(), h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
      return d;
    };
    static const char* kPsi[] = {"psi_x", "psi_y", "psi_z"};
    static const char* kZeta[] = {"zeta_x", "zeta_y", "zeta_z"};
    if (cpml()) {
      for (int a = 0; a < 3; ++a) {
        psi_[a] = DeviceBuffer<float>(n, kPsi[a]);
        zeta_[a] = DeviceBuffer<float>(n, kZeta[a]);
        cpml_a_[a] = upload(p_.cpml.a[a], "cpml a profile");
        cpml_b_[a] = upload(p_.cpml.b[a], "cpml b profile");
      }
    } else {
      aux_ = DeviceBuffer<float>(n, "pml_aux");
      for (int a = 0; a < 3; ++a) eta_[a] = upload(p_.damping.eta[a], "eta profile");
    }
    for (auto* b : {&u_, &u_prev_, &v2dt2_, &aux_, &psi_[0], &psi_[1], &psi_[2], &zeta_[0],
                    &zeta_[1], &zeta_[2]})
      if (b->data())  // on the stream of the uploads below, so that they land after the zeros
        MM_CUDA_CHECK(cudaMemsetAsync(b->data(), 0, static_cast<size_t>(b->bytes()), inner_stream_.get()));
    upload_dense(v2dt2_, p_.v2dt2.data());
    p_.v2dt2.clear();
    p_.v2dt2.shrink_to_fit();
    scratch_ = DeviceBuffer<unsigned>(2, "health scratch");
    lines_ = line_split();
    // The profile copies above ran on the legacy stream, which the non-blocking streams do not
    // wait for (and a copy from pageable memory may return before its DMA has landed); the zeros
    // and uploads ran on inner_stream_, which pml_stream_ does not wait for either.
    MM_CUDA_CHECK(cudaDeviceSynchronize());
  }

  std::string backend() const override { return "cuda"; }
  std::string kernel() const override {
    return family_->name + " " + tile_string(tile_);
  }
  std::int64_t allocated_bytes() const override {
    std::int64_t b = u_.bytes() + u_prev_.bytes() + v2dt2_.bytes() + aux_.bytes() + pair1_.bytes() + pair2_.bytes();
    for (int a = 0; a < 3; ++a)
      b += eta_[a].bytes() + psi_[a].bytes() + zeta_[a].bytes() + cpml_a_[a].bytes() + cpml_b_[a].bytes();
    return b + receivers_.bytes();
  }

  void set_receivers(const std::vector<NodeWeight>& nodes, int count) override {
    receivers_.set(nodes, count, view(u_), inner_stream_.get());
  }

  void step(const std::vector<NodeWeight>& source, float amplitude) override {
    if (pair_pending_) return finish_pair(source, amplitude);
    if (pairs_possible()) return start_pair(source, amplitude);
    const cudaStream_t s0 = inner_stream_.get(), s1 = pml_stream_.get();
    MM_CUDA_CHECK(cudaStreamWaitEvent(s1, step_done_.get(), 0));
    wait_for_snapshot_reads();
    const PmlStepArgs pa = pml_args();
    if (cpml()) {
      std::vector<Box3> slabs;  // psi^n everywhere first: the update reads its stencil
      for (const auto& r : regions_)
        if (r.is_pml) slabs.push_back(r.box);
      launch_cpml_psi(pa, slabs, s1);  // one launch (streamed)
      MM_CUDA_CHECK(cudaEventRecord(psi_done_.get(), s1));
      MM_CUDA_CHECK(cudaStreamWaitEvent(s0, psi_done_.get(), 0));
    }
    const auto un = view(u_prev_);
    if (transport_ == nullptr || !p_.halo.any()) {
      update_part(p_.grid.box(), *family_, pa, s0, s1);
      MM_CUDA_CHECK(cudaEventRecord(pml_done_.get(), s1));
      MM_CUDA_CHECK(cudaStreamWaitEvent(s0, pml_done_.get(), 0));
      inject(source, p_.grid.box(), amplitude, s0);
    } else {
      exchanging_step(source, amplitude, pa);
    }
    apply_free_surfaces(un, s0);
    u_.swap(u_prev_);
    receivers_.record(view(u_).origin, s0);
    MM_CUDA_CHECK(cudaEventRecord(step_done_.get(), s0));
  }

  void set_halo_transport(HaloTransport* transport) override { transport_ = transport; }

  // --- Two steps per launch (KernelFamily::launch_pair) ---
  //
  // Four wavefields: u_prev_ = u^{n-1}, u_ = u^n, and two spares pair1_, pair2_. The first call
  // of a pair updates the PML slabs into pair1_ (u^{n+1}, reading u_prev_ instead of overwriting
  // it), then the family computes u^{n+1} (into pair1_) and u^{n+2} (into pair2_) on the inner
  // box, the source goes into u^{n+1} and its share of u^{n+2} is added (the second step ran
  // before it was injected); the fields rotate so that u_ = u^{n+1}, u_prev_ = u^n, and u^{n+2}
  // waits in pair2_. The second call updates the slabs of u^{n+2} and injects its source. Between
  // the two the state is a complete step (receivers, snapshots, health, the final wavefield read
  // u_ and u_prev_); writing any field drops the waiting half, and the next call starts a pair.
  bool pairs_possible() const { return advances_in_pairs(*family_, p_, transport_ != nullptr && p_.halo.any()); }

  /// The inner kernel's box and the layer kernel's boxes of a whole-grid step or pair (Minimod's
  /// layer, or the CPML's second pass). The inner box's k faces move inward to whole DRAM lines of
  /// the rows where the layer has z faces (lo.k to a 128-B boundary, hi.k to a 32-B one, at most 8
  /// columns): the inner kernel's tiles then start on 128-B boundaries without a tile of overhang
  /// (temporal_tma at Minimod's 1000^3: 20 k tiles of 48 instead of 21), and no row sector is
  /// written partly by each kernel. The columns in between go to the z slabs as inner points
  /// (PmlStepArgs::undamped: the inner update), the y and x slabs end at the new faces.
  /// MINIMOD_WHOLE_LINES=0 keeps the inner box (benchmarks compare).
  struct LineSplit {
    Box3 box;
    std::vector<Box3> layer;
  };
  LineSplit line_split() const {
    static const bool enabled = [] {
      const char* v = std::getenv("MINIMOD_WHOLE_LINES");
      return !(v && std::string(v) == "0");
    }();
    const Box3 in = inner_box();
    const LineSplit unsplit{in, pml_boxes(p_.grid.box())};
    const auto standard = pml::make_regions(p_.grid.shape, p_.pml);  // the partition it moves
    const bool same = standard.size() == regions_.size() &&
                      std::equal(standard.begin(), standard.end(), regions_.begin(), [](const auto& x, const auto& y) {
                        return x.box == y.box && x.is_pml == y.is_pml;
                      });
    if (!enabled || in.empty() || !same) return unsplit;
    const int halo = -layout_.with_halo().lo.k;  // the allocation's rows start at k = -halo
    int lo = in.lo.k, hi = in.hi().k;
    const int up = (32 - (lo + halo) % 32) % 32, down = (hi + halo) % 8;
    if (lo > 0 && up <= 8) lo += up;                    // a z- slab: to a 128-B boundary
    if (hi < p_.grid.shape.k) hi -= down;               // a z+ slab: to a 32-B boundary
    if (hi <= lo || (lo == in.lo.k && hi == in.hi().k)) return unsplit;
    pml::PmlWidths moved = p_.pml;  // make_regions' cut with the z faces there
    moved.lo[2] = lo;
    moved.hi[2] = p_.grid.shape.k - hi;
    LineSplit out{in, {}};
    for (const auto& r : pml::make_regions(p_.grid.shape, moved)) {
      if (r.is_pml)
        out.layer.push_back(r.box);
      else
        out.box = r.box;
    }
    return out;
  }

  /// The layer kernel's arguments for the boxes of line_split: the inner box's points among them
  /// take the plain leapfrog; the rows' k halo cells are written with zeros (whole sectors) where
  /// the halo is the grid's zero boundary (one subdomain, no free surface on a z face).
  PmlStepArgs split_layer_args(PmlStepArgs pa) const {
    pa.undamped = inner_box();
    pa.zero_k_halo = !p_.halo.any() && !p_.free_surface[kZLo] && !p_.free_surface[kZHi];
    return pa;
  }

  void start_pair(const std::vector<NodeWeight>& source, float amplitude) {
    const cudaStream_t s0 = inner_stream_.get();
    if (!pair1_.data()) {
      const std::int64_t n = layout_.elements(), free = device_free_bytes();
      if (2 * n * 4 + kDeviceMemoryMargin > free)
        throw ConfigError("config error: execution.kernel: " + family_->name + " advances two steps at a time "
                          "and needs two more wavefields (" + gib(2 * n * 4) + ") than the " + gib(free) +
                          " free on this GPU: choose another kernel (minimod --list-kernels) or more GPUs "
                          "(execution.decomposition)");
      pair1_ = DeviceBuffer<float>(n, "u (two-step spare)");
      pair2_ = DeviceBuffer<float>(n, "u (two-step spare)");
      for (auto* b : {&pair1_, &pair2_})  // the halo stays zero: the kernel reads it as u^{n+1}
        MM_CUDA_CHECK(cudaMemsetAsync(b->data(), 0, static_cast<size_t>(b->bytes()), s0));
    }
    MM_CUDA_CHECK(cudaStreamWaitEvent(s0, step_done_.get(), 0));
    wait_for_snapshot_reads();
    PmlStepArgs pa = split_layer_args(pml_args());
    pa.u_prev = view(u_prev_);
    pa.u_next = view(pair1_);
    launch_pml(pa, lines_.layer, s0);
    const IsoPairArgs args{lines_.box, view(u_prev_), view(u_), view(pair1_), view(pair2_), view(v2dt2_),
                           p_.laplacian};
    family_->launch_pair(args, tile_, s0);
    MM_CUDA_CHECK_LAUNCH(family_->name.c_str());
    inject_sources(view(pair1_), source, p_.grid.box(), amplitude, s0);
    add_sources_to_second_step(view(pair2_), view(v2dt2_), args.box, source, amplitude, p_.laplacian, s0);
    u_prev_.swap(u_);   // u_prev_ = u^n
    u_.swap(pair1_);    // u_ = u^{n+1}, pair1_ = the old u^{n-1} (free)
    pair_pending_ = true;
    receivers_.record(view(u_).origin, s0);
    MM_CUDA_CHECK(cudaEventRecord(step_done_.get(), s0));
  }

  void finish_pair(const std::vector<NodeWeight>& source, float amplitude) {
    const cudaStream_t s0 = inner_stream_.get();
    wait_for_snapshot_reads();
    PmlStepArgs pa = split_layer_args(pml_args());
    pa.u_prev = view(u_prev_);
    pa.u_next = view(pair2_);
    launch_pml(pa, lines_.layer, s0);
    inject_sources(view(pair2_), source, p_.grid.box(), amplitude, s0);
    u_prev_.swap(u_);  // u_prev_ = u^{n+1}
    u_.swap(pair2_);   // u_ = u^{n+2}, pair2_ = the old u^n (free)
    pair_pending_ = false;
    receivers_.record(view(u_).origin, s0);
    MM_CUDA_CHECK(cudaEventRecord(step_done_.get(), s0));
  }

  StepSplit step_split() const override { return split_events_.total(); }

  void take_traces(std::vector<float>& out) override { receivers_.take(out, inner_stream_.get()); }

  void read_field(const std::string& name, const Box3& box, const Index3& stride,
                  float* out) override {
    const Index3 on = physics::strided_shape(box, stride);
    const std::int64_t count = static_cast<std::int64_t>(on.i) * on.j * on.k;
    if (count == 0) return;
    DeviceBuffer<float> dense(count, "field copy");
    const cudaStream_t s0 = inner_stream_.get();
    launch_gather(view(field(name)), box, stride, dense.data(), s0);
    MM_CUDA_CHECK(cudaMemcpyAsync(out, dense.data(), static_cast<size_t>(count) * 4,
                                  cudaMemcpyDeviceToHost, s0));
    MM_CUDA_CHECK(cudaStreamSynchronize(s0));
  }

  void write_state(const float* u_prev, const float* u) override {
    pair_pending_ = false;
    snapshots_.drain();
    MM_CUDA_CHECK(cudaStreamSynchronize(inner_stream_.get()));
    upload_dense(u_prev_, u_prev);
    upload_dense(u_, u);
    apply_free_surfaces(view(u_), inner_stream_.get());
    MM_CUDA_CHECK(cudaStreamSynchronize(inner_stream_.get()));
  }

  void write_field(const std::string& name, const Box3& box, const float* data) override {
    if (box.empty()) return;
    pair_pending_ = false;
    const cudaStream_t s0 = inner_stream_.get();
    snapshots_.drain();
    MM_CUDA_CHECK(cudaStreamSynchronize(s0));
    DeviceBuffer<float> dense(box.points(), "field upload");
    // On the stream that scatters: a legacy-stream cudaMemcpy from pageable memory may return
    // before its DMA has landed, and s0 (non-blocking) would not wait for it.
    MM_CUDA_CHECK(cudaMemcpyAsync(dense.data(), data, static_cast<size_t>(box.points()) * 4,
                                  cudaMemcpyHostToDevice, s0));
    scatter<<<dim3(ceil_div(box.n.k, 128), box.n.j, box.n.i), 128, 0, s0>>>(view(field(name)), box,
                                                                         dense.data());
    MM_CUDA_CHECK_LAUNCH("scatter");
    MM_CUDA_CHECK(cudaStreamSynchronize(s0));
  }

  double timed_steps(int first, int steps, const std::vector<NodeWeight>& source,
                     float (*amplitude)(int, const void*), const void* ctx) override {
    Event start(true), stop(true);
    const cudaStream_t s0 = inner_stream_.get();
    MM_CUDA_CHECK(cudaEventRecord(start.get(), s0));
    MM_CUDA_CHECK(cudaEventRecord(step_done_.get(), s0));  // the PML stream starts after `start`
    for (int n = first; n < first + steps; ++n) step(source, amplitude(n, ctx));
    MM_CUDA_CHECK(cudaEventRecord(stop.get(), s0));  // s0 has waited for the PML stream each step
    MM_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    MM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return ms * 1e-3;
  }

  float* snapshot_buffer(int slot, std::int64_t count) override { return snapshots_.buffer(slot, count); }

  /// Gathered and copied out on the copy stream after this step, beside the next one: only the
  /// first step that writes the field waits for the gather (wait_for_snapshot_reads).
  void copy_field_async(const std::string& name, const Box3& box, const Index3& stride,
                        int slot) override {
    snapshots_.start(view(field(name)), box, stride, slot, step_done_.get());
  }

  void wait_copy(int slot) override { snapshots_.wait(slot); }

  FieldHealth health() override {
    const cudaStream_t s0 = inner_stream_.get();
    const Index3 n = p_.grid.shape;
    MM_CUDA_CHECK(cudaMemsetAsync(scratch_.data(), 0, 8, s0));
    max_abs<<<dim3(1, n.j, n.i), 128, 0, s0>>>(view(u_), n, scratch_.data(), scratch_.data() + 1);
    MM_CUDA_CHECK_LAUNCH("max_abs");
    unsigned h[2];
    MM_CUDA_CHECK(cudaMemcpyAsync(h, scratch_.data(), 8, cudaMemcpyDeviceToHost, s0));
    MM_CUDA_CHECK(cudaStreamSynchronize(s0));
    FieldHealth out;
    float m;
    std::memcpy(&m, &h[0], 4);
    out.finite = h[1] == 0;
    out.max_abs = m;
    if (!out.finite || m > kBlowUpLevel) {  // rare: find the place on the host
      std::vector<float> all(static_cast<size_t>(p_.grid.points()));
      read_field("u", p_.grid.box(), {1, 1, 1}, all.data());
      locate_blow_up(all, n, m, out.where);
    }
    return out;
  }

  // --- For `kernel: auto` (make_cuda_acoustic_iso only) ---

  /// Switch the inner-region family and tile; takes effect from the next step.
  void set_inner_kernel(const KernelFamily& family, const Tile& tile) {
    family_ = &family;
    tile_ = tile;
    // A waiting second half belongs to the old family's pair; the state is a complete step
    // without it. (Kept, it made the next candidate's first step skip its inner kernel: auto
    // once timed semi_tma at 154 GPts/s after temporal, against 132 end to end.)
    pair_pending_ = false;
    if (family.launch_pair == nullptr && pair1_.data()) {  // the two spare wavefields go
      MM_CUDA_CHECK(cudaDeviceSynchronize());
      pair1_ = DeviceBuffer<float>();
      pair2_ = DeviceBuffer<float>();
    }
  }

  /// u_prev and u = smooth non-zero fields (interior), for timing candidates on real-looking data.
  void fill_for_tuning() {
    const cudaStream_t s0 = inner_stream_.get();
    MM_CUDA_CHECK(cudaStreamSynchronize(s0));
    fill_smooth_fields({view(u_prev_), view(u_)}, p_.grid.shape, s0);
  }

  /// Back to rest, exactly as constructed: u, u_prev and the PML memory fields all zero (halo
  /// included), no receiver samples pending.
  void reset_state() {
    pair_pending_ = false;
    snapshots_.drain();
    MM_CUDA_CHECK(cudaStreamSynchronize(inner_stream_.get()));
    MM_CUDA_CHECK(cudaStreamSynchronize(pml_stream_.get()));
    for (auto* b : {&u_, &u_prev_, &aux_, &psi_[0], &psi_[1], &psi_[2], &zeta_[0], &zeta_[1], &zeta_[2]})
      if (b->data())
        MM_CUDA_CHECK(cudaMemsetAsync(b->data(), 0, static_cast<size_t>(b->bytes()), inner_stream_.get()));
    MM_CUDA_CHECK(cudaDeviceSynchronize());  // both streams see the zeros
    receivers_.clear();
  }

  std::vector<StateField> state_fields() const override { return iso_state_fields(p_.pml_kind); }
  void finish_state() override {
    pair_pending_ = false;
    apply_free_surfaces(view(u_), inner_stream_.get());
    MM_CUDA_CHECK(cudaStreamSynchronize(inner_stream_.get()));
  }
  void reset() override {
    split_events_.clear();
    reset_state();
  }

  /// After a step threw (a candidate's launch refused): let both streams finish what was queued.
  /// A sticky error (the context is lost) is not a candidate's problem: it propagates.
  void settle_after_failed_step() {
    MM_CUDA_CHECK(cudaStreamSynchronize(pml_stream_.get()));
    MM_CUDA_CHECK(cudaStreamSynchronize(inner_stream_.get()));
  }

 private:
  View3<float> view(const DeviceBuffer<float>& b) const { return layout_.view(b.data()); }
  const DeviceBuffer<float>& field(const std::string& name) const {
    if (name == "u") return u_;
    if (name == "u_prev") return u_prev_;
    if (name == "pml_aux") return aux_;
    if (name == "v2dt2") return v2dt2_;
    static const char* kNames[] = {"psi_x", "psi_y", "psi_z", "zeta_x", "zeta_y", "zeta_z"};
    for (int a = 0; a < 3; ++a) {
      if (name == kNames[a]) return psi_[a];
      if (name == kNames[a + 3]) return zeta_[a];
    }
    throw std::invalid_argument("no field named '" + name + "' in the acoustic_iso propagator");
  }

  bool cpml() const { return p_.pml_kind == pml::PmlKind::cpml; }

  /// A snapshot gather still reading a field this step writes: every field but u (read only here)
  /// makes the writing streams wait for it.
  void wait_for_snapshot_reads() {
    snapshots_.order_writers({inner_stream_.get(), pml_stream_.get(), halo_stream_.get()}, {view(u_).origin});
  }

  PmlStepArgs pml_args() const {
    PmlStepArgs pa{};
    pa.u = view(u_);
    pa.u_next = view(u_prev_);
    pa.v2dt2 = view(v2dt2_);
    pa.laplacian = p_.laplacian;
    pa.derivatives = p_.derivatives;
    if (cpml()) {
      for (int a = 0; a < 3; ++a) {
        pa.psi[a] = view(psi_[a]);
        pa.zeta[a] = view(zeta_[a]);
        pa.a[a] = cpml_a_[a].data();
        pa.b[a] = cpml_b_[a].data();
      }
    } else {
      pa.aux = view(aux_);
      pa.eta_x = eta_[0].data();
      pa.eta_y = eta_[1].data();
      pa.eta_z = eta_[2].data();
      for (int a = 0; a < 3; ++a) pa.inv_4h2[a] = p_.inv_4h2[a];
    }
    return pa;
  }

  /// u_next on the points of `part`: the inner region's share with `family` on `inner_stream`, the
  /// PML slabs' shares on `pml_stream` (Minimod's PML, and the streamed CPML: all slabs in one
  /// launch).
  void update_part(const Box3& part, const KernelFamily& family, PmlStepArgs pa,
                   cudaStream_t inner_stream, cudaStream_t pml_stream, const Tile* tile = nullptr) const {
    const auto u = view(u_), un = view(u_prev_), m = view(v2dt2_);
    if (fuses_layer(family, p_)) {  // the whole part in one launch, the layer's points included
      family.launch(layer_args(part, pa), tile ? *tile : tile_for(family), inner_stream);
      MM_CUDA_CHECK_LAUNCH(family.name.c_str());
      return;
    }
    if (part == p_.grid.box() && !p_.halo.any()) {  // one subdomain: as pairs split it
      if (!lines_.box.empty()) {
        family.launch(IsoStepArgs{lines_.box, u, un, m, p_.laplacian}, tile ? *tile : tile_for(family), inner_stream);
        MM_CUDA_CHECK_LAUNCH(family.name.c_str());
      }
      if (lines_.layer.empty()) return;
      const PmlStepArgs layer = split_layer_args(pa);
      if (cpml())  // its first pass ran on the unsplit slabs: psi is not written where b = 0
        launch_cpml(layer, lines_.layer, pml_stream);
      else
        launch_pml(layer, lines_.layer, pml_stream);
      return;
    }
    for (const auto& r : regions_) {
      const Box3 b = physics::intersect(r.box, part);
      if (b.empty() || r.is_pml) continue;
      family.launch(IsoStepArgs{b, u, un, m, p_.laplacian}, tile ? *tile : tile_for(family), inner_stream);
      MM_CUDA_CHECK_LAUNCH(family.name.c_str());
    }
    const std::vector<Box3> boxes = pml_boxes(part);
    if (boxes.empty()) return;
    // (Minimod's slabs by semi_tma_fused, one launch each, were 20-45% slower end to end on an
    // H100: a slab 27 points thin gives 64-128 blocks per launch; bench/results/2026-11-23-*.)
    if (cpml())
      launch_cpml(pa, boxes, pml_stream);  // one launch (streamed)
    else
      launch_pml(pa, boxes, pml_stream);
  }

  /// The PML slabs' shares of `part`.
  std::vector<Box3> pml_boxes(const Box3& part) const {
    std::vector<Box3> out;
    for (const auto& r : regions_) {
      const Box3 b = physics::intersect(r.box, part);
      if (r.is_pml && !b.empty()) out.push_back(b);
    }
    return out;
  }

  /// The step's arguments on `box` with Minimod's layer (for a family that fuses it).
  IsoStepArgs layer_args(const Box3& box, const PmlStepArgs& pa) const {
    IsoStepArgs args{box, view(u_), view(u_prev_), view(v2dt2_), p_.laplacian};
    args.layer.inner = inner_box();
    args.layer.aux = pa.aux;
    args.layer.eta[0] = pa.eta_x;
    args.layer.eta[1] = pa.eta_y;
    args.layer.eta[2] = pa.eta_z;
    for (int a = 0; a < 3; ++a) args.layer.inv_4h2[a] = pa.inv_4h2[a];
    return args;
  }

  /// The inner region's box (clipped to this subdomain); empty when every point is in the layer.
  Box3 inner_box() const {
    for (const auto& r : regions_)
      if (!r.is_pml) return r.box;
    return Box3{};
  }

  const Tile& tile_for(const KernelFamily& family) const {
    return &family == family_ ? tile_ : family.tunables.front();
  }

  /// Adds the source nodes inside `part` to u_next.
  void inject(const std::vector<NodeWeight>& source, const Box3& part, float amplitude,
              cudaStream_t s) const {
    inject_sources(view(u_prev_), source, part, amplitude, s);
  }

  /// A distributed step: the shell (with its sources) on the PML stream, packed and sent on the
  /// halo stream while the interior runs on both compute streams; the halos are unpacked before
  /// the free surfaces and the receivers see u_next.
  void exchanging_step(const std::vector<NodeWeight>& source, float amplitude, const PmlStepArgs& pa) {
    const cudaStream_t s0 = inner_stream_.get(), s1 = pml_stream_.get(), sh = halo_stream_.get();
    StepSplitEvents::Step& ev = split_events_.next();
    // The shell, the packing and the exchange on the high-priority halo stream, after the last
    // step (and the CPML's psi pass); the interior on the two normal streams meanwhile.
    MM_CUDA_CHECK(cudaStreamWaitEvent(sh, cpml() ? psi_done_.get() : step_done_.get(), 0));
    MM_CUDA_CHECK(cudaEventRecord(ev.start.get(), sh));
    for (const auto& b : split_.shell) {
      // Thin along k (z faces): a block narrow in k, so its threads are not idle.
      const Tile tile = b.n.k >= 32 ? Tile{32, 4, 4} : Tile{4, 16, 8};
      update_part(b, *shell_family_, pa, sh, sh, &tile);
      inject(source, b, amplitude, sh);
    }
    MM_CUDA_CHECK(cudaEventRecord(ev.shell.get(), sh));
    const bool staged = transport_->memory() == HaloTransport::Memory::host;
    float* send[6] = {};
    float* recv[6] = {};
    std::int64_t count[6] = {};
    const auto un = view(u_prev_);
    for (int f = 0; f < 6; ++f) {
      if (!p_.halo.neighbour[static_cast<size_t>(f)]) continue;
      const Box3 b = send_box(p_.grid.shape, f);
      count[f] = b.points();
      auto& h = halo_[f];
      if (h.send.size() < count[f]) {
        h.send = DeviceBuffer<float>(count[f], "halo send");
        h.recv = DeviceBuffer<float>(count[f], "halo receive");
        if (staged) {
          h.send_host = PinnedBuffer<float>(count[f]);
          h.recv_host = PinnedBuffer<float>(count[f]);
        }
      }
      launch_copy_box(un, b, h.send.data(), true, sh);
      if (staged) {
        MM_CUDA_CHECK(cudaMemcpyAsync(h.send_host.data(), h.send.data(),
                                      static_cast<size_t>(count[f]) * 4, cudaMemcpyDeviceToHost, sh));
      }
      send[f] = staged ? h.send_host.data() : h.send.data();
      recv[f] = staged ? h.recv_host.data() : h.recv.data();
    }
    // The interior, queued before the host waits for anything below.
    update_part(split_.interior, *family_, pa, s0, s1);
    MM_CUDA_CHECK(cudaEventRecord(pml_done_.get(), s1));
    MM_CUDA_CHECK(cudaStreamWaitEvent(s0, pml_done_.get(), 0));
    inject(source, split_.interior, amplitude, s0);
    MM_CUDA_CHECK(cudaEventRecord(ev.interior.get(), s0));
    if (staged) MM_CUDA_CHECK(cudaStreamSynchronize(sh));
    transport_->start(send, recv, count, sh);
    transport_->finish(sh);
    for (int f = 0; f < 6; ++f) {
      if (count[f] == 0) continue;
      auto& h = halo_[f];
      if (staged) {
        MM_CUDA_CHECK(cudaMemcpyAsync(h.recv.data(), h.recv_host.data(),
                                      static_cast<size_t>(count[f]) * 4, cudaMemcpyHostToDevice, sh));
      }
      launch_copy_box(un, recv_box(p_.grid.shape, f), h.recv.data(), false, sh);
    }
    MM_CUDA_CHECK(cudaEventRecord(ev.halo.get(), sh));
    MM_CUDA_CHECK(cudaStreamWaitEvent(s0, ev.halo.get(), 0));
  }

  void check_fits(std::int64_t need) const {
    const std::int64_t free = device_free_bytes();
    if (need + kDeviceMemoryMargin > free) {
      const std::int64_t gpus = (need + free - 1) / free;
      throw ConfigError("config error: grid.shape: this run needs " + gib(need) + " per GPU, " + gib(free) +
                        " free: use >= " +
                        std::to_string(std::max<std::int64_t>(2, gpus)) +
                        " GPUs (execution.decomposition) or a smaller grid");
    }
  }

  /// Dense host [i][j][k] -> padded device layout, one 2D copy per i-plane.
  void upload_dense(DeviceBuffer<float>& dst, const float* src) {
    cuda::upload_dense(view(dst), p_.grid.shape, src, inner_stream_.get());
  }

  void apply_free_surfaces(const View3<float>& f, cudaStream_t s) {
    // Over the halo columns of exchanged faces too: the neighbour's copy of the surface plane
    // must be zeroed here as well (the stencil reads it, it arrived before the zeroing).
    launch_free_surfaces(f, p_.grid.shape, p_.free_surface, halo_span(p_.grid.shape, p_.halo), s);
  }

  AcousticIsoProblem p_;
  const KernelFamily* family_;  // registry entries live for the whole program
  Tile tile_;
  FieldLayout layout_;
  std::vector<pml::Region> regions_;
  ShellSplit split_;
  const KernelFamily* shell_family_;  // one thread per point: the thin shell boxes
  HaloTransport* transport_ = nullptr;
  struct HaloBuffers {
    DeviceBuffer<float> send, recv;
    PinnedBuffer<float> send_host, recv_host;  // host-memory transports
  };
  HaloBuffers halo_[6];
  StepSplitEvents split_events_;  // the timing split of exchanging steps
  Stream inner_stream_, pml_stream_, halo_stream_ = Stream::high_priority();
  SnapshotCopies snapshots_;  // asynchronous snapshots on a copy stream of their own
  Event pml_done_, step_done_, psi_done_;
  DeviceBuffer<float> u_, u_prev_, v2dt2_, aux_;
  DeviceBuffer<float> pair1_, pair2_;  // two-step families: u^{n+1}, u^{n+2} (allocated on first use)
  bool pair_pending_ = false;          // u^{n+2} in pair2_ waits for its slabs and source
  LineSplit lines_;                    // line_split(), fixed for the propagator's life
  DeviceBuffer<float> eta_[3];                        // Minimod PML
  DeviceBuffer<float> psi_[3], zeta_[3], cpml_a_[3], cpml_b_[3];  // CPML
  DeviceBuffer<unsigned> scratch_;
  DeviceReceivers receivers_;
};

}  // namespace

bool two_step_kernel(const AcousticIsoProblem& problem, const std::string& name) {
  for (const auto& f : families())
    if (f.name == name && implements(f, PropagatorKind::acoustic_iso))
      return advances_in_pairs(f, problem, problem.halo.any());
  return false;
}

std::int64_t cuda_memory_plan(const AcousticIsoProblem& problem, int receivers, bool two_step) {
  const auto layout = FieldLayout::make(problem.grid.box(), physics::kRadius);
  const int fields = iso_wavefield_arrays(problem.pml_kind, two_step);
  std::int64_t bytes = fields * layout.elements() * 4;
  for (int a = 0; a < 3; ++a)
    bytes += static_cast<std::int64_t>(problem.damping.eta[a].size() + problem.cpml.a[a].size() +
                                       problem.cpml.b[a].size()) * 4;
  bytes += static_cast<std::int64_t>(receivers) * (kTraceSlots * 4 + 8 * 12 + 4);
  return bytes;
}

std::unique_ptr<Propagator> make_cuda_acoustic_iso(const AcousticIsoProblem& problem,
                                                   const std::string& kernel) {
  if (kernel == "auto") {
    const KernelFamily& start = find_family("gmem", PropagatorKind::acoustic_iso);
    auto prop = std::make_unique<CudaAcousticIso>(problem, start, start.tunables.front());
    tune_in_place(*prop, PropagatorKind::acoustic_iso, problem.grid.shape,
                  layer_key(problem.pml_kind == pml::PmlKind::cpml ? "cpml" : "minimod", problem.pml.lo,
                            problem.pml.hi));
    return prop;
  }
  const auto [family, tile] = parse_kernel(kernel, PropagatorKind::acoustic_iso);
  return std::make_unique<CudaAcousticIso>(problem, *family, tile);
}

}  // namespace minimod::kernels::cuda
