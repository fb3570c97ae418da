// Tests for io/model_file: round trips, and every kind of bad input file is a ConfigError that
// names the config key. Inputs other than float32 3D are written with the HDF5 C API directly.
#include "io/model_file.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
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
