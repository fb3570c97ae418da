// kernels/host_memory: allocations from kHugeFrom bytes on (operator
// new's and AlignedBuffer's) start on a huge page (and are advised MADV_HUGEPAGE), smaller ones as
// malloc gives them; all freed alike; AlignedBuffer zeroed whatever the size; failure as the
// standard says (bad_alloc, or nullptr for the nothrow form).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "kernels/aligned_buffer.hpp"
#include "kernels/host_memory.hpp"

namespace minimod {
namespace {

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(HugePages, LargeArraysStartOnAHugePageAndKeepTheirValues) {
  if (!kernels::huge_pages_replace_new()) GTEST_SKIP() << "operator new not replaced (sanitizer build)";
  for (const std::size_t bytes : {kernels::kHugeFrom, kernels::kHugeFrom + 12, 3 * kernels::kHugeFrom + 4}) {
    std::vector<float> v(bytes / sizeof(float), 1.5f);
    EXPECT_EQ(address(v.data()) % kernels::kHugePage, 0u) << bytes << " B";
    v.back() = 2.5f;  // the whole extent is usable
    EXPECT_EQ(v.front(), 1.5f);
    EXPECT_EQ(v.back(), 2.5f);
  }
}

TEST(HugePages, AlignedBuffersAreZeroAndLargeOnesStartOnAHugePage) {
  for (const std::int64_t count : {std::int64_t{1}, std::int64_t{1000}, std::int64_t(kernels::kHugeFrom / 4) + 7,
                                   std::int64_t(3 * kernels::kHugeFrom / 4) + 1}) {
    kernels::AlignedBuffer b(count);
    EXPECT_EQ(address(b.data()) % 128, 0u) << count;
    if (std::size_t(count) * 4 >= kernels::kHugeFrom) EXPECT_EQ(address(b.data()) % kernels::kHugePage, 0u) << count;
    std::int64_t nonzero = 0;
    for (std::int64_t n = 0; n < count; ++n) nonzero += b.data()[n] != 0.0f;
    EXPECT_EQ(nonzero, 0) << count;
  }
  // Zeroing writes every byte asked for, in chunks that do not divide it, and nothing beyond.
  const std::ptrdiff_t n = (3 << 20) + 5;
  std::vector<unsigned char> bytes(static_cast<size_t>(n + 64), 0xAB);
  kernels::zero_host(bytes.data() + 32, static_cast<size_t>(n));
  EXPECT_EQ(std::count(bytes.begin() + 32, bytes.begin() + 32 + n, 0), n);
  EXPECT_EQ(std::count(bytes.begin(), bytes.begin() + 32, 0xAB), 32);
  EXPECT_EQ(std::count(bytes.begin() + 32 + n, bytes.end(), 0xAB), 32);
}

// How many of the base pages of [p, p + bytes) are resident (mincore), of how many.
std::pair<std::size_t, std::size_t> resident_pages(void* p, std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((bytes + page - 1) / page);
  if (mincore(p, bytes, in.data()) != 0) return {0, in.size()};
  return {static_cast<std::size_t>(std::count_if(in.begin(), in.end(), [](unsigned char c) { return (c & 1) != 0; })),
          in.size()};
}

TEST(HugePages, OperatorNewFaultsALargeBlockInBeforeItIsFilled) {
  if (!kernels::huge_pages_replace_new()) GTEST_SKIP() << "operator new not replaced (sanitizer build)";
  // Fresh memory from the kernel is not resident until touched: every page of a large block is
  // (fault_in_host, on every thread), so that std::vector's fill on one thread faults nothing.
  const std::size_t bytes = 4 * kernels::kHugeFrom + 4096 * 3 + 8;
  void* p = ::operator new(bytes);
  const auto [resident, pages] = resident_pages(p, bytes / 4096 * 4096);
  EXPECT_EQ(resident, pages) << bytes << " B";
  ::operator delete(p);
  // fault_in_host writes zeros at page starts only: a block's other bytes keep their values.
  std::vector<unsigned char> v(3 * 4096 + 100, 0x5A);
  kernels::fault_in_host(v.data(), v.size());
  std::size_t zeros = 0;
  for (std::size_t n = 0; n < v.size(); ++n) zeros += v[n] == 0;
  EXPECT_LE(zeros, 4u);
  EXPECT_EQ(std::count(v.end() - 90, v.end(), 0x5A), 90);
}

TEST(HugePages, SmallArraysAreNotPaddedToAHugePage) {
  if (!kernels::huge_pages_replace_new()) GTEST_SKIP() << "operator new not replaced (sanitizer build)";
  // malloc's small chunks share pages: of 64 live 1 KiB arrays at most one may start on a huge page.
  std::vector<std::unique_ptr<char[]>> small;
  int aligned = 0;
  for (int n = 0; n < 64; ++n) {
    small.emplace_back(new char[1024]);
    aligned += address(small.back().get()) % kernels::kHugePage == 0;
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
