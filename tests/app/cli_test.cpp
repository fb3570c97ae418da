// The minimod command line, end to end: the real binary (MINIMOD_BINARY) run on bad inputs written
// to a fresh temporary folder. Every bad input must stop the run with exit status 2 (config or
// command line) or 1 (other), exactly one `minimod: error:` line on stderr naming the key, file or
// option, and no output at all (no .h5, no .h5.partial, no .xmf: nothing new in the folder).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "h5_read.hpp"
#include "io/model_file.hpp"
#include "kernels/backends.hpp"

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// `text` with the first `from` replaced by `to`; throws if `from` is absent (a broken test).
std::string edit(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("test bug: '" + from + "' not in the config");
  return text.replace(at, from.size(), to);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

struct Result {
  int status = -1;
  std::string out, err;
  std::string transcript() const {
    return "exit status " + std::to_string(status) + "\n--- stdout\n" + out + "--- stderr\n" + err;
  }
};

/// Each test gets its own folder: `work/` is the working directory of the binary and holds the
/// inputs; the captured stdout/stderr live beside it, so `work/` shows exactly what a run wrote.
class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "minimod-cli-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr) << "mkdtemp failed";
    root_ = tmpl;
    work_ = root_ / "work";
    fs::create_directories(work_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!HasFailure()) fs::remove_all(root_, ec);  // keep the evidence of a failure
    else std::fprintf(stderr, "kept %s\n", root_.c_str());
  }

  /// Regular files and folders under work/, relative.
  std::set<std::string> listing() const {
    std::set<std::string> names;
    for (const auto& e : fs::recursive_directory_iterator(work_))
      names.insert(fs::relative(e.path(), work_).string());
    return names;
  }

  Result run(const std::vector<std::string>& args) {
    before_ = listing();
    // One thread: ctest runs tests side by side on few cores, where spinning OpenMP teams crawl.
    std::string cmd = "cd " + shell_quote(work_.string()) + " && OMP_NUM_THREADS=1 " +
                      shell_quote(MINIMOD_BINARY);
    for (const auto& a : args) cmd += " " + shell_quote(a);
    cmd += " </dev/null >" + shell_quote((root_ / "stdout").string()) + " 2>" +
           shell_quote((root_ / "stderr").string());
    const int rc = std::system(cmd.c_str());
    Result r;
    r.status = rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
    r.out = read_text(root_ / "stdout");
    r.err = read_text(root_ / "stderr");
    return r;
  }

  /// A small valid survey (24^3 points, 8-point PML, cpu): each bad-input test breaks one thing.
  /// The base config as a survey of three shots (no source.position), results out-000N.h5.
  std::string survey_yaml(const std::string& shots = "[[60, 120, 60], [120, 120, 60], [180, 100, 60]]") const {
    return edit(base_yaml(), "delay: 0.15, position: [120, 120, 60]}", "delay: 0.15}") +
           "shots:\n  - {points: " + shots + "}\n";
  }
  std::string base_yaml() const {
    return "propagator: acoustic_iso\n"
           "grid: {shape: [24, 24, 24], spacing: [10, 10, 10]}\n"
           "model:\n"
           "  vp: {constant: 2000}\n"
           "time:\n"
           "  duration: 0.2\n"
           "source: {wavelet: ricker, frequency: 10, delay: 0.15, position: [120, 120, 60]}\n"
           "receivers:\n"
           "  - {line: {start: [0, 120, 10], end: [230, 120, 10], count: 12}}\n"
           "boundary: {pml: {width: 8}}\n"
           "execution: {backend: cpu}\n"
           "output:\n"
           "  file: out.h5\n";
  }
  fs::path out_h5() const { return work_ / "out.h5"; }

  std::string write_config(const std::string& text, const std::string& name = "survey.yaml") {
    write_text(work_ / name, text);
    return (work_ / name).string();
  }

  /// Runs `base_yaml()` (optionally edited) with extra arguments.
  Result run_base(const std::vector<std::string>& extra = {}, const std::string& yaml = "") {
    std::vector<std::string> args{"--config", write_config(yaml.empty() ? base_yaml() : yaml)};
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args);
  }

  /// The run failed with `status`, one `minimod: error:` line naming all of `needles`, nothing
  /// written. Returns that line.
  std::string expect_rejected(const Result& r, int status, const std::vector<std::string>& needles) {
    SCOPED_TRACE(r.transcript());
    EXPECT_EQ(r.status, status);
    std::vector<std::string> errors;
    for (const auto& l : lines_of(r.err))
      if (l.find("minimod: error:") != std::string::npos) errors.push_back(l);
    EXPECT_EQ(errors.size(), 1u) << "expected exactly one 'minimod: error:' line";
    if (!errors.empty()) {
      EXPECT_EQ(errors[0].rfind("minimod: error: ", 0), 0u) << "error line must start the line";
      for (const auto& n : needles)
        EXPECT_NE(errors[0].find(n), std::string::npos) << "error line does not name '" << n << "'";
    }
    EXPECT_EQ(r.err.find("terminate called"), std::string::npos);
    EXPECT_EQ(r.out.find("summary "), std::string::npos) << "a failed run printed a summary";
    expect_nothing_written();
    return errors.empty() ? "" : errors[0];
  }

  void expect_nothing_written() {
    EXPECT_FALSE(fs::exists(out_h5()));
    EXPECT_FALSE(fs::exists(out_h5().string() + ".partial"));
    EXPECT_FALSE(fs::exists(work_ / "out.xmf"));
    EXPECT_EQ(listing(), before_) << "the run left files behind";
  }

  /// A float32 model [24][24][24] of `value` (or of `shape`) in work/`file`.
  void write_model(const std::string& file, const std::string& dataset,
                   std::array<int, 3> shape = {24, 24, 24}, float value = 2000.0f) {
    std::vector<float> v(static_cast<size_t>(shape[0]) * shape[1] * shape[2], value);
    minimod::io::write_model_dataset((work_ / file).string(), dataset, shape, v);
  }

  /// "stability limit <x> s" as the dry run of the base config prints it.
  std::string stability_limit_text() {
    const Result r = run_base({"--dry-run"});
    std::smatch m;
    const std::regex re("stability limit ([0-9.eE+-]+) s");
    if (r.status != 0 || !std::regex_search(r.err, m, re)) {
      ADD_FAILURE() << "dry run does not print the stability limit\n" << r.transcript();
      return "?";
    }
    return m[1];
  }

  fs::path root_, work_;
  std::set<std::string> before_;
};

