// Tests for io/config_yaml.cpp: a full config read field by field, --set overrides, and one test
// per kind of bad input, each checking that the error names the key path and its line.
#include "io/config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "physics/error.hpp"

namespace minimod::io {
namespace {

namespace fs = std::filesystem;

// The smallest valid config; the line numbers in the comments are used by the tests below.
const std::string kMinimal =
    "grid:\n"                         // 1
    "  shape: [32, 32, 32]\n"         // 2
    "  spacing: 10\n"                 // 3
    "model:\n"                        // 4
    "  vp: {constant: 2000}\n"        // 5
    "time:\n"                         // 6
    "  duration: 0.5\n"               // 7
    "  dt: auto\n"                    // 8
    "source:\n"                       // 9
    "  position: [160, 160, 100]\n";  // 10

/// `text` with the first `from` replaced by `to` (which must exist).
std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "test bug: '" << from << "' not in the config";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

/// The ConfigError message parse_config throws, or "" if it throws none.
std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {},
                     const std::string& base_dir = "") {
  try {
    parse_config(text, overrides, base_dir);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

/// Passes when `message` contains every one of `parts`.
testing::AssertionResult contains(const std::string& message,
                                  const std::vector<std::string>& parts) {
  if (message.empty()) return testing::AssertionFailure() << "no ConfigError was thrown";
  for (const auto& part : parts) {
    if (message.find(part) == std::string::npos) {
      return testing::AssertionFailure() << "'" << part << "' not in: " << message;
    }
  }
  return testing::AssertionSuccess();
}

/// A folder that lives as long as the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("minimod_config_test_" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path touch(const std::string& name, const std::string& content = "") const {
    std::ofstream(path / name) << content;
    return path / name;
  }
};

// ------------------------------------------------------------------------------------------------
// Valid input.

TEST(ConfigParse, MinimalConfigGetsDefaults) {
  const Config c = parse_config(kMinimal, {}, "");
  EXPECT_EQ(c.propagator, "acoustic_iso");
  EXPECT_EQ(c.mode, "standard");
  EXPECT_EQ(c.grid.shape, (std::array<int, 3>{32, 32, 32}));
  EXPECT_EQ(c.grid.spacing, (Vec3{10, 10, 10}));  // a single number applies to all axes
  EXPECT_EQ(c.model.vp.kind, ParameterConfig::Kind::constant);
  EXPECT_EQ(c.model.vp.constant, 2000);
  EXPECT_EQ(c.time.duration, 0.5);
  EXPECT_FALSE(c.time.steps.has_value());
  EXPECT_FALSE(c.time.dt.has_value());  // auto
  EXPECT_EQ(c.time.cfl, 0.6);
  EXPECT_EQ(c.source.wavelet, SourceConfig::Wavelet::ricker);
  EXPECT_FALSE(c.source.delay.has_value());
  EXPECT_EQ(c.source.injection, SourceConfig::Injection::physical);
  EXPECT_TRUE(c.receivers.empty());
  EXPECT_EQ(c.boundary.pml_width, 20);
  EXPECT_FALSE(c.boundary.pml_velocity.has_value());
  EXPECT_EQ(c.boundary.free_surface, (std::array<bool, 6>{}));
  EXPECT_EQ(c.execution.backend, "auto");
  EXPECT_FALSE(c.execution.decomposition.has_value());
  EXPECT_EQ(c.output.file, "out/shot.h5");
  EXPECT_EQ(c.output.snapshots.every, 0);
  EXPECT_EQ(c.text, kMinimal);  // no overrides: the text exactly as written
}

TEST(ConfigParse, FullConfigReadsEveryField) {
  TempDir dir;
  dir.touch("wavelet.h5");
  const std::string text =
      "propagator: acoustic_iso\n"                                               // 1
      "mode: minimod\n"                                                          // 2
      "grid: {shape: [64, 48, 40], spacing: [12.5, 10, 5]}\n"                    // 3
      "model:\n"                                                                 // 4
      "  vp:\n"                                                                  // 5
      "    layers:\n"                                                            // 6
      "      - {top: 0, value: 1500}\n"                                          // 7
      "      - {top: 400, value: 2500}\n"                                        // 8
      "time: {steps: 500, dt: 0.001, cfl: 0.5}\n"                                // 9
      "source:\n"                                                                // 10
      "  wavelet: file\n"                                                        // 11
      "  frequency: 15\n"                                                        // 12
      "  delay: 0.1\n"                                                           // 13
      "  amplitude: 2.5\n"                                                       // 14
      "  file: {path: wavelet.h5, dataset: w, dt: 0.002}\n"                      // 15
      "  position: [400, 240, 20]\n"                                             // 16
      "  injection: raw\n"                                                       // 17
      "receivers:\n"                                                             // 18
      "  - {points: [[1, 2, 3], [4, 5, 6]]}\n"                                   // 19
      "  - {line: {start: [0, 240, 10], end: [790, 240, 10], count: 101}}\n"     // 20
      "  - grid: {start: [0, 0, 10], end: [780, 470, 10], count: [10, 5, 1]}\n"  // 21
      "boundary:\n"                                                              // 22
      "  pml: {width: 30, reflection: 0.0001, velocity: 3000}\n"                 // 23
      "  free_surface: [top, x+]\n"                                              // 24
      "execution: {backend: cpu, kernel: reference, decomposition: [2, 1, 1], threads: 4}\n"
      "output:\n"                           // 26
      "  file: out/run.h5\n"                // 27
      "  overwrite: true\n"                 // 28
      "  record: p\n"                       // 29
      "  seismograms: {interval: 0.004}\n"  // 30
      "  snapshots: {every: 100, stride: [2, 2, 1], box: [0, 64, 8, 40, 0, 20]}\n"
      "  final_wavefield: true\n";  // 32
  SourceMap lines;
  const Config c = parse_config(text, {}, dir.path.string(), &lines);

  EXPECT_EQ(c.propagator, "acoustic_iso");
  EXPECT_EQ(c.mode, "minimod");
  EXPECT_EQ(c.grid.shape, (std::array<int, 3>{64, 48, 40}));
  EXPECT_EQ(c.grid.spacing, (Vec3{12.5, 10, 5}));
  ASSERT_EQ(c.model.vp.kind, ParameterConfig::Kind::layers);
  ASSERT_EQ(c.model.vp.layers.size(), 2u);
  EXPECT_EQ(c.model.vp.layers[0].top, 0);
  EXPECT_EQ(c.model.vp.layers[0].value, 1500);
  EXPECT_EQ(c.model.vp.layers[1].top, 400);
  EXPECT_EQ(c.model.vp.layers[1].value, 2500);
  EXPECT_EQ(c.time.steps, 500);
  EXPECT_EQ(c.time.dt, 0.001);
  EXPECT_EQ(c.time.cfl, 0.5);
  EXPECT_EQ(c.source.wavelet, SourceConfig::Wavelet::file);
  EXPECT_EQ(c.source.frequency, 15);
  EXPECT_EQ(c.source.delay, 0.1);
  EXPECT_EQ(c.source.amplitude, 2.5);
  EXPECT_EQ(fs::path(c.source.file), dir.path / "wavelet.h5");  // resolved against base_dir
  EXPECT_EQ(c.source.dataset, "w");
  EXPECT_EQ(c.source.file_dt, 0.002);
  EXPECT_EQ(c.source.position, (Vec3{400, 240, 20}));
  EXPECT_EQ(c.source.injection, SourceConfig::Injection::raw);

  ASSERT_EQ(c.receivers.size(), 3u);
  EXPECT_EQ(c.receivers[0].kind, PositionGroupConfig::Kind::points);
  EXPECT_EQ(c.receivers[0].points, (std::vector<Vec3>{{1, 2, 3}, {4, 5, 6}}));
  EXPECT_EQ(c.receivers[1].kind, PositionGroupConfig::Kind::line);
  EXPECT_EQ(c.receivers[1].start, (Vec3{0, 240, 10}));
  EXPECT_EQ(c.receivers[1].end, (Vec3{790, 240, 10}));
  EXPECT_EQ(c.receivers[1].count[0], 101);
  EXPECT_EQ(c.receivers[2].kind, PositionGroupConfig::Kind::grid);
  EXPECT_EQ(c.receivers[2].start, (Vec3{0, 0, 10}));
  EXPECT_EQ(c.receivers[2].end, (Vec3{780, 470, 10}));
  EXPECT_EQ(c.receivers[2].count, (std::array<int, 3>{10, 5, 1}));

  EXPECT_EQ(c.boundary.pml_width, 30);
  EXPECT_EQ(c.boundary.pml_reflection, 0.0001);
  EXPECT_EQ(c.boundary.pml_velocity, 3000);
  // Order x-, x+, y-, y+, z-, z+; top = z-.
  EXPECT_EQ(c.boundary.free_surface, (std::array<bool, 6>{false, true, false, false, true, false}));

  EXPECT_EQ(c.execution.backend, "cpu");
  EXPECT_EQ(c.execution.kernel, "reference");
  EXPECT_EQ(c.execution.decomposition, (std::array<int, 3>{2, 1, 1}));
  EXPECT_EQ(c.execution.threads, 4);

  EXPECT_EQ(c.output.file, "out/run.h5");
  EXPECT_TRUE(c.output.overwrite);
  EXPECT_EQ(c.output.record, "p");
  EXPECT_EQ(c.output.seismogram_interval, 0.004);
  EXPECT_EQ(c.output.snapshots.every, 100);
  EXPECT_EQ(c.output.snapshots.stride, (std::array<int, 3>{2, 2, 1}));
  EXPECT_EQ(c.output.snapshots.box, (std::array<int, 6>{0, 64, 8, 40, 0, 20}));
  EXPECT_TRUE(c.output.final_wavefield);

  // The line map: keys, nested keys and list items, also returned through the out-parameter.
  EXPECT_EQ(lines, c.lines);
  EXPECT_EQ(c.lines.at("mode"), 2);
  EXPECT_EQ(c.lines.at("grid.spacing"), 3);
  EXPECT_EQ(c.lines.at("model.vp.layers[1].top"), 8);
  EXPECT_EQ(c.lines.at("time.dt"), 9);
  EXPECT_EQ(c.lines.at("source.file.dt"), 15);
  EXPECT_EQ(c.lines.at("receivers[1].line.count"), 20);
  EXPECT_EQ(c.lines.at("receivers[2].grid.count"), 21);
  EXPECT_EQ(c.lines.at("boundary.free_surface[1]"), 24);
  EXPECT_EQ(c.lines.at("output.final_wavefield"), 32);
}

TEST(ConfigParse, ModelFileResolvesAgainstBaseDir) {
  TempDir dir;
  dir.touch("model.h5");
  const Config c =
      parse_config(with(kMinimal, "{constant: 2000}", "{file: model.h5}"), {}, dir.path.string());
  EXPECT_EQ(c.model.vp.kind, ParameterConfig::Kind::file);
  EXPECT_EQ(fs::path(c.model.vp.file), dir.path / "model.h5");
  EXPECT_EQ(c.model.vp.dataset, "vp");  // default dataset: the parameter's name
}

TEST(ConfigParse, FreeSurfaceAcceptsNoneAndASingleFace) {
  const Config none = parse_config(kMinimal + "boundary: {free_surface: none}\n", {}, "");
  EXPECT_EQ(none.boundary.free_surface, (std::array<bool, 6>{}));
  const Config bottom = parse_config(kMinimal + "boundary: {free_surface: bottom}\n", {}, "");
  EXPECT_EQ(bottom.boundary.free_surface,
            (std::array<bool, 6>{false, false, false, false, false, true}));
}

TEST(ConfigParse, AutoValuesAreEmptyOptionals) {
  const Config c = parse_config(
      kMinimal + "boundary: {pml: {velocity: auto}}\nexecution: {decomposition: auto}\n", {}, "");
  EXPECT_FALSE(c.time.dt.has_value());
  EXPECT_FALSE(c.boundary.pml_velocity.has_value());
  EXPECT_FALSE(c.execution.decomposition.has_value());
}

// ------------------------------------------------------------------------------------------------
// --set overrides.

TEST(ConfigOverrides, SetReplacesAndCreatesKeys) {
  const Config c = parse_config(kMinimal,
                                {"time.dt=0.001", "grid.shape=[64,64,64]", "output.file=x.h5",
                                 "boundary.pml.width = 10", "source.delay=0.2"},
                                "");
  EXPECT_EQ(c.time.dt, 0.001);
  EXPECT_EQ(c.grid.shape, (std::array<int, 3>{64, 64, 64}));
  EXPECT_EQ(c.output.file, "x.h5");
  EXPECT_EQ(c.boundary.pml_width, 10);
  EXPECT_EQ(c.source.delay, 0.2);
  EXPECT_EQ(c.time.duration, 0.5);  // untouched keys keep their values and lines
  EXPECT_EQ(c.lines.at("time.duration"), 7);
  EXPECT_EQ(c.lines.at("time.dt"), 0);  // 0: came from --set
  // The stored text is the tree after the overrides, and parses to the same config.
  EXPECT_NE(c.text.find("x.h5"), std::string::npos) << c.text;
  const Config again = parse_config(c.text, {}, "");
  EXPECT_EQ(again.time.dt, 0.001);
  EXPECT_EQ(again.grid.shape, c.grid.shape);
  EXPECT_EQ(again.boundary.pml_width, 10);
}

TEST(ConfigOverrides, SetReachesIntoListItems) {
  const Config c = parse_config(
      kMinimal + "receivers:\n  - {line: {start: [0, 0, 0], end: [300, 0, 0], count: 11}}\n",
      {"receivers[0].line.count=31"}, "");
  EXPECT_EQ(c.receivers.at(0).count[0], 31);
}

TEST(ConfigErrors, BadValueFromSetIsMarkedAsSet) {
  EXPECT_TRUE(contains(error_of(kMinimal, {"time.dt=-1"}), {"time.dt (--set)", "-1", "> 0"}));
}

TEST(ConfigErrors, OverrideWithoutEqualsIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal, {"time.dt"}), {"--set 'time.dt'", "key=value"}));
}

