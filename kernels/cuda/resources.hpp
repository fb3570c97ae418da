// Small move-only owners of CUDA resources: DeviceBuffer<T>, PinnedBuffer<T>, Stream, Event.
// Constructors create the resource whole or throw with what failed and its size; destructors never
// throw. Every device allocation names its array, for the memory report.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <utility>

#include "kernels/cuda/cuda_check.hpp"

namespace minimod::kernels::cuda {

std::string gib(std::int64_t bytes);

/// Device memory a run leaves free beside its arrays: the CUDA context, streams, library workspaces.
constexpr std::int64_t kDeviceMemoryMargin = 256ll << 20;

/// Free memory of the current device, bytes.
inline std::int64_t device_free_bytes() {
  size_t free = 0, total = 0;
  MM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return static_cast<std::int64_t>(free);
}

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::int64_t count, const std::string& name) : count_(count) {
    if (count <= 0) return;
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
    const cudaError_t err = cudaMalloc(reinterpret_cast<void**>(&data_), bytes);
    if (err != cudaSuccess) {
      cudaGetLastError();
      int dev = 0;
      cudaGetDevice(&dev);
      throw CudaError("allocating " + gib(static_cast<std::int64_t>(bytes)) + " for " + name +
                      " on GPU " + std::to_string(dev) + ": " + cudaGetErrorString(err));
    }
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    swap(o);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);
  }
  T* data() const { return data_; }
  std::int64_t size() const { return count_; }
  std::int64_t bytes() const { return count_ * static_cast<std::int64_t>(sizeof(T)); }
  void swap(DeviceBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(count_, o.count_);
  }

 private:
  T* data_ = nullptr;
  std::int64_t count_ = 0;
};

template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::int64_t count) : count_(count) {
    if (count <= 0) return;
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
    const cudaError_t err = cudaMallocHost(reinterpret_cast<void**>(&data_), bytes);
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw CudaError("allocating " + gib(static_cast<std::int64_t>(bytes)) +
                      " of pinned host memory: " + cudaGetErrorString(err));
    }
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept { swap(o); }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    swap(o);
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    if (data_) cudaFreeHost(data_);
  }
  T* data() const { return data_; }
  std::int64_t size() const { return count_; }
  void swap(PinnedBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(count_, o.count_);
  }

 private:
  T* data_ = nullptr;
  std::int64_t count_ = 0;
};

class Stream {
 public:
  Stream() { MM_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  /// A stream whose blocks the scheduler dispatches before those of normal streams (the halo
  /// path: its small kernels must not queue behind the interior's thousands of blocks).
  static Stream high_priority() {
    int least = 0, greatest = 0;
    MM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    Stream s(nullptr);
    MM_CUDA_CHECK(cudaStreamCreateWithPriority(&s.s_, cudaStreamNonBlocking, greatest));
    return s;
  }
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  cudaStream_t get() const { return s_; }

 private:
  explicit Stream(std::nullptr_t) {}
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  explicit Event(bool timing = false) {
    MM_CUDA_CHECK(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
  }
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace minimod::kernels::cuda
