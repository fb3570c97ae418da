// Large host arrays on transparent huge pages (app/huge_pages.cpp replaces the global operator
// new for every program linking minimod_core).
#pragma once
#include <cstddef>

namespace minimod::app {

constexpr std::size_t kHugePage = std::size_t{2} << 20;  // x86-64's and ARM64's (4 KiB granule) huge page
constexpr std::size_t kHugeFrom = std::size_t{32} << 20;  // allocations from this size on go on huge pages

/// Whether this build replaced operator new (not under sanitizers).
bool huge_pages_replace_new();

}  // namespace minimod::app
