// The timing split of a distributed GPU step (kernels/propagator.hpp, StepSplit) from CUDA events,
// shared by the CUDA propagators: each exchanging step records four events, kept in a ring and
// read back when the ring comes round again or the split is asked for, so that no step waits on
// its own events.
#pragma once
#include <algorithm>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/resources.hpp"
#include "kernels/propagator.hpp"

namespace minimod::kernels::cuda {

class StepSplitEvents {
 public:
  /// One step's events: `start` on the halo stream before the shell, `shell` after the shell (and
  /// its sources), `interior` on the compute stream after the interior, `halo` once the halos
  /// are in. StepSplit: shell = start..shell, interior = start..interior, exchange_exposed =
  /// interior..halo (zero when the halos were in first).
  struct Step {
    Event start{true}, shell{true}, interior{true}, halo{true};
    bool pending = false;
  };

  /// The events for the next step to record, all four (the slot's earlier step read back first).
  Step& next() {
    Step& s = ring_[next_];
    resolve(s);
    next_ = (next_ + 1) % ring_.size();
    s.pending = true;
    return s;
  }

  /// Forget every step recorded so far (their events read back first).
  void clear() {
    total();
    sums_ = StepSplit{};
  }

  /// The sums over every step recorded so far.
  StepSplit total() const {
    for (auto& s : ring_) resolve(s);
    return sums_;
  }

 private:
  void resolve(Step& s) const {
    if (!s.pending) return;
    MM_CUDA_CHECK(cudaEventSynchronize(s.halo.get()));
    MM_CUDA_CHECK(cudaEventSynchronize(s.interior.get()));
    float shell = 0, interior = 0, halo = 0;
    MM_CUDA_CHECK(cudaEventElapsedTime(&shell, s.start.get(), s.shell.get()));
    MM_CUDA_CHECK(cudaEventElapsedTime(&interior, s.start.get(), s.interior.get()));
    MM_CUDA_CHECK(cudaEventElapsedTime(&halo, s.interior.get(), s.halo.get()));
    sums_.shell += shell * 1e-3;
    sums_.interior += interior * 1e-3;
    sums_.exchange_exposed += std::max(0.0f, halo) * 1e-3;
    ++sums_.steps;
    s.pending = false;
  }

  mutable std::vector<Step> ring_ = std::vector<Step>(64);
  size_t next_ = 0;
  mutable StepSplit sums_;
};

}  // namespace minimod::kernels::cuda
