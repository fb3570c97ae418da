// The tensor-map cache (kernels/cuda/tensor_map.cuh): a cached map is the map the driver encodes
// for the same arguments, bit for bit, also after its slot was taken by others and it was encoded
// again; different arguments give different maps. Needs the driver, so a GPU.
#include <gtest/gtest.h>

#if defined(MINIMOD_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include <cstring>

#include "kernels/backends.hpp"
#include "kernels/cuda/tensor_map.cuh"
#endif

namespace minimod {
namespace {

#if defined(MINIMOD_HAVE_CUDA)
using kernels::cuda::TensorMapCache;
using kernels::cuda::TensorMapKey;

bool same(const CUtensorMap& a, const CUtensorMap& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(TensorMapCache, GivesTheDriversMapForTheSameArgumentsAfterEviction) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  void* base = nullptr;
  ASSERT_EQ(cudaMalloc(&base, 1 << 24), cudaSuccess);
  // Keys over one allocation: 128-B steps of the corner, two boxes; more than the cache's slots.
  const int n = TensorMapCache::kSlots + 37;
  const auto key = [base](int s) {
    return TensorMapKey{static_cast<const char*>(base) + 128 * (s / 2), {64, static_cast<cuuint64_t>(40 + s % 3), 30}, {256, 256 * 50},
                        {static_cast<cuuint32_t>(s % 2 ? 40 : 32), 8}};
  };
  TensorMapCache cache;
  for (int round = 0; round < 2; ++round)  // the second round finds the first keys evicted
    for (int s = 0; s < n; ++s) {
      SCOPED_TRACE(s);
      const CUtensorMap fresh = kernels::cuda::encode_tensor_map(key(s));
      EXPECT_TRUE(same(cache.get(key(s)), fresh));
      EXPECT_TRUE(same(cache.get(key(s)), fresh));  // a hit
    }
  EXPECT_FALSE(same(cache.get(key(0)), cache.get(key(1))));  // another box
  EXPECT_FALSE(same(cache.get(key(0)), cache.get(key(2))));  // another corner (and extent)
  cudaFree(base);
}
#else
TEST(TensorMapCache, NeedsCuda) { GTEST_SKIP() << "built without CUDA: GPU tests skipped"; }
#endif

}  // namespace
}  // namespace minimod
