// Denormal floats on x86 are ~100x slower; the CPU propagators flush them (see below).
#pragma once
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace minimod::kernels {

/// Flush denormals to zero on every OpenMP thread. Far ahead of a wavefront the 8th-order stencil
/// leaves values below 1e-38; x86 handles them ~100x slower, which made the CPU backend 4x slower.
/// The values flushed are below any physical meaning (the GPU keeps them: differences < 1e-38).
inline void flush_denormals_to_zero() {
#if defined(__SSE__)
#pragma omp parallel
  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ (bit 15) and DAZ (bit 6)
#endif
}

}  // namespace minimod::kernels
