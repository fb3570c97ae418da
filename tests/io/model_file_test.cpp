// Tests for io/model_file: round trips, and every kind of bad input file is a ConfigError that
// names the config key. Inputs other than float32 3D are written with the HDF5 C API directly.
#include "io/model_file.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "physics/error.hpp"

namespace minimod::io {
namespace {

namespace fs = std::filesystem;

class ModelFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("minimod_model_file_test_" + std::string(info->name()) +
                                        "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

// Writes `values` (doubles in memory) as a dataset of `file_type` and `dims`, with the C API.
void write_raw(const std::string& file, const std::string& name, hid_t file_type,
               const std::vector<hsize_t>& dims, const std::vector<double>& values) {
  const hid_t f = fs::exists(file)
                      ? H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)
                      : H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  const hid_t ds = H5Dcreate2(f, name.c_str(), file_type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(ds, 0);
  EXPECT_GE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  H5Dclose(ds);
  H5Pclose(lcpl);
  H5Sclose(space);
  H5Fclose(f);
}

std::vector<float> ramp(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t m = 0; m < n; ++m) v[m] = 1500.0f + 0.5f * static_cast<float>(m);
  return v;
}

// Runs `f`, expects a ConfigError whose message holds every one of `parts`.
::testing::AssertionResult throws_config_error(const std::function<void()>& f,
                                               const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) {
      if (msg.find(p) == std::string::npos) {
        return ::testing::AssertionFailure() << "message \"" << msg << "\" lacks \"" << p << "\"";
      }
    }
    return ::testing::AssertionSuccess() << msg;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw something else: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

TEST_F(ModelFileTest, RoundTripsFloat32Model) {
  const std::vector<float> vp = ramp(5 * 4 * 3);
  write_model_dataset(file("m.h5"), "vp", {5, 4, 3}, vp);
  EXPECT_EQ(read_model_dataset(file("m.h5"), "vp", {5, 4, 3}, "model.vp"), vp);
}

TEST_F(ModelFileTest, ReadsFloat64ModelInNestedGroupAsFloat32) {
  std::vector<double> values(6 * 2 * 3);
  for (std::size_t m = 0; m < values.size(); ++m) values[m] = 2000.25 + static_cast<double>(m);
  write_raw(file("m.h5"), "/model/vp", H5T_IEEE_F64LE, {6, 2, 3}, values);
  const std::vector<float> out =
      read_model_dataset(file("m.h5"), "model/vp", {6, 2, 3}, "model.vp");
  ASSERT_EQ(out.size(), values.size());
  for (std::size_t m = 0; m < values.size(); ++m) EXPECT_EQ(out[m], static_cast<float>(values[m]));
}

TEST_F(ModelFileTest, RejectsMissingFileNamingKey) {
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("absent.h5"), "vp", {2, 2, 2}, "model.vp");
      },
      {"config error: model.vp", "absent.h5", "does not exist"}));
}

TEST_F(ModelFileTest, RejectsFileThatIsNotHdf5) {
  std::ofstream(file("text.h5")) << "not hdf5\n";
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("text.h5"), "vp", {2, 2, 2}, "model.vp");
      },
      {"config error: model.vp", "text.h5", "is not an HDF5 file"}));
}

TEST_F(ModelFileTest, RejectsMissingDatasetAndMissingGroup) {
  write_model_dataset(file("m.h5"), "vp", {2, 2, 2}, ramp(8));
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("m.h5"), "vs", {2, 2, 2}, "model.epsilon");
      },
      {"config error: model.epsilon", "m.h5' has no dataset 'vs'"}));
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("m.h5"), "a/b/vp", {2, 2, 2}, "model.vp");
      },
      {"config error: model.vp", "has no dataset 'a/b/vp'"}));
}

TEST_F(ModelFileTest, RejectsGroupInPlaceOfDataset) {
  write_model_dataset(file("m.h5"), "g/vp", {2, 2, 2}, ramp(8));
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("m.h5"), "g", {2, 2, 2}, "model.vp");
      },
      {"config error: model.vp", "is not a dataset"}));
}

TEST_F(ModelFileTest, RejectsWrongShapeWithBothShapes) {
  write_model_dataset(file("m.h5"), "vp", {10, 10, 10}, ramp(1000));
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("m.h5"), "vp", {64, 64, 32}, "model.vp");
      },
      {"config error: model.vp", "dataset 'vp'",
       "has shape 10x10x10, expected 64x64x32 (grid.shape)"}));
}

