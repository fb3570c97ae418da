// PML regions on the GPU: one thread per point, eta rebuilt from the 1D profiles (3 tiny arrays
// that stay in cache), so a PML point reads u (stencil), u_prev, v2dt2 and aux: 24 B + writes.
#include "kernels/cuda/pml_kernel.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/thread_point.cuh"
#include "pml/pml_update.hpp"

namespace minimod::kernels::cuda {
namespace {

constexpr int kBx = 32, kBy = 4, kBz = 2;

__global__ void __launch_bounds__(kBx* kBy* kBz) pml_iso(PmlStepArgs a) {
  int i, j, k;
  if (!thread_point(a.region, i, j, k)) return;
  const float* p = a.u.ptr(i, j, k);
  const std::int64_t sx = a.u.sx, sy = a.u.sy;
  const auto at = [p, sx, sy](int di, int dj, int dk) { return __ldg(p + di * sx + dj * sy + dk); };
  const float* ex = a.eta_x + 1;
  const float* ey = a.eta_y + 1;
  const float* ez = a.eta_z + 1;
  const float eta = ex[i] + ey[j] + ez[k];
  const float lap = physics::laplacian8(at, a.laplacian);
  float* aux = a.aux.ptr(i, j, k);
  const float aux_old = *aux;
  float* out = a.u_next.ptr(i, j, k);
  *out = pml::pml_u_next(*out, at(0, 0, 0), __ldg(a.v2dt2.ptr(i, j, k)), lap, aux_old, eta);
  const float grad = pml::pml_gradient_term(ex[i + 1], ex[i - 1], at(1, 0, 0), at(-1, 0, 0), a.inv_4h2[0]) +
                     pml::pml_gradient_term(ey[j + 1], ey[j - 1], at(0, 1, 0), at(0, -1, 0), a.inv_4h2[1]) +
                     pml::pml_gradient_term(ez[k + 1], ez[k - 1], at(0, 0, 1), at(0, 0, -1), a.inv_4h2[2]);
  *aux = pml::pml_aux_next(aux_old, eta, grad);
}

template <int A>
__device__ MM_FORCE_INLINE void psi_axis(const PmlStepArgs& a, int i, int j, int k, int along,
                                         const float* p, std::int64_t sx, std::int64_t sy) {
  const float b = a.b[A][along];
  if (b == 0.0f) return;  // psi_A stays 0 outside axis A's PML
  const auto at = [p, sx, sy](int di, int dj, int dk) { return __ldg(p + di * sx + dj * sy + dk); };
  float* psi = a.psi[A].ptr(i, j, k);
  *psi = pml::cpml_psi_next<A>(*psi, a.a[A][along], b, at, a.derivatives);
}

__global__ void __launch_bounds__(kBx* kBy* kBz) cpml_psi(PmlStepArgs a) {
  int i, j, k;
  if (!thread_point(a.region, i, j, k)) return;
  const float* p = a.u.ptr(i, j, k);
  psi_axis<0>(a, i, j, k, i, p, a.u.sx, a.u.sy);
  psi_axis<1>(a, i, j, k, j, p, a.u.sx, a.u.sy);
  psi_axis<2>(a, i, j, k, k, p, a.u.sx, a.u.sy);
}

template <int A, class AtU>
__device__ MM_FORCE_INLINE float cpml_term(const PmlStepArgs& a, const AtU& at_u, int i, int j,
                                           int k, int along) {
  const float b = a.b[A][along];
  if (b == 0.0f) return pml::second_derivative8<A>(at_u, a.derivatives);  // = the CPU's result
  const float* q = a.psi[A].ptr(i, j, k);
  const std::int64_t sx = a.u.sx, sy = a.u.sy;
  const auto at_psi = [q, sx, sy](int di, int dj, int dk) { return q[di * sx + dj * sy + dk]; };
  float* zeta = a.zeta[A].ptr(i, j, k);
  float z = *zeta;
  const float term = pml::cpml_axis_term<A>(at_u, at_psi, a.a[A][along], b, z, a.derivatives);
  *zeta = z;
  return term;
}

__global__ void __launch_bounds__(kBx* kBy* kBz) cpml_update(PmlStepArgs a) {
  int i, j, k;
  if (!thread_point(a.region, i, j, k)) return;
  const float* p = a.u.ptr(i, j, k);
  const std::int64_t sx = a.u.sx, sy = a.u.sy;
  const auto at = [p, sx, sy](int di, int dj, int dk) { return __ldg(p + di * sx + dj * sy + dk); };
  const float lap = cpml_term<0>(a, at, i, j, k, i) + cpml_term<1>(a, at, i, j, k, j) +
                    cpml_term<2>(a, at, i, j, k, k);
  float* out = a.u_next.ptr(i, j, k);
  *out = physics::leapfrog(*out, at(0, 0, 0), __ldg(a.v2dt2.ptr(i, j, k)), lap);
}

dim3 pml_grid(const PmlStepArgs& a) {
  return dim3(ceil_div(a.region.n.k, kBx), ceil_div(a.region.n.j, kBy), ceil_div(a.region.n.i, kBz));
}

}  // namespace

void launch_cpml_psi(const PmlStepArgs& a, cudaStream_t s) {
  cpml_psi<<<pml_grid(a), dim3(kBx, kBy, kBz), 0, s>>>(a);
}

void launch_cpml(const PmlStepArgs& a, cudaStream_t s) {
  cpml_update<<<pml_grid(a), dim3(kBx, kBy, kBz), 0, s>>>(a);
}

void launch_pml(const PmlStepArgs& a, cudaStream_t s) {
  pml_iso<<<pml_grid(a), dim3(kBx, kBy, kBz), 0, s>>>(a);
}

}  // namespace minimod::kernels::cuda
