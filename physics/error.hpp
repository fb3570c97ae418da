// The error types minimod throws; app/main.cpp catches them once and sets the exit code.
#pragma once
#include <stdexcept>
#include <string>

namespace minimod {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Bad configuration or command line: exit code 2.
struct ConfigError : Error {
  using Error::Error;
};
/// A file that cannot be read or written.
struct IoError : Error {
  using Error::Error;
};
/// A CUDA runtime failure (see kernels/cuda/cuda_check.hpp).
struct CudaError : Error {
  using Error::Error;
};
/// The wavefield blew up (NaN or Inf): the run stops early.
struct InstabilityError : Error {
  using Error::Error;
};

}  // namespace minimod
