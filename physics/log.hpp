// Logging for people (stderr). Level and prefix are set in main: one voice per run (rank 0), or
// per group of a survey's ranks, each line after its group's prefix.
#pragma once
#include <string>

namespace minimod::log {

enum class Level { error = 0, warn = 1, info = 2, debug = 3 };

void set_level(Level level);
void set_prefix(const std::string& prefix);  // put before every line; empty by default
Level level();

void error(const std::string& msg);
void warn(const std::string& msg);
void info(const std::string& msg);
void debug(const std::string& msg);

}  // namespace minimod::log
