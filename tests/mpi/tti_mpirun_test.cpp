// `mpirun -n 2 minimod --config tti.yaml` end to end (DESIGN.md §5): a small tilted, layered TTI
// survey in the style of configs/tti.yaml (free surface on top, isotropic zone at the source),
// run by the real binary alone and under mpirun with 2 ranks split along x and along z: the
// seismograms (q, to check the second field travels too) and the final q must be bitwise equal,
// with the sponge and with the CPML layer.
// Then, with the model in HDF5 files that each of 4 ranks reads only its window of (app/plan.cpp,
// Window): the same bitwise comparison, the plan's warnings as one rank gives them, and a NaN in
// one rank's part of a file stopping every rank with the one error a single process gives.
// Skipped where mpirun is missing.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "h5_read.hpp"
#include "run_command.hpp"
#include "io/model_file.hpp"

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

int run(const std::string& cmd) { return minimod::testing::run_command(cmd); }

std::vector<float> read_dataset(const fs::path& file, const char* name) {
  return minimod::testing::read_dataset(file.string(), name);
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

// --- Model files read by window

constexpr double kPi = 3.14159265358979323846;
constexpr std::array<int, 3> kShape{30, 26, 28};  // model points; the PML's 6 added around them

// The survey over the model files of m.h5 (vp, epsilon, delta, theta, phi, angles in degrees):
// 42x38x40 points with the layer, so that with [2,2,1] the cuts lie at model x 15 and y 13, with
// [1,2,2] at y 13 and z 14.
constexpr const char* kFileSurvey = R"(propagator: acoustic_tti
grid: {shape: [30, 26, 28], spacing: [12.5, 12, 13]}
model:
  vp: {file: m.h5, dataset: vp}
  epsilon: {file: m.h5, dataset: epsilon}
  delta: {file: m.h5, dataset: delta}
  theta: {file: m.h5, dataset: theta, units: deg}
  phi: {file: m.h5, dataset: phi, units: deg}
  isotropic_radius: 25
  elliptic_where_axis_turns: 30
time: {duration: 0.15}
source: {wavelet: ricker, frequency: 15, delay: 0.05, position: [150, 140, 110]}
receivers:
  - line: {start: [20, 150, 250], end: [340, 170, 250], count: 20}
boundary: {pml: {width: 6}}
execution: {backend: cpu}
output: {overwrite: true, final_wavefield: true, snapshots: {every: 20, stride: [2, 1, 3]}}
)";

// A smooth field in [-1, 1] varying along all three axes: the mean of three sines of a few wave
// numbers per axis with phases from `seed` (the raw mt19937 stream, the same on every platform).
std::vector<float> smooth(unsigned seed) {
  std::mt19937 gen(seed);
  const auto pick = [&](unsigned n) { return static_cast<double>(gen() % n); };
  struct Wave {
    double a, b, c, phase;
  };
  std::vector<Wave> waves;
  for (int w = 0; w < 3; ++w) waves.push_back({0.5 + 0.5 * pick(3), 0.5 + 0.5 * pick(3), 0.5 + 0.5 * pick(3),
                                               2 * kPi * pick(1000) / 1000});
  std::vector<float> v(static_cast<size_t>(kShape[0]) * kShape[1] * kShape[2]);
  size_t o = 0;
  for (int i = 0; i < kShape[0]; ++i)
    for (int j = 0; j < kShape[1]; ++j)
      for (int k = 0; k < kShape[2]; ++k) {
        double f = 0;
        for (const Wave& w : waves)
          f += std::sin(2 * kPi * (w.a * i / kShape[0] + w.b * j / kShape[1] + w.c * k / kShape[2]) + w.phase);
        v[o++] = static_cast<float>(f / 3);
      }
  return v;
}

size_t at(int i, int j, int k) { return (static_cast<size_t>(i) * kShape[1] + j) * kShape[2] + k; }

