// The halo exchange as a propagator sees it in a distributed run: which faces of its subdomain have
// a neighbour, the boxes it packs and unpacks there, the split of its points into the shell that
// neighbours read (computed first) and the deep interior (computed while the halos travel), and the
// transport that moves the packed faces (mpi/ implements it). DESIGN.md §5.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
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

/// The own points plus the halo planes of the faces with a neighbour (where free surfaces mirror:
/// the neighbour's copy of the surface plane arrives unzeroed and its edge halos unmirrored).
physics::Box3 halo_span(const physics::Index3& shape, const HaloFaces& faces);

// The exchange that also fills the EDGE halos, for stencils with diagonal points (the 73-point TTI
// stencil reads (i±m, j±m, k) and the like, never a corner): one phase per axis, x then y then z,
// each finished before the next. A phase's boxes cover the halos of the earlier axes on the sides
// with a neighbour, so the x-y edge arrives with the y faces (the neighbour got it in the x phase),
// the x-z and y-z edges with the z faces. Neighbours across a face share the other axes' neighbour
// pattern (Cartesian decomposition), so both ends agree on each box.

/// Own points sent across `face` in its phase (send_box, grown over the earlier axes' halos).
physics::Box3 phased_send_box(const physics::Index3& shape, const HaloFaces& faces, int face);
/// Halo points received across `face` in its phase (recv_box, grown likewise).
physics::Box3 phased_recv_box(const physics::Index3& shape, const HaloFaces& faces, int face);

/// The backend's part of exchange_by_axis. Per face of a phase, a message holds the face's box
/// (phased_send_box / phased_recv_box) of every exchanged field, one after another.
struct PhasedHaloOps {
  /// Returns the send buffer of `face`, filled with `floats` floats (complete for host-memory
  /// transports, complete in stream order for device-memory ones).
  std::function<float*(int face, std::int64_t floats)> pack;
  /// Returns a buffer of `floats` floats to receive `face`'s message into.
  std::function<float*(int face, std::int64_t floats)> receive_buffer;
  /// Writes a received message into the halo of `face`.
  std::function<void(int face, const float* data)> unpack;
};

/// Fills the face and edge halos of `fields` fields through `transport`: three phases (x, y, z),
/// each started, finished and unpacked before the next. `stream` as in HaloTransport::start.
/// `overlap(axis)`, when given, is called once per axis (0, 1, 2) while that phase's messages are
/// in flight (also for an axis without neighbours): work that neither sends nor reads a halo,
/// such as a third of the interior, hides the exchange. Each phase's send boxes reach over the
/// earlier phases' halos and the shell only, never the interior.
void exchange_by_axis(HaloTransport& transport, const physics::Index3& shape,
                      const HaloFaces& faces, int fields, void* stream, const PhasedHaloOps& ops,
                      const std::function<void(int axis)>& overlap = {});

/// The points of a subdomain in two parts: `shell` (disjoint boxes: own points within kHaloWidth of
/// a face with a neighbour) and `interior` (the rest). Without neighbours the interior is everything.
struct ShellSplit {
  std::vector<physics::Box3> shell;
  physics::Box3 interior;
};
ShellSplit split_shell(const physics::Index3& shape, const HaloFaces& faces);

}  // namespace minimod::kernels
