// Host memory for large arrays: on transparent huge pages, zeroed by every OpenMP thread.
// A 1000^3 TTI run fills some twenty host arrays of 4 GB (the model, its padded and derived forms,
// the CPU reference's fields). On a kernel that gives 4 KiB pages unless asked
// (transparent_hugepage/enabled = madvise, the common default) their first touch is a page fault
// per 4 KiB, one thread after another: most of a large run's set-up time. allocate_host aligns
// an allocation of kHugeFrom bytes or more to a huge page and advises MADV_HUGEPAGE, so that it
// faults in 2 MiB pages (where the kernel gives none, the advice is ignored). Everything it
// returns goes back with std::free. Global operator new takes it (kernels/host_memory.cpp) and
// faults a large block's pages in on every thread (fault_in_host), and so does AlignedBuffer.
// Measured: bench/results/2026-11-29-session32-tti-layer-beside.md.
#pragma once
#include <cstddef>

namespace minimod::kernels {

constexpr std::size_t kHugePage = std::size_t{2} << 20;  // x86-64's and ARM64's (4 KiB granule) huge page
constexpr std::size_t kHugeFrom = std::size_t{32} << 20;  // allocations from this size on go on huge pages

/// `bytes` (at least 1) aligned to `alignment` (a power of 2, at most kHugePage), on huge pages from
/// kHugeFrom bytes on; nullptr where there is no memory. Free with std::free.
void* allocate_host(std::size_t bytes, std::size_t alignment) noexcept;

/// `bytes` zeros from p, written by all OpenMP threads in static chunks (the first touch that places
/// a page, so each thread's share of a later static loop tends to lie in its own memory).
void zero_host(void* p, std::size_t bytes);

/// Faults in the pages of [p, p + bytes) on all OpenMP threads (a zero written at each 4 KiB):
/// where the memory is then filled on one thread (std::vector's value-initialisation), the kernel's
/// zeroing of the fresh pages at least runs on every core. Writes zeros: for fresh memory only.
void fault_in_host(void* p, std::size_t bytes);

/// Whether this build replaced the global operator new with allocate_host (not under sanitizers,
/// which replace it themselves).
bool huge_pages_replace_new();

}  // namespace minimod::kernels
