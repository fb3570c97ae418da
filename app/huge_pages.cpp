// The global operator new on kernels::allocate_host (kernels/host_memory.hpp): allocations of
// kHugeFrom bytes or more (std::vector's included) on transparent huge pages, smaller ones from
// malloc as before; all freed by std::free. Left out under sanitizers, which replace these
// operators themselves.
#include <cstddef>
#include <cstdlib>
#include <new>

#include "kernels/host_memory.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MINIMOD_HUGE_PAGES 0
#else
#define MINIMOD_HUGE_PAGES 1
#endif

namespace minimod::kernels {
bool huge_pages_replace_new() { return MINIMOD_HUGE_PAGES != 0; }
}  // namespace minimod::kernels

#if MINIMOD_HUGE_PAGES
namespace {
void* allocate_or_throw(std::size_t n) {
  for (;;) {
    if (void* p = minimod::kernels::allocate_host(n, alignof(std::max_align_t))) return p;
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