// ---------------------------------------------------------------- what works

TEST_F(Cli, HelpPrintsUsageAndExitsZero) {
  const Result r = run({"--help"});
  EXPECT_EQ(r.status, 0) << r.transcript();
  EXPECT_NE(r.out.find("usage: minimod --config FILE"), std::string::npos) << r.transcript();
  EXPECT_NE(r.out.find("--dry-run"), std::string::npos);
  EXPECT_NE(r.out.find("exit status"), std::string::npos);
  EXPECT_TRUE(listing().empty());
}

TEST_F(Cli, VersionPrintsTheVersion) {
  const Result r = run({"--version"});
  EXPECT_EQ(r.status, 0) << r.transcript();
  EXPECT_EQ(r.out.rfind(std::string("minimod ") + MINIMOD_VERSION, 0), 0u) << r.transcript();
}

TEST_F(Cli, ListKernelsIncludesCpuReference) {
  const Result r = run({"--list-kernels"});
  EXPECT_EQ(r.status, 0) << r.transcript();
  bool found = false;
  for (const auto& l : lines_of(r.out)) found = found || l.rfind("cpu reference", 0) == 0;
  EXPECT_TRUE(found) << r.transcript();
}

TEST_F(Cli, BaseConfigOfTheseTestsIsValid) {
  const Result r = run_base({"--dry-run"});
  EXPECT_EQ(r.status, 0) << r.transcript();
  EXPECT_EQ(r.err.find("minimod: error:"), std::string::npos) << r.transcript();
}

TEST_F(Cli, DryRunPrintsThePlanWithMemoryAndWritesNothing) {
  const Result r = run({"--config", std::string(MINIMOD_SOURCE_DIR) + "/configs/quickstart.yaml",
                        "--dry-run"});
  SCOPED_TRACE(r.transcript());
  EXPECT_EQ(r.status, 0);
  const std::string all = r.out + r.err;
  EXPECT_NE(all.find("201 x 101 x 121"), std::string::npos) << "plan lacks the model shape";
  EXPECT_NE(all.find("stability limit"), std::string::npos) << "plan lacks dt";
  EXPECT_TRUE(std::regex_search(all, std::regex("memory +[0-9.eE+-]+ GiB"))) << "no memory estimate";
  EXPECT_EQ(all.find("summary "), std::string::npos);
  EXPECT_TRUE(listing().empty()) << "a dry run wrote files";
}

TEST_F(Cli, TinyQuickstartRunWritesSeismogramsAndPrintsSummary) {
  const fs::path out = work_ / "tiny" / "shot.h5";
  const Result r = run({"--config", std::string(MINIMOD_SOURCE_DIR) + "/configs/quickstart.yaml",
                        "--set", "grid.shape=[24,24,24]",
                        "--set", "source.position=[120,120,20]",
                        "--set", "receivers[0].line.start=[0,120,10]",
                        "--set", "receivers[0].line.end=[230,120,10]",
                        "--set", "receivers[0].line.count=24",
                        "--set", "time.duration=0.1",
                        "--set", "boundary.pml.width=8",
                        "--set", "output.snapshots.every=10",
                        "--set", "execution.backend=cpu",
                        "--set", "output.file=" + out.string()});
  SCOPED_TRACE(r.transcript());
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.err.find("minimod: error:"), std::string::npos);
  EXPECT_TRUE(std::regex_search(r.out, std::regex("(^|\n)summary propagator=acoustic_iso backend=cpu "
                                                  "kernel=reference [^\n]* output=[^\n]*shot\\.h5")));
  ASSERT_TRUE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
  EXPECT_TRUE(fs::exists(work_ / "tiny" / "shot.xmf"));

  EXPECT_NE(r.out.find(" growth_after_source="), std::string::npos);

  const hid_t f = H5Fopen(out.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  EXPECT_GT(H5Aexists(f, "growth_after_source"), 0) << "the file does not say whether the run grew";
  ASSERT_GT(H5Lexists(f, "/seismograms", H5P_DEFAULT), 0);
  ASSERT_GT(H5Lexists(f, "/seismograms/p", H5P_DEFAULT), 0);
  const hid_t d = H5Dopen2(f, "/seismograms/p", H5P_DEFAULT);
  ASSERT_GE(d, 0);
  const hid_t s = H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  EXPECT_EQ(H5Sget_simple_extent_ndims(s), 2);
  H5Sget_simple_extent_dims(s, dims, nullptr);
  EXPECT_EQ(dims[0], 24u) << "one trace per receiver";
  EXPECT_GE(dims[1], 40u) << "0.1 s at 2 ms";
  std::vector<float> p(static_cast<size_t>(dims[0] * dims[1]));
  EXPECT_GE(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, p.data()), 0);
  double peak = 0;
  for (float x : p) {
    ASSERT_TRUE(std::isfinite(x));
    peak = std::max(peak, std::abs(static_cast<double>(x)));
  }
  EXPECT_GT(peak, 0) << "the seismograms are all zero";
  H5Sclose(s);
  H5Dclose(d);
  EXPECT_GT(H5Lexists(f, "/receivers", H5P_DEFAULT), 0);
  H5Fclose(f);
}

