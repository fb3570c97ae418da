// The u column of a thread that streams along i with its plane staged in shared memory
// (streaming.cu, and pml.cu's pml_stream and streamed CPML passes; Micikevicius 2009): u(i-4 .. i+4)
// of its own (j, k) in a register queue, and, for a thread at its tile's edge, the halo cell R
// away in k or j that it stages for the tile; the queue's head and the halo cells are loaded one
// plane ahead. Per plane: advance() (the queue shifts in the head; the halo cells loaded last
// become current), prefetch() of plane i+1 where there is one, stage() of plane i between the two
// block barriers. Host and device (block_model.cuh's emulations run it too).
#pragma once
#include <cstdint>

#include "kernels/tti_point.hpp"  // load()
#include "physics/host_device.hpp"
#include "physics/stencil.hpp"

namespace minimod::kernels::cuda {

struct ColumnQueue {
  static constexpr int R = physics::kRadius;
  // Which cells the thread reads (constant along its column): its own, and the halo cell at
  // k - R, k + R, j - R or j + R that it stages.
  bool has_u, klo, khi, jlo, jhi;
  std::int64_t sx, sy4;     // plane stride and R rows, in elements
  float q[2 * R + 1];       // q[R + d] = u(i + d)
  float next_head = 0.0f;   // u(i + 1 + R), the head of the next plane
  float next_klo = 0.0f, next_khi = 0.0f, next_jlo = 0.0f, next_jhi = 0.0f;  // halo cells, next plane
  float klo_u = 0.0f, khi_u = 0.0f, jlo_u = 0.0f, jhi_u = 0.0f;              // halo cells, plane i

  /// `p` points at u(i_begin, j, k): fills the queue with u(i_begin-5 .. i_begin+3) (q[0] is
  /// shifted out before it is read) and loads plane i_begin's head and halo cells.
  MM_HOST_DEVICE MM_FORCE_INLINE void fill(const float* p) {
    q[0] = 0.0f;
#pragma unroll
    for (int m = 1; m <= 2 * R; ++m) q[m] = has_u ? load(p + (m - R - 1) * sx) : 0.0f;
    prefetch(p);
  }
  /// The next plane: the head enters the queue, its halo cells become current.
  MM_HOST_DEVICE MM_FORCE_INLINE void advance() {
#pragma unroll
    for (int m = 0; m < 2 * R; ++m) q[m] = q[m + 1];
    q[2 * R] = next_head;
    klo_u = next_klo, khi_u = next_khi, jlo_u = next_jlo, jhi_u = next_jhi;
  }
  /// `p` points at u(i + 1, j, k): loads that plane's head and halo cells.
  MM_HOST_DEVICE MM_FORCE_INLINE void prefetch(const float* p) {
    next_head = has_u ? load(p + R * sx) : 0.0f;
    next_klo = klo ? load(p - R) : 0.0f;
    next_khi = khi ? load(p + R) : 0.0f;
    next_jlo = jlo ? load(p - sy4) : 0.0f;
    next_jhi = jhi ? load(p + sy4) : 0.0f;
  }
  /// Stores plane i's cells into the shared plane: `own` is this thread's cell, `pitch` the row
  /// pitch (j step) in floats.
  MM_HOST_DEVICE MM_FORCE_INLINE void stage(float* own, int pitch) const {
    if (has_u) own[0] = q[R];
    if (klo) own[-R] = klo_u;
    if (khi) own[R] = khi_u;
    if (jlo) own[-R * pitch] = jlo_u;
    if (jhi) own[R * pitch] = jhi_u;
  }
};

}  // namespace minimod::kernels::cuda