TEST_F(ModelFileTest, RejectsWrongRank) {
  write_raw(file("m.h5"), "vp", H5T_IEEE_F32LE, {4, 4}, std::vector<double>(16, 1.0));
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("m.h5"), "vp", {4, 4, 1}, "model.vp");
      },
      {"config error: model.vp", "has shape 4x4, expected 4x4x1"}));
}

TEST_F(ModelFileTest, RejectsIntegerDataset) {
  write_raw(file("m.h5"), "vp", H5T_STD_I32LE, {2, 2, 2}, std::vector<double>(8, 1500.0));
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("m.h5"), "vp", {2, 2, 2}, "model.vp");
      },
      {"config error: model.vp", "integer", "expected float32 or float64"}));
}

TEST_F(ModelFileTest, RejectsNanNamingItsIndex) {
  std::vector<float> vp = ramp(3 * 4 * 5);
  vp[(1 * 4 + 2) * 5 + 3] = std::numeric_limits<float>::quiet_NaN();
  write_model_dataset(file("m.h5"), "vp", {3, 4, 5}, vp);
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("m.h5"), "vp", {3, 4, 5}, "model.vp");
      },
      {"config error: model.vp", "non-finite", "nan", "[1][2][3]"}));
}

TEST_F(ModelFileTest, RejectsInfinityAndOutOfRangeInFloat64) {
  std::vector<double> values(8, 1500.0);
  values[7] = std::numeric_limits<double>::infinity();
  write_raw(file("inf.h5"), "vp", H5T_IEEE_F64LE, {2, 2, 2}, values);
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("inf.h5"), "vp", {2, 2, 2}, "model.delta");
      },
      {"config error: model.delta", "non-finite", "[1][1][1]"}));
  values[7] = 1e300;  // finite in float64, infinite once narrowed
  write_raw(file("big.h5"), "vp", H5T_IEEE_F64LE, {2, 2, 2}, values);
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("big.h5"), "vp", {2, 2, 2}, "model.vp");
      },
      {"config error: model.vp", "float32 range", "[1][1][1]"}));
}

// The box [lo, lo + count) of `whole` (shape `shape`, C order), as read_model_dataset's box
// variant should return it.
std::vector<float> box_of(const std::vector<float>& whole, std::array<int, 3> shape,
                          std::array<int, 3> lo, std::array<int, 3> count) {
  std::vector<float> out;
  for (int i = lo[0]; i < lo[0] + count[0]; ++i) {
    for (int j = lo[1]; j < lo[1] + count[1]; ++j) {
      for (int k = lo[2]; k < lo[2] + count[2]; ++k) {
        out.push_back(whole[(static_cast<std::size_t>(i) * shape[1] + j) * shape[2] + k]);
      }
    }
  }
  return out;
}

// Boxes as {lo, count}.
using Boxes = std::vector<std::pair<std::array<int, 3>, std::array<int, 3>>>;

// Boxes of a 7x5x6 model: the whole, one point, an interior box, a box on each of the six faces,
// a far corner, and empty boxes.
const std::array<int, 3> kBoxShape = {7, 5, 6};
const Boxes kBoxes = {
    {{0, 0, 0}, {7, 5, 6}},  // whole
    {{3, 2, 4}, {1, 1, 1}},  // one point
    {{0, 0, 0}, {1, 1, 1}},  // the first point
    {{6, 4, 5}, {1, 1, 1}},  // the last point
    {{1, 1, 2}, {4, 3, 2}},  // interior
    {{0, 1, 1}, {2, 3, 4}},  // face x = 0
    {{5, 1, 1}, {2, 3, 4}},  // face x = 6
    {{1, 0, 1}, {3, 2, 4}},  // face y = 0
    {{1, 3, 1}, {3, 2, 4}},  // face y = 4
    {{1, 1, 0}, {3, 3, 2}},  // face z = 0
    {{1, 1, 3}, {3, 3, 3}},  // face z = 5
    {{4, 2, 3}, {3, 3, 3}},  // far corner
    {{0, 0, 0}, {7, 1, 6}},  // one y plane across the model (a strided read)
    {{2, 0, 0}, {0, 5, 6}},  // empty
    {{0, 5, 6}, {7, 0, 0}},  // empty, at the far faces
};