TEST_F(Cli, OverwriteTrueReplacesAnExistingOutput) {
  write_text(out_h5(), "old result\n");
  const Result r = run_base({"--set", "output.overwrite=true"});
  ASSERT_EQ(r.status, 0) << r.transcript();
  EXPECT_NE(read_text(out_h5()), "old result\n");
  EXPECT_GT(H5Fis_hdf5(out_h5().c_str()), 0);
  EXPECT_FALSE(fs::exists(out_h5().string() + ".partial"));
}

// ---------------------------------------------------------------- command line

TEST_F(Cli, UnknownOptionIsRejectedByName) {
  expect_rejected(run({"--frobnicate"}), 2, {"--frobnicate"});
}

TEST_F(Cli, MissingConfigOptionIsRejected) {
  expect_rejected(run({}), 2, {"--config"});
}

TEST_F(Cli, ConfigOptionWithoutValueIsRejected) {
  expect_rejected(run({"--config"}), 2, {"--config"});
}

TEST_F(Cli, MissingConfigFileIsNamed) {
  expect_rejected(run({"--config", (work_ / "no-such.yaml").string()}), 2, {"no-such.yaml"});
}

TEST_F(Cli, ConfigPathThatIsAFolderIsRejected) {
  fs::create_directories(work_ / "folder.yaml");
  expect_rejected(run({"--config", (work_ / "folder.yaml").string()}), 2, {"folder.yaml"});
}

TEST_F(Cli, SetWithoutEqualsSignIsRejected) {
  expect_rejected(run_base({"--set", "time.duration"}), 2, {"--set", "time.duration"});
}

TEST_F(Cli, SetWithEmptyKeyIsRejected) {
  expect_rejected(run_base({"--set", "=3"}), 2, {"--set", "=3"});
}

TEST_F(Cli, SetOfUnknownKeyIsMarkedAsFromTheCommandLine) {
  expect_rejected(run_base({"--set", "time.dtt=0.001"}), 2, {"time.dtt", "(--set)"});
}

// ---------------------------------------------------------------- the YAML itself

TEST_F(Cli, YamlSyntaxErrorNamesTheFileAndLine) {
  const std::string yaml = edit(base_yaml(), "shape: [24, 24, 24]", "shape: [24, 24, 24");
  expect_rejected(run_base({}, yaml), 2, {"survey.yaml", "line", "YAML"});
}

TEST_F(Cli, UnknownKeyIsNamedWithItsLineAndTheNearestKey) {
  const std::string yaml = edit(base_yaml(), "duration: 0.2", "duraton: 0.2");
  expect_rejected(run_base({}, yaml), 2, {"time.duraton", "(line 6)", "'duration'"});
}

TEST_F(Cli, WrongTypeIsNamedWithItsLine) {
  const std::string yaml = edit(base_yaml(), "duration: 0.2", "duration: fast");
  expect_rejected(run_base({}, yaml), 2, {"time.duration", "(line 6)", "fast"});
}

TEST_F(Cli, NonIntegerShapeIsRejected) {
  expect_rejected(run_base({"--set", "grid.shape=[24,24.5,24]"}), 2, {"grid.shape[1]", "24.5"});
}

TEST_F(Cli, ShapeWithTwoEntriesIsRejected) {
  expect_rejected(run_base({"--set", "grid.shape=[24,24]"}), 2, {"grid.shape"});
}

TEST_F(Cli, ZeroGridPointsIsOutOfRange) {
  const std::string yaml = edit(base_yaml(), "shape: [24, 24, 24]", "shape: [24, 24, 0]");
  expect_rejected(run_base({}, yaml), 2, {"grid.shape[2]", "(line 2)", "got 0"});
}

TEST_F(Cli, CflAboveOneIsOutOfRange) {
  expect_rejected(run_base({"--set", "time.cfl=1.5"}), 2, {"time.cfl", "1.5"});
}

TEST_F(Cli, MissingSourceSectionIsNamed) {
  const std::string yaml = edit(base_yaml(),
      "source: {wavelet: ricker, frequency: 10, delay: 0.15, position: [120, 120, 60]}\n", "");
  expect_rejected(run_base({}, yaml), 2, {"source.position", "missing"});
}

TEST_F(Cli, MissingDurationAndStepsIsRejected) {
  const std::string yaml = edit(base_yaml(), "  duration: 0.2\n", "  cfl: 0.5\n");
  expect_rejected(run_base({}, yaml), 2, {"time.duration", "time.steps", "missing"});
}