TEST(ConfigErrors, OverrideWithEmptyKeyIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal, {"=5"}), {"--set '=5'", "empty"}));
  EXPECT_TRUE(contains(error_of(kMinimal, {"time..dt=5"}), {"--set 'time..dt=5'", "empty"}));
}

TEST(ConfigErrors, OverrideIntoMissingListItemIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal, {"receivers[3].line.count=5"}),
                       {"receivers[3].line.count=5", "index [3]"}));
}

TEST(ConfigErrors, UnknownKeyFromSetSuggestsNearest) {
  EXPECT_TRUE(contains(error_of(kMinimal, {"time.dtt=0.001"}),
                       {"time.dtt (--set)", "unknown key", "did you mean 'dt'?"}));
}

// ------------------------------------------------------------------------------------------------
// Bad input: each error names the key path and the line.

TEST(ConfigErrors, UnknownKeySuggestsNearest) {
  const std::string text = with(kMinimal, "  dt: auto\n", "  dtt: auto\n");
  EXPECT_TRUE(contains(error_of(text),
                       {"config error: time.dtt (line 8): unknown key; did you mean 'dt'?"}));
}

TEST(ConfigErrors, UnknownTopLevelKeyListsValidKeys) {
  EXPECT_TRUE(contains(error_of(kMinimal + "banana: 1\n"),
                       {"banana (line 11)", "unknown key", "valid keys here:", "grid", "output"}));
}

