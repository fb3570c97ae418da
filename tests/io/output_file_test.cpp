// Tests for io::OutputFile: the result appears only on commit, failures leave nothing, existing
// results are kept unless overwrite is asked, and every dataset reads back (HDF5 C API) as written.
#include "io/output_file.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "physics/error.hpp"

namespace minimod::io {
namespace {

namespace fs = std::filesystem;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("minimod_output_file_test_" + std::string(info->name()) +
                                        "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "shot.h5").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) {
      names.push_back(fs::relative(e.path(), dir_).string());
    }
    return names;
  }

  fs::path dir_;
  std::string path_;
};

// Reading back with the HDF5 C API, independently of the writer's code.
class Reader {
 public:
  explicit Reader(const std::string& path)
      : file_(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)) {}
  ~Reader() {
    if (file_ >= 0) H5Fclose(file_);
  }
  bool ok() const { return file_ >= 0; }

  std::vector<hsize_t> dims(const std::string& name) const {
    const hid_t ds = H5Dopen2(file_, name.c_str(), H5P_DEFAULT);
    if (ds < 0) return {};
    const hid_t space = H5Dget_space(ds);
    std::vector<hsize_t> d(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
    H5Sget_simple_extent_dims(space, d.data(), nullptr);
    H5Sclose(space);
    H5Dclose(ds);
    return d;
  }
  std::vector<double> values(const std::string& name) const {
    const hid_t ds = H5Dopen2(file_, name.c_str(), H5P_DEFAULT);
    if (ds < 0) return {};
    std::size_t n = 1;
    for (hsize_t d : dims(name)) n *= d;
    std::vector<double> v(n);
    H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
    H5Dclose(ds);
    return v;
  }
  H5T_class_t file_type_class_size(const std::string& name, std::size_t* size) const {
    const hid_t ds = H5Dopen2(file_, name.c_str(), H5P_DEFAULT);
    const hid_t t = H5Dget_type(ds);
    const H5T_class_t cls = H5Tget_class(t);
    *size = H5Tget_size(t);
    H5Tclose(t);
    H5Dclose(ds);
    return cls;
  }
  std::vector<hsize_t> chunk(const std::string& name) const {
    const hid_t ds = H5Dopen2(file_, name.c_str(), H5P_DEFAULT);
    const hid_t dcpl = H5Dget_create_plist(ds);
    std::vector<hsize_t> c(8);
    const int rank = H5Pget_chunk(dcpl, 8, c.data());
    c.resize(rank > 0 ? static_cast<std::size_t>(rank) : 0);
    H5Pclose(dcpl);
    H5Dclose(ds);
    return c;
  }
  std::vector<double> attr_numbers(const std::string& obj, const std::string& name) const {
    const hid_t a = H5Aopen_by_name(file_, obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0) return {};
    const hid_t space = H5Aget_space(a);
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    std::vector<double> v(static_cast<std::size_t>(n));
    H5Aread(a, H5T_NATIVE_DOUBLE, v.data());
    H5Sclose(space);
    H5Aclose(a);
    return v;
  }
  std::string attr_string(const std::string& obj, const std::string& name) const {
    const hid_t a = H5Aopen_by_name(file_, obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0) return "<missing>";
    const hid_t type = H5Aget_type(a);
    std::string out = "<not a variable-length string>";
    if (H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0) {
      const hid_t mem = H5Tcopy(H5T_C_S1);
      H5Tset_size(mem, H5T_VARIABLE);
      H5Tset_cset(mem, H5T_CSET_UTF8);
      char* text = nullptr;
      if (H5Aread(a, mem, &text) >= 0 && text) out = text;
      H5free_memory(text);
      H5Tclose(mem);
    }
    H5Tclose(type);
    H5Aclose(a);
    return out;
  }

 private:
  hid_t file_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(OutputFileTest, FileAppearsOnlyAfterCommit) {
  OutputFile out(path_, false);
  out.write_receivers({{0, 0, 10}, {12.5, 0, 10}});
  EXPECT_FALSE(fs::exists(path_));
  EXPECT_TRUE(fs::exists(path_ + ".partial"));
  out.commit();
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_FALSE(fs::exists(path_ + ".partial"));
  EXPECT_EQ(H5Fis_hdf5(path_.c_str()), 1);
}

TEST_F(OutputFileTest, DestructorWithoutCommitLeavesNothing) {
  {
    OutputFile out(path_, false);
    out.write_seismogram("p", std::vector<float>(6, 1.0f), 2, 3, 0.004);
    out.begin_snapshots("p", 2, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, 0.1);
    std::vector<float> snap(8, 2.0f);
    out.write_snapshot("p", 0, 0.1, snap.data());
  }
  EXPECT_TRUE(files().empty()) << "left behind: " << files().front();
}

TEST_F(OutputFileTest, ErrorThenDestructionLeavesNothing) {
  try {
    OutputFile out(path_, false);
    out.write_seismogram("p", std::vector<float>(6, 1.0f), 2, 3, 0.004);
    out.write_seismogram("p", std::vector<float>(6, 1.0f), 2, 3, 0.004);  // exists: IoError
    out.commit();
    FAIL() << "second write of /seismograms/p did not throw";
  } catch (const IoError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("/seismograms/p"), std::string::npos) << msg;
    EXPECT_NE(msg.find("shot.h5.partial"), std::string::npos) << msg;
  }
  EXPECT_TRUE(files().empty());
}

