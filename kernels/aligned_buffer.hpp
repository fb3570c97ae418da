// AlignedBuffer: an owning, zero-initialised, 128-byte aligned host array of floats.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace minimod::kernels {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::int64_t count) : count_(count) {
    const std::size_t bytes = ((static_cast<std::size_t>(count) * sizeof(float) + 127) / 128) * 128;
    void* p = std::aligned_alloc(128, bytes > 0 ? bytes : 128);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, bytes);
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