TEST_F(ModelFileTest, BoxesOfFloat32ModelAreThoseOfTheWholeRead) {
  const std::vector<float> vp = ramp(7 * 5 * 6);
  write_model_dataset(file("m.h5"), "vp", kBoxShape, vp);
  const std::vector<float> whole = read_model_dataset(file("m.h5"), "vp", kBoxShape, "model.vp");
  ASSERT_EQ(whole, vp);
  for (const auto& [lo, count] : kBoxes) {
    SCOPED_TRACE("box at [" + std::to_string(lo[0]) + "][" + std::to_string(lo[1]) + "][" +
                 std::to_string(lo[2]) + "]");
    EXPECT_EQ(read_model_dataset(file("m.h5"), "vp", kBoxShape, "model.vp", lo, count),
              box_of(whole, kBoxShape, lo, count));
  }
}

TEST_F(ModelFileTest, BoxesOfFloat64ModelAreThoseOfTheWholeRead) {
  std::vector<double> values(7 * 5 * 6);
  for (std::size_t m = 0; m < values.size(); ++m) values[m] = 2000.25 + static_cast<double>(m);
  write_raw(file("m.h5"), "/model/vp", H5T_IEEE_F64LE, {7, 5, 6}, values);
  const std::vector<float> whole =
      read_model_dataset(file("m.h5"), "model/vp", kBoxShape, "model.vp");
  ASSERT_EQ(whole.size(), values.size());
  for (std::size_t m = 0; m < values.size(); ++m) {
    ASSERT_EQ(whole[m], static_cast<float>(values[m]));
  }
  for (const auto& [lo, count] : kBoxes) {
    SCOPED_TRACE("box at [" + std::to_string(lo[0]) + "][" + std::to_string(lo[1]) + "][" +
                 std::to_string(lo[2]) + "]");
    EXPECT_EQ(read_model_dataset(file("m.h5"), "model/vp", kBoxShape, "model.vp", lo, count),
              box_of(whole, kBoxShape, lo, count));
  }
}

TEST_F(ModelFileTest, BoxRejectsNanOnlyWhereItLiesInTheBox) {
  std::vector<float> vp = ramp(7 * 5 * 6);
  vp[(2 * 5 + 3) * 6 + 1] = std::numeric_limits<float>::quiet_NaN();  // [2][3][1]
  write_model_dataset(file("m.h5"), "vp", kBoxShape, vp);
  // Boxes beside the NaN, each missing it along one axis only.
  const Boxes beside = {{{3, 0, 0}, {4, 5, 6}},
                        {{0, 0, 0}, {2, 5, 6}},
                        {{0, 4, 0}, {7, 1, 6}},
                        {{0, 0, 2}, {7, 5, 4}},
                        {{2, 3, 0}, {1, 1, 1}}};
  for (const auto& [lo, count] : beside) {
    EXPECT_EQ(read_model_dataset(file("m.h5"), "vp", kBoxShape, "model.vp", lo, count),
              box_of(vp, kBoxShape, lo, count));
  }
  // Inside: named by its index in the whole dataset, not in the box.
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("m.h5"), "vp", kBoxShape, "model.vp", {1, 2, 1}, {3, 2, 2});
      },
      {"config error: model.vp: dataset 'vp' of '" + file("m.h5") + "'", "non-finite", "nan",
       "[2][3][1]", "in this part"}));
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("m.h5"), "vp", kBoxShape, "model.vp", {2, 3, 1}, {1, 1, 1});
      },
      {"config error: model.vp", "[2][3][1]"}));
}

TEST_F(ModelFileTest, BoxOfFloat64RejectsInfinityAndOutOfRangeOnlyInTheBox) {
  std::vector<double> values(7 * 5 * 6, 1500.0);
  values[(5 * 5 + 4) * 6 + 2] = std::numeric_limits<double>::infinity();  // [5][4][2]
  values[(1 * 5 + 0) * 6 + 5] = 1e300;                                    // [1][0][5]
  write_raw(file("m.h5"), "vp", H5T_IEEE_F64LE, {7, 5, 6}, values);
  EXPECT_EQ(read_model_dataset(file("m.h5"), "vp", kBoxShape, "model.vp", {2, 0, 0}, {3, 5, 6}),
            std::vector<float>(3 * 5 * 6, 1500.0f));
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("m.h5"), "vp", kBoxShape, "model.delta", {4, 3, 1}, {3, 2, 3});
      },
      {"config error: model.delta", "m.h5'", "non-finite", "[5][4][2]"}));
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("m.h5"), "vp", kBoxShape, "model.vp", {0, 0, 3}, {2, 2, 3});
      },
      {"config error: model.vp", "m.h5'", "float32 range", "[1][0][5]"}));
}