TEST_F(OutputFileTest, RefusesToOverwriteExistingResult) {
  std::ofstream(path_) << "old result";
  try {
    OutputFile out(path_, false);
    FAIL() << "no error for an existing output file";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("config error: output.file: '" + path_ + "' already exists"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("output.overwrite"), std::string::npos) << msg;
  }
  EXPECT_EQ(slurp(path_), "old result");
  EXPECT_FALSE(fs::exists(path_ + ".partial"));
}

TEST_F(OutputFileTest, OverwriteReplacesOldResultOnlyAtCommit) {
  std::ofstream(path_) << "old result";
  OutputFile out(path_, true);
  out.write_receivers({{1, 2, 3}});
  EXPECT_EQ(slurp(path_), "old result");
  out.commit();
  EXPECT_EQ(H5Fis_hdf5(path_.c_str()), 1);
}

TEST_F(OutputFileTest, CreatesParentFolders) {
  const std::string nested = (dir_ / "a" / "b" / "shot.h5").string();
  OutputFile out(nested, false);
  out.commit();
  EXPECT_TRUE(fs::exists(nested));
}

TEST_F(OutputFileTest, UnwritablePlaceIsIoError) {
  std::ofstream((dir_ / "plain").string()) << "x";
  EXPECT_THROW(OutputFile((dir_ / "plain" / "shot.h5").string(), false), IoError);
}

TEST_F(OutputFileTest, WritesReceiversAndSeismograms) {
  {
    OutputFile out(path_, false);
    out.write_receivers({{0, 100, 20}, {12.5, 100, 20}, {25, 100, 20}});
    std::vector<float> p(3 * 4);
    for (std::size_t m = 0; m < p.size(); ++m) p[m] = 0.5f * static_cast<float>(m) - 1.0f;
    out.write_seismogram("p", p, 3, 4, 0.004, "Pa");
    out.commit();
  }
  Reader r(path_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.dims("/receivers/coordinates"), (std::vector<hsize_t>{3, 3}));
  EXPECT_EQ(r.values("/receivers/coordinates"),
            (std::vector<double>{0, 100, 20, 12.5, 100, 20, 25, 100, 20}));
  EXPECT_EQ(r.attr_string("/receivers/coordinates", "units"), "m");
  std::size_t size = 0;
  EXPECT_EQ(r.file_type_class_size("/receivers/coordinates", &size), H5T_FLOAT);
  EXPECT_EQ(size, 8u);

  EXPECT_EQ(r.dims("/seismograms/p"), (std::vector<hsize_t>{3, 4}));  // [receiver][time]
  EXPECT_EQ(r.file_type_class_size("/seismograms/p", &size), H5T_FLOAT);
  EXPECT_EQ(size, 4u);
  const std::vector<double> back = r.values("/seismograms/p");
  ASSERT_EQ(back.size(), 12u);
  EXPECT_EQ(back[1 * 4 + 2], 0.5 * 6 - 1.0);  // receiver 1, sample 2
  EXPECT_EQ(r.attr_numbers("/seismograms/p", "dt"), (std::vector<double>{0.004}));
  EXPECT_EQ(r.attr_string("/seismograms/p", "units"), "Pa");
}