TEST(ConfigErrors, UnknownNestedKeySuggestsNearest) {
  EXPECT_TRUE(contains(error_of(kMinimal + "output: {snapshots: {evry: 10}}\n"),
                       {"output.snapshots.evry (line 11)", "did you mean 'every'?"}));
}

TEST(ConfigErrors, DuplicateKeyIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal + "time: {duration: 1}\n"),
                       {"time (line 11)", "given twice (first at line 6)"}));
}

TEST(ConfigErrors, StringWhereNumberExpected) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "dt: auto", "dt: fast")),
                       {"time.dt (line 8)", "expected a number", "'fast'"}));
}

TEST(ConfigErrors, ScalarWhereListOfThreeExpected) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "position: [160, 160, 100]", "position: 160")),
                       {"source.position (line 10)", "list of 3 numbers", "'160'"}));
}

TEST(ConfigErrors, WrongListLengthIsRejected) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "[32, 32, 32]", "[32, 32]")),
                       {"grid.shape (line 2)", "list of 3 integers", "a list of 2 items"}));
}

TEST(ConfigErrors, FractionalShapeIsNotAnInteger) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "[32, 32, 32]", "[32, 32.5, 32]")),
                       {"grid.shape[1] (line 2)", "expected an integer", "'32.5'"}));
}