TEST_F(Cli, EmptyConfigNamesTheFirstMissingKey) {
  expect_rejected(run({"--config", write_config("")}), 2, {"grid.shape", "missing"});
}

TEST_F(Cli, DurationAndStepsTogetherAreRejected) {
  expect_rejected(run_base({"--set", "time.steps=10"}), 2, {"time.steps", "time.duration"});
}

TEST_F(Cli, UnknownWaveletIsRejectedWithTheChoices) {
  expect_rejected(run_base({"--set", "source.wavelet=gabor"}), 2, {"source.wavelet", "gabor", "ricker"});
}

// ---------------------------------------------------------------- checks against the model

TEST_F(Cli, SourceOutsideTheModelIsRejected) {
  expect_rejected(run_base({"--set", "source.position=[120,120,500]"}), 2,
                  {"source.position", "outside the model"});
}

TEST_F(Cli, ReceiverOutsideTheModelIsRejected) {
  const std::string yaml = edit(base_yaml(), "end: [230, 120, 10]", "end: [240, 120, 10]");
  expect_rejected(run_base({}, yaml), 2, {"receivers", "outside the model", "240"});
}

TEST_F(Cli, ExplicitDtAboveTheStabilityLimitIsRejectedAndPrintsTheLimit) {
  const std::string limit = stability_limit_text();
  const std::string yaml = edit(base_yaml(), "  duration: 0.2\n", "  duration: 0.2\n  dt: 0.01\n");
  expect_rejected(run_base({}, yaml), 2, {"time.dt", "(line 7)", "stability limit " + limit});
}

TEST_F(Cli, SnapshotBoxOutsideTheModelIsRejected) {
  expect_rejected(run_base({"--set", "output.snapshots={every: 5, box: [0, 30, 0, 24, 0, 24]}"}), 2,
                  {"output.snapshots.box"});
}

// ---------------------------------------------------------------- input files

TEST_F(Cli, MissingModelFileIsNamed) {
  const std::string yaml = edit(base_yaml(), "vp: {constant: 2000}", "vp: {file: absent.h5, dataset: vp}");
  expect_rejected(run_base({}, yaml), 2, {"model.vp", "absent.h5"});
}

TEST_F(Cli, ModelFileThatIsNotHdf5IsRejected) {
  write_text(work_ / "model.h5", "not an HDF5 file\n");
  const std::string yaml = edit(base_yaml(), "vp: {constant: 2000}", "vp: {file: model.h5, dataset: vp}");
  expect_rejected(run_base({}, yaml), 2, {"model.vp", "model.h5"});
}

TEST_F(Cli, MissingModelDatasetIsNamed) {
  write_model("model.h5", "velocity");
  const std::string yaml = edit(base_yaml(), "vp: {constant: 2000}", "vp: {file: model.h5, dataset: vp}");
  expect_rejected(run_base({}, yaml), 2, {"model.vp", "vp"});
}

TEST_F(Cli, ModelDatasetOfTheWrongShapeIsRejected) {
  write_model("model.h5", "vp", {24, 24, 23});
  const std::string yaml = edit(base_yaml(), "vp: {constant: 2000}", "vp: {file: model.h5, dataset: vp}");
  const std::string line = expect_rejected(run_base({}, yaml), 2, {"model.vp", "23"});
  EXPECT_NE(line.find("24"), std::string::npos) << "should give the expected shape too: " << line;
}

TEST_F(Cli, ModelDatasetHoldingNanIsRejected) {
  write_model("model.h5", "vp", {24, 24, 24}, std::numeric_limits<float>::quiet_NaN());
  const std::string yaml = edit(base_yaml(), "vp: {constant: 2000}", "vp: {file: model.h5, dataset: vp}");
  expect_rejected(run_base({}, yaml), 2, {"model.vp"});
}

TEST_F(Cli, MissingWaveletFileIsNamed) {
  expect_rejected(run_base({"--set", "source.wavelet=file",
                            "--set", "source.file={path: wavelet.h5, dataset: w, dt: 0.001}"}),
                  2, {"source.file", "wavelet.h5"});
}

// ---------------------------------------------------------------- execution

TEST_F(Cli, UnknownBackendIsRejectedWithTheChoices) {
  const std::string yaml = edit(base_yaml(), "backend: cpu", "backend: fpga");
  expect_rejected(run_base({}, yaml), 2, {"execution.backend", "fpga", "cuda"});
}

TEST_F(Cli, CudaBackendFailsClearlyWithoutAGpuAndUnknownKernelFamiliesAreRejected) {
  const std::string yaml = edit(base_yaml(), "backend: cpu", "backend: cuda, kernel: no_such_family");
  const Result r = run_base({}, yaml);
  if (minimod::kernels::cuda_device_count() == 0) {
    expect_rejected(r, 2, {"execution.backend", "cuda"});
  } else {
    expect_rejected(r, 2, {"execution.kernel", "no_such_family"});
  }
}

TEST_F(Cli, ExistingOutputIsNeverOverwritten) {
  const std::string old = std::string("precious result \0 bytes\n", 24);
  write_text(out_h5(), old);
  const Result r = run_base();
  SCOPED_TRACE(r.transcript());
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(read_text(out_h5()), old) << "the old file was changed";
  EXPECT_FALSE(fs::exists(out_h5().string() + ".partial"));
  EXPECT_FALSE(fs::exists(work_ / "out.xmf"));
  EXPECT_EQ(listing(), before_);
  size_t errors = 0;
  for (const auto& l : lines_of(r.err))
    if (l.rfind("minimod: error: ", 0) == 0) {
      ++errors;
      EXPECT_NE(l.find("out.h5"), std::string::npos) << l;
      EXPECT_NE(l.find("overwrite"), std::string::npos) << l;
    }
  EXPECT_EQ(errors, 1u);
}

