#include "physics/log.hpp"

#include <cstdio>

namespace minimod::log {
namespace {
Level g_level = Level::info;  // set once in main (STYLE.md: logger settings are the one exception)
int g_rank = 0;
int g_size = 1;

void emit(const char* tag, const std::string& msg) {
  if (g_size > 1) {
    std::fprintf(stderr, "[rank %d] %s%s\n", g_rank, tag, msg.c_str());
  } else {
    std::fprintf(stderr, "%s%s\n", tag, msg.c_str());
  }
}
}  // namespace

void set_level(Level level) { g_level = level; }
void set_rank(int rank, int size) {
  g_rank = rank;
  g_size = size;
}
Level level() { return g_level; }

void error(const std::string& msg) { emit("minimod: error: ", msg); }
void warn(const std::string& msg) {
  if (g_level >= Level::warn) emit("minimod: warning: ", msg);
}
void info(const std::string& msg) {
  if (g_level >= Level::info && g_rank == 0) emit("", msg);
}
void debug(const std::string& msg) {
  if (g_level >= Level::debug && g_rank == 0) emit("debug: ", msg);
}

}  // namespace minimod::log