TEST(ConfigErrors, ShapeBelowOneIsRejected) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "[32, 32, 32]", "[32, 32, 0]")),
                       {"grid.shape[2] (line 2)", "got 0", "between 1 and 100000"}));
}

TEST(ConfigErrors, ShapeAboveLimitIsRejected) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "[32, 32, 32]", "[200000, 32, 32]")),
                       {"grid.shape[0] (line 2)", "200000", "between 1 and 100000"}));
}

TEST(ConfigErrors, NonPositiveSpacingIsRejected) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "spacing: 10", "spacing: [10, -5, 10]")),
                       {"grid.spacing[1] (line 3)", "-5", "> 0 m"}));
  EXPECT_TRUE(contains(error_of(with(kMinimal, "spacing: 10", "spacing: 0")),
                       {"grid.spacing (line 3)", "got 0", "> 0 m"}));
}

TEST(ConfigErrors, NonPositiveDurationIsRejected) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "duration: 0.5", "duration: 0")),
                       {"time.duration (line 7)", "got 0", "> 0 s"}));
}

TEST(ConfigErrors, StepsBelowOneAreRejected) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "duration: 0.5", "steps: 0")),
                       {"time.steps (line 7)", "got 0", ">= 1"}));
}

TEST(ConfigErrors, DurationAndStepsTogetherAreRejected) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "dt: auto", "steps: 100")),
                       {"time.steps (line 8)", "not both"}));
}

TEST(ConfigErrors, NonPositiveDtIsRejected) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "dt: auto", "dt: -0.001")),
                       {"time.dt (line 8)", "-0.001", "> 0 s, or auto"}));
}

TEST(ConfigErrors, CflOutsideUnitIntervalIsRejected) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "dt: auto", "cfl: 1.5")),
                       {"time.cfl (line 8)", "1.5", "(0, 1]"}));
}

TEST(ConfigErrors, NonPositiveFrequencyIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal + "  frequency: -15\n"),
                       {"source.frequency (line 11)", "-15", "> 0 Hz"}));
}

TEST(ConfigErrors, PmlWidthOutOfRangeIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal + "boundary:\n  pml: {width: -1}\n"),
                       {"boundary.pml.width (line 12)", "-1", "between 0 and 1000"}));
  EXPECT_TRUE(contains(error_of(kMinimal + "boundary:\n  pml: {width: 1001}\n"),
                       {"boundary.pml.width (line 12)", "1001", "between 0 and 1000"}));
}

TEST(ConfigErrors, ReflectionOutsideOpenUnitIntervalIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal + "boundary:\n  pml: {reflection: 1}\n"),
                       {"boundary.pml.reflection (line 12)", "got 1", "(0, 1)"}));
}

TEST(ConfigErrors, UnknownTtiLayerIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal + "boundary:\n  pml: {tti: pml}\n"),
                       {"boundary.pml.tti (line 12)", "pml", "sponge", "cpml"}));
  EXPECT_EQ(parse_config(kMinimal + "boundary:\n  pml: {tti: cpml}\n", {}, "").boundary.tti_layer, "cpml");
  EXPECT_EQ(parse_config(kMinimal, {}, "").boundary.tti_layer, "");  // not set: app::kDefaultTtiLayer
}

TEST(ConfigErrors, UnknownTtiLayerAxisIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal + "boundary:\n  pml: {tti_axis: tilted}\n"),
                       {"boundary.pml.tti_axis (line 12)", "tilted", "model", "vertical"}));
  EXPECT_EQ(parse_config(kMinimal + "boundary:\n  pml: {tti_axis: vertical}\n", {}, "").boundary.tti_layer_axis,
            "vertical");
  EXPECT_EQ(parse_config(kMinimal, {}, "").boundary.tti_layer_axis, "");  // not set: the model's axis
}

TEST(ConfigErrors, NegativeSnapshotIntervalIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal + "output:\n  snapshots:\n    every: -10\n"),
                       {"output.snapshots.every (line 13)", "-10", ">= 0"}));
}

TEST(ConfigErrors, SnapshotStrideBelowOneIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal + "output: {snapshots: {stride: [1, 0, 1]}}\n"),
                       {"output.snapshots.stride[1] (line 11)", "got 0", "between 1"}));
}

TEST(ConfigErrors, SnapshotBoxOutsideGridIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal + "output: {snapshots: {box: [0, 32, 0, 40, 0, 8]}}\n"),
                       {"output.snapshots.box[3] (line 11)", "upper <= grid.shape (32)"}));
}

TEST(ConfigErrors, NonPositiveVelocityIsRejected) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "constant: 2000", "constant: 0")),
                       {"model.vp.constant (line 5)", "got 0", "> 0 m/s"}));
}

TEST(ConfigErrors, NonFiniteVelocityIsRejected) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "constant: 2000", "constant: .inf")),
                       {"model.vp.constant (line 5)", ".inf", "finite"}));
  EXPECT_TRUE(contains(error_of(with(kMinimal, "constant: 2000", "constant: 1e999")),
                       {"model.vp.constant (line 5)", "1e999", "finite"}));
}

