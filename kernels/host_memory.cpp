#include "kernels/host_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace minimod::kernels {

void* allocate_host(std::size_t bytes, std::size_t alignment) noexcept {
  if (bytes < kHugeFrom) {
    const std::size_t n = (std::max<std::size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
    return alignment <= alignof(std::max_align_t) ? std::malloc(n) : std::aligned_alloc(alignment, n);
  }
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p != nullptr) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: its failure changes nothing
  return p;
}

void zero_host(void* p, std::size_t bytes) {
  constexpr std::int64_t kChunk = std::int64_t{1} << 20;
  const std::int64_t chunks = (static_cast<std::int64_t>(bytes) + kChunk - 1) / kChunk;
  auto* const base = static_cast<unsigned char*>(p);
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t from = c * kChunk;
    std::memset(base + from, 0, static_cast<std::size_t>(std::min(kChunk, static_cast<std::int64_t>(bytes) - from)));
  }
}

}  // namespace minimod::kernels
