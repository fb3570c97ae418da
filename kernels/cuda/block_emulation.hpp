// Host emulation of the block execution model of kernels/cuda/block_model.cuh, for checking a
// staged kernel's indexing, pipeline and barrier logic on a machine without a GPU: every thread
// of a block is a host thread, the block barrier is real, an mbarrier completes a phase when its
// arrivals and announced bytes are both in, and a tensor copy lands the moment it is issued (the
// harshest timing for a slot still being read: a missing block barrier before the refill shows
// up as wrong results). Shared memory is poisoned with NaN, so a read of anything never staged
// poisons the output. A thread that throws, or leaves the body while others wait at the block
// barrier, fails the emulation (the waiting threads are released) instead of hanging it, and a
// tensor copy the copy engine would fault on is reported (tests/gpu/block_emulation_test.cpp).
// Blocks run one after another. Not for timing.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "physics/view3.hpp"

namespace minimod::kernels::cuda {

/// The host counterpart of a CUtensorMap: fp32, three dimensions (k fastest), a box (bx, by, 1);
/// or a group of arrays of one layout (tensor_map_group's host counterpart: on the GPU a 4D map
/// over equally spaced arrays), each from its own corner.
struct HostTensorMap {
  static constexpr int kMaxArrays = 8;
  const float* corner = nullptr;  // element (0, 0, 0) of the tensor
  std::int64_t dim[3] = {};       // extents, k fastest
  std::int64_t stride[2] = {};    // elements between j rows and between i planes
  int box[3] = {1, 1, 1};
  int arrays = 1;                            // a group's arrays (copy_group)
  const float* others[kMaxArrays - 1] = {};  // the corners of a group's arrays after the first
  /// Array a's corner (array 0: `corner`).
  const float* corner_of(int a) const { return a == 0 ? corner : others[a - 1]; }

  /// Over a view's whole allocation, as semi_tma's tensor_map builds the device one.
  template <class T>
  static HostTensorMap of(const physics::View3<T>& v, int bx, int by, int bz = 1) {
    HostTensorMap m;
    m.corner = v.ptr(v.box.lo.i, v.box.lo.j, v.box.lo.k);
    m.dim[0] = v.box.n.k;
    m.dim[1] = v.box.n.j;
    m.dim[2] = v.box.n.i;
    m.stride[0] = v.sy;
    m.stride[1] = v.sx;
    m.box[0] = bx;
    m.box[1] = by;
    m.box[2] = bz;
    return m;
  }
  /// Over `count` views of one layout (the first's), as tensor_map_group builds the device one,
  /// without its check that they are equally spaced.
  template <class T>
  static HostTensorMap group_of(const physics::View3<T>* views, int count, int bx, int by, int bz = 1) {
    if (count < 1 || count > kMaxArrays) throw std::logic_error("host tensor map: 1 to 8 arrays in a group");
    HostTensorMap m = of(views[0], bx, by, bz);
    m.arrays = count;
    for (int a = 1; a < count; ++a) {
      const physics::View3<T>& v = views[a];
      if (v.sx != views[0].sx || v.sy != views[0].sy || !(v.box == views[0].box))
        throw std::logic_error("host tensor map: a group's arrays must share one layout");
      m.others[a - 1] = v.ptr(v.box.lo.i, v.box.lo.j, v.box.lo.k);
    }
    return m;
  }
  int bytes() const { return box[0] * box[1] * box[2] * 4; }  // one array's box
};

/// State shared by the threads of one emulated block.
class HostBlockState {
 public:
  explicit HostBlockState(int threads) : threads_(threads) {}

  /// Thrown in the threads still waiting when the block is aborted (abort(), or a block barrier
  /// that cannot complete).
  struct Aborted : std::runtime_error {
    Aborted() : std::runtime_error("emulated block aborted") {}
  };

  void sync() {
    std::unique_lock<std::mutex> lock(mutex_);
    const unsigned long generation = generation_;
    if (++arrived_ == threads_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    if (arrived_ + left_ == threads_) never_complete();
    cv_.wait(lock, [&] { return generation_ != generation || aborted_; });
    if (generation_ == generation) throw Aborted();
  }
  void init(const void* bar, unsigned count) {
    std::lock_guard<std::mutex> lock(mutex_);
    barriers_[bar] = Mbarrier{static_cast<int>(count), static_cast<int>(count), 0, 0};
  }
  void expect_bytes(const void* bar, unsigned bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    Mbarrier& b = find(bar);
    --b.pending;
    b.bytes += bytes;
    complete_if_done(b);
  }
  void arrive(const void* bar) {
    std::lock_guard<std::mutex> lock(mutex_);
    Mbarrier& b = find(bar);
    --b.pending;
    complete_if_done(b);
  }
  void landed(const void* bar, int bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    Mbarrier& b = find(bar);
    b.bytes -= bytes;
    if (b.bytes < 0) throw std::logic_error("emulated mbarrier: more bytes landed than announced");
    complete_if_done(b);
  }
  void wait(const void* bar, unsigned parity) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return (find(bar).completed & 1u) != (parity & 1u) || aborted_; });
    if ((find(bar).completed & 1u) == (parity & 1u)) throw Aborted();
  }
  /// A thread failed: the ones waiting at a barrier or an mbarrier throw Aborted instead of
  /// waiting for it forever (emulate_grid then reports the first failure).
  void abort() {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    cv_.notify_all();
  }
  /// A thread is through the block body. If others still wait at the block barrier it will never
  /// reach (a barrier count the kernel does not keep: a hang on the GPU), it throws.
  void left() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++left_;
    if (arrived_ > 0 && arrived_ + left_ == threads_) never_complete();
  }

 private:
  /// The block barrier cannot complete (mutex_ held): the waiting threads abort, the caller throws.
  [[noreturn]] void never_complete() {
    aborted_ = true;
    cv_.notify_all();
    throw std::logic_error("emulated block: a thread left the body while others wait at the block barrier");
  }

  struct Mbarrier {
    int count, pending;
    std::int64_t bytes;
    unsigned completed;  // phases completed so far
  };
  Mbarrier& find(const void* bar) {
    auto it = barriers_.find(bar);
    if (it == barriers_.end()) throw std::logic_error("emulated mbarrier used before mbarrier_init");
    return it->second;
  }
  void complete_if_done(Mbarrier& b) {
    if (b.pending < 0) throw std::logic_error("emulated mbarrier: more arrivals than its count");
    if (b.pending == 0 && b.bytes == 0) {
      ++b.completed;
      b.pending = b.count;
      cv_.notify_all();
    }
  }

  const int threads_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0, left_ = 0;
  bool aborted_ = false;
  unsigned long generation_ = 0;
  std::map<const void*, Mbarrier> barriers_;
};

