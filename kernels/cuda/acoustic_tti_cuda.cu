// CUDA backend of the acoustic TTI propagator, `gmem` family: one thread per point over the whole
// grid, inner and PML points alike, each calling the shared point update (kernels/tti_point.hpp);
// then source injection into p, free surfaces on p and q, receivers on p or q, all on the GPU.
// The correctness baseline for faster TTI families. Per point it reads p, q (stencils through
// the read-only cache), p_prev, q_prev, (v dt)^2, 1 + 2 delta, 2 (eps - delta) and the 12 tensor
// components at the 73 stencil points (mostly cache hits).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "kernels/cuda/field_kernels.cuh"
#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/resources.hpp"
#include "kernels/cuda/thread_point.cuh"
#include "kernels/tti_point.hpp"
#include "kernels/tti_propagator.hpp"
#include "physics/error.hpp"

namespace minimod::kernels {
namespace cuda {
namespace {

__global__ void __launch_bounds__(256) tti_gmem(TtiStepArgs g, Box3 region) {
  int i, j, k;
  if (!thread_point(region, i, j, k)) return;
  tti_update_point(g, i, j, k);
}

class CudaAcousticTti final : public Propagator {
 public:
  explicit CudaAcousticTti(const AcousticTtiProblem& problem)
      : p_(problem), layout_(physics::FieldLayout::make(problem.grid.box(), physics::kRadius)) {
    const std::int64_t n = layout_.elements();
    check_fits(21 * n * 4);
    static const char* kNames[] = {"p", "p_prev", "q", "q_prev", "aux_p", "aux_q", "v2dt2", "a", "b"};
    DeviceBuffer<float>* fields[] = {&p1_, &p0_, &q1_, &q0_, &aux_p_, &aux_q_, &v2dt2_, &a_, &b_};
    for (int f = 0; f < 9; ++f) *fields[f] = DeviceBuffer<float>(n, kNames[f]);
    for (int c = 0; c < 6; ++c) {
      perp_[c] = DeviceBuffer<float>(n, "tti tensor (perp)");
      axis_[c] = DeviceBuffer<float>(n, "tti tensor (axis)");
    }
    for (auto* b : fields) MM_CUDA_CHECK(cudaMemset(b->data(), 0, static_cast<size_t>(b->bytes())));
    upload_dense(v2dt2_, p_.v2dt2.data());
    upload_dense(a_, p_.a.data());
    upload_dense(b_, p_.b.data());
    {
      std::vector<std::vector<float>> host(12, std::vector<float>(static_cast<size_t>(n), 0.0f));
      float* perp[6];
      float* axis[6];
      for (int c = 0; c < 6; ++c) {
        perp[c] = host[static_cast<size_t>(c)].data();
        axis[c] = host[static_cast<size_t>(c) + 6].data();
      }
      fill_tti_tensors(p_, layout_, perp, axis);
      for (int c = 0; c < 6; ++c) {
        MM_CUDA_CHECK(cudaMemcpy(perp_[c].data(), perp[c], static_cast<size_t>(n) * 4, cudaMemcpyHostToDevice));
        MM_CUDA_CHECK(cudaMemcpy(axis_[c].data(), axis[c], static_cast<size_t>(n) * 4, cudaMemcpyHostToDevice));
      }
    }
    for (int a = 0; a < 3; ++a) {
      const auto& e = p_.damping.eta[a];
      eta_[a] = DeviceBuffer<float>(static_cast<std::int64_t>(std::max<size_t>(e.size(), 1)), "eta profile");
      if (!e.empty())
        MM_CUDA_CHECK(cudaMemcpy(eta_[a].data(), e.data(), e.size() * 4, cudaMemcpyHostToDevice));
    }
    const auto regions = pml::make_regions(p_.grid.shape, p_.pml);
    inner_ = regions.front().is_pml ? Box3{} : regions.front().box;
    scratch_ = DeviceBuffer<unsigned>(2, "health scratch");
    for (auto* v : {&p_.v2dt2, &p_.a, &p_.b, &p_.theta, &p_.phi}) std::vector<float>().swap(*v);
  }

  std::string backend() const override { return "cuda"; }
  std::string kernel() const override { return "gmem"; }
  std::int64_t allocated_bytes() const override { return 21 * layout_.elements() * 4; }

  void set_receivers(const std::vector<NodeWeight>& nodes, int count) override {
    receivers_.set(nodes, count, view(p1_), stream_.get());
  }