// m.h5 in `dir`: vp 1800..2600, delta in [-0.05, 0.1], epsilon in [delta, delta + 0.25], theta
// 0..70 and phi 0..360 degrees, all smooth, but for a 3x3x3 block, across the cuts of both
// decompositions, whose axis is tilted 60 degrees further (the plan's axis-turn figures then
// come from every rank). `vp_nan`: a NaN in vp at that model index.
void write_models(const fs::path& dir, const std::array<int, 3>* vp_nan = nullptr) {
  std::vector<float> vp = smooth(11), delta = smooth(12), eps = smooth(13), theta = smooth(14),
                     phi = smooth(15);
  for (size_t o = 0; o < vp.size(); ++o) {
    vp[o] = 2200 + 400 * vp[o];
    delta[o] = 0.025f + 0.075f * delta[o];
    eps[o] = delta[o] + 0.125f + 0.125f * eps[o];
    theta[o] = 35 + 35 * theta[o];
    phi[o] = 180 + 180 * phi[o];
  }
  for (int i = 14; i < 17; ++i)
    for (int j = 12; j < 15; ++j)
      for (int k = 13; k < 16; ++k) theta[at(i, j, k)] += 60;
  if (vp_nan) vp[at((*vp_nan)[0], (*vp_nan)[1], (*vp_nan)[2])] = std::numeric_limits<float>::quiet_NaN();
  const std::string file = (dir / "m.h5").string();
  minimod::io::write_model_dataset(file, "vp", kShape, vp);
  minimod::io::write_model_dataset(file, "epsilon", kShape, eps);
  minimod::io::write_model_dataset(file, "delta", kShape, delta);
  minimod::io::write_model_dataset(file, "theta", kShape, theta);
  minimod::io::write_model_dataset(file, "phi", kShape, phi);
}

using minimod::testing::read_text;

// The lines of `text` that contain `needle`.
std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) out.push_back(line);
  return out;
}

// `line` from `needle` on (without what comes first, "minimod: warning: " or a rank's prefix).
std::string from(const std::string& line, const std::string& needle) {
  const size_t p = line.find(needle);
  return p == std::string::npos ? line : line.substr(p);
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + needle.size())) ++n;
  return n;
}

