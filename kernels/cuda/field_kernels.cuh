// Small kernels every CUDA propagator uses on its fields: source injection, receiver sampling,
// free surfaces, the health check, copies between fields and dense arrays (snapshots, halos), and
// the receivers' device-side trace buffer.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/resources.hpp"
#include "kernels/halo.hpp"
#include "kernels/propagator.hpp"
#include "physics/stencil.hpp"
#include "physics/view3.hpp"

namespace minimod::kernels::cuda {
namespace {

using physics::Box3;
using physics::Index3;
using physics::View3;

constexpr int kTraceSlots = 256;  // time steps of receiver samples kept on the GPU between copies
constexpr int kMaxSourceNodes = 8;

struct SourceNodes {
  int count = 0;
  std::int64_t offset[kMaxSourceNodes];
  float weight[kMaxSourceNodes];
};

__global__ void inject_nodes(float* field, SourceNodes s, float amplitude) {
  const int n = static_cast<int>(threadIdx.x);
  if (n < s.count) field[s.offset[n]] += s.weight[n] * amplitude;
}

struct SourcePoints {
  int count = 0;
  Index3 node[kMaxSourceNodes];
  float weight[kMaxSourceNodes];
};

/// Calls launch(batch) for the nodes of `source` that `take` accepts, kMaxSourceNodes at a time.
template <class Take, class Launch>
void source_batches(const std::vector<NodeWeight>& source, const Take& take, const Launch& launch) {
  SourcePoints b;
  for (const auto& nw : source) {
    if (!take(nw.node)) continue;
    b.node[b.count] = nw.node;
    b.weight[b.count] = nw.weight;
    if (++b.count == kMaxSourceNodes) {
      launch(b);
      b.count = 0;
    }
  }
  if (b.count > 0) launch(b);
}

/// Adds amplitude x weight at the source nodes of `source` that lie inside `part` to `field`, on
/// `stream` (kMaxSourceNodes per launch).
inline void inject_sources(const View3<float>& field, const std::vector<NodeWeight>& source, const Box3& part,
                           float amplitude, cudaStream_t stream) {
  const auto inside = [&part](const Index3& p) { return part.contains(p.i, p.j, p.k); };
  source_batches(source, inside, [&](const SourcePoints& b) {
    SourceNodes sn;
    sn.count = b.count;
    for (int n = 0; n < b.count; ++n) {
      sn.offset[n] = field.offset(b.node[n].i, b.node[n].j, b.node[n].k);
      sn.weight[n] = b.weight[n];
    }
    inject_nodes<<<1, kMaxSourceNodes, 0, stream>>>(field.origin, sn, amplitude);
    MM_CUDA_CHECK_LAUNCH("inject");
  });
}

/// A source injected into u^{n+1} after a two-step launch (KernelFamily::launch_pair) computed
/// u^{n+2} on `box` without it: adds its share of u^{n+2}, amplitude x weight x d u^{n+2} / d u^{n+1}
/// (the leapfrog of a unit impulse), on the box's points of its 25-point star. Nodes one after
/// another, one thread per star point: no two threads add to one point at once.
__global__ void add_source_to_second_step(View3<float> u2, View3<const float> v2dt2, Box3 box,
                                          SourcePoints s, float amplitude, physics::LaplacianCoeffs c) {
  const int t = static_cast<int>(threadIdx.x);  // 0: centre; 1 + 8 (axis) + (0..7): the arms
  for (int n = 0; n < s.count; ++n) {
    const Index3 p = s.node[n];
    Index3 q = p;
    if (t > 0 && t <= 24) {
      const int axis = (t - 1) / 8, m = (t - 1) % 8;
      q[axis] += m < 4 ? -(m + 1) : (m - 3);
    }
    if (t <= 24 && box.contains(q.i, q.j, q.k)) {
      const auto delta = [&](int di, int dj, int dk) {
        return (q.i + di == p.i && q.j + dj == p.j && q.k + dk == p.k) ? 1.0f : 0.0f;
      };
      const float d = physics::leapfrog(0.0f, delta(0, 0, 0), v2dt2(q.i, q.j, q.k), physics::laplacian8(delta, c));
      u2(q.i, q.j, q.k) += s.weight[n] * amplitude * d;
    }
    __syncthreads();
  }
}

/// add_source_to_second_step for the nodes of `source` (all of them: a node outside `box` still
/// reaches into it).
inline void add_sources_to_second_step(const View3<float>& u2, const View3<const float>& v2dt2,
                                       const Box3& box, const std::vector<NodeWeight>& source,
                                       float amplitude, const physics::LaplacianCoeffs& c,
                                       cudaStream_t stream) {
  source_batches(source, [](const Index3&) { return true; }, [&](const SourcePoints& b) {
    add_source_to_second_step<<<1, 32, 0, stream>>>(u2, v2dt2, box, b, amplitude, c);
    MM_CUDA_CHECK_LAUNCH("source, second step");
  });
}

/// One thread per receiver: sum of its nodes' weighted values (CSR: first[r] .. first[r + 1]).
__global__ void sample(const float* field, const std::int64_t* offset, const float* weight,
                       const int* first, int receivers, float* out) {
  const int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r >= receivers) return;
  float acc = 0;
  for (int e = first[r]; e < first[r + 1]; ++e) acc = accumulate_sample(acc, weight[e], field[offset[e]]);
  out[r] = acc;
}

/// Free surface on plane `s` of `axis`: u = 0 there, odd mirror into the halo (towards `dir`), on
/// the columns of `span` (the own points plus the halo planes of exchanged faces).
__global__ void free_surface(View3<float> f, Box3 span, int axis, int s, int dir) {
  const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
  const int x2 = span.lo[a2] + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int x1 = span.lo[a1] + static_cast<int>(blockIdx.y);
  if (x2 >= span.hi()[a2] || x1 >= span.hi()[a1]) return;
  physics::mirror_free_surface(f, axis, x1, x2, s, dir);
}

/// Max |u| (as ordered int bits) and a non-finite flag over the interior.
__global__ void max_abs(View3<const float> f, Index3 n, unsigned* max_bits, unsigned* bad) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = static_cast<int>(blockIdx.y), i = static_cast<int>(blockIdx.z);
  float m = 0;
  bool nonfinite = false;
  for (int kk = k; kk < n.k; kk += static_cast<int>(blockDim.x * gridDim.x)) {
    const float a = fabsf(f(i, j, kk));
    if (!isfinite(a)) nonfinite = true;
    else m = fmaxf(m, a);
  }
  if (nonfinite) atomicOr(bad, 1u);
  if (m > 0) atomicMax(max_bits, __float_as_uint(m));
}

