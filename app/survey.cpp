#include "app/survey.hpp"

#include <algorithm>
#include <filesystem>

#include "app/plan.hpp"

namespace minimod::app {

std::vector<physics::Point3> shot_positions(const io::Config& config) { return positions_of(config.shots); }

std::string shot_file(const std::string& pattern, int shot, int count) {
  int width = 4;
  for (int n = std::max(count - 1, 0); n >= 10000; n /= 10) ++width;
  std::string number = std::to_string(shot);
  if (static_cast<int>(number.size()) < width) number.insert(0, width - number.size(), '0');
  const std::string mark = "{shot}";
  if (const auto at = pattern.find(mark); at != std::string::npos) {
    std::string out = pattern;
    for (auto p = at; p != std::string::npos; p = out.find(mark, p + number.size()))
      out.replace(p, mark.size(), number);
    return out;
  }
  const std::filesystem::path path(pattern);
  const std::filesystem::path name = path.stem().string() + "-" + number + path.extension().string();
  return (path.parent_path() / name).string();
}

io::Config shot_config(const io::Config& survey, const std::vector<physics::Point3>& positions, int shot) {
  io::Config c = survey;
  c.source.position = positions.at(static_cast<size_t>(shot));
  c.output.file = shot_file(survey.output.file, shot, static_cast<int>(positions.size()));
  if (!survey.checkpoint.file.empty())  // else beside each shot's result (app::checkpoint_path)
    c.checkpoint.file = shot_file(survey.checkpoint.file, shot, static_cast<int>(positions.size()));
  return c;
}

std::vector<int> shots_of_group(const std::vector<int>& pending, int group, int groups) {
  std::vector<int> out;
  for (size_t p = static_cast<size_t>(group); p < pending.size(); p += static_cast<size_t>(groups))
    out.push_back(pending[p]);
  return out;
}

}  // namespace minimod::app
