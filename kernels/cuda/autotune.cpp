// `execution.kernel: auto` (DESIGN.md §4): the candidate loop, the timing policy and the TSV cache.
// Timing itself is the propagator's (CUDA events around whole steps, PML included); see
// make_cuda_acoustic_iso in acoustic_iso_cuda.cu.
#include "kernels/cuda/autotune.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "physics/log.hpp"

namespace minimod::kernels::cuda {
namespace {

// Timing policy: every candidate gets kWarmup untimed steps (first launch, cudaFuncSetAttribute,
// L2 and TLB warm), then enough timed steps for ~kTargetSeconds of device time, at least kMinSteps
// (so events' ~us resolution is noise) and at most kMaxSteps. At 1000^3 (~10 ms a step) that is
// 5 + 2 steps x 24 candidates ~ 2-3 s on an H100; at 200^3 ~ 0.3 s.
constexpr int kWarmup = 2;  // even: one pair of a two-step family
constexpr int kMinSteps = 5;
constexpr int kMaxSteps = 100;
constexpr double kTargetSeconds = 0.01;
constexpr double kClockWarmSeconds = 0.05;  // before the first candidate: GPU clocks up from idle
constexpr int kFinalists = 3;               // re-timed once more; each keeps its faster timing
constexpr const char* kHeader = "# minimod autotune cache v1: gpu\tshape\tpml\tfamily\ttile\tGPts/s";

std::mutex g_mutex;
TuneOutcome g_last;

std::string fmt_gpts(double g, const char* format = "%.1f") {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, g);
  return buf;
}

bool parse_tile(const std::string& s, Tile& t) {
  char tail = 0;
  return std::sscanf(s.c_str(), "%dx%dx%d%c", &t.x, &t.y, &t.z, &tail) == 3 && t.x > 0 && t.y > 0 &&
         t.z > 0;
}

bool same_tile(const Tile& a, const Tile& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

struct Entry {
  std::string key;  // first three columns
  TuneResult result;
};

/// Valid entries of the file; a missing file is an empty cache, anything else odd a warning
/// (unless `quiet`: the writer re-reads what the reader has already warned about).
std::vector<Entry> read_entries(const std::string& path, bool quiet = false) {
  std::vector<Entry> out;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return out;
  std::ifstream in(path);
  if (!in || std::filesystem::is_directory(path, ec)) {
    if (!quiet) log::warn("kernel auto: cannot read the autotune cache " + path + "; ignoring it");
    return out;
  }
  int line_no = 0, bad = 0, first_bad = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> col;
    std::stringstream ls(line);
    for (std::string c; std::getline(ls, c, '\t');) col.push_back(c);
    Entry e;
    char* end = nullptr;
    bool ok = col.size() == 6 && !col[3].empty() && parse_tile(col[4], e.result.tile);
    if (ok) {
      e.result.gpts = std::strtod(col[5].c_str(), &end);
      ok = end != col[5].c_str() && *end == '\0' && std::isfinite(e.result.gpts) && e.result.gpts > 0;
    }
    if (!ok) {
      if (bad++ == 0) first_bad = line_no;
      continue;
    }
    e.key = col[0] + "\t" + col[1] + "\t" + col[2];
    e.result.family = col[3];
    out.push_back(std::move(e));
  }
  if (in.bad()) {
    if (!quiet) log::warn("kernel auto: error reading the autotune cache " + path + "; ignoring it");
    return {};
  }
  if (bad > 0 && !quiet)
    log::warn("kernel auto: autotune cache " + path + ": " + std::to_string(bad) +
              " malformed line(s) ignored (first: line " + std::to_string(first_bad) + ")");
  return out;
}

const KernelFamily* family_for(const std::string& name, PropagatorKind kind) {
  for (const auto& f : families())
    if (f.name == name && implements(f, kind)) return &f;
  return nullptr;
}

std::string describe(const TuneResult& r) { return r.family + " " + tile_string(r.tile); }

}  // namespace