/// Where a field that health() found broken is broken: the first point of a dense [i][j][k] copy
/// of the grid (shape n) that is non-finite or at least `max_abs` (> 0: a field of zeros and
/// non-finite values is broken only at the latter); false when there is none.
inline bool locate_blow_up(const std::vector<float>& all, const Index3& n, float max_abs, Index3& where) {
  for (size_t o = 0; o < all.size(); ++o) {
    if (!std::isfinite(all[o]) || (max_abs > 0 && std::fabs(all[o]) >= max_abs)) {
      where = {static_cast<int>(o / (static_cast<size_t>(n.k) * n.j)), static_cast<int>((o / n.k) % n.j),
               static_cast<int>(o % n.k)};
      return true;
    }
  }
  return false;
}

/// Scatter a dense array [i][j][k] into a box (the halo unpack).
__global__ void scatter(View3<float> f, Box3 box, const float* in) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = static_cast<int>(blockIdx.y), i = static_cast<int>(blockIdx.z);
  if (k >= box.n.k) return;
  f(box.lo.i + i, box.lo.j + j, box.lo.k + k) =
      in[(static_cast<std::int64_t>(i) * box.n.j + j) * box.n.k + k];
}

/// Between a box of a field and a dense [i][j][k] array (halo pack and unpack): one thread per
/// point over the flattened box, so thin faces (4 points along k) keep every thread busy.
__global__ void copy_box(View3<float> f, Box3 box, float* dense, bool to_dense) {
  const std::int64_t n = box.points();
  for (std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; t < n;
       t += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const int k = static_cast<int>(t % box.n.k);
    const std::int64_t r = t / box.n.k;
    const int j = static_cast<int>(r % box.n.j), i = static_cast<int>(r / box.n.j);
    float& x = f(box.lo.i + i, box.lo.j + j, box.lo.k + k);
    if (to_dense) dense[t] = x;
    else x = dense[t];
  }
}

