// AlignedBuffer: an owning, zero-initialised, 128-byte aligned host array of floats; large ones on
// huge pages, zeroed by all threads (kernels/host_memory.hpp).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

#include "kernels/host_memory.hpp"

namespace minimod::kernels {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::int64_t count) : count_(count) {
    const std::size_t bytes = ((static_cast<std::size_t>(count) * sizeof(float) + 127) / 128) * 128;
    void* p = allocate_host(bytes > 0 ? bytes : 128, 128);
    if (!p) throw std::bad_alloc();
    zero_host(p, bytes);
    data_.reset(static_cast<float*>(p));
  }
  float* data() const { return data_.get(); }
  std::int64_t size() const { return count_; }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
  std::int64_t count_ = 0;
};

}  // namespace minimod::kernels