TEST(ConfigErrors, LayerTopsMustIncrease) {
  const std::string text = with(kMinimal, "  vp: {constant: 2000}\n",
                                "  vp:\n"
                                "    layers:\n"
                                "      - {top: 0, value: 1500}\n"
                                "      - {top: 400, value: 2500}\n"
                                "      - {top: 300, value: 3000}\n");
  EXPECT_TRUE(
      contains(error_of(text), {"model.vp.layers[2].top (line 9)", "300", "must increase", "400"}));
}

TEST(ConfigErrors, FirstLayerTopMustBeZero) {
  const std::string text = with(kMinimal, "{constant: 2000}", "{layers: [{top: 10, value: 1500}]}");
  EXPECT_TRUE(contains(error_of(text), {"model.vp.layers[0].top (line 5)", "10", "must be 0"}));
}

TEST(ConfigErrors, ModelNeedsExactlyOneKind) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "{constant: 2000}", "{constant: 2000, file: a.h5}")),
                       {"model.vp (line 5)", "exactly one of constant, layers or file"}));
}

TEST(ConfigErrors, LineCountBelowOneIsRejected) {
  const std::string text =
      kMinimal + "receivers:\n  - {line: {start: [0, 0, 0], end: [1, 0, 0], count: 0}}\n";
  EXPECT_TRUE(contains(error_of(text), {"receivers[0].line.count (line 12)", "got 0", ">= 1"}));
}

TEST(ConfigErrors, ReceiverGroupWithTwoKindsIsRejected) {
  const std::string text = kMinimal +
                           "receivers:\n"
                           "  - points: [[1, 1, 1]]\n"
                           "    line: {start: [0, 0, 0], end: [1, 0, 0], count: 2}\n";
  EXPECT_TRUE(contains(error_of(text), {"receivers[0] (line 12)", "exactly one of points"}));
}

TEST(ConfigErrors, UnknownEnumValuesAreRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal + "execution: {backend: gpu}\n"),
                       {"execution.backend (line 11)", "'gpu'", "auto, cpu, cuda"}));
  EXPECT_TRUE(contains(error_of("propagator: elastic\n" + kMinimal),
                       {"propagator (line 1)", "'elastic'", "acoustic_iso, acoustic_tti"}));
  EXPECT_TRUE(contains(error_of(kMinimal + "  wavelet: sinc\n"),
                       {"source.wavelet (line 11)", "'sinc'", "ricker, minimod_gaussian, file"}));
  EXPECT_TRUE(contains(error_of(kMinimal + "mode: fast\n"),
                       {"mode (line 11)", "'fast'", "standard, minimod"}));
  EXPECT_TRUE(contains(error_of(kMinimal + "  injection: physicl\n"),
                       {"source.injection (line 11)", "did you mean 'physical'?"}));
}

TEST(ConfigErrors, UnknownFreeSurfaceFaceIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal + "boundary:\n  free_surface: [top, left]\n"),
                       {"boundary.free_surface[1] (line 12)", "'left'", "top, bottom"}));
}

TEST(ConfigErrors, MissingRequiredKeysAreNamed) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "  shape: [32, 32, 32]\n", "")),
                       {"config error: grid.shape:", "required key is missing", "line 1"}));
  EXPECT_TRUE(contains(error_of(with(kMinimal, "  spacing: 10\n", "")),
                       {"grid.spacing:", "required key is missing"}));
  EXPECT_TRUE(contains(error_of(with(kMinimal, "model:\n  vp: {constant: 2000}\n", "")),
                       {"model.vp:", "required key is missing"}));
  EXPECT_TRUE(contains(error_of(with(kMinimal, "  position: [160, 160, 100]\n", "  delay: 0\n")),
                       {"source.position:", "required key is missing"}));
  EXPECT_TRUE(contains(error_of(with(kMinimal, "  duration: 0.5\n", "")),
                       {"time.duration:", "required key is missing", "time.steps"}));
}

TEST(ConfigErrors, MissingModelFileIsNamedWithItsPath) {
  TempDir dir;
  const std::string text = with(kMinimal, "{constant: 2000}", "{file: nothere.h5, dataset: vp}");
  EXPECT_TRUE(
      contains(error_of(text, {}, dir.path.string()),
               {"model.vp.file (line 5)", (dir.path / "nothere.h5").string(), "does not exist"}));
}

TEST(ConfigErrors, WaveletFileWithoutFileSectionIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal + "  wavelet: file\n"),
                       {"source.file", "required with wavelet: file"}));
}

TEST(ConfigErrors, NonBooleanOverwriteIsRejected) {
  EXPECT_TRUE(contains(error_of(kMinimal + "output: {overwrite: maybe}\n"),
                       {"output.overwrite (line 11)", "true or false", "'maybe'"}));
}

TEST(ConfigErrors, SectionThatIsNotAMapIsRejected) {
  EXPECT_TRUE(
      contains(error_of(with(kMinimal, "time:\n  duration: 0.5\n  dt: auto\n", "time: 0.5\n")),
               {"time (line 6)", "expected a map", "'0.5'"}));
}

TEST(ConfigErrors, YamlSyntaxErrorNamesTheLine) {
  EXPECT_TRUE(contains(error_of(kMinimal + "output: file: x\n"),
                       {"config error: config text (line 11): YAML syntax error"}));
}

// ------------------------------------------------------------------------------------------------
// Acoustic TTI: the model's anisotropy keys and the recorded field.

/// kMinimal with `model_lines` after model.vp (so they start at line 6) and, unless told
/// otherwise, `propagator: acoustic_tti` appended last.
std::string tti_config(const std::string& model_lines,
                       const std::string& propagator = "acoustic_tti") {
  return with(kMinimal, "  vp: {constant: 2000}\n", "  vp: {constant: 2000}\n" + model_lines) +
         "propagator: " + propagator + "\n";
}