void launch_copy_box(View3<float> f, const Box3& box, float* dense, bool to_dense, cudaStream_t s) {
  const std::int64_t blocks = std::min<std::int64_t>(ceil_div(box.points(), 256), 8192);
  copy_box<<<static_cast<unsigned>(std::max<std::int64_t>(blocks, 1)), 256, 0, s>>>(f, box, dense, to_dense);
  MM_CUDA_CHECK_LAUNCH(to_dense ? "halo pack" : "halo unpack");
}

/// Gather a strided box into a dense array [i][j][k].
__global__ void gather(View3<const float> f, Box3 box, Index3 stride, Index3 out_n, float* out) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = static_cast<int>(blockIdx.y), i = static_cast<int>(blockIdx.z);
  if (k >= out_n.k) return;
  out[(static_cast<std::int64_t>(i) * out_n.j + j) * out_n.k + k] =
      f(box.lo.i + i * stride.i, box.lo.j + j * stride.j, box.lo.k + k * stride.k);
}

/// Every stride-th point of `box` of `f` (physics::strided_shape of them) into the dense device
/// array `out` [i][j][k], on stream s; nothing when there are none.
inline void launch_gather(const View3<float>& f, const Box3& box, const Index3& stride, float* out, cudaStream_t s) {
  const Index3 on = physics::strided_shape(box, stride);
  if (on.i <= 0 || on.j <= 0 || on.k <= 0) return;
  gather<<<dim3(ceil_div(on.k, 128), on.j, on.i), 128, 0, s>>>(f, box, stride, on, out);
  MM_CUDA_CHECK_LAUNCH("gather");
}


/// A dense [i][j][k] host array of the field's interior shape `n` into `f`, on stream `s`
/// (pageable memory: the copy is staged before this returns; it lands in stream order).
inline void upload_dense(const View3<float>& f, const Index3& n, const float* src, cudaStream_t s) {
  for (int i = 0; i < n.i; ++i)
    MM_CUDA_CHECK(cudaMemcpy2DAsync(f.ptr(i, 0, 0), static_cast<size_t>(f.sy) * 4,
                                    src + static_cast<size_t>(i) * n.j * n.k, static_cast<size_t>(n.k) * 4,
                                    static_cast<size_t>(n.k) * 4, static_cast<size_t>(n.j),
                                    cudaMemcpyHostToDevice, s));
}

/// The free-surface mirror on every flagged face of a field of interior shape `n`, over the
/// columns of `span` (own columns and the halo columns of exchanged faces: kernels/halo.hpp,
/// halo_span), on stream `s`.
inline void launch_free_surfaces(const View3<float>& f, const Index3& n, const std::array<bool, 6>& free,
                                 const Box3& span, cudaStream_t s) {
  for (int face = 0; face < 6; ++face) {
    if (!free[static_cast<size_t>(face)]) continue;
    const int axis = face / 2, a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
    const bool hi = face % 2;
    free_surface<<<dim3(ceil_div(span.n[a2], 128), span.n[a1]), 128, 0, s>>>(f, span, axis, hi ? n[axis] - 1 : 0,
                                                                            hi ? 1 : -1);
    MM_CUDA_CHECK_LAUNCH("free_surface");
  }
}

/// A smooth non-zero field for timing the `auto` candidates (zeros could flatter a kernel):
/// amplitude 1e-3 times a product of sines along each axis; the halo is left alone.
__global__ void fill_smooth(View3<float> f, Index3 n, float wi, float wj, float wk, float phase) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = static_cast<int>(blockIdx.y), i = static_cast<int>(blockIdx.z);
  if (k >= n.k) return;
  f(i, j, k) = 1e-3f * sinf(wi * i + phase) * sinf(wj * j + 2 * phase) * sinf(wk * k + 3 * phase);
}

/// fill_smooth on each field (different waves, the same for every run so timings compare); waits.
inline void fill_smooth_fields(std::initializer_list<View3<float>> fields, const Index3& n, cudaStream_t s) {
  std::mt19937 rng(20240611u);
  std::uniform_real_distribution<float> w(0.05f, 0.3f), phase(0.0f, 6.2831853f);
  for (const auto& f : fields) {
    const float wi = w(rng), wj = w(rng), wk = w(rng), ph = phase(rng);
    fill_smooth<<<dim3(ceil_div(n.k, 128), n.j, n.i), 128, 0, s>>>(f, n, wi, wj, wk, ph);
    MM_CUDA_CHECK_LAUNCH("fill_smooth");
  }
  MM_CUDA_CHECK(cudaStreamSynchronize(s));
}

