// app/huge_pages.cpp: allocations from kHugeFrom bytes on start on a huge page (and are advised
// MADV_HUGEPAGE), smaller ones as malloc gives them; both freed alike; failure as the standard
// says (bad_alloc, or nullptr for the nothrow form).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "app/huge_pages.hpp"

namespace minimod {
namespace {

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(HugePages, LargeArraysStartOnAHugePageAndKeepTheirValues) {
  if (!app::huge_pages_replace_new()) GTEST_SKIP() << "operator new not replaced (sanitizer build)";
  for (const std::size_t bytes : {app::kHugeFrom, app::kHugeFrom + 12, 3 * app::kHugeFrom + 4}) {
    std::vector<float> v(bytes / sizeof(float), 1.5f);
    EXPECT_EQ(address(v.data()) % app::kHugePage, 0u) << bytes << " B";
    v.back() = 2.5f;  // the whole extent is usable
    EXPECT_EQ(v.front(), 1.5f);
    EXPECT_EQ(v.back(), 2.5f);
  }
}

TEST(HugePages, SmallArraysAreNotPaddedToAHugePage) {
  if (!app::huge_pages_replace_new()) GTEST_SKIP() << "operator new not replaced (sanitizer build)";
  // malloc's small chunks share pages: of 64 live 1 KiB arrays at most one may start on a huge page.
  std::vector<std::unique_ptr<char[]>> small;
  int aligned = 0;
  for (int n = 0; n < 64; ++n) {
    small.emplace_back(new char[1024]);
    aligned += address(small.back().get()) % app::kHugePage == 0;
  }
  EXPECT_LE(aligned, 1);
}

TEST(HugePages, FailureThrowsOrGivesNullAsTheStandardSays) {
  const std::size_t absurd = std::size_t{1} << 62;  // 4 EiB
  void* volatile got = nullptr;  // kept, so that no call is elided
  EXPECT_THROW(got = ::operator new(absurd), std::bad_alloc);
  got = ::operator new(absurd, std::nothrow);
  EXPECT_EQ(got, nullptr);
}

}  // namespace
}  // namespace minimod
