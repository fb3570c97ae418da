// Checkpoints under mpirun (app/checkpoint.hpp): a shot stopped at a checkpoint on some ranks and
// resumed on others (one process included) writes what an unbroken one-process run writes, bit
// for bit, snapshots included: the state is stored by global indices, the TTI CPML's layer memory
// with it, and the snapshots before the checkpoint stay in the result's partial file. Skipped
// where mpirun is missing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

constexpr const char* kShot = R"(propagator: acoustic_tti
grid: {shape: [30, 26, 28], spacing: [10, 10, 10]}
model:
  vp: {layers: [{top: 0, value: 1800}, {top: 120, value: 2600}]}
  epsilon: {constant: 0.2}
  delta: {constant: 0.1}
  theta: {constant: 30, units: deg}
  phi: {constant: 20, units: deg}
time: {duration: 0.15}
source: {wavelet: ricker, frequency: 15, position: [150, 130, 120]}
receivers:
  - line: {start: [0, 130, 30], end: [290, 130, 30], count: 30}
boundary: {pml: {width: 6, tti: cpml}, free_surface: [top]}
execution: {backend: cpu}
output: {file: shot.h5, final_wavefield: true, snapshots: {every: 25, stride: [2, 1, 2]}}
)";

int run(const std::string& cmd) { return minimod::testing::run_command(cmd); }

using minimod::testing::read_text;

TEST(CheckpointMpirun, AShotStoppedOnSomeRanksResumesOnOthersToTheOneProcessResult) {
  if (run("command -v " MINIMOD_MPIEXEC " >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun";
  const fs::path dir = fs::temp_directory_path() / ("minimod_checkpoint_mpirun_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  { std::ofstream(dir / "shot.yaml") << kShot; }
  const std::string env =
      "OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
      "OMPI_MCA_rmaps_base_oversubscribe=1 ";
  int call = 0;
  auto shot = [&](int ranks, const std::string& file, const std::string& extra) {
    const std::string launcher = ranks > 1 ? "timeout 300 " MINIMOD_MPIEXEC " -n " + std::to_string(ranks) + " " : "";
    const std::string log = "run" + std::to_string(++call) + ".log";
    const int rc = run("cd " + dir.string() + " && " + env + launcher + MINIMOD_BINARY " --config shot.yaml " +
                       "--set output.file=" + file + extra + " >" + log + " 2>&1");
    return std::make_pair(rc, read_text(dir / log));
  };
  ASSERT_EQ(shot(1, "one.h5", "").first, 0);
  // Stopped after step 30 on 2 ranks, after step 60 on 3 (resumed from 30), finished from there
  // on 1 and, from the same checkpoint again, on 4.
  auto [rc, log] = shot(2, "cut.h5", " --set checkpoint.stop_at=30");
  ASSERT_EQ(rc, 3) << log;
  std::tie(rc, log) = shot(3, "cut.h5", " --set checkpoint.stop_at=60");
  ASSERT_EQ(rc, 3) << log;
  EXPECT_NE(log.find("resumed from checkpoint cut.checkpoint.h5 at step 30/"), std::string::npos) << log;
  fs::copy_file(dir / "cut.checkpoint.h5", dir / "at60.h5");
  fs::copy_file(dir / "cut.h5.partial", dir / "at60.partial");
  std::tie(rc, log) = shot(1, "cut.h5", " --set checkpoint.every=0");
  ASSERT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("resumed from checkpoint cut.checkpoint.h5 at step 60/"), std::string::npos) << log;
  fs::rename(dir / "cut.h5", dir / "cut_on_one.h5");
  fs::copy_file(dir / "at60.h5", dir / "cut.checkpoint.h5");
  fs::copy_file(dir / "at60.partial", dir / "cut.h5.partial");
  std::tie(rc, log) = shot(4, "cut.h5", " --set checkpoint.every=0");
  ASSERT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("resumed from checkpoint cut.checkpoint.h5 at step 60/"), std::string::npos) << log;
  for (const char* d : {"/seismograms/p", "/final/p", "/snapshots/p", "/snapshots/time"}) {
    const auto expected = minimod::testing::read_dataset((dir / "one.h5").string(), d);
    ASSERT_FALSE(expected.empty()) << d;
    EXPECT_TRUE(std::any_of(expected.begin(), expected.end(), [](float x) { return x != 0.0f; })) << d;
    EXPECT_EQ(minimod::testing::read_dataset((dir / "cut_on_one.h5").string(), d), expected) << d << ", on 1";
    EXPECT_EQ(minimod::testing::read_dataset((dir / "cut.h5").string(), d), expected) << d << ", on 4";
  }
  EXPECT_FALSE(fs::exists(dir / "cut.checkpoint.h5"));
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

}  // namespace
