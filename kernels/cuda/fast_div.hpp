// Division by a divisor fixed at launch: n / d as one 64-bit multiply and a shift, for n < 2^24
// and 1 <= d < 2^16 (M = ceil(2^40 / d); the error n (M - 2^40 / d) / 2^40 < 2^-16 stays below
// 1/d, so the floor is exact; tests/gpu/fast_div_test.cpp checks every divisor). The streamed
// slab kernels (pml.cu) split their block and thread indices with it: the slab lookup and four
// signed divisions with their sign fixes were ~250 of the ~480 instructions a warp of pml_stream
// ran before its first plane (its SASS with Nsight Compute's counts on an H100,
// bench/results/2026-11-24-h100-session9.md §2), and without them it fits in 48 registers.
// Host and device.
#pragma once
#include <cstdint>
#include <string>

#include "physics/error.hpp"
#include "physics/host_device.hpp"

namespace minimod::kernels::cuda {

struct FastDiv {
  static constexpr int kShift = 40;
  static constexpr unsigned kMaxNumerator = (1u << 24) - 1;
  static constexpr int kMaxDivisor = (1 << 16) - 1;
  std::uint64_t mul = 1ull << kShift;  // ceil(2^40 / d); d = 1 by default

  /// n / d for n <= kMaxNumerator.
  MM_HOST_DEVICE MM_FORCE_INLINE unsigned operator()(unsigned n) const {
    return static_cast<unsigned>((static_cast<std::uint64_t>(n) * mul) >> kShift);
  }
};

/// The FastDiv of d, 1 <= d <= FastDiv::kMaxDivisor (else an Error naming it).
inline FastDiv fast_div_by(int d) {
  if (d < 1 || d > FastDiv::kMaxDivisor)
    throw Error("FastDiv: divisor " + std::to_string(d) + " outside 1.." + std::to_string(FastDiv::kMaxDivisor));
  const std::uint64_t dd = static_cast<std::uint64_t>(d);
  return FastDiv{((1ull << FastDiv::kShift) + dd - 1) / dd};
}

}  // namespace minimod::kernels::cuda
