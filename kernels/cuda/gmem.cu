// gmem: one thread per point, every stencil read from global memory (through the read-only
// cache); the correctness baseline for every faster family (Sai et al. 2020 §III-A, "gmem").
// threadIdx.x runs along k (contiguous) so a warp reads whole rows. For acoustic_tti it is also
// the PML-slab kernel of every TTI family: the shared point update (kernels/tti_point.hpp) takes
// the damped branch outside args.inner.
#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/thread_point.cuh"
#include "physics/stencil.hpp"

namespace minimod::kernels::cuda {
namespace {

__global__ void __launch_bounds__(512) gmem_iso(IsoStepArgs a) {
  int i, j, k;
  if (!thread_point(a.region, i, j, k)) return;
  const float* p = a.u.ptr(i, j, k);
  const std::int64_t sx = a.u.sx, sy = a.u.sy;
  const auto at = [p, sx, sy](int di, int dj, int dk) { return __ldg(p + di * sx + dj * sy + dk); };
  float* out = a.u_next.ptr(i, j, k);
  *out = physics::leapfrog(*out, __ldg(p), __ldg(a.v2dt2.ptr(i, j, k)),
                           physics::laplacian8(at, a.laplacian));
}

void launch(const IsoStepArgs& a, const Tile& t, cudaStream_t s) {
  const dim3 block(t.x, t.y, t.z);
  const dim3 grid(ceil_div(a.region.n.k, t.x), ceil_div(a.region.n.j, t.y),
                  ceil_div(a.region.n.i, t.z));
  gmem_iso<<<grid, block, 0, s>>>(a);
}

__global__ void __launch_bounds__(256) gmem_tti(TtiStepArgs g, physics::Box3 region) {
  int i, j, k;
  if (!thread_point(region, i, j, k)) return;
  tti_update_point(g, i, j, k);
}

void launch_tti(const TtiStepArgs& g, const physics::Box3& region, const Tile& t, cudaStream_t s) {
  if (region.empty()) return;
  const dim3 grid(ceil_div(region.n.k, t.x), ceil_div(region.n.j, t.y), ceil_div(region.n.i, t.z));
  gmem_tti<<<grid, dim3(t.x, t.y, t.z), 0, s>>>(g, region);
}

cudaFuncAttributes tti_attributes(const Tile&) {
  cudaFuncAttributes a{};
  cudaFuncGetAttributes(&a, gmem_tti);
  return a;
}

cudaFuncAttributes attributes(const Tile&) {
  cudaFuncAttributes a{};
  cudaFuncGetAttributes(&a, gmem_iso);
  return a;
}

KernelFamily family() {
  KernelFamily f;
  f.name = "gmem";
  f.propagators = {PropagatorKind::acoustic_iso, PropagatorKind::acoustic_tti};
  f.tunables = {{32, 4, 4}, {64, 4, 2}, {32, 8, 2}, {128, 2, 2}};
  f.launch = &launch;
  f.description = "one thread per point, global memory";
  f.attributes = &attributes;
  f.launch_tti = &launch_tti;
  f.tti_tunables = {{32, 4, 2}, {32, 8, 1}};  // 256 threads (its launch bound)
  f.tti_attributes = &tti_attributes;
  return f;
}

const bool kRegistered = register_family(family());

}  // namespace
}  // namespace minimod::kernels::cuda
