// The host emulation of the block execution model (kernels/cuda/block_emulation.hpp) itself: a
// block body that fails must fail the emulation, not hang it (a thread that throws while the
// others wait at a barrier or an mbarrier, a thread that leaves the body while the others wait at
// the block barrier), and a tensor copy the copy engine would fault on (box rows off 16 B) is
// reported. A body that keeps the rules runs through. A group copy (copy_group) lands the box of
// each of its arrays back to back, and the device's group map refuses arrays that do not lie
// equally spaced. Needs no GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/block_emulation.hpp"
#include "kernels/cuda/tensor_map.cuh"
#include "physics/error.hpp"

namespace minimod {
namespace {

using kernels::cuda::emulate_grid;
using kernels::cuda::HostBlock;
using kernels::cuda::HostTensorMap;

constexpr int kThreads = 8;

/// Runs `body` on one block of kThreads threads with 1 KB of shared memory.
template <class Body>
void run_block(const Body& body) {
  const int grid[3] = {1, 1, 1};
  emulate_grid(grid, kThreads, 1, 1024, [&](HostBlock& blk, unsigned char* shared) { body(blk, shared); });
}

/// The message of what run_block(body) throws ("" when it returns).
template <class Body>
std::string failure_of(const Body& body) {
  try {
    run_block(body);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(BlockEmulation, ABodyThatKeepsTheRulesRunsThrough) {
  std::atomic<int> passes{0};
  EXPECT_EQ(failure_of([&](HostBlock& blk, unsigned char* shared) {
              auto* bar = reinterpret_cast<std::uint64_t*>(shared);
              if (blk.tx == 0) blk.mbarrier_init(bar, kThreads);
              blk.sync();
              for (int round = 0; round < 3; ++round) {
                blk.arrive(bar);
                blk.wait(bar, static_cast<unsigned>(round) & 1u);
                blk.sync();
              }
              ++passes;
            }),
            "");
  EXPECT_EQ(passes.load(), kThreads);
}

TEST(BlockEmulation, AThreadThatThrowsBeforeABarrierFailsTheBlock) {
  EXPECT_EQ(failure_of([](HostBlock& blk, unsigned char*) {
              if (blk.tx == 3) throw std::runtime_error("thread 3 failed");
              blk.sync();
            }),
            "thread 3 failed");
}

TEST(BlockEmulation, AThreadThatThrowsBeforeItsArrivalFailsTheMbarrierWaiters) {
  EXPECT_EQ(failure_of([](HostBlock& blk, unsigned char* shared) {
              auto* bar = reinterpret_cast<std::uint64_t*>(shared);
              if (blk.tx == 0) blk.mbarrier_init(bar, 1);
              blk.sync();
              if (blk.tx == 0) throw std::runtime_error("the copy was never issued");
              blk.wait(bar, 0);
            }),
            "the copy was never issued");
}

TEST(BlockEmulation, AThreadThatLeavesWhileOthersWaitAtTheBarrierIsAFault) {
  const std::string what = failure_of([](HostBlock& blk, unsigned char*) {
    if (blk.tx == 5) return;  // skips the barrier: a hang on the GPU
    blk.sync();
  });
  EXPECT_NE(what.find("left the body"), std::string::npos) << what;  // whether it left first or last
}

TEST(BlockEmulation, ACopyWhoseRowsStartOff16BytesIsAFault) {
  std::vector<float> tensor(64 * 4, 1.0f);
  HostTensorMap map;
  map.corner = tensor.data();
  map.dim[0] = 64, map.dim[1] = 4, map.dim[2] = 1;
  map.stride[0] = 64, map.stride[1] = 256;
  map.box[0] = 8, map.box[1] = 2;
  const auto copy_at = [&](int k) {
    return failure_of([&, k](HostBlock& blk, unsigned char* shared) {
      auto* bar = reinterpret_cast<std::uint64_t*>(shared);
      if (blk.tx == 0) {
        blk.mbarrier_init(bar, 1);
        blk.expect_bytes(bar, static_cast<unsigned>(map.bytes()));
        blk.copy_3d(shared + 128, map, k, 0, 0, bar);
      }
      blk.sync();
      blk.wait(bar, 0);
    });
  };
  EXPECT_EQ(copy_at(4), "");
  EXPECT_EQ(copy_at(-4), "");  // before the tensor: zero-filled, allowed
  EXPECT_NE(copy_at(3).find("16-B boundary"), std::string::npos);
}

/// Three arrays of one layout (6 x 8 points, a halo of 1 around 4 x 6), array a holding
/// 100 a + its index, `gap` floats between them in one allocation.
struct ThreeArrays {
  physics::FieldLayout layout = physics::FieldLayout::make({{0, 0, 0}, {1, 4, 6}}, 1, 4);
  std::vector<float> memory;
  physics::View3<const float> views[3];
  explicit ThreeArrays(std::int64_t gap) : memory(static_cast<size_t>(3 * (layout.elements() + gap))) {
    for (int a = 0; a < 3; ++a) {
      float* base = memory.data() + a * (layout.elements() + gap);
      for (std::int64_t e = 0; e < layout.elements(); ++e) base[e] = static_cast<float>(100 * a + e);
      views[a] = layout.view(base);
    }
  }
};

TEST(BlockEmulation, AGroupCopyLandsEachArraysBoxBackToBack) {
  const ThreeArrays t(0);
  const HostTensorMap map = HostTensorMap::group_of(t.views, 3, 8, 2);
  const physics::View3<const float>& v = t.views[0];
  std::vector<float> landed(3 * 16);
  const std::string what = failure_of([&](HostBlock& blk, unsigned char* shared) {
    auto* bar = reinterpret_cast<std::uint64_t*>(shared);
    if (blk.tx == 0) {
      blk.mbarrier_init(bar, 1);
      blk.expect_bytes(bar, static_cast<unsigned>(3 * map.bytes()));
      blk.copy_group(shared + 128, map, 4, 2, 1, bar);  // rows of 8 from k 4 of 8: half past the end
    }
    blk.sync();
    blk.wait(bar, 0);  // completes only when all three boxes' bytes landed
    if (blk.tx == 0) std::memcpy(landed.data(), shared + 128, landed.size() * 4);
  });
  ASSERT_EQ(what, "");
  for (int a = 0; a < 3; ++a)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 8; ++x) {
        const int k = 4 + x + v.box.lo.k, j = 2 + y + v.box.lo.j, i = 1 + v.box.lo.i;
        const float expected = k < v.box.hi().k ? *t.views[a].ptr(i, j, k) : 0.0f;  // zero fill past the row
        EXPECT_EQ(landed[static_cast<size_t>(a * 16 + y * 8 + x)], expected) << a << " " << y << " " << x;
      }
}

TEST(BlockEmulation, TheDevicesGroupMapRefusesArraysNotEquallySpaced) {
  const ThreeArrays t(0);
  physics::View3<const float> uneven[3] = {t.views[0], t.views[2], t.views[1]};  // out of order
  EXPECT_THROW(kernels::cuda::tensor_map_group(uneven, 3, 4, 2), Error);
  const ThreeArrays gapped(4);  // equally spaced with 16 B between them, but the third from elsewhere
  physics::View3<const float> skipping[3] = {gapped.views[0], gapped.views[1], t.views[2]};
  EXPECT_THROW(kernels::cuda::tensor_map_group(skipping, 3, 4, 2), Error);
  physics::View3<const float> other_layout[2] = {t.views[0], t.views[1]};
  other_layout[1].sy += 4;
  EXPECT_THROW(kernels::cuda::tensor_map_group(other_layout, 2, 4, 2), Error);
}

}  // namespace
}  // namespace minimod
