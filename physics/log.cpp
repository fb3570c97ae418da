#include "physics/log.hpp"

#include <cstdio>

namespace minimod::log {
namespace {
Level g_level = Level::info;  // set once in main (STYLE.md: logger settings are the one exception)
std::string g_prefix;  // e.g. "[group 2] ": a survey's groups speak at once

void emit(const char* tag, const std::string& msg) {
  std::fprintf(stderr, "%s%s%s\n", g_prefix.c_str(), tag, msg.c_str());
}
}  // namespace

void set_level(Level level) { g_level = level; }
void set_prefix(const std::string& prefix) { g_prefix = prefix; }
Level level() { return g_level; }

void error(const std::string& msg) { emit("minimod: error: ", msg); }
void warn(const std::string& msg) {
  if (g_level >= Level::warn) emit("minimod: warning: ", msg);
}
void info(const std::string& msg) {
  if (g_level >= Level::info) emit("", msg);
}
void debug(const std::string& msg) {
  if (g_level >= Level::debug) emit("debug: ", msg);
}

}  // namespace minimod::log