TEST_F(OutputFileTest, SeismogramSizeMismatchIsIoError) {
  OutputFile out(path_, false);
  EXPECT_THROW(out.write_seismogram("p", std::vector<float>(5), 2, 3, 0.004), IoError);
}

TEST_F(OutputFileTest, WritesSnapshotsOnePerChunkWithTimes) {
  const std::array<int, 3> shape{2, 3, 4};
  {
    OutputFile out(path_, false);
    out.begin_snapshots("p", 3, shape, {2, 2, 1}, {-4, 0, 2}, 0.05);
    for (int s = 0; s < 3; ++s) {
      std::vector<float> snap(24);
      for (int m = 0; m < 24; ++m) snap[static_cast<std::size_t>(m)] = 100.0f * s + m;
      out.write_snapshot("p", s, 0.05 * (s + 1), snap.data());
    }
    EXPECT_THROW(out.write_snapshot("p", 3, 0.2, std::vector<float>(24).data()), IoError);
    EXPECT_THROW(out.write_snapshot("q", 0, 0.2, std::vector<float>(24).data()), IoError);
    out.commit();
  }
  Reader r(path_);
  EXPECT_EQ(r.dims("/snapshots/p"), (std::vector<hsize_t>{3, 2, 3, 4}));
  EXPECT_EQ(r.chunk("/snapshots/p"), (std::vector<hsize_t>{1, 2, 3, 4}));
  const std::vector<double> v = r.values("/snapshots/p");
  ASSERT_EQ(v.size(), 72u);
  EXPECT_EQ(v[2 * 24 + (1 * 3 + 2) * 4 + 3], 200.0 + 23);  // snapshot 2, point (1, 2, 3)
  EXPECT_EQ(r.values("/snapshots/time"), (std::vector<double>{0.05, 0.1, 0.15000000000000002}));
  EXPECT_EQ(r.attr_numbers("/snapshots/p", "stride"), (std::vector<double>{2, 2, 1}));
  EXPECT_EQ(r.attr_numbers("/snapshots/p", "first_index"), (std::vector<double>{-4, 0, 2}));
  EXPECT_EQ(r.attr_string("/snapshots/time", "units"), "s");
}

TEST_F(OutputFileTest, UnwrittenSnapshotTimesAreNan) {
  {
    OutputFile out(path_, false);
    out.begin_snapshots("p", 2, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 0.1);
    const float one = 1.0f;
    out.write_snapshot("p", 0, 0.1, &one);
    out.commit();
  }
  const std::vector<double> t = Reader(path_).values("/snapshots/time");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0], 0.1);
  EXPECT_TRUE(std::isnan(t[1]));
}

TEST_F(OutputFileTest, WritesFinalWavefield) {
  std::vector<float> u(3 * 2 * 5);
  for (std::size_t m = 0; m < u.size(); ++m) u[m] = static_cast<float>(m);
  {
    OutputFile out(path_, false);
    out.write_final_wavefield("p", {3, 2, 5}, u.data());
    out.commit();
  }
  Reader r(path_);
  EXPECT_EQ(r.dims("/final/p"), (std::vector<hsize_t>{3, 2, 5}));
  EXPECT_EQ(r.values("/final/p"), std::vector<double>(u.begin(), u.end()));
}