TEST_F(Cli, OutputFolderThatCannotBeCreatedIsAnOtherError) {
  write_text(work_ / "plainfile", "x");
  const Result r = run_base({"--set", "output.file=" + (work_ / "plainfile" / "out.h5").string()});
  expect_rejected(r, 1, {"plainfile"});
}

// ---------------------------------------------------------------- surveys (shots)

TEST_F(Cli, SurveyShotsEqualOneShotRunsAndASurveyCutShortResumes) {
  const std::array<std::array<double, 3>, 3> at = {{{60, 120, 60}, {120, 120, 60}, {180, 100, 60}}};
  const auto file = [&](int s) { return (work_ / ("out-000" + std::to_string(s) + ".h5")).string(); };
  const std::string config = write_config(survey_yaml(), "line.yaml");
  Result r = run({"--config", config});
  ASSERT_EQ(r.status, 0) << r.transcript();
  EXPECT_NE(r.out.find("survey shots=3 run=3 skipped=0 failed=0 groups=1"), std::string::npos) << r.transcript();
  std::vector<std::vector<float>> traces;
  for (int s = 0; s < 3; ++s) {
    SCOPED_TRACE("shot " + std::to_string(s));
    EXPECT_NE(r.out.find("shot=" + std::to_string(s) + "\n"), std::string::npos) << "no summary line for it";
    EXPECT_EQ(minimod::testing::read_root_attribute(file(s), "shot"), std::vector<double>{double(s)});
    EXPECT_EQ(minimod::testing::read_root_attribute(file(s), "shots"), std::vector<double>{3.0});
    const std::vector<double> where(at[s].begin(), at[s].end());
    EXPECT_EQ(minimod::testing::read_root_attribute(file(s), "source_position"), where);
    traces.push_back(minimod::testing::read_dataset(file(s), "/seismograms/p"));
    // The same as a run of the one-shot config with the source there, bit for bit.
    const std::string one = (work_ / ("one" + std::to_string(s) + ".h5")).string();
    std::ostringstream pos;
    pos << "source.position=[" << at[s][0] << "," << at[s][1] << "," << at[s][2] << "]";
    const Result single = run_base({"--set", pos.str(), "--set", "output.file=" + one});
    ASSERT_EQ(single.status, 0) << single.transcript();
    const auto expected = minimod::testing::read_dataset(one, "/seismograms/p");
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(traces.back(), expected);
    EXPECT_TRUE(std::any_of(expected.begin(), expected.end(), [](float x) { return x != 0.0f; }));
  }
  EXPECT_NE(traces[0], traces[2]) << "the shots recorded the same traces: did the source move?";

  // Run again: every result is there, none is touched.
  const std::string before = read_text(file(1));
  r = run({"--config", config});
  ASSERT_EQ(r.status, 0) << r.transcript();
  EXPECT_NE(r.out.find("survey shots=3 run=0 skipped=3 failed=0"), std::string::npos) << r.transcript();
  EXPECT_EQ(r.out.find("summary "), std::string::npos) << r.transcript();
  EXPECT_EQ(read_text(file(1)), before);

  // A survey cut short (shot 1's result missing, a stale partial file beside it) runs shot 1 only.
  fs::remove(file(1));
  write_text(file(1) + ".partial", "cut off");
  r = run({"--config", config});
  ASSERT_EQ(r.status, 0) << r.transcript();
  EXPECT_NE(r.out.find("survey shots=3 run=1 skipped=2 failed=0"), std::string::npos) << r.transcript();
  EXPECT_NE(r.err.find("shot 1 of 3: source at (120, 120, 60) m"), std::string::npos) << r.transcript();
  EXPECT_EQ(minimod::testing::read_dataset(file(1), "/seismograms/p"), traces[1]);
  EXPECT_FALSE(fs::exists(file(1) + ".partial"));

  // output.overwrite: every shot again.
  r = run({"--config", config, "--set", "output.overwrite=true"});
  EXPECT_NE(r.out.find("survey shots=3 run=3 skipped=0"), std::string::npos) << r.transcript();
}

