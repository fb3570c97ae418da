// The CUDA PML region kernels: Minimod's damped equation (pml/pml_update.hpp), streamed along i
// with all slabs in one launch, and the CPML (pml/cpml.hpp), one thread per point.
#pragma once
#include <cuda_runtime_api.h>

#include <vector>

#include "physics/stencil.hpp"
#include "physics/view3.hpp"
#include "pml/cpml.hpp"

namespace minimod::kernels::cuda {

struct PmlStepArgs {
  physics::Box3 region;
  physics::View3<const float> u;
  physics::View3<float> u_next;  // holds u_prev on entry
  physics::View3<const float> v2dt2;
  // PmlKind::minimod
  /// u_prev read from here instead of u_next when set (origin != nullptr; the same layout): the
  /// steps of a two-step family write u^{n+1} next to u^{n-1}, not over it.
  physics::View3<const float> u_prev;
  physics::View3<float> aux;     // PML auxiliary field, updated in place
  physics::LaplacianCoeffs laplacian;
  const float* eta_x;  // eta_x[i + 1], i = -1 .. nx (1D profiles: eta = eta_x + eta_y + eta_z)
  const float* eta_y;
  const float* eta_z;
  float inv_4h2[3];
  /// Points of the given boxes inside this box are inner points, not the layer's: they take the
  /// plain leapfrog and their aux stays. Empty: every point is the layer's. A whole-grid step or
  /// pair gives the layer kernel the inner columns up to the next whole DRAM lines of the rows
  /// (acoustic_iso_cuda.cu, line_split).
  physics::Box3 undamped;
  /// Also write zeros into the k halo cells of the rows (pml_stream: u_next and aux; cpml_stream:
  /// u_next), so that a row's first and last 32-B sectors are written whole: only where that halo
  /// is the grid's zero boundary (one subdomain, no free surface on a z face), never an exchanged
  /// face.
  bool zero_k_halo = false;
  // PmlKind::cpml
  physics::View3<float> psi[3];
  physics::View3<float> zeta[3];
  const float* a[3];  // a_d[i], b_d[i] profiles
  const float* b[3];
  pml::AxisDerivatives derivatives;
};

/// Minimod PML update on args.region.
void launch_pml(const PmlStepArgs& args, cudaStream_t stream);
/// Minimod PML update on every box of `boxes` (args.region is ignored), in one launch.
void launch_pml(const PmlStepArgs& args, const std::vector<physics::Box3>& boxes,
                cudaStream_t stream);
/// CPML first pass: psi_d from u^n on the region; run on every PML region before launch_cpml.
void launch_cpml_psi(const PmlStepArgs& args, cudaStream_t stream);
/// CPML second pass: u_next and zeta_d.
void launch_cpml(const PmlStepArgs& args, cudaStream_t stream);
/// CPML first pass on every box of `boxes` (args.region is ignored): one launch streaming along i,
/// or with MINIMOD_CPML_POINT=1 one point kernel per box.
void launch_cpml_psi(const PmlStepArgs& args, const std::vector<physics::Box3>& boxes,
                     cudaStream_t stream);
/// CPML second pass on every box of `boxes`, after the first pass on all of them; as above.
void launch_cpml(const PmlStepArgs& args, const std::vector<physics::Box3>& boxes,
                 cudaStream_t stream);

}  // namespace minimod::kernels::cuda
