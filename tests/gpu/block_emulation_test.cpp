// The host emulation of the block execution model (kernels/cuda/block_emulation.hpp) itself: a
// block body that fails must fail the emulation, not hang it (a thread that throws while the
// others wait at a barrier or an mbarrier, a thread that leaves the body while the others wait at
// the block barrier), and a tensor copy the copy engine would fault on (box rows off 16 B) is
// reported. A body that keeps the rules runs through. Needs no GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/block_emulation.hpp"

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

}  // namespace
}  // namespace minimod