/// Receivers on the GPU: their nodes as CSR (offsets, weights, first node per receiver), samples
/// kept for kTraceSlots steps on the device, then copied out in one block.
class DeviceReceivers {
 public:
  /// `field` gives the layout the node offsets refer to.
  void set(const std::vector<NodeWeight>& nodes, int count, const View3<float>& field, cudaStream_t s) {
    drain(s);
    count_ = count;
    if (count == 0) return;
    std::vector<NodeWeight> sorted = nodes;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const NodeWeight& a, const NodeWeight& b) { return a.point < b.point; });
    std::vector<std::int64_t> offset(sorted.size());
    std::vector<float> weight(sorted.size());
    std::vector<int> first(static_cast<size_t>(count) + 1, 0);
    for (size_t e = 0; e < sorted.size(); ++e) {
      offset[e] = field.offset(sorted[e].node.i, sorted[e].node.j, sorted[e].node.k);
      weight[e] = sorted[e].weight;
      ++first[static_cast<size_t>(sorted[e].point) + 1];
    }
    for (int r = 0; r < count; ++r) first[static_cast<size_t>(r) + 1] += first[static_cast<size_t>(r)];
    offset_ = DeviceBuffer<std::int64_t>(static_cast<std::int64_t>(offset.size()), "receiver offsets");
    weight_ = DeviceBuffer<float>(static_cast<std::int64_t>(weight.size()), "receiver weights");
    first_ = DeviceBuffer<int>(count + 1, "receiver index");
    traces_ = DeviceBuffer<float>(static_cast<std::int64_t>(kTraceSlots) * count, "receiver traces");
    // On `s`, which samples: a legacy-stream copy from pageable memory may return before it lands.
    MM_CUDA_CHECK(cudaMemcpyAsync(offset_.data(), offset.data(), offset.size() * 8, cudaMemcpyHostToDevice, s));
    MM_CUDA_CHECK(cudaMemcpyAsync(weight_.data(), weight.data(), weight.size() * 4, cudaMemcpyHostToDevice, s));
    MM_CUDA_CHECK(cudaMemcpyAsync(first_.data(), first.data(), first.size() * 4, cudaMemcpyHostToDevice, s));
    MM_CUDA_CHECK(cudaStreamSynchronize(s));
  }

  /// Samples `field` (the current time level) into the next slot, in stream order.
  void record(const float* field, cudaStream_t s) {
    if (count_ == 0) return;
    sample<<<ceil_div(count_, 128), 128, 0, s>>>(field, offset_.data(), weight_.data(), first_.data(), count_,
                                                 traces_.data() + static_cast<std::int64_t>(slot_) * count_);
    MM_CUDA_CHECK_LAUNCH("sample");
    if (++slot_ == kTraceSlots) drain(s);
  }

  /// All samples so far, [sample][receiver], and forget them.
  void take(std::vector<float>& out, cudaStream_t s) {
    drain(s);
    out.swap(host_);
    host_.clear();
  }

  /// Forget pending samples (the propagator went back to rest).
  void clear() {
    slot_ = 0;
    host_.clear();
  }

  std::int64_t bytes() const { return offset_.bytes() + weight_.bytes() + first_.bytes() + traces_.bytes(); }

 private:
  void drain(cudaStream_t s) {
    if (slot_ == 0 || count_ == 0) return;
    const size_t base = host_.size();
    host_.resize(base + static_cast<size_t>(slot_) * count_);
    MM_CUDA_CHECK(cudaMemcpyAsync(host_.data() + base, traces_.data(), static_cast<size_t>(slot_) * count_ * 4,
                                  cudaMemcpyDeviceToHost, s));
    MM_CUDA_CHECK(cudaStreamSynchronize(s));
    slot_ = 0;
  }

  DeviceBuffer<std::int64_t> offset_;
  DeviceBuffer<float> weight_;
  DeviceBuffer<int> first_;
  DeviceBuffer<float> traces_;
  int count_ = 0, slot_ = 0;
  std::vector<float> host_;
};

}  // namespace
}  // namespace minimod::kernels::cuda