constexpr double kPi = 3.14159265358979323846;

TEST(ConfigTti, AbsentKeysDefaultToZero) {
  const Config c = parse_config(tti_config(""), {}, "");
  EXPECT_EQ(c.propagator, "acoustic_tti");
  for (const ParameterConfig* p :
       {&c.model.epsilon, &c.model.delta, &c.model.theta, &c.model.phi}) {
    EXPECT_EQ(p->kind, ParameterConfig::Kind::constant);
    EXPECT_EQ(p->constant, 0);
    EXPECT_EQ(p->scale, 1);
  }
  EXPECT_EQ(c.model.isotropic_radius, 0);
  EXPECT_EQ(c.model.epsilon_below_delta, "error");
  EXPECT_EQ(c.output.record, "p");
}

TEST(ConfigTti, EpsilonBelowDeltaTakesErrorOrClamp) {
  EXPECT_EQ(parse_config(tti_config("  epsilon_below_delta: clamp\n"), {}, "").model.epsilon_below_delta,
            "clamp");
  EXPECT_EQ(parse_config(tti_config("  epsilon_below_delta: error\n"), {}, "").model.epsilon_below_delta,
            "error");
  EXPECT_TRUE(contains(error_of(tti_config("  epsilon_below_delta: clip\n")),
                       {"model.epsilon_below_delta (line 6)", "unknown value", "clip", "error", "clamp"}));
  EXPECT_TRUE(contains(error_of(tti_config("  epsilon_below_delta: clamp\n", "acoustic_iso")),
                       {"model.epsilon_below_delta (line 6)", "only for propagator: acoustic_tti"}));
}

TEST(ConfigTti, EllipticWhereTheAxisTurnsTakesAnAngleInDegrees) {
  EXPECT_EQ(parse_config(tti_config(""), {}, "").model.elliptic_where_axis_turns, 0);  // none
  EXPECT_EQ(parse_config(tti_config("  elliptic_where_axis_turns: 30\n"), {}, "").model.elliptic_where_axis_turns, 30);
  for (const char* bad : {"0", "-5", "120"})
    EXPECT_TRUE(contains(error_of(tti_config(std::string("  elliptic_where_axis_turns: ") + bad + "\n")),
                         {"model.elliptic_where_axis_turns (line 6)", "in degrees in (0, 90]"}))
        << bad;
  EXPECT_TRUE(contains(error_of(tti_config("  elliptic_where_axis_turns: steep\n")),
                       {"model.elliptic_where_axis_turns (line 6)"}));
  EXPECT_TRUE(contains(error_of(tti_config("  elliptic_where_axis_turns: 30\n", "acoustic_iso")),
                       {"model.elliptic_where_axis_turns (line 6)", "only for propagator: acoustic_tti"}));
}

TEST(ConfigTti, ParametersTakeEveryFormOfVp) {
  TempDir dir;
  dir.touch("aniso.h5");
  const std::string text = tti_config(
      "  epsilon: {constant: 0.2}\n"                                         // 6
      "  delta: {layers: [{top: 0, value: 0.0}, {top: 300, value: 0.1}]}\n"  // 7
      "  theta: {file: aniso.h5}\n"                                          // 8
      "  phi: {file: aniso.h5, dataset: azimuth, units: rad}\n"              // 9
      "  isotropic_radius: 40\n");                                           // 10
  const Config c = parse_config(text, {}, dir.path.string());
  EXPECT_EQ(c.model.epsilon.kind, ParameterConfig::Kind::constant);
  EXPECT_EQ(c.model.epsilon.constant, 0.2);
  ASSERT_EQ(c.model.delta.kind, ParameterConfig::Kind::layers);
  ASSERT_EQ(c.model.delta.layers.size(), 2u);
  EXPECT_EQ(c.model.delta.layers[1].top, 300);
  EXPECT_EQ(c.model.delta.layers[1].value, 0.1);
  ASSERT_EQ(c.model.theta.kind, ParameterConfig::Kind::file);
  EXPECT_EQ(fs::path(c.model.theta.file), dir.path / "aniso.h5");
  EXPECT_EQ(c.model.theta.dataset, "theta");         // default dataset: the parameter's name
  EXPECT_DOUBLE_EQ(c.model.theta.scale, kPi / 180);  // degrees by default: the plan converts
  ASSERT_EQ(c.model.phi.kind, ParameterConfig::Kind::file);
  EXPECT_EQ(c.model.phi.dataset, "azimuth");
  EXPECT_EQ(c.model.phi.scale, 1);  // already radians
  EXPECT_EQ(c.model.isotropic_radius, 40);
  EXPECT_EQ(c.lines.at("model.phi.units"), 9);
}

TEST(ConfigTti, AnglesInDegreesAreStoredInRadians) {
  const Config deg = parse_config(tti_config("  theta: {constant: 30}\n"
                                             "  phi: {constant: -90, units: deg}\n"),
                                  {}, "");
  EXPECT_DOUBLE_EQ(deg.model.theta.constant, kPi / 6);  // deg is the default
  EXPECT_DOUBLE_EQ(deg.model.phi.constant, -kPi / 2);
  EXPECT_EQ(deg.model.theta.scale, 1);  // only file values still need converting
  const Config layers = parse_config(
      tti_config("  theta: {layers: [{top: 0, value: 0}, {top: 500, value: 45}]}\n"), {}, "");
  ASSERT_EQ(layers.model.theta.layers.size(), 2u);
  EXPECT_EQ(layers.model.theta.layers[1].top, 500);  // depths stay in m
  EXPECT_DOUBLE_EQ(layers.model.theta.layers[1].value, kPi / 4);
}