std::string layer_key(const std::string& kind, const std::array<int, 3>& lo, const std::array<int, 3>& hi) {
  std::string s = kind;
  for (int a = 0; a < 3; ++a) s += (a == 0 ? " " : ",") + std::to_string(lo[static_cast<size_t>(a)]);
  for (int a = 0; a < 3; ++a) s += (a == 0 ? "/" : ",") + std::to_string(hi[static_cast<size_t>(a)]);
  return s;
}

std::string tile_string(const Tile& t) {
  return std::to_string(t.x) + "x" + std::to_string(t.y) + "x" + std::to_string(t.z);
}

std::string autotune_cache_path() {
  if (const char* p = std::getenv("MINIMOD_AUTOTUNE_CACHE")) return p;  // "" disables the cache
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') return std::string(xdg) + "/minimod/autotune.tsv";  // XDG: absolute only
  const char* home = std::getenv("HOME");
  if (home && home[0]) return std::string(home) + "/.cache/minimod/autotune.tsv";
  return "";
}

std::string autotune_key(const std::string& gpu, const physics::Index3& shape, const std::string& pml) {
  std::string g = gpu;
  std::replace(g.begin(), g.end(), '\t', ' ');
  std::replace(g.begin(), g.end(), '\n', ' ');
  return g + "\t" + std::to_string(shape.i) + "x" + std::to_string(shape.j) + "x" +
         std::to_string(shape.k) + "\t" + pml;
}

std::optional<TuneResult> read_autotune_cache(const std::string& path, const std::string& key) {
  if (path.empty()) return std::nullopt;
  for (const auto& e : read_entries(path))
    if (e.key == key) return e.result;
  return std::nullopt;
}

void write_autotune_cache(const std::string& path, const std::string& key, const TuneResult& r) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::vector<Entry> entries = read_entries(path, true);
  entries.erase(std::remove_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.key == key; }),
                entries.end());
  entries.push_back({key, r});
  // Unique temporary in the same directory, then rename: readers (other ranks, other runs) see the
  // old file or the new one, never a partial one. Concurrent writers: the last rename wins.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::error_code ec;
  const fs::path dir = fs::path(path).parent_path();
  if (!dir.empty()) fs::create_directories(dir, ec);
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (out) {
      out << kHeader << "\n";
      for (const auto& e : entries)
        out << e.key << "\t" << e.result.family << "\t" << tile_string(e.result.tile) << "\t"
            << fmt_gpts(e.result.gpts, "%.2f") << "\n";
      out.flush();
    }
    if (!out) {
      log::warn("kernel auto: cannot write the autotune cache " + tmp + "; choice not cached");
      out.close();
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    log::warn("kernel auto: cannot replace the autotune cache " + path + ": " + ec.message() +
              "; choice not cached");
    fs::remove(tmp, ec);
  }
}

