// A survey: many shots of one config, each the config with the source at that shot's position,
// written to a file of its own (DESIGN.md §5, §6). Shots are independent: minimod splits its ranks
// into execution.shot_groups groups, deals the shots out to them in turn, each group running its
// own over its own ranks, and skips a shot whose result file exists already (results are renamed into place only when complete,
// io::OutputFile), so a survey cut short resumes where it stopped.
#pragma once
#include <string>
#include <vector>

#include "io/config.hpp"
#include "physics/grid.hpp"

namespace minimod::app {

/// The survey's shot positions in order (m, model coordinates); empty for a one-shot config.
std::vector<physics::Point3> shot_positions(const io::Config& config);

/// Shot `shot` of `count`'s result file: `{shot}` in `pattern` replaced by the shot's number,
/// zero-padded to 4 digits (more where count needs them), or else "-NNNN" put before the file's
/// extension: out/line.h5 -> out/line-0007.h5.
std::string shot_file(const std::string& pattern, int shot, int count);

/// The one-shot config of shot `shot` of a survey whose shots lie at `positions`
/// (shot_positions, expanded once for the whole survey): the source at its position, output.file
/// its own (shot_file). The shots stay listed, so that its plan checks them all (make_plan).
io::Config shot_config(const io::Config& survey, const std::vector<physics::Point3>& positions, int shot);

/// The shots group `group` of `groups` runs of those still to run (`pending`, in order): the
/// group-th, then every groups-th after it, so that a survey resumed after an interruption
/// shares out what is left evenly, whichever shots were done.
std::vector<int> shots_of_group(const std::vector<int>& pending, int group, int groups);

}  // namespace minimod::app