TEST_F(Cli, TtiSurveyShotsEqualOneShotRunsWithAndWithoutAnIsotropicZone) {
  // The CPML's memory fields back to rest between shots on one propagator (the model is every
  // shot's alike); with an isotropic zone around the source each shot builds its own model.
  const std::string tti =
      "propagator: acoustic_tti\n"
      "grid: {shape: [24, 20, 22], spacing: [10, 10, 10]}\n"
      "model:\n"
      "  vp: {constant: 2000}\n"
      "  epsilon: {constant: 0.2}\n"
      "  delta: {constant: 0.1}\n"
      "  theta: {constant: 30, units: deg}\n"
      "  phi: {constant: 20, units: deg}\n"
      "time: {duration: 0.12}\n"
      "source: {wavelet: ricker, frequency: 15}\n"
      "shots:\n  - {points: [[60, 100, 60], [170, 90, 110]]}\n"
      "receivers:\n  - {line: {start: [0, 100, 30], end: [230, 100, 30], count: 12}}\n"
      "boundary: {pml: {width: 6}}\n"
      "execution: {backend: cpu}\n"
      "output: {file: tti.h5, record: q}\n";
  const std::array<std::string, 2> at = {"[60,100,60]", "[170,90,110]"};
  for (const std::string zone : {"0", "40"}) {
    SCOPED_TRACE("isotropic_radius " + zone);
    const std::string config = write_config(tti, "tti.yaml");
    const std::vector<std::string> set_zone = {"--set", "model.isotropic_radius=" + zone,
                                               "--set", "output.file=tti" + zone + ".h5"};
    std::vector<std::string> args = {"--config", config};
    args.insert(args.end(), set_zone.begin(), set_zone.end());
    const Result r = run(args);
    ASSERT_EQ(r.status, 0) << r.transcript();
    EXPECT_NE(r.out.find("survey shots=2 run=2"), std::string::npos) << r.transcript();
    for (int s = 0; s < 2; ++s) {
      const std::string one = "one" + zone + "_" + std::to_string(s) + ".h5";
      const std::string single = edit(tti, "frequency: 15}\nshots:\n  - {points: [[60, 100, 60], [170, 90, 110]]}\n",
                                      "frequency: 15, position: " + at[static_cast<size_t>(s)] + "}\n");
      const Result o = run({"--config", write_config(single, "one.yaml"), "--set", "model.isotropic_radius=" + zone,
                            "--set", "output.file=" + one});
      ASSERT_EQ(o.status, 0) << o.transcript();
      const auto expected = minimod::testing::read_dataset((work_ / one).string(), "/seismograms/q");
      ASSERT_FALSE(expected.empty());
      EXPECT_TRUE(std::any_of(expected.begin(), expected.end(), [](float x) { return x != 0.0f; }));
      EXPECT_EQ(minimod::testing::read_dataset((work_ / ("tti" + zone + "-000" + std::to_string(s) + ".h5")).string(),
                                               "/seismograms/q"),
                expected)
          << "shot " << s;
    }
  }
}

TEST_F(Cli, SurveyConfigOfTheRepositoryPlansItsNineShots) {
  const Result r = run({"--config", std::string(MINIMOD_SOURCE_DIR) + "/configs/survey.yaml", "--dry-run"});
  ASSERT_EQ(r.status, 0) << r.transcript();
  EXPECT_NE(r.err.find("survey: 9 shots, 1 group of 1 rank; results out/survey/line-0000.h5 .. "
                       "out/survey/line-0008.h5"),
            std::string::npos)
      << r.transcript();
  EXPECT_NE(r.err.find("at (200, 500, 20) m"), std::string::npos) << "the first shot's plan: " << r.transcript();
  EXPECT_TRUE(listing().empty()) << "a dry run wrote files";
}

TEST_F(Cli, SurveyWithAShotOutsideTheModelStopsBeforeAnyShot) {
  const Result r = run_base({}, survey_yaml("[[60, 120, 60], [120, 120, 60], [120, 900, 60]]"));
  expect_rejected(r, 2, {"shots", "y = 900", "(shot 2 of 3)"});
  EXPECT_EQ(r.out.find("survey "), std::string::npos);
}

TEST_F(Cli, SurveyDryRunListsItsShotsAndWritesNothing) {
  const Result r = run_base({"--dry-run"}, survey_yaml());
  ASSERT_EQ(r.status, 0) << r.transcript();
  EXPECT_NE(r.err.find("survey: 3 shots, 1 group of 1 rank; results "), std::string::npos) << r.transcript();
  EXPECT_NE(r.err.find("out-0000.h5 .. "), std::string::npos) << r.transcript();
  EXPECT_NE(r.err.find("out-0002.h5"), std::string::npos) << r.transcript();
  EXPECT_NE(r.err.find("stability limit"), std::string::npos) << "no plan printed";
  EXPECT_EQ(listing(), before_) << "a dry run wrote files";
}

TEST_F(Cli, SurveyGoesOnPastAShotThatBlowsUpAndExitsOne) {
  // A source far too strong: every shot blows up at its first health check, and each is tried.
  const Result r = run_base({"--set", "source.amplitude=1e35"}, survey_yaml());
  SCOPED_TRACE(r.transcript());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("survey shots=3 run=0 skipped=0 failed=3"), std::string::npos);
  for (int s = 0; s < 3; ++s)
    EXPECT_NE(r.err.find("shot " + std::to_string(s) + " of 3 failed (no result written): the wavefield blew up"),
              std::string::npos);
  EXPECT_NE(r.err.find("failed shots (run again to retry them): 0,1,2"), std::string::npos);
  EXPECT_EQ(listing(), before_) << "a failed shot left files behind";
}

// ---------------------------------------------------------------- checkpoints (app/checkpoint.hpp)

/// The base config with a TTI model ("sponge" or "cpml" layer) or as it is ("iso").
std::string checkpoint_case_yaml(const std::string& base, const std::string& kind) {
  if (kind == "iso") return base;
  std::string tti = edit(base, "propagator: acoustic_iso", "propagator: acoustic_tti");
  tti = edit(tti, "  vp: {constant: 2000}\n",
             "  vp: {constant: 2000}\n  epsilon: {constant: 0.2}\n  delta: {constant: 0.1}\n"
             "  theta: {constant: 30, units: deg}\n  phi: {constant: 20, units: deg}\n");
  return edit(tti, "boundary: {pml: {width: 8}}", "boundary: {pml: {width: 8, tti: " + kind + "}}");
}

