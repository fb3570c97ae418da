// A survey under mpirun (DESIGN.md §5, app/survey.hpp): its shots split over groups of ranks
// (execution.shot_groups), each group decomposing its shot's grid over its own ranks, write
// what one process writes, bit for bit; ranks that do not split evenly into the groups are
// refused before anything is written. Skipped where mpirun is missing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "h5_read.hpp"
#include "run_command.hpp"

namespace fs = std::filesystem;

namespace {

constexpr const char* kSurvey = R"(propagator: acoustic_iso
grid: {shape: [32, 24, 28], spacing: [10, 10, 10]}
model:
  vp: {layers: [{top: 0, value: 1800}, {top: 120, value: 2600}]}
time: {duration: 0.18}
source: {wavelet: ricker, frequency: 15}
shots:
  - {line: {start: [40, 120, 20], end: [270, 120, 20], count: 5}}
receivers:
  - line: {start: [0, 120, 10], end: [310, 120, 10], count: 32}
boundary: {pml: {width: 6}, free_surface: [top]}
execution: {backend: cpu}
)";

int run(const std::string& cmd) { return minimod::testing::run_command(cmd); }

using minimod::testing::read_text;

TEST(SurveyMpirun, GroupsOfRanksWriteWhatOneProcessWrites) {
  if (run("command -v " MINIMOD_MPIEXEC " >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun";
  const fs::path dir = fs::temp_directory_path() / ("minimod_survey_mpirun_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  { std::ofstream(dir / "line.yaml") << kSurvey; }
  const std::string env =
      "OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
      "OMPI_MCA_rmaps_base_oversubscribe=1 ";
  auto survey = [&](const std::string& launcher, const std::string& name, const std::string& extra,
                    bool quiet = true) {
    return run("cd " + dir.string() + " && " + env + launcher + " " MINIMOD_BINARY + (quiet ? " --quiet" : "") +
               " --config line.yaml --set output.file=" + name + "/shot.h5" + extra + " >" + name + ".log 2>&1");
  };
  auto shot = [&](const std::string& name, int s) {
    return (dir / name / ("shot-000" + std::to_string(s) + ".h5")).string();
  };
  ASSERT_EQ(survey("", "one", ""), 0) << "see " << dir / "one.log";
  std::vector<std::vector<float>> ref;
  for (int s = 0; s < 5; ++s) {
    ref.push_back(minimod::testing::read_dataset(shot("one", s), "/seismograms/p"));
    ASSERT_FALSE(ref.back().empty()) << "shot " << s;
  }
  EXPECT_NE(ref[0], ref[4]);

  struct Case {
    int ranks, groups;
    const char* name;
  };
  for (const Case c : {Case{2, 2, "two_by_one"}, Case{4, 2, "two_by_two"}, Case{3, 1, "one_by_three"}}) {
    SCOPED_TRACE(c.name);
    ASSERT_EQ(survey(MINIMOD_MPIEXEC " -n " + std::to_string(c.ranks), c.name,
                     " --set execution.shot_groups=" + std::to_string(c.groups)),
              0)
        << "see " << dir / (std::string(c.name) + ".log");
    const std::string log = read_text(dir / (std::string(c.name) + ".log"));
    EXPECT_NE(log.find("survey shots=5 run=5 skipped=0 failed=0 groups=" + std::to_string(c.groups) +
                       " ranks_per_group=" + std::to_string(c.ranks / c.groups)),
              std::string::npos)
        << log;
    for (int s = 0; s < 5; ++s)
      EXPECT_EQ(minimod::testing::read_dataset(shot(c.name, s), "/seismograms/p"), ref[static_cast<size_t>(s)])
          << "shot " << s;
  }

  // A survey resumed with shots 0 and 2 to run again (both the first group's at the start): the
  // two groups take one each, and the results are the same again.
  fs::remove(shot("two_by_one", 0));
  fs::remove(shot("two_by_one", 2));
  ASSERT_EQ(survey(MINIMOD_MPIEXEC " -n 2", "two_by_one", " --set execution.shot_groups=2", false), 0);
  const std::string resumed = read_text(dir / "two_by_one.log");
  EXPECT_NE(resumed.find("survey shots=5 run=2 skipped=3 failed=0 groups=2"), std::string::npos) << resumed;
  EXPECT_NE(resumed.find("[group 0] shot 0 of 5: source at"), std::string::npos) << resumed;
  EXPECT_NE(resumed.find("[group 1] shot 2 of 5: source at"), std::string::npos) << resumed;
  for (int s : {0, 2})
    EXPECT_EQ(minimod::testing::read_dataset(shot("two_by_one", s), "/seismograms/p"), ref[static_cast<size_t>(s)]);

  // A shot outside the model, under two groups (one of them with no shot to run): one error,
  // every rank stops, nothing written.
  EXPECT_EQ(survey("timeout 120 " MINIMOD_MPIEXEC " -n 2", "bad",
                   " --set execution.shot_groups=2 --set 'shots[0].line.end=[270,900,20]'"),
            2);
  const std::string bad = read_text(dir / "bad.log");
  size_t errors = 0;
  for (size_t at = bad.find("minimod: error:"); at != std::string::npos; at = bad.find("minimod: error:", at + 1))
    ++errors;
  EXPECT_EQ(errors, 1u) << bad;
  EXPECT_NE(bad.find("shots (line 7): y = 315 m lies outside the model [0, 230] m (shot 1 of 5)"), std::string::npos) << bad;
  EXPECT_FALSE(fs::exists(dir / "bad"));

  // Three ranks cannot form two equal groups: refused, with the key named, nothing written.
  EXPECT_EQ(survey(MINIMOD_MPIEXEC " -n 3", "uneven", " --set execution.shot_groups=2"), 2);
  const std::string log = read_text(dir / "uneven.log");
  EXPECT_NE(log.find("execution.shot_groups"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir / "uneven"));
  fs::remove_all(dir);
}

}  // namespace
