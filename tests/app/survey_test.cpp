// A survey's shots (app/survey.hpp): their positions, result files, the config each runs and
// which group runs which; and the plan naming a shot outside the model before any shot runs.
#include "app/survey.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "app/plan.hpp"
#include "physics/error.hpp"
#include "test_support.hpp"

namespace minimod::app {
namespace {

io::Config line_survey(int count) {
  io::Config c = testing::homogeneous_config({24, 24, 24}, 10, 2000, 10);
  io::PositionGroupConfig g;
  g.kind = io::PositionGroupConfig::Kind::line;
  g.start = {40, 120, 20};
  g.end = {200, 120, 20};
  g.count = {count, 1, 1};
  c.shots.push_back(g);
  c.output.file = "out/line.h5";
  return c;
}

TEST(ShotFile, PutsTheShotNumberBeforeTheExtension) {
  EXPECT_EQ(shot_file("out/line.h5", 7, 9), "out/line-0007.h5");
  EXPECT_EQ(shot_file("line.h5", 0, 1), "line-0000.h5");
  EXPECT_EQ(shot_file("/data/run/shots", 12, 20), "/data/run/shots-0012");
}

TEST(ShotFile, ReplacesEveryShotMark) {
  EXPECT_EQ(shot_file("out/{shot}/p{shot}.h5", 3, 10), "out/0003/p0003.h5");
}

TEST(ShotFile, WidensThePaddingForLargeSurveys) {
  EXPECT_EQ(shot_file("s.h5", 42, 10000), "s-0042.h5");
  EXPECT_EQ(shot_file("s.h5", 42, 10001), "s-00042.h5");
  EXPECT_EQ(shot_file("s.h5", 123456, 200000), "s-123456.h5");
  // Every name of a survey differs and sorts in shot order.
  std::set<std::string> names;
  for (int s = 0; s < 12000; s += 7) names.insert(shot_file("s.h5", s, 12000));
  EXPECT_EQ(names.size(), static_cast<size_t>((12000 + 6) / 7));
  EXPECT_LT(shot_file("s.h5", 999, 12000), shot_file("s.h5", 1000, 12000));
}

TEST(ShotConfig, PutsTheSourceAtTheShotAndTheResultInItsOwnFile) {
  const io::Config survey = line_survey(5);
  const auto positions = shot_positions(survey);
  ASSERT_EQ(positions.size(), 5u);
  EXPECT_EQ(positions[0], (physics::Point3{40, 120, 20}));
  EXPECT_EQ(positions[4], (physics::Point3{200, 120, 20}));
  for (int s = 0; s < 5; ++s) {
    const io::Config c = shot_config(survey, positions, s);
    EXPECT_EQ(c.source.position, positions[static_cast<size_t>(s)]);
    EXPECT_EQ(c.output.file, shot_file("out/line.h5", s, 5));
    EXPECT_EQ(c.grid.shape, survey.grid.shape);
  }
  EXPECT_THROW(shot_config(survey, positions, 5), std::out_of_range);
}

TEST(ShotsOfGroup, EveryPendingShotRunsOnceWhateverTheGroups) {
  for (int count : {1, 5, 12}) {
    for (int groups : {1, 2, 3, 7}) {
      std::vector<int> pending;  // every third shot done already
      for (int s = 0; s < count; ++s)
        if (s % 3 != 1) pending.push_back(s);
      std::multiset<int> all;
      size_t most = 0, least = pending.size();
      for (int g = 0; g < groups; ++g) {
        const auto mine = shots_of_group(pending, g, groups);
        for (size_t i = 1; i < mine.size(); ++i) EXPECT_LT(mine[i - 1], mine[i]);
        all.insert(mine.begin(), mine.end());
        most = std::max(most, mine.size());
        least = std::min(least, mine.size());
      }
      ASSERT_EQ(all.size(), pending.size()) << count << " shots, " << groups << " groups";
      for (int s : pending) EXPECT_EQ(all.count(s), 1u);
      EXPECT_LE(most - least, 1u) << "the pending shots are not shared out evenly";
    }
  }
}

TEST(SurveyPlan, NamesAShotOutsideTheModelWhicheverShotRuns) {
  io::Config survey = line_survey(3);
  io::PositionGroupConfig far;
  far.kind = io::PositionGroupConfig::Kind::points;
  far.points = {{120, 120, 20}, {120, 120, 900}};  // shots 3 and 4; the model is 230 m deep
  survey.shots.push_back(far);
  for (int s : {0, 3}) {
    try {
      make_plan(shot_config(survey, shot_positions(survey), s));
      ADD_FAILURE() << "shot " << s << "'s plan took a shot outside the model";
    } catch (const ConfigError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("shots"), std::string::npos) << m;
      EXPECT_NE(m.find("(shot 4 of 5)"), std::string::npos) << m;
      EXPECT_NE(m.find("z = 900"), std::string::npos) << m;
    }
  }
  survey.shots.pop_back();
  EXPECT_NO_THROW(make_plan(shot_config(survey, shot_positions(survey), 2)));
}

}  // namespace
}  // namespace minimod::app