TEST_F(Cli, ARunStoppedAtACheckpointResumesToTheUnbrokenResult) {
  for (const std::string kind : {"iso", "cpml", "sponge"}) {
    SCOPED_TRACE(kind);
    const std::string yaml = checkpoint_case_yaml(base_yaml(), kind) + "  final_wavefield: true\n";
    const std::string unbroken = (work_ / ("unbroken-" + kind + ".h5")).string();
    Result r = run_base({"--set", "output.file=" + unbroken}, yaml);
    ASSERT_EQ(r.status, 0) << r.transcript();
    const std::string file = "cut-" + kind + ".h5", checkpoint = "cut-" + kind + ".checkpoint.h5";
    const std::vector<std::string> set = {"--set", "output.file=" + file, "--set", "checkpoint.every=25"};
    std::vector<std::string> stop = set;
    stop.insert(stop.end(), {"--set", "checkpoint.stop_at=60"});
    // Stopped after step 60: exit 3, the checkpoint there, no result and no partial file.
    r = run_base(stop, yaml);
    EXPECT_EQ(r.status, 3) << r.transcript();
    EXPECT_NE(r.err.find("stopped at step 60 of"), std::string::npos) << r.transcript();
    EXPECT_NE(r.err.find("checkpoint " + checkpoint), std::string::npos) << r.transcript();
    EXPECT_NE(r.err.find("checkpoint at step 50/"), std::string::npos) << "the every-25 checkpoint\n" << r.transcript();
    EXPECT_EQ(r.out.find("summary "), std::string::npos);
    EXPECT_FALSE(fs::exists(work_ / file));
    EXPECT_FALSE(fs::exists(work_ / (file + ".partial")));
    ASSERT_TRUE(fs::exists(work_ / checkpoint));
    EXPECT_EQ(minimod::testing::read_root_attribute((work_ / checkpoint).string(), "step"), std::vector<double>{60});
    // The dry run foretells it: when, where, and its size within 5%.
    std::vector<std::string> dry = stop;
    dry.push_back("--dry-run");
    const Result plan = run_base(dry, yaml);
    std::smatch m;
    const std::regex line("checkpoint   every 25 steps, on SIGUSR1 or SIGTERM \\(then stop\\), after step 60 \\(then stop\\) -> " +
                          checkpoint + ", ([0-9.e+-]+) GB each");
    ASSERT_TRUE(std::regex_search(plan.err, m, line)) << plan.transcript();
    const double size = static_cast<double>(fs::file_size(work_ / checkpoint));
    EXPECT_NEAR(std::stod(m[1]) * 1e9, size, 0.05 * size);
    // Run again (stop_at already passed): resumed there, the unbroken run's bits, the checkpoint gone.
    r = run_base(stop, yaml);
    ASSERT_EQ(r.status, 0) << r.transcript();
    EXPECT_NE(r.err.find("resumed from checkpoint " + checkpoint + " at step 60/"), std::string::npos) << r.transcript();
    EXPECT_FALSE(fs::exists(work_ / checkpoint));
    const std::string resumed = (work_ / file).string();
    for (const char* d : {"/seismograms/p", "/final/p"}) {
      const auto expected = minimod::testing::read_dataset(unbroken, d);
      ASSERT_FALSE(expected.empty()) << d;
      EXPECT_TRUE(std::any_of(expected.begin(), expected.end(), [](float x) { return x != 0.0f; })) << d;
      EXPECT_EQ(minimod::testing::read_dataset(resumed, d), expected) << d;
    }
  }
}

TEST_F(Cli, ACheckpointOfAnotherConfigIsRefusedAndKept) {
  expect_rejected(run_base({"--set", "checkpoint.every=-1"}), 2, {"checkpoint.every", ">= 0"});
  const std::vector<std::string> stop = {"--set", "checkpoint.stop_at=40"};
  ASSERT_EQ(run_base(stop).status, 3);
  const fs::path checkpoint = work_ / "out.checkpoint.h5";
  ASSERT_TRUE(fs::exists(checkpoint));
  const std::string kept = read_text(checkpoint);
  // Another source frequency: refused before anything is written, the checkpoint untouched.
  std::vector<std::string> other = {"--set", "source.frequency=12", "--set", "checkpoint.every=0"};
  Result r = run_base(other);
  expect_rejected(r, 2, {"checkpoint.file", "out.checkpoint.h5", "another config", "output.overwrite"});
  EXPECT_EQ(read_text(checkpoint), kept);
  // A config without a checkpoint section starts afresh, says so, and leaves the checkpoint be.
  r = run_base();
  ASSERT_EQ(r.status, 0) << r.transcript();
  EXPECT_NE(r.err.find("a checkpoint lies at out.checkpoint.h5 but the config has no checkpoint section"),
            std::string::npos) << r.transcript();
  EXPECT_EQ(read_text(checkpoint), kept);
  // output.overwrite: a fresh run over both, and the checkpoint removed once the result is in.
  other.insert(other.end(), {"--set", "output.overwrite=true"});
  r = run_base(other);
  ASSERT_EQ(r.status, 0) << r.transcript();
  EXPECT_EQ(r.err.find("resumed"), std::string::npos) << r.transcript();
  EXPECT_FALSE(fs::exists(checkpoint));
}

