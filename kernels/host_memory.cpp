// allocate_host, zero_host, and the global operator new on allocate_host: allocations of
// kHugeFrom bytes or more (std::vector's included) on transparent huge pages, smaller ones from
// malloc as before; all freed by std::free. The operators are left out under sanitizers, which
// replace them themselves.
#include "kernels/host_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MINIMOD_HUGE_PAGES 0
#else
#define MINIMOD_HUGE_PAGES 1
#endif

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

void fault_in_host(void* p, std::size_t bytes) {
  constexpr std::int64_t kPage = 4096;  // one write a base page: a huge page's first one faults it all in
  const std::int64_t pages = static_cast<std::int64_t>(bytes) / kPage;
  auto* const base = static_cast<volatile unsigned char*>(p);
#pragma omp parallel for schedule(static) if (pages > 1)
  for (std::int64_t n = 0; n < pages; ++n) base[n * kPage] = 0;
}

bool huge_pages_replace_new() { return MINIMOD_HUGE_PAGES != 0; }

}  // namespace minimod::kernels

#if MINIMOD_HUGE_PAGES
namespace {
void* allocate_or_throw(std::size_t n) {
  for (;;) {
    if (void* p = minimod::kernels::allocate_host(n, alignof(std::max_align_t))) {
      // std::vector then value-initialises it on one thread: its page faults (the kernel's zeroing
      // of each page) would be serial too.
      if (n >= minimod::kernels::kHugeFrom) minimod::kernels::fault_in_host(p, n);
      return p;
    }
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}
}  // namespace

// The replaceable global forms (the array forms of the standard library call these).
void* operator new(std::size_t n) { return allocate_or_throw(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return minimod::kernels::allocate_host(n, alignof(std::max_align_t));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
#endif
