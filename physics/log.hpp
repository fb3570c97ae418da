// Logging for people (stderr). Level and rank prefix are set once in main.
#pragma once
#include <string>

namespace minimod::log {

enum class Level { error = 0, warn = 1, info = 2, debug = 3 };

void set_level(Level level);
void set_rank(int rank, int size);
Level level();

void error(const std::string& msg);
void warn(const std::string& msg);
void info(const std::string& msg);   // printed by rank 0 only
void debug(const std::string& msg);  // printed by rank 0 only

}  // namespace minimod::log