TEST(ConfigTti, AnglesInRadiansAreKept) {
  const Config c =
      parse_config(tti_config("  theta: {constant: 0.5, units: rad}\n"
                              "  phi: {layers: [{top: 0, value: 1.25}], units: rad}\n"),
                   {}, "");
  EXPECT_EQ(c.model.theta.constant, 0.5);
  EXPECT_EQ(c.model.phi.layers[0].value, 1.25);
}

TEST(ConfigTti, ThomsenLimitsAreAccepted) {
  const Config c = parse_config(tti_config("  epsilon: {constant: 0.99}\n"
                                           "  delta: {constant: -0.49}\n"),
                                {}, "");
  EXPECT_EQ(c.model.epsilon.constant, 0.99);
  EXPECT_EQ(c.model.delta.constant, -0.49);
}

TEST(ConfigTti, KeysCanBeSetFromTheCommandLine) {
  const Config c = parse_config(
      kMinimal,
      {"propagator=acoustic_tti", "model.theta.constant=60", "model.epsilon={constant: 0.1}"}, "");
  EXPECT_EQ(c.propagator, "acoustic_tti");
  EXPECT_DOUBLE_EQ(c.model.theta.constant, kPi / 3);
  EXPECT_EQ(c.model.epsilon.constant, 0.1);
}

TEST(ConfigTti, ReceiversMayRecordQ) {
  const Config c = parse_config(tti_config("") + "output: {record: q}\n", {}, "");
  EXPECT_EQ(c.output.record, "q");
}

TEST(ConfigErrors, UnknownPropagatorListsBoth) {
  EXPECT_TRUE(contains(error_of(tti_config("", "acoustic_vti")),
                       {"propagator (line 11)", "'acoustic_vti'", "acoustic_iso, acoustic_tti",
                        "did you mean 'acoustic_tti'?"}));
}

TEST(ConfigErrors, UnitsOnlyOnAngles) {
  EXPECT_TRUE(contains(error_of(tti_config("  epsilon: {constant: 0.1, units: deg}\n")),
                       {"model.epsilon.units (line 6)", "only the angles theta and phi",
                        "epsilon is dimensionless"}));
  EXPECT_TRUE(contains(error_of(tti_config("  delta: {constant: 0.1, units: rad}\n")),
                       {"model.delta.units (line 6)", "only the angles"}));
  EXPECT_TRUE(contains(error_of(with(kMinimal, "{constant: 2000}", "{constant: 2000, units: m/s}")),
                       {"model.vp.units (line 5)", "only the angles", "vp is in m/s"}));
}

TEST(ConfigErrors, UnknownAngleUnitIsRejected) {
  EXPECT_TRUE(
      contains(error_of(tti_config("  theta: {constant: 30, units: degre}\n")),
               {"model.theta.units (line 6)", "'degre'", "deg, rad", "did you mean 'deg'?"}));
}

TEST(ConfigErrors, TtiKeysNeedTheTtiPropagator) {
  for (const std::string key : {"epsilon", "delta", "theta", "phi"}) {
    const std::string line = "  " + key + ": {constant: 0.1}\n";
    const std::string expected =
        "config error: model." + key + " (line 6): only for propagator: acoustic_tti";
    EXPECT_EQ(error_of(tti_config(line, "acoustic_iso")), expected);
    // The default propagator is acoustic_iso too.
    EXPECT_TRUE(contains(
        error_of(with(kMinimal, "  vp: {constant: 2000}\n", "  vp: {constant: 2000}\n" + line)),
        {"model." + key + " (line 6)", "only for propagator: acoustic_tti"}));
  }
  EXPECT_TRUE(contains(error_of(tti_config("  isotropic_radius: 10\n", "acoustic_iso")),
                       {"model.isotropic_radius (line 6)", "only for propagator: acoustic_tti"}));
}

TEST(ConfigErrors, ThomsenParametersOutOfRangeAreRejected) {
  EXPECT_TRUE(
      contains(error_of(tti_config("  delta: {constant: -0.5}\n")),
               {"model.delta.constant (line 6)", "got -0.5", "> -0.5", "1 + 2 delta", "< 1"}));
  EXPECT_TRUE(contains(error_of(tti_config("  epsilon: {constant: 1}\n")),
                       {"model.epsilon.constant (line 6)", "got 1", "< 1"}));
  EXPECT_TRUE(contains(error_of(tti_config("  delta:\n"
                                           "    layers:\n"
                                           "      - {top: 0, value: 0}\n"
                                           "      - {top: 100, value: -0.7}\n")),
                       {"model.delta.layers[1].value (line 9)", "got -0.7", "> -0.5"}));
  EXPECT_TRUE(contains(error_of(tti_config("  epsilon: {constant: .nan}\n")),
                       {"model.epsilon.constant (line 6)", "finite"}));
}

TEST(ConfigErrors, NonFiniteAngleIsRejected) {
  EXPECT_TRUE(contains(error_of(tti_config("  phi: {constant: .inf}\n")),
                       {"model.phi.constant (line 6)", ".inf", "finite"}));
  EXPECT_TRUE(contains(error_of(tti_config("  theta: {constant: thirty}\n")),
                       {"model.theta.constant (line 6)", "expected a number", "'thirty'"}));
}

TEST(ConfigErrors, TtiParameterNeedsExactlyOneKind) {
  EXPECT_TRUE(contains(error_of(tti_config("  theta: {units: rad}\n")),
                       {"model.theta (line 6)", "exactly one of constant, layers or file"}));
}