/// One emulated thread's view of the block (the interface of block_model.cuh).
struct HostBlock {
  int tx = 0, ty = 0, bx = 0, by = 0, bz = 0;
  HostBlockState* state = nullptr;

  void sync() const { state->sync(); }
  void mbarrier_init(std::uint64_t* bar, unsigned count) const { state->init(bar, count); }
  void fence_init() const {}
  void fence_proxy() const {}
  void expect_bytes(std::uint64_t* bar, unsigned bytes) const { state->expect_bytes(bar, bytes); }
  void arrive(std::uint64_t* bar) const { state->arrive(bar); }
  /// As the copy engine, but a box whose rows start off a 16-B boundary (c0 not a multiple of 4;
  /// the tensor's corner and row pitch are 16-B aligned) throws (on an H100: "illegal
  /// instruction" at the copy, a layer kernel tried on 2026-11-24,
  /// bench/results/2026-11-24-h100-session10.md §1).
  void copy_3d(void* dst, const HostTensorMap& m, int c0, int c1, int c2, std::uint64_t* bar) const {
    copy_box(static_cast<float*>(dst), m, m.corner, c0, c1, c2);
    state->landed(bar, m.bytes());
  }
  /// Each array's box of a group map, one after another in dst (DeviceBlock::copy_group).
  void copy_group(void* dst, const HostTensorMap& m, int c0, int c1, int c2, std::uint64_t* bar) const {
    for (int a = 0; a < m.arrays; ++a)
      copy_box(static_cast<float*>(dst) + static_cast<std::int64_t>(a) * (m.bytes() / 4), m, m.corner_of(a), c0, c1, c2);
    state->landed(bar, m.arrays * m.bytes());
  }
  void wait(std::uint64_t* bar, unsigned parity) const { state->wait(bar, parity); }

 private:
  /// The box at (c0, c1, c2) of the tensor of map m whose corner is `corner`, into out.
  static void copy_box(float* out, const HostTensorMap& m, const float* corner, int c0, int c1, int c2) {
    if (c0 % 4 != 0) throw std::logic_error("tensor copy: box rows start off a 16-B boundary (k " + std::to_string(c0) + ")");
    for (int z = 0; z < m.box[2]; ++z)
      for (int y = 0; y < m.box[1]; ++y)
        for (int x = 0; x < m.box[0]; ++x) {
          const std::int64_t a = c0 + x, b = c1 + y, c = c2 + z;
          const bool inside = a >= 0 && a < m.dim[0] && b >= 0 && b < m.dim[1] && c >= 0 && c < m.dim[2];
          *out++ = inside ? corner[c * m.stride[1] + b * m.stride[0] + a] : 0.0f;  // zero fill outside
        }
  }
};

/// Runs body(blk, shared) for every thread of every block of `grid`, blocks of (bx, by) threads,
/// `shared_bytes` of NaN-poisoned shared memory per block (fresh for each block).
inline void emulate_grid(const int grid[3], int threads_x, int threads_y, int shared_bytes,
                         const std::function<void(HostBlock&, unsigned char*)>& body) {
  std::vector<float> shared((static_cast<size_t>(shared_bytes) + 3) / 4 + 1);
  for (int bz = 0; bz < grid[2]; ++bz)
    for (int by = 0; by < grid[1]; ++by)
      for (int bx = 0; bx < grid[0]; ++bx) {
        std::fill(shared.begin(), shared.end(), std::numeric_limits<float>::quiet_NaN());
        HostBlockState state(threads_x * threads_y);
        std::vector<std::thread> threads;
        std::exception_ptr error;
        std::mutex error_mutex;
        for (int ty = 0; ty < threads_y; ++ty)
          for (int tx = 0; tx < threads_x; ++tx)
            threads.emplace_back([&, tx, ty] {
              HostBlock blk{tx, ty, bx, by, bz, &state};
              try {
                body(blk, reinterpret_cast<unsigned char*>(shared.data()));
                state.left();
              } catch (const HostBlockState::Aborted&) {  // another thread's failure, reported below
              } catch (...) {
                {
                  std::lock_guard<std::mutex> lock(error_mutex);
                  if (!error) error = std::current_exception();
                }
                state.abort();
              }
            });
        for (auto& t : threads) t.join();
        if (error) std::rethrow_exception(error);
      }
}

}  // namespace minimod::kernels::cuda
