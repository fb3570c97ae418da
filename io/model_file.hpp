// Reading model parameters and wavelets from HDF5 input files (DESIGN.md §6), HDF5 1.10 C API.
// Models are 3D float32 or float64 datasets [x][y][z] (C order, z contiguous, SI units); wavelets
// are 1D. Anything wrong with the user's file is a ConfigError naming the config key.
#pragma once
#include <array>
#include <string>
#include <vector>

namespace minimod::io {

/// Reads `dataset` of `file` as float32 [x][y][z]. Throws ConfigError naming `key` (e.g.
/// "model.vp") if the file is missing or not HDF5, the dataset is missing, not floating point,
/// not of rank 3 and shape `expected_shape` (grid.shape), or holds a NaN or an infinity.
std::vector<float> read_model_dataset(const std::string& file, const std::string& dataset,
                                      std::array<int, 3> expected_shape, const std::string& key);

/// The box [lo, lo + count) of the dataset (C order, count[0]*count[1]*count[2] floats), with
/// read_model_dataset's checks: the whole dataset's shape must be expected_shape; a NaN or an
/// infinity, or a float64 value outside float32's range, is rejected only where it lies in the
/// box (the message names the point by its index in the whole dataset). The box must lie in the
/// dataset (std::invalid_argument otherwise: a programming error, not the user's). For an MPI
/// rank reading only its own part of the model.
std::vector<float> read_model_dataset(const std::string& file, const std::string& dataset,
                                      std::array<int, 3> expected_shape, const std::string& key,
                                      std::array<int, 3> lo, std::array<int, 3> count);

/// Reads the 1D floating-point `dataset` of `file` (non-empty, finite), with read_model_dataset's
/// errors.
std::vector<double> read_wavelet_dataset(const std::string& file, const std::string& dataset,
                                         const std::string& key);

/// Writes `data` (shape[0]*shape[1]*shape[2] floats, C order) as the float32 dataset `dataset`
/// of `file`, creating the file and intermediate groups as needed. For tests and tools; throws
/// IoError, also if the dataset already exists.
void write_model_dataset(const std::string& file, const std::string& dataset,
                         std::array<int, 3> shape, const std::vector<float>& data);

}  // namespace minimod::io