  void step(const std::vector<NodeWeight>& source, float amplitude) override {
    const cudaStream_t s = stream_.get();
    TtiStepArgs g{};
    g.p = view(p1_);
    g.q = view(q1_);
    g.p_next = view(p0_);
    g.q_next = view(q0_);
    g.aux_p = view(aux_p_);
    g.aux_q = view(aux_q_);
    g.v2dt2 = view(v2dt2_);
    g.a = view(a_);
    g.b = view(b_);
    for (int c = 0; c < 6; ++c) {
      g.perp[c] = view(perp_[c]);
      g.axis[c] = view(axis_[c]);
    }
    for (int a = 0; a < 3; ++a) {
      g.eta[a] = eta_[a].data();
      g.inv_4h2[a] = p_.inv_4h2[static_cast<size_t>(a)];
    }
    g.stencil = p_.stencil;
    g.inner = inner_;
    const Box3 all = p_.grid.box();
    tti_gmem<<<dim3(ceil_div(all.n.k, 32), ceil_div(all.n.j, 4), ceil_div(all.n.i, 2)), dim3(32, 4, 2), 0, s>>>(g, all);
    MM_CUDA_CHECK_LAUNCH("tti_gmem");
    SourceNodes sn;
    auto flush = [&] {
      if (sn.count == 0) return;
      inject_nodes<<<1, kMaxSourceNodes, 0, s>>>(g.p_next.origin, sn, amplitude);
      MM_CUDA_CHECK_LAUNCH("inject");
      sn.count = 0;
    };
    for (const auto& nw : source) {
      sn.offset[sn.count] = g.p_next.offset(nw.node.i, nw.node.j, nw.node.k);
      sn.weight[sn.count] = nw.weight;
      if (++sn.count == kMaxSourceNodes) flush();
    }
    flush();
    apply_free_surfaces(view(p0_));
    apply_free_surfaces(view(q0_));
    p0_.swap(p1_);
    q0_.swap(q1_);
    receivers_.record(view(p_.record_q ? q1_ : p1_).origin, s);
  }

  void take_traces(std::vector<float>& out) override { receivers_.take(out, stream_.get()); }

  void read_field(const std::string& name, const Box3& box, const Index3& stride, float* out) override {
    const Index3 on{(box.n.i + stride.i - 1) / stride.i, (box.n.j + stride.j - 1) / stride.j,
                    (box.n.k + stride.k - 1) / stride.k};
    const std::int64_t count = static_cast<std::int64_t>(on.i) * on.j * on.k;
    if (count == 0) return;
    DeviceBuffer<float> dense(count, "field copy");
    const cudaStream_t s = stream_.get();
    gather<<<dim3(ceil_div(on.k, 128), on.j, on.i), 128, 0, s>>>(view(field(name)), box, stride, on, dense.data());
    MM_CUDA_CHECK_LAUNCH("gather");
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
    MM_CUDA_CHECK(cudaStreamSynchronize(s));
    DeviceBuffer<float> dense(box.points(), "field upload");
    MM_CUDA_CHECK(cudaMemcpy(dense.data(), data, static_cast<size_t>(box.points()) * 4, cudaMemcpyHostToDevice));
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
    return out;  // the location is not searched for on the GPU
  }

  void set_halo_transport(HaloTransport* transport) override {
    if (transport != nullptr)
      throw ConfigError("config error: propagator: acoustic_tti does not run distributed yet "
                        "(run it on one rank)");
  }

 private:
  View3<float> view(const DeviceBuffer<float>& b) const { return layout_.view(b.data()); }
  const DeviceBuffer<float>& field(const std::string& name) const {
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
    size_t free = 0, total = 0;
    MM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    const std::int64_t margin = 256ll << 20;  // context, streams, workspaces
    if (need + margin > static_cast<std::int64_t>(free))
      throw ConfigError("config error: grid.shape: this acoustic_tti run needs " + gib(need) +
                        " on the GPU, " + gib(static_cast<std::int64_t>(free)) +
                        " free: use a smaller grid (TTI does not run distributed yet)");
  }

  void upload_dense(DeviceBuffer<float>& dst, const float* src) {
    const Index3 n = p_.grid.shape;
    const auto v = view(dst);
    for (int i = 0; i < n.i; ++i)
      MM_CUDA_CHECK(cudaMemcpy2D(v.ptr(i, 0, 0), static_cast<size_t>(v.sy) * 4,
                                 src + static_cast<size_t>(i) * n.j * n.k, static_cast<size_t>(n.k) * 4,
                                 static_cast<size_t>(n.k) * 4, static_cast<size_t>(n.j), cudaMemcpyHostToDevice));
  }

  void apply_free_surfaces(const View3<float>& f) {
    const Index3 n = p_.grid.shape;
    const Box3 span{{0, 0, 0}, n};
    for (int face = 0; face < 6; ++face) {
      if (!p_.free_surface[static_cast<size_t>(face)]) continue;
      const int axis = face / 2, a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
      const bool hi = face % 2;
      free_surface<<<dim3(ceil_div(n[a2], 128), n[a1]), 128, 0, stream_.get()>>>(f, span, axis, hi ? n[axis] - 1 : 0,
                                                                                hi ? 1 : -1);
      MM_CUDA_CHECK_LAUNCH("free_surface");
    }
  }

  AcousticTtiProblem p_;
  physics::FieldLayout layout_;
  Stream stream_;
  DeviceBuffer<float> p0_, p1_, q0_, q1_, aux_p_, aux_q_, v2dt2_, a_, b_, perp_[6], axis_[6], eta_[3];
  DeviceBuffer<unsigned> scratch_;
  Box3 inner_;
  DeviceReceivers receivers_;
};

}  // namespace
}  // namespace cuda

std::unique_ptr<Propagator> make_cuda_acoustic_tti(const AcousticTtiProblem& problem) {
  return std::make_unique<cuda::CudaAcousticTti>(problem);
}

}  // namespace minimod::kernels
