// Large arrays on transparent huge pages. A 1000^3 TTI run fills some twenty host arrays of 4 GB
// (the model, its padded and derived forms, the CPU reference's fields), and on a kernel that
// gives 4 KiB pages unless asked (transparent_hugepage/enabled = madvise, the common default)
// their first touch is one page fault per 4 KiB: most of a large run's set-up time. Every
// allocation of at least kHugeFrom bytes through operator new (std::vector's included) is
// therefore aligned to a huge page and advised MADV_HUGEPAGE, so that it faults in 2 MiB pages;
// smaller ones go to malloc as before. Both free(). Where the kernel gives no huge pages, the
// advice is ignored and only the alignment remains. Left out under sanitizers, which replace these
// operators themselves. Measured: bench/results/2026-11-29-session32-tti-layer-beside.md.
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

#include "app/huge_pages.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MINIMOD_HUGE_PAGES 0
#else
#define MINIMOD_HUGE_PAGES 1
#endif

namespace minimod::app {

bool huge_pages_replace_new() { return MINIMOD_HUGE_PAGES != 0; }

namespace {

void* allocate(std::size_t n) noexcept {
  if (n < kHugeFrom) return std::malloc(n == 0 ? 1 : n);
  const std::size_t rounded = (n + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p != nullptr) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: its failure changes nothing
  return p;
}

void* allocate_or_throw(std::size_t n) {
  for (;;) {
    if (void* p = allocate(n)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

}  // namespace
}  // namespace minimod::app

#if MINIMOD_HUGE_PAGES
// The replaceable global forms (the array forms of the standard library call these).
void* operator new(std::size_t n) { return minimod::app::allocate_or_throw(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return minimod::app::allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
#endif
