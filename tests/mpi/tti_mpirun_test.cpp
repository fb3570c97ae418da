// `mpirun -n 2 minimod --config tti.yaml` end to end (DESIGN.md §5): a small tilted, layered TTI
// survey in the style of configs/tti.yaml (free surface on top, isotropic zone at the source),
// run by the real binary alone and under mpirun with 2 ranks split along x and along z: the
// seismograms (q, to check the second field travels too) and the final q must be bitwise equal,
// with the sponge and with the CPML layer.
// Skipped where mpirun is missing.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr const char* kSurvey = R"(propagator: acoustic_tti
grid: {shape: [40, 24, 30], spacing: [16, 16, 12.5]}
model:
  vp: {layers: [{top: 0, value: 1800}, {top: 150, value: 2400}]}
  epsilon: {layers: [{top: 0, value: 0.0}, {top: 150, value: 0.20}]}
  delta: {layers: [{top: 0, value: 0.0}, {top: 150, value: 0.08}]}
  theta: {constant: 120, units: deg}
  phi: {constant: 20, units: deg}
  isotropic_radius: 30
time: {duration: 0.2}
source: {wavelet: ricker, frequency: 15, position: [300, 180, 100]}
receivers:
  - line: {start: [0, 180, 200], end: [620, 180, 200], count: 40}  # in the anisotropic layer (q)
boundary: {pml: {width: 6}, free_surface: [top]}
execution: {backend: cpu}
output: {overwrite: true, record: q, final_wavefield: true}
)";

int run(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

std::vector<float> read_dataset(const fs::path& file, const char* name) {
  std::vector<float> v;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return v;
  const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  if (d >= 0) {
    const hid_t s = H5Dget_space(d);
    v.resize(static_cast<size_t>(H5Sget_simple_extent_npoints(s)));
    if (H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) v.clear();
    H5Sclose(s);
    H5Dclose(d);
  }
  H5Fclose(f);
  return v;
}

TEST(TtiMpirun, TwoRanksWriteTheSameSeismogramsAndFinalFieldAsOne) {
  if (run("command -v " MINIMOD_MPIEXEC " >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun";
  const fs::path dir =
      fs::temp_directory_path() / ("minimod_tti_mpirun_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  { std::ofstream(dir / "tti.yaml") << kSurvey; }
  const std::string env =
      "OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
      "OMPI_MCA_rmaps_base_oversubscribe=1 ";
  auto minimod = [&](const std::string& launcher, const std::string& out,
                     const std::string& extra) {
    return run("cd " + dir.string() + " && " + env + launcher +
               " " MINIMOD_BINARY " --quiet --config tti.yaml" + " --set output.file=" + out +
               extra + " >" + out + ".log 2>&1");
  };
  // Both absorbing layers: the CPML's fields at the halos' layer points are computed by each rank
  // (kernels/tti_cpml.hpp, TtiCpmlHalo), its cuts kept out of the layers.
  std::vector<float> sponge_traces;
  for (const std::string layer : {"sponge", "cpml"}) {
    const std::string set_layer = " --set boundary.pml.tti=" + layer;
    ASSERT_EQ(minimod("", layer + "_one.h5", set_layer), 0) << "see " << dir / (layer + "_one.h5.log");
    const auto ref_traces = read_dataset(dir / (layer + "_one.h5"), "/seismograms/q");
    const auto ref_final = read_dataset(dir / (layer + "_one.h5"), "/final/q");
    ASSERT_FALSE(ref_traces.empty());
    ASSERT_FALSE(ref_final.empty());
    if (layer == "sponge") sponge_traces = ref_traces;
    else EXPECT_NE(ref_traces, sponge_traces) << "the layer made no difference: was it the CPML?";
    float peak = 0;
    for (float x : ref_traces) peak = std::max(peak, std::abs(x));
    EXPECT_GT(peak, 0.0f) << "q recorded nothing";
    peak = 0;
    for (float x : ref_final) peak = std::max(peak, std::abs(x));
    EXPECT_GT(peak, 0.0f) << "q is zero at the end";
    for (const char* dims : {"[2,1,1]", "[1,1,2]"}) {
      const std::string out = layer + "_two_" + dims[1] + dims[5] + ".h5";
      ASSERT_EQ(minimod(MINIMOD_MPIEXEC " -n 2", out,
                        set_layer + " --set 'execution.decomposition=" + dims + "'"),
                0)
          << layer << " " << dims << ": see " << dir / (out + ".log");
      std::ifstream log(dir / (out + ".log"));
      const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      EXPECT_NE(
          text.find(std::string("ranks=2 decomposition=") + dims[1] + "x" + dims[3] + "x" + dims[5]),
          std::string::npos)
          << text;
      EXPECT_EQ(read_dataset(dir / out, "/seismograms/q"), ref_traces) << layer << " " << dims;
      EXPECT_EQ(read_dataset(dir / out, "/final/q"), ref_final) << layer << " " << dims;
    }
  }
  fs::remove_all(dir);
}

}  // namespace