// A temporary folder holding the file survey, and the binary run in it alone or under mpirun.
struct FileSurvey {
  fs::path dir;
  explicit FileSurvey(const std::string& name)
      : dir(fs::temp_directory_path() / ("minimod_tti_mpirun_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "tti.yaml") << kFileSurvey;
  }
  ~FileSurvey() {
    if (!::testing::Test::HasFailure()) fs::remove_all(dir);
  }
  // `ranks` 0: alone. The log goes to <out>.log.
  int minimod(int ranks, const std::string& out, const std::string& extra) const {
    const std::string env =
        "OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
        "OMPI_MCA_rmaps_base_oversubscribe=1 ";
    const std::string launcher = ranks > 0 ? MINIMOD_MPIEXEC " -n " + std::to_string(ranks) + " " : "";
    return run("cd " + dir.string() + " && " + env + launcher + MINIMOD_BINARY " --quiet --config tti.yaml" +
               " --set output.file=" + out + extra + " >" + out + ".log 2>&1");
  }
  std::string log(const std::string& out) const { return read_text(dir / (out + ".log")); }
};

constexpr const char* kTurnWarning = "model.elliptic_where_axis_turns: epsilon set to delta at";

TEST(TtiMpirun, FourRanksReadTheirWindowsOfModelFilesAndWriteWhatOneRankWrites) {
  if (run("command -v " MINIMOD_MPIEXEC " >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun";
  const FileSurvey survey("files");
  write_models(survey.dir);
  struct Case {
    std::string layer;
    std::vector<std::string> dims;
  };
  std::vector<float> cpml_traces;
  for (const Case& c : {Case{"cpml", {"[2,2,1]", "[1,2,2]"}}, Case{"sponge", {"[2,2,1]"}}}) {
    const std::string set_layer = " --set boundary.pml.tti=" + c.layer;
    const std::string one = c.layer + "_one.h5";
    ASSERT_EQ(survey.minimod(0, one, set_layer), 0) << survey.log(one);
    const auto ref_traces = read_dataset(survey.dir / one, "/seismograms/p");
    const auto ref_final = read_dataset(survey.dir / one, "/final/p");
    const auto ref_snapshots = read_dataset(survey.dir / one, "/snapshots/p");
    ASSERT_EQ(ref_traces.empty(), false);
    ASSERT_EQ(ref_final.empty(), false);
    ASSERT_GT(ref_snapshots.size(), ref_final.size() / 3) << "fewer than two snapshots";
    float peak = 0;
    bool finite = true;
    for (float x : ref_traces) peak = std::max(peak, std::abs(x)), finite = finite && std::isfinite(x);
    EXPECT_GT(peak, 0.0f) << "p recorded nothing";
    EXPECT_TRUE(finite);
    if (c.layer == "cpml") cpml_traces = ref_traces;
    else EXPECT_NE(ref_traces, cpml_traces) << "the layer made no difference: was it the sponge?";
    const auto ref_warning = lines_with(survey.log(one), kTurnWarning);
    ASSERT_EQ(ref_warning.size(), 1u) << "the block's axis turns: " << survey.log(one);
    for (const std::string& dims : c.dims) {
      const std::string out = c.layer + "_four_" + dims.substr(1, 1) + dims.substr(3, 1) + dims.substr(5, 1) + ".h5";
      ASSERT_EQ(survey.minimod(4, out, set_layer + " --set 'execution.decomposition=" + dims + "'"), 0)
          << c.layer << " " << dims << ": " << survey.log(out);
      const std::string text = survey.log(out);
      EXPECT_NE(text.find("ranks=4 decomposition=" + dims.substr(1, 1) + "x" + dims.substr(3, 1) + "x" +
                          dims.substr(5, 1)),
                std::string::npos)
          << text;
      EXPECT_EQ(read_dataset(survey.dir / out, "/seismograms/p"), ref_traces) << c.layer << " " << dims;
      EXPECT_EQ(read_dataset(survey.dir / out, "/final/p"), ref_final) << c.layer << " " << dims;
      // gathered slab by slab on rank 0 (Propagator::snapshots_by_parts), written as one rank writes them
      EXPECT_EQ(read_dataset(survey.dir / out, "/snapshots/p"), ref_snapshots) << c.layer << " " << dims;
      // The whole model's count, largest turn and first point, combined from the ranks' windows:
      // the warning as one rank gives it, printed once (rank 0 prints the plan's warnings).
      const auto warning = lines_with(text, kTurnWarning);
      ASSERT_EQ(warning.size(), 1u) << c.layer << " " << dims << ": " << text;
      EXPECT_EQ(from(warning[0], kTurnWarning), from(ref_warning[0], kTurnWarning)) << c.layer << " " << dims;
      EXPECT_EQ(lines_with(text, "warning: ").size(), lines_with(survey.log(one), "warning: ").size())
          << c.layer << " " << dims << ": " << text;
      // And so every other warning of the plan (e.g. the points per wavelength, from vp min).
      const auto warnings = [](const std::string& log) {
        std::set<std::string> all;
        for (const std::string& w : lines_with(log, "warning: ")) all.insert(from(w, "warning: "));
        return all;
      };
      EXPECT_EQ(warnings(text), warnings(survey.log(one))) << c.layer << " " << dims;
    }
  }
}

TEST(TtiMpirun, ABadValueInOneRanksPartOfAModelFileStopsEveryRankWithOneError) {
  if (run("command -v " MINIMOD_MPIEXEC " >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun";
  const FileSurvey survey("nan");
  // Near the far x and y corner: with [2,2,1] (cuts at model x 15, y 13) only the last rank's
  // window (and no other's, which end 9 points past a cut) holds it.
  const std::array<int, 3> nan_at{kShape[0] - 3, kShape[1] - 3, 5};
  write_models(survey.dir, &nan_at);
  const std::string index = "[" + std::to_string(nan_at[0]) + "][" + std::to_string(nan_at[1]) + "][" +
                            std::to_string(nan_at[2]) + "]";

  const std::string four = "four.h5";
  EXPECT_EQ(survey.minimod(4, four, " --set 'execution.decomposition=[2,2,1]'"), 2) << survey.log(four);
  const std::string text = survey.log(four);
  const auto errors = lines_with(text, "config error");
  ASSERT_EQ(errors.size(), 1u) << "rank 0 alone reports: " << text;
  EXPECT_EQ(count_of(text, "config error"), 1u) << text;
  EXPECT_NE(errors[0].find("model.vp"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("m.h5"), std::string::npos) << errors[0];
  EXPECT_EQ(count_of(errors[0], "nan"), 1u) << errors[0];
  EXPECT_NE(errors[0].find(index), std::string::npos) << errors[0];
  // Neither the result nor its temporary file.
  for (const auto& e : fs::directory_iterator(survey.dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_FALSE(name.find("four") != std::string::npos && name != four + ".log") << "left behind: " << name;
  }

  const std::string one = "one.h5";
  EXPECT_EQ(survey.minimod(0, one, ""), 2) << survey.log(one);
  const auto one_errors = lines_with(survey.log(one), "config error");
  ASSERT_EQ(one_errors.size(), 1u) << survey.log(one);
  // The same message, but that the rank counts the bad values of the part it read.
  std::string part = from(errors[0], "config error");
  const std::string in_part = " in this part";
  ASSERT_NE(part.find(in_part), std::string::npos) << part;
  part.erase(part.find(in_part), in_part.size());
  EXPECT_EQ(part, from(one_errors[0], "config error"));
  for (const auto& e : fs::directory_iterator(survey.dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_FALSE(name.find("one") != std::string::npos && name != one + ".log") << "left behind: " << name;
  }
}

}  // namespace
