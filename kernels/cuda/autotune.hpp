// `execution.kernel: auto` for the CUDA backend (DESIGN.md §4): time every registered family and
// tunable tile on the real subdomain for a few steps, keep the fastest, log the choice and cache it
// per GPU model and shape in a small TSV file. The propagator supplies the timing (a callback), so
// this file knows nothing of fields or streams.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/registry.hpp"
#include "physics/box3.hpp"
#include "physics/error.hpp"

namespace minimod::kernels::cuda {

/// One timed (or cached) candidate.
struct TuneResult {
  std::string family;
  Tile tile;
  double gpts = 0;  // GPts/s: grid points (PML included) x steps / seconds
};

/// What one `kernel: auto` decision did.
struct TuneOutcome {
  std::string key;                // cache key (GPU, shape, PML); see autotune_key
  bool cached = false;            // true: taken from the cache, nothing timed; table = the entry
  std::vector<TuneResult> table;  // fastest first; candidates that failed to launch are absent
  const TuneResult& best() const { return table.front(); }
};

/// Thrown by a timing callback for a candidate that cannot run here (a launch refused for its
/// shared memory, a tile the family rejects): the tuner skips it. Anything else propagates.
struct CandidateFailed : Error {
  using Error::Error;
};

/// Switches the propagator's inner family to (family, tile) and returns the seconds `steps` steps
/// take on the device.
using TimeCandidate = std::function<double(const KernelFamily&, const Tile&, int steps)>;

/// The cache file: $MINIMOD_AUTOTUNE_CACHE (set but empty: no cache), else
/// $XDG_CACHE_HOME/minimod/autotune.tsv, else $HOME/.cache/minimod/autotune.tsv, else "".
std::string autotune_cache_path();

/// "GPU name<TAB>nx x ny x nz<TAB>pml kind and widths": what a cached choice is valid for.
std::string autotune_key(const std::string& gpu, const physics::Index3& shape, const std::string& pml);

/// The cached choice for `key`, if the file has one; a missing file is silent, an unreadable or
/// corrupt one (or line) a warning, never an error.
std::optional<TuneResult> read_autotune_cache(const std::string& path, const std::string& key);

/// Adds or replaces `key`'s entry, writing a temporary file and renaming it over the cache; a
/// failure is a warning.
void write_autotune_cache(const std::string& path, const std::string& key, const TuneResult& r);

/// The decision for `key`: the cached entry of `cache` ("" = none) if it is valid (its family
/// registered for `kind`, its tile one of the family's tunables for it), else every applicable
/// family x tile timed with `time` and the fastest written to the cache. `points` = grid points per
/// step. Logs the choice at info level. Throws Error if no candidate could run.
TuneOutcome autotune(PropagatorKind kind, const std::string& key, const std::string& cache,
                     std::int64_t points, const TimeCandidate& time);

/// The outcome of the last autotune in this process (tests, the benchmark); empty
/// table before the first.
TuneOutcome last_tuning();

/// "64x8x64"
std::string tile_string(const Tile& t);

/// The layer part of a cache key: "<kind> lo,lo,lo/hi,hi,hi".
std::string layer_key(const std::string& kind, const std::array<int, 3>& lo, const std::array<int, 3>& hi);

/// `kernel: auto` on one propagator (one allocation) that can switch its inner family
/// (set_inner_kernel), fill its fields with non-zero data (fill_for_tuning), time steps, settle
/// after a refused launch and return to rest (reset_state): every candidate timed on this grid (or
/// the cached choice), then `prop` left at rest with the winner.
template <class P>
void tune_in_place(P& prop, PropagatorKind kind, const physics::Index3& shape, const std::string& layer) {
  const std::string key = autotune_key(device_name(), shape, layer);
  bool dirty = false;
  const TimeCandidate time = [&](const KernelFamily& f, const Tile& t, int steps) {
    if (!dirty) {
      prop.fill_for_tuning();
      dirty = true;
    }
    prop.set_inner_kernel(f, t);
    try {
      return prop.timed_steps(0, steps, {}, +[](int, const void*) { return 0.0f; }, nullptr);
    } catch (const Error& e) {
      prop.settle_after_failed_step();
      throw CandidateFailed(e.what());
    }
  };
  const std::int64_t points = static_cast<std::int64_t>(shape.i) * shape.j * shape.k;
  const TuneOutcome outcome = autotune(kind, key, autotune_cache_path(), points, time);
  if (dirty) prop.reset_state();
  prop.set_inner_kernel(find_family(outcome.best().family, kind), outcome.best().tile);
}

}  // namespace minimod::kernels::cuda