TuneOutcome autotune(PropagatorKind kind, const std::string& key, const std::string& cache, std::int64_t points,
                     const TimeCandidate& time) {
  TuneOutcome outcome;
  outcome.key = key;
  if (const auto hit = read_autotune_cache(cache, key)) {
    const KernelFamily* f = family_for(hit->family, kind);
    const bool tile_ok = f && !f->unverified && std::any_of(tunables(*f, kind).begin(), tunables(*f, kind).end(),
                                          [&](const Tile& t) { return same_tile(t, hit->tile); });
    if (tile_ok) {
      outcome.cached = true;
      outcome.table = {*hit};
      log::info("kernel auto: cached choice " + describe(*hit) + " (" + fmt_gpts(hit->gpts) +
                " GPts/s when tuned; cache " + cache + ")");
      std::lock_guard<std::mutex> lock(g_mutex);
      g_last = outcome;
      return outcome;
    }
    log::warn("kernel auto: cached choice " + describe(*hit) + " in " + cache +
              " is not a tunable of this build; tuning again");
  }

  const auto t0 = std::chrono::steady_clock::now();
  struct Timed {
    const KernelFamily* family;
    Tile tile;
    int steps;
    double per_step;  // s
  };
  std::vector<Timed> timed;
  int candidates = 0;
  bool clocks_warm = false;
  for (const auto& f : families()) {
    if (!implements(f, kind) || f.unverified) continue;
    // A two-step family's steps alternate between the pair kernel with the layer and the layer
    // alone: an odd count would weigh the pair kernel 3 in 5 at the minimum of 5 steps (at 1000^3
    // on an H100, temporal_tma timed ~4% slow). Its counts are rounded up to whole pairs.
    const auto whole = [&f](int steps) { return f.launch_pair != nullptr ? steps + steps % 2 : steps; };
    for (const Tile& t : tunables(f, kind)) {
      ++candidates;
      try {
        const double warm = std::max(time(f, t, kWarmup) / kWarmup, 1e-7);
        if (!clocks_warm) {  // the first runnable candidate also brings the GPU out of idle clocks
          time(f, t, whole(std::clamp(static_cast<int>(kClockWarmSeconds / warm), kMinSteps, 4 * kMaxSteps)));
          clocks_warm = true;
        }
        const int steps =
            whole(std::clamp(static_cast<int>(std::ceil(kTargetSeconds / warm)), kMinSteps, kMaxSteps));
        timed.push_back({&f, t, steps, time(f, t, steps) / steps});
        log::debug("kernel auto: " + f.name + " " + tile_string(t) + ": " +
                   fmt_gpts(points / timed.back().per_step / 1e9) + " GPts/s (" + std::to_string(steps) +
                   " steps)");
      } catch (const CandidateFailed& e) {
        log::debug("kernel auto: skipping " + f.name + " " + tile_string(t) + ": " + e.what());
      }
    }
  }
  if (timed.empty())
    throw Error("kernel auto: none of the " + std::to_string(candidates) +
                " CUDA kernel candidates could run on this GPU (run with a debug log level to see why)");
  auto faster = [](const Timed& a, const Timed& b) { return a.per_step < b.per_step; };
  std::stable_sort(timed.begin(), timed.end(), faster);
  // Near-ties decide the choice: time the leaders once more and keep each one's faster timing.
  for (size_t c = 0; c < timed.size() && c < static_cast<size_t>(kFinalists); ++c) {
    try {
      timed[c].per_step = std::min(timed[c].per_step, time(*timed[c].family, timed[c].tile, timed[c].steps) /
                                                          timed[c].steps);
    } catch (const CandidateFailed& e) {  // ran before: not expected; keep the first timing
      log::debug("kernel auto: re-timing " + timed[c].family->name + " failed: " + e.what());
    }
  }
  std::stable_sort(timed.begin(), timed.end(), faster);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  for (const auto& t : timed)
    outcome.table.push_back({t.family->name, t.tile, static_cast<double>(points) / t.per_step / 1e9});
  std::string msg = "kernel auto: chose " + describe(outcome.best()) + " (" + fmt_gpts(outcome.best().gpts) +
                    " GPts/s";
  // Runners-up: the best tile of up to three other families.
  std::vector<std::string> shown = {outcome.best().family};
  for (const auto& r : outcome.table) {
    if (shown.size() > 3 || std::find(shown.begin(), shown.end(), r.family) != shown.end()) continue;
    msg += (shown.size() == 1 ? "; next: " : ", ") + describe(r) + " " + fmt_gpts(r.gpts);
    shown.push_back(r.family);
  }
  char tail[96];
  std::snprintf(tail, sizeof tail, "; %zu of %d candidates timed in %.1f s)", timed.size(), candidates, seconds);
  log::info(msg + tail);
  write_autotune_cache(cache, key, outcome.best());
  std::lock_guard<std::mutex> lock(g_mutex);
  g_last = outcome;
  return outcome;
}

TuneOutcome last_tuning() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_last;
}

}  // namespace minimod::kernels::cuda