TEST_F(Cli, ADamagedCheckpointIsRefusedByName) {
  ASSERT_EQ(run_base({"--set", "checkpoint.stop_at=40"}).status, 3);
  const fs::path checkpoint = work_ / "out.checkpoint.h5";
  std::string bytes = read_text(checkpoint);
  ASSERT_GT(bytes.size(), 100000u);
  for (size_t at = bytes.size() / 2; at < bytes.size() / 2 + 64; ++at) bytes[at] = static_cast<char>(~bytes[at]);
  write_text(checkpoint, bytes);
  const Result r = run_base({"--set", "checkpoint.every=0"});
  SCOPED_TRACE(r.transcript());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("out.checkpoint.h5"), std::string::npos);
  EXPECT_NE(r.err.find("damaged"), std::string::npos);
  EXPECT_FALSE(fs::exists(out_h5()));
  EXPECT_FALSE(fs::exists(out_h5().string() + ".partial"));
  write_text(checkpoint, "not HDF5");
  expect_rejected(run_base({"--set", "checkpoint.every=0"}), 2, {"checkpoint.file", "out.checkpoint.h5", "not an HDF5 file"});
}

TEST_F(Cli, SnapshotsBeforeACheckpointAreKeptAndTheResumedRunWritesTheRest) {
  const std::vector<std::string> snaps = {"--set", "output.snapshots.every=20", "--set", "output.final_wavefield=true"};
  std::vector<std::string> unbroken = snaps;
  unbroken.insert(unbroken.end(), {"--set", "output.file=unbroken.h5"});
  ASSERT_EQ(run_base(unbroken).status, 0);
  std::vector<std::string> stop = snaps;
  stop.insert(stop.end(), {"--set", "checkpoint.stop_at=70"});
  Result r = run_base(stop);
  ASSERT_EQ(r.status, 3) << r.transcript();
  // The three snapshots so far stay in the partial file (nothing that looks complete).
  EXPECT_FALSE(fs::exists(out_h5()));
  EXPECT_FALSE(fs::exists(work_ / "out.xmf"));
  ASSERT_TRUE(fs::exists(out_h5().string() + ".partial"));
  EXPECT_EQ(minimod::testing::read_root_attribute((work_ / "out.checkpoint.h5").string(), "snapshots"),
            std::vector<double>{3});
  // Without the partial file the checkpoint cannot resume: refused by name, nothing touched.
  fs::rename(out_h5().string() + ".partial", work_ / "kept.partial");
  expect_rejected(run_base(stop), 2, {"checkpoint.file", "3 snapshots", "out.h5.partial", "gone"});
  fs::rename(work_ / "kept.partial", out_h5().string() + ".partial");
  r = run_base(stop);
  ASSERT_EQ(r.status, 0) << r.transcript();
  EXPECT_NE(r.err.find("resumed from checkpoint out.checkpoint.h5 at step 70/"), std::string::npos) << r.transcript();
  EXPECT_FALSE(fs::exists(out_h5().string() + ".partial"));
  EXPECT_TRUE(fs::exists(work_ / "out.xmf"));
  for (const char* d : {"/snapshots/p", "/snapshots/time", "/seismograms/p", "/final/p"}) {
    const auto expected = minimod::testing::read_dataset((work_ / "unbroken.h5").string(), d);
    ASSERT_FALSE(expected.empty()) << d;
    EXPECT_EQ(minimod::testing::read_dataset(out_h5().string(), d), expected) << d;
  }
  std::string xmf = read_text(work_ / "unbroken.xmf");
  for (auto at = xmf.find("unbroken.h5"); at != std::string::npos; at = xmf.find("unbroken.h5", at))
    xmf.replace(at, 11, "out.h5");
  EXPECT_EQ(read_text(work_ / "out.xmf"), xmf) << "the resumed run's XDMF lists other snapshots";
}

TEST_F(Cli, SigusrStopsTheRunAtACheckpointAndItResumes) {
  // Long enough (some thousand steps) that the signal, sent once the propagator is made, comes
  // long before the end.
  const std::string yaml = edit(base_yaml(), "duration: 0.2", "duration: 4.0");
  const std::string config = write_config(yaml, "long.yaml");
  ASSERT_EQ(run({"--config", config, "--set", "output.file=unbroken.h5"}).status, 0);
  const std::string err = (root_ / "signal.err").string();
  const std::string cmd = "cd " + shell_quote(work_.string()) + " && (OMP_NUM_THREADS=1 " + shell_quote(MINIMOD_BINARY) +
                          " --config long.yaml --set checkpoint.on_signal=true 2>" + shell_quote(err) +
                          " >/dev/null & pid=$!; until grep -q 'kernel reference' " + shell_quote(err) +
                          "; do sleep 0.02; done; kill -USR1 $pid; wait $pid)";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 3) << read_text(err);
  EXPECT_NE(read_text(err).find("as asked (a signal"), std::string::npos) << read_text(err);
  EXPECT_FALSE(fs::exists(out_h5()));
  ASSERT_TRUE(fs::exists(work_ / "out.checkpoint.h5"));
  const Result r = run({"--config", config, "--set", "checkpoint.on_signal=true"});
  ASSERT_EQ(r.status, 0) << r.transcript();
  EXPECT_NE(r.err.find("resumed from checkpoint"), std::string::npos) << r.transcript();
  EXPECT_EQ(minimod::testing::read_dataset(out_h5().string(), "/seismograms/p"),
            minimod::testing::read_dataset((work_ / "unbroken.h5").string(), "/seismograms/p"));
}

}  // namespace