TEST_F(ModelFileTest, BoxRejectsWrongShapeOfTheWholeDataset) {
  write_model_dataset(file("m.h5"), "vp", kBoxShape, ramp(7 * 5 * 6));
  EXPECT_TRUE(throws_config_error(
      [&] {
        read_model_dataset(file("m.h5"), "vp", {7, 5, 7}, "model.vp", {0, 0, 0}, {2, 2, 2});
      },
      {"config error: model.vp", "dataset 'vp'", "has shape 7x5x6, expected 7x5x7 (grid.shape)"}));
}

TEST_F(ModelFileTest, BoxOutsideTheDatasetIsInvalidArgument) {
  write_model_dataset(file("m.h5"), "vp", kBoxShape, ramp(7 * 5 * 6));
  const int big = std::numeric_limits<int>::max();
  // Negative corners and counts, past each far face, and lo + count past INT_MAX.
  const Boxes outside = {{{-1, 0, 0}, {1, 1, 1}},  {{0, -1, 0}, {1, 1, 1}}, {{0, 0, -1}, {1, 1, 1}},
                         {{0, 0, 0}, {-1, 1, 1}},  {{0, 0, 0}, {1, 1, -1}}, {{6, 0, 0}, {2, 1, 1}},
                         {{0, 4, 0}, {1, 2, 1}},   {{0, 0, 0}, {1, 1, 7}},  {{7, 0, 0}, {1, 1, 1}},
                         {{big, 0, 0}, {1, 1, 1}}, {{1, 0, 0}, {big, 1, 1}}};
  for (const auto& [lo, count] : outside) {
    EXPECT_THROW(read_model_dataset(file("m.h5"), "vp", kBoxShape, "model.vp", lo, count),
                 std::invalid_argument);
  }
}

TEST_F(ModelFileTest, ReadsWavelet) {
  const std::vector<double> w = {0.0, 0.25, -1.5, 3.0};
  write_raw(file("w.h5"), "/source/w", H5T_IEEE_F64LE, {4}, w);
  EXPECT_EQ(read_wavelet_dataset(file("w.h5"), "/source/w", "source.dataset"), w);
}

TEST_F(ModelFileTest, RejectsBadWavelets) {
  write_raw(file("w.h5"), "w2", H5T_IEEE_F32LE, {2, 2}, {1, 2, 3, 4});
  write_raw(file("w.h5"), "nan", H5T_IEEE_F64LE, {3}, {1, std::nan(""), 3});
  write_raw(file("w.h5"), "empty", H5T_IEEE_F64LE, {0}, {});
  EXPECT_TRUE(
      throws_config_error([&] { read_wavelet_dataset(file("w.h5"), "w2", "source.dataset"); },
                          {"config error: source.dataset", "has shape 2x2, expected one axis"}));
  EXPECT_TRUE(
      throws_config_error([&] { read_wavelet_dataset(file("w.h5"), "nan", "source.dataset"); },
                          {"config error: source.dataset", "non-finite", "[1]"}));
  EXPECT_TRUE(
      throws_config_error([&] { read_wavelet_dataset(file("w.h5"), "empty", "source.dataset"); },
                          {"config error: source.dataset", "is empty"}));
  EXPECT_TRUE(
      throws_config_error([&] { read_wavelet_dataset(file("w.h5"), "missing", "source.dataset"); },
                          {"config error: source.dataset", "has no dataset 'missing'"}));
}

TEST_F(ModelFileTest, WriterRefusesMismatchedSizeAndExistingDataset) {
  EXPECT_THROW(write_model_dataset(file("m.h5"), "vp", {2, 2, 2}, ramp(7)), IoError);
  write_model_dataset(file("m.h5"), "vp", {2, 2, 2}, ramp(8));
  EXPECT_THROW(write_model_dataset(file("m.h5"), "vp", {2, 2, 2}, ramp(8)), IoError);
}

}  // namespace
}  // namespace minimod::io