TEST_F(OutputFileTest, WritesSnapshotsByPartsOfWholeChunks) {
  std::vector<float> u(5 * 2 * 3);
  for (std::size_t m = 0; m < u.size(); ++m) u[m] = 1.0f + static_cast<float>(m);
  {
    OutputFile out(path_, false);
    out.begin_snapshots("p", 2, {5, 2, 3}, {1, 1, 1}, {0, 0, 0}, 0.1, 2);
    out.write_snapshot_part("p", 0, 0.1, 0, 2, u.data());          // a whole chunk
    out.write_snapshot_part("p", 0, 0.1, 4, 1, u.data() + 4 * 6);  // the edge chunk
    out.write_snapshot_part("p", 0, 0.1, 2, 2, u.data() + 2 * 6);
    EXPECT_THROW(out.write_snapshot_part("p", 1, 0.2, 4, 2, u.data()), IoError);  // beyond x
    out.write_snapshot_part("p", 1, 0.2, 0, 2, u.data());  // snapshot 1 never completed
    out.commit();
  }
  Reader r(path_);
  EXPECT_EQ(r.chunk("/snapshots/p"), (std::vector<hsize_t>{1, 2, 2, 3}));
  const std::vector<double> v = r.values("/snapshots/p");
  ASSERT_EQ(v.size(), 2 * u.size());
  EXPECT_EQ(std::vector<double>(v.begin(), v.begin() + 30), std::vector<double>(u.begin(), u.end()));
  const std::vector<double> t = r.values("/snapshots/time");
  EXPECT_EQ(t[0], 0.1);
  EXPECT_TRUE(std::isnan(t[1])) << "the time of a snapshot with planes missing";
}

TEST_F(OutputFileTest, WritesTheFinalWavefieldByParts) {
  std::vector<float> u(4 * 3 * 5);
  for (std::size_t m = 0; m < u.size(); ++m) u[m] = 0.5f + static_cast<float>(m);
  const auto box = [&u](int i0, int ni, int j0, int nj) {  // points [i0, i0 + ni) x [j0, j0 + nj) x all k
    std::vector<float> d;
    for (int i = i0; i < i0 + ni; ++i)
      for (int j = j0; j < j0 + nj; ++j)
        for (int k = 0; k < 5; ++k) d.push_back(u[(static_cast<std::size_t>(i) * 3 + j) * 5 + k]);
    return d;
  };
  {
    OutputFile out(path_, false);
    out.begin_final_wavefield("p", {4, 3, 5});
    // as two ranks cut along y would hand them: rank 0's slabs, then rank 1's
    out.write_final_part("p", {0, 0, 0}, {3, 2, 5}, box(0, 3, 0, 2).data());
    out.write_final_part("p", {3, 0, 0}, {1, 2, 5}, box(3, 1, 0, 2).data());
    out.write_final_part("p", {0, 2, 0}, {4, 1, 5}, box(0, 4, 2, 1).data());
    EXPECT_THROW(out.write_final_part("p", {3, 2, 0}, {2, 1, 5}, u.data()), IoError);  // beyond x
    EXPECT_THROW(out.write_final_part("q", {0, 0, 0}, {1, 1, 1}, u.data()), IoError);  // not begun
    out.commit();
  }
  Reader r(path_);
  EXPECT_EQ(r.dims("/final/p"), (std::vector<hsize_t>{4, 3, 5}));
  EXPECT_EQ(r.values("/final/p"), std::vector<double>(u.begin(), u.end()));
}

