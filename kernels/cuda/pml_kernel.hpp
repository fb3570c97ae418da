// The CUDA PML region kernel (Minimod's formulation, pml/pml_update.hpp).
#pragma once
#include <cuda_runtime_api.h>

#include "physics/stencil.hpp"
#include "physics/view3.hpp"

namespace minimod::kernels::cuda {

struct PmlStepArgs {
  physics::Box3 region;
  physics::View3<const float> u;
  physics::View3<float> u_next;  // holds u_prev on entry
  physics::View3<const float> v2dt2;
  physics::View3<float> aux;     // PML auxiliary field, updated in place
  physics::LaplacianCoeffs laplacian;
  const float* eta_x;  // eta_x[i + 1], i = -1 .. nx (1D profiles: eta = eta_x + eta_y + eta_z)
  const float* eta_y;
  const float* eta_z;
  float inv_4h2[3];
};

void launch_pml(const PmlStepArgs& args, cudaStream_t stream);

}  // namespace minimod::kernels::cuda
