// The halo exchange as a propagator sees it in a distributed run: which faces of its subdomain have
// a neighbour, the boxes it packs and unpacks there, the split of its points into the shell that
// neighbours read (computed first) and the deep interior (computed while the halos travel), and the
// transport that moves the packed faces (mpi/ implements it). DESIGN.md §5.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "physics/box3.hpp"

namespace minimod::kernels {

/// Moves packed faces between neighbouring subdomains. Buffers hold one face each, dense [i][j][k]
/// of the face box; `count[f]` = 0 where face f has no neighbour.
class HaloTransport {
 public:
  enum class Memory { host, device };
  virtual ~HaloTransport() = default;
  virtual const char* name() const = 0;
  /// Where the buffers passed to start() live: host (the propagator stages device faces through
  /// pinned memory) or device (CUDA-aware MPI, NCCL).
  virtual Memory memory() const = 0;
  /// Starts sending send[f] to face f's neighbour and receiving its data into recv[f]. `stream`
  /// (a cudaStream_t, or nullptr on the CPU) orders device-memory transports; the send buffers are
  /// complete in stream order.
  virtual void start(float* const send[6], float* const recv[6], const std::int64_t count[6],
                     void* stream) = 0;
  /// Host memory: returns when every recv buffer is filled. Device memory: the data is complete in
  /// `stream` order when this returns.
  virtual void finish(void* stream) = 0;
};

/// One subdomain's view of the exchange: faces with a neighbour, in Face order (x-, x+, ...).
struct HaloFaces {
  std::array<bool, 6> neighbour{};
  bool any() const {
    for (bool b : neighbour)
      if (b) return true;
    return false;
  }
};

/// Halo width: the stencil radius.
constexpr int kHaloWidth = 4;

/// Own points a face's neighbour reads (the first kHaloWidth planes inside the face).
physics::Box3 send_box(const physics::Index3& shape, int face);
/// Halo points filled from the face's neighbour (the kHaloWidth planes outside the face).
physics::Box3 recv_box(const physics::Index3& shape, int face);

/// The points of a subdomain in two parts: `shell` (disjoint boxes: own points within kHaloWidth of
/// a face with a neighbour) and `interior` (the rest). Without neighbours the interior is everything.
struct ShellSplit {
  std::vector<physics::Box3> shell;
  physics::Box3 interior;
};
ShellSplit split_shell(const physics::Index3& shape, const HaloFaces& faces);

}  // namespace minimod::kernels
