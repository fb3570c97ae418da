// Asynchronous snapshots of a CUDA propagator (kernels/propagator.hpp, copy_field_async): a
// strided box of a field is gathered on the GPU and copied into pinned host memory on a copy
// stream of its own, beside the next steps. The gather must read the field before a later step
// overwrites it; the propagator calls order_writers() before each step, which makes the writing
// streams wait for every gather still reading a buffer this step writes. Shared by the isotropic
// and the TTI propagators.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/field_kernels.cuh"
#include "kernels/cuda/resources.hpp"
#include "kernels/propagator.hpp"

namespace minimod::kernels::cuda {
namespace {

class SnapshotCopies {
 public:
  /// The pinned host buffer of `slot`, grown to `count` floats.
  float* buffer(int slot, std::int64_t count) {
    Slot& s = slots_[slot];
    if (s.host.size() < count) {
      s.host = PinnedBuffer<float>(count);
      s.device = DeviceBuffer<float>(count, "snapshot staging");
    }
    return s.host.data();
  }

  /// Starts copying every stride-th point of `box` of `f` into slot's host buffer, once `ready`
  /// (an event the step that produced the field recorded) has passed; returns at once.
  void start(const View3<float>& f, const Box3& box, const Index3& stride, int slot, cudaEvent_t ready) {
    const Index3 on = physics::strided_shape(box, stride);
    const std::int64_t count = static_cast<std::int64_t>(on.i) * on.j * on.k;
    buffer(slot, count);
    Slot& s = slots_[slot];
    const cudaStream_t sc = stream_.get();
    MM_CUDA_CHECK(cudaStreamWaitEvent(sc, ready, 0));
    launch_gather(f, box, stride, s.device.data(), sc);
    MM_CUDA_CHECK(cudaEventRecord(s.gathered.get(), sc));
    pending_.push_back({f.origin, &s.gathered});
    if (count > 0)
      MM_CUDA_CHECK(cudaMemcpyAsync(s.host.data(), s.device.data(), static_cast<size_t>(count) * 4,
                                    cudaMemcpyDeviceToHost, sc));
    MM_CUDA_CHECK(cudaEventRecord(s.copied.get(), sc));
  }

  /// Blocks until slot's copy has landed in its host buffer (any thread).
  void wait(int slot) { MM_CUDA_CHECK(cudaEventSynchronize(slots_[slot].copied.get())); }

  /// Before a step: `writers` wait for every gather still reading a field other than those in
  /// `read_only` (the fields the step only reads; given by their views' origins).
  void order_writers(std::initializer_list<cudaStream_t> writers, std::initializer_list<const float*> read_only) {
    for (auto it = pending_.begin(); it != pending_.end();) {
      bool kept = false;
      for (const float* r : read_only) kept |= it->field == r;
      if (kept) {
        ++it;
        continue;
      }
      for (cudaStream_t st : writers) MM_CUDA_CHECK(cudaStreamWaitEvent(st, it->gathered->get(), 0));
      it = pending_.erase(it);
    }
  }

  /// Waits for every copy; none is pending afterwards (before fields are rewritten from the host).
  void drain() {
    MM_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    pending_.clear();
  }

 private:
  struct Slot {
    PinnedBuffer<float> host;
    DeviceBuffer<float> device;
    Event gathered, copied;
  };
  struct PendingRead {
    const float* field;  // the view's origin
    Event* gathered;
  };
  Stream stream_;
  Slot slots_[Propagator::kSnapshotSlots];
  std::vector<PendingRead> pending_;
};

}  // namespace
}  // namespace minimod::kernels::cuda