TEST(ConfigErrors, NegativeIsotropicRadiusIsRejected) {
  EXPECT_TRUE(contains(error_of(tti_config("  isotropic_radius: -5\n")),
                       {"model.isotropic_radius (line 6)", "got -5", ">= 0 m"}));
}

TEST(ConfigErrors, RecordQNeedsTheTtiPropagator) {
  EXPECT_TRUE(contains(error_of(kMinimal + "output: {record: q}\n"),
                       {"output.record (line 11)", "got q", "only for propagator: acoustic_tti"}));
  EXPECT_TRUE(contains(error_of(tti_config("") + "output: {record: vx}\n"),
                       {"output.record (line 12)", "'vx'", "p, q"}));
}

// ------------------------------------------------------------------------------------------------
// Files and the message format.

TEST(ConfigLoad, LoadReadsFileAndResolvesAgainstItsFolder) {
  TempDir dir;
  dir.touch("model.h5");
  const fs::path file =
      dir.touch("shot.yaml", with(kMinimal, "{constant: 2000}", "{file: model.h5}"));
  const Config c = load_config(file.string(), {"time.duration=2"});
  EXPECT_EQ(c.path, file.string());
  EXPECT_EQ(fs::path(c.model.vp.file), dir.path / "model.h5");
  EXPECT_EQ(c.time.duration, 2);
}

TEST(ConfigLoad, MissingFileIsNamed) {
  try {
    load_config("/nonexistent/shot.yaml", {});
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(contains(e.what(), {"/nonexistent/shot.yaml", "does not exist"}));
  }
}

TEST(ConfigLoad, SyntaxErrorNamesFileAndLine) {
  TempDir dir;
  const fs::path file = dir.touch("bad.yaml", kMinimal + "output: file: x\n");
  try {
    load_config(file.string(), {});
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(contains(e.what(), {file.string() + " (line 11): YAML syntax error"}));
  }
}

TEST(ConfigMessage, CitesLineOnlyForKnownKeys) {
  const Config c = parse_config(kMinimal, {}, "");
  EXPECT_EQ(config_error_message(c, "time.dt", "too large"),
            "config error: time.dt (line 8): too large");
  EXPECT_EQ(config_error_message(c, "source.position[2]", "outside the model"),
            "config error: source.position[2] (line 10): outside the model");
  EXPECT_EQ(config_error_message(c, "receivers[0]", "x"), "config error: receivers[0]: x");
}

}  // namespace
}  // namespace minimod::io

namespace minimod::io {
namespace {

// A survey (shots): groups of positions as the receivers take them, in place of source.position.
const std::string kSurvey = with(kMinimal, "  position: [160, 160, 100]\n",
                                 "  frequency: 12\n"
                                 "shots:\n"
                                 "  - {line: {start: [40, 160, 20], end: [280, 160, 20], count: 4}}\n"
                                 "  - {points: [[160, 40, 20], [160, 280, 20]]}\n"
                                 "execution: {shot_groups: 2}\n");

TEST(ConfigSurvey, ShotsAreReadAsGroupsOfPositions) {
  const Config c = parse_config(kSurvey, {}, "");
  ASSERT_EQ(c.shots.size(), 2u);
  EXPECT_EQ(c.shots[0].kind, PositionGroupConfig::Kind::line);
  EXPECT_EQ(c.shots[0].count[0], 4);
  EXPECT_EQ(c.shots[0].end, (Vec3{280, 160, 20}));
  EXPECT_EQ(c.shots[1].kind, PositionGroupConfig::Kind::points);
  ASSERT_EQ(c.shots[1].points.size(), 2u);
  EXPECT_EQ(c.shots[1].points[1], (Vec3{160, 280, 20}));
  EXPECT_EQ(c.execution.shot_groups, 2);
  EXPECT_EQ(c.source.frequency, 12);
  EXPECT_TRUE(parse_config(kMinimal, {}, "").shots.empty());
  EXPECT_EQ(parse_config(kMinimal, {}, "").execution.shot_groups, 1);
}

TEST(ConfigSurvey, ASourcePositionBesideShotsIsRefused) {
  EXPECT_TRUE(contains(error_of(kSurvey, {"source.position=[1,2,3]"}),
                       {"source.position", "either source.position", "or shots"}));
}

TEST(ConfigSurvey, NeitherSourcePositionNorShotsIsRefused) {
  EXPECT_TRUE(contains(error_of(with(kMinimal, "  position: [160, 160, 100]\n", "  delay: 0\n")),
                       {"source.position:", "required key is missing", "shots"}));
}

TEST(ConfigSurvey, BadShotListsAreNamed) {
  EXPECT_TRUE(contains(error_of(kSurvey, {"shots=[]"}), {"shots", "at least one shot group"}));
  EXPECT_TRUE(contains(error_of(kSurvey, {"shots=5"}), {"shots", "list of shot groups"}));
  EXPECT_TRUE(contains(error_of(kSurvey, {"shots[0].line.count=0"}), {"shots[0].line.count", ">= 1"}));
  EXPECT_TRUE(contains(error_of(kSurvey, {"shots[1].points[0]=[1,2]"}), {"shots[1].points[0]", "3 numbers"}));
  EXPECT_TRUE(contains(error_of(kSurvey, {"shots[0].lines=1"}), {"shots[0]"}));
  EXPECT_TRUE(contains(error_of(kSurvey, {"execution.shot_groups=0"}), {"execution.shot_groups", ">= 1"}));
}

}  // namespace
}  // namespace minimod::io