TEST_F(OutputFileTest, AFinalWavefieldMissingAPartIsNotCommitted) {
  const std::vector<float> u(2 * 2 * 2, 1.0f);
  try {
    OutputFile out(path_, false);
    out.begin_final_wavefield("p", {2, 2, 2});
    out.write_final_part("p", {0, 0, 0}, {1, 2, 2}, u.data());
    out.commit();
    FAIL() << "committed a final wavefield with half its points";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("4 of 8 points of '/final/p'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path_));
  EXPECT_FALSE(fs::exists(path_ + ".partial"));
}

TEST_F(OutputFileTest, RootAttributesIncludingLongConfigText) {
  RunAttributes a;
  a.dt = 0.001;
  a.spacing = {12.5, 12.5, 10};
  a.origin = {0, 0, -5};
  a.propagator = "acoustic_tti";
  a.backend = "cuda";
  a.kernel = "smem";
  a.version = "0.1.0";
  a.commit = "abc1234";
  a.config_text = "grid: {shape: [4, 4, 4]}\n" + std::string(200000, '#');  // > 64 KiB
  a.shape = {4, 5, 6};
  a.pml_lo = {1, 2, 3};
  a.pml_hi = {4, 5, 6};
  a.growth_after_source = 0.75;
  {
    OutputFile out(path_, false);
    out.set_attributes(a);
    a.kernel = "register";  // set again: replaces
    out.set_attributes(a);
    out.commit();
  }
  Reader r(path_);
  EXPECT_EQ(r.attr_numbers("/", "dt"), (std::vector<double>{0.001}));
  EXPECT_EQ(r.attr_numbers("/", "spacing"), (std::vector<double>{12.5, 12.5, 10}));
  EXPECT_EQ(r.attr_numbers("/", "origin"), (std::vector<double>{0, 0, -5}));
  EXPECT_EQ(r.attr_numbers("/", "shape"), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(r.attr_numbers("/", "pml_lo"), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(r.attr_numbers("/", "pml_hi"), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(r.attr_numbers("/", "growth_after_source"), (std::vector<double>{0.75}));
  EXPECT_EQ(r.attr_string("/", "units"), "SI (m, s, m/s)");
  EXPECT_EQ(r.attr_string("/", "propagator"), "acoustic_tti");
  EXPECT_EQ(r.attr_string("/", "backend"), "cuda");
  EXPECT_EQ(r.attr_string("/", "kernel"), "register");
  EXPECT_EQ(r.attr_string("/", "version"), "0.1.0");
  EXPECT_EQ(r.attr_string("/", "commit"), "abc1234");
  EXPECT_EQ(r.attr_string("/", "config"), a.config_text);
}

TEST_F(OutputFileTest, XdmfDescribesSnapshotsOnlyWhenThereAreSome) {
  {
    OutputFile out(path_, false);
    out.write_receivers({{0, 0, 0}});
    out.commit();
  }
  EXPECT_FALSE(fs::exists(xdmf_path_for(path_)));

  RunAttributes a;
  a.spacing = {10, 20, 5};
  a.origin = {100, 0, 0};
  {
    OutputFile out(path_, true);
    out.set_attributes(a);
    out.begin_snapshots("p", 2, {2, 3, 4}, {2, 1, 3}, {-1, 0, 2}, 0.5);
    std::vector<float> snap(24, 1.0f);
    out.write_snapshot("p", 0, 0.5, snap.data());
    out.write_snapshot("p", 1, 1.0, snap.data());
    out.commit();
  }
  const std::string xmf = xdmf_path_for(path_);
  EXPECT_EQ(xmf, (dir_ / "shot.xmf").string());
  ASSERT_TRUE(fs::exists(xmf));
  EXPECT_FALSE(fs::exists(xmf + ".partial"));
  const std::string text = slurp(xmf);
  EXPECT_NE(text.find("TopologyType=\"3DCoRectMesh\" Dimensions=\"2 3 4\""), std::string::npos);
  EXPECT_NE(text.find(">shot.h5:/snapshots/p<"), std::string::npos);  // relative to the .xmf
  EXPECT_NE(text.find("<Time Value=\"0.5\"/>"), std::string::npos);
  EXPECT_NE(text.find("<Time Value=\"1\"/>"), std::string::npos);
  EXPECT_NE(text.find(">1 0 0 0 1 1 1 1 1 2 3 4<"), std::string::npos);  // snapshot 1's slab
  EXPECT_NE(text.find(">90 0 10<"), std::string::npos);   // origin + first_index * spacing
  EXPECT_NE(text.find(">20 20 15<"), std::string::npos);  // spacing * stride

  // Overwritten by a run without snapshots: the stale .xmf goes too.
  {
    OutputFile out(path_, true);
    out.commit();
  }
  EXPECT_FALSE(fs::exists(xmf));
}

TEST_F(OutputFileTest, NothingCanBeWrittenAfterCommit) {
  OutputFile out(path_, false);
  out.commit();
  EXPECT_THROW(out.write_receivers({}), IoError);
  EXPECT_THROW(out.commit(), IoError);
  EXPECT_TRUE(fs::exists(path_));
}

}  // namespace
}  // namespace minimod::io
