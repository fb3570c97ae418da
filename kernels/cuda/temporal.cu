// temporal: two time steps per sweep of the inner box (temporal blocking of degree b_T = 2, as
// AN5D's star3d4r on a V100; notes/an5d-digest.md), built on the `streaming` family's 2.5D scheme.
//
// Why. A single step moves >= 16 B per inner point (u, u_prev, v2dt2 read, u_next written) and
// semi_tma already runs its inner box at ~83% of DRAM bandwidth on an H100 (Nsight Compute,
// 1000^3: 5.46 ms for 946^3 points); Minimod's case end to end then stays near 130 GPts/s. Two
// steps in one sweep read u^{n-1}, u^n, v2dt2 and write u^{n+1}, u^{n+2}: 20 B per two steps, 10 B
// per point and step.
//
// How. A block of (TK+8) x (TJ+8) threads covers a TK x TJ (k, j) output tile plus a ring of 4:
// the points whose u^{n+1} the tile's u^{n+2} stencils read. It walks along i (planes i1 from
// i_begin-4 to i_end+3, i.e. its chunk plus 4 planes each side):
//  * first step at plane i1, every thread: u^n(i1-4 .. i1+4) of its column in a register queue,
//    the u^n plane with a j/k halo of 4 around the ring in shared memory (edge threads load the
//    extra cells), u_prev and v2dt2 of its own point; u^{n+1}(i1) = leapfrog as the CPU does.
//    Points outside the box (the ring reaching into the PML, or past the box's far edge) are not
//    computed: their u^{n+1} is read from u1, where the propagator's PML update put it.
//  * second step at plane i1-4, tile threads: u^{n+1}(i1-8 .. i1) of the column in a second
//    queue, the u^{n+1} plane (i1-4) of all threads in a second shared plane, u^n(i1-4) from the
//    first queue, v2dt2(i1-4) from a 5-deep queue. u^{n+2} = leapfrog, written to u2; u^{n+1} of
//    the chunk's own planes written to u1.
//  * three barriers per plane (before storing the u^n plane, after it, after the u^{n+1} plane).
// The ring costs (TK+8)(TJ+8)/(TK TJ) first-step updates per output (1.875 for 32x16) and the
// chunk 8 extra planes; loads of neighbouring tiles' cells are L2 hits.
// The u^n plane's rows are (threads per row + 32) apart, so consecutive threads hit consecutive
// banks also across a row break; the u^{n+1} plane is one cell per thread in thread order.
// Nothing is reordered: laplacian8 through accessors, leapfrog, exactly as the CPU reference.
// Single steps (several subdomains, the CPML, free surfaces) are semi_tma's; a run that stops
// after the first half of a pair has its complete state (the second half is dropped).
//
// Measured (H100, bench/results/2026-11-23-h100-session3.md): correct, but 89 GPts/s at 1000^3
// against semi_tma's 133: instruction-bound (26% of DRAM, 67% SM throughput, ~240 instructions
// per point and step), as AN5D found for radius-4 stars.
#include <cstdint>
#include <string>

#include "kernels/cuda/block_emulation.hpp"
#include "kernels/cuda/block_model.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/emulation.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/tti_point.hpp"
#include "physics/error.hpp"
#include "physics/stencil.hpp"

namespace minimod::kernels::cuda {
namespace {

constexpr int R = physics::kRadius;

template <int TK, int TJ>
struct PairShape {
  static constexpr int BX = TK + 2 * R, BY = TJ + 2 * R;  // threads: the first step's points
  static constexpr int P1 = BX + 32;                       // u^n plane pitch (>= BX + 2R)
  static constexpr int plane1 = (BY + 2 * R) * P1;         // u^n with the ring's halo
  static constexpr int plane2 = BY * BX;                   // u^{n+1}, one cell per thread
  static constexpr int smem_bytes = (plane1 + plane2) * 4;
};

/// One block's sweep: `blk` (block_model.cuh), `s` its shared memory (PairShape::smem_bytes).
#pragma nv_exec_check_disable
template <int TK, int TJ, class Block>
MM_HOST_DEVICE MM_FORCE_INLINE void pair_block(const Block& blk, const IsoPairArgs& a, int chunk, float* s) {
  using S = PairShape<TK, TJ>;
  const int tx = blk.tx, ty = blk.ty;
  const physics::Index3 lo = a.box.lo, hi = a.box.hi();
  const int k0 = lo.k + blk.bx * TK, j0 = lo.j + blk.by * TJ;
  const int k = k0 - R + tx, j = j0 - R + ty;  // this thread's column
  const int i_begin = lo.i + blk.bz * chunk;
  const int i_end = i_begin + chunk < hi.i ? i_begin + chunk : hi.i;

  const auto in_ext = [&](int jj, int kk) {  // within R of the box (allocated, maybe read)
    return jj >= lo.j - R && jj < hi.j + R && kk >= lo.k - R && kk < hi.k + R;
  };
  const bool col_in = j >= lo.j && j < hi.j && k >= lo.k && k < hi.k;  // first step computed here
  const bool has_u = in_ext(j, k);
  const bool klo = tx < R && in_ext(j, k - R), khi = tx >= S::BX - R && in_ext(j, k + R);
  const bool jlo = ty < R && in_ext(j - R, k), jhi = ty >= S::BY - R && in_ext(j + R, k);
  const bool tile = tx >= R && tx < S::BX - R && ty >= R && ty < S::BY - R;
  const bool writes = tile && j < hi.j && k < hi.k;
  const auto plane_in = [&](int i) { return i >= lo.i && i < hi.i; };
  const auto plane_ext = [&](int i) { return i >= lo.i - R && i < hi.i + R; };

  const std::int64_t sx = a.u.sx, sy4 = R * a.u.sy;
  const std::int64_t o = a.u.offset(i_begin - R, j, k);  // all views share one layout
  const float* pu = a.u.origin + o;                      // plane i1 of this column
  const float* pp = a.u_prev.origin + o;
  const float* pv = a.v2dt2.origin + o;
  float* p1 = a.u1.origin + o;
  float* p2 = a.u2.origin + o - R * sx;  // plane i1 - R (written from i1 = i_begin + R on)

  float* const s1 = s;
  float* const s2 = s + S::plane1;
  float* const own1 = s1 + (ty + R) * S::P1 + tx + R;
  float* const own2 = s2 + ty * S::BX + tx;

  const int first = i_begin - R, last = i_end + R;  // first-step planes [first, last)
  float qa[2 * R + 1], qb[2 * R + 1], vq[R + 1];
#pragma unroll
  for (int m = 0; m <= 2 * R; ++m) qa[m] = qb[m] = 0.0f;
#pragma unroll
  for (int m = 0; m <= R; ++m) vq[m] = 0.0f;
#pragma unroll
  for (int m = 1; m <= 2 * R; ++m) {  // u^n(first-R .. first+R-1) before the first shift
    const int i = first - R - 1 + m;
    qa[m] = has_u && plane_ext(i) ? load(pu + (m - R - 1) * sx) : 0.0f;
  }
  const auto compute = [&](int i) { return col_in && plane_in(i); };
  // Plane i's loads, d = i - i1 planes after the current pointers (plane i1): the u^n queue head
  // u(i + R), the halo cells this thread stages, and its point's u_prev and v2dt2 (computed) or
  // u^{n+1} (taken from u1).
  struct PlaneLoads {
    float q, klo, khi, jlo, jhi, up, vv, c;
  };
  const auto fetch = [&](int i, int d) {
    const std::int64_t x = d * sx;
    const float* u = pu + x;
    const bool ext = plane_ext(i), own = compute(i);
    return PlaneLoads{has_u && plane_ext(i + R) ? load(u + R * sx) : 0.0f,
                      klo && ext ? load(u - R) : 0.0f,
                      khi && ext ? load(u + R) : 0.0f,
                      jlo && ext ? load(u - sy4) : 0.0f,
                      jhi && ext ? load(u + sy4) : 0.0f,
                      own ? load(pp + x) : 0.0f,
                      own ? load(pv + x) : 0.0f,
                      !own && has_u ? p1[x] : 0.0f};
  };
  PlaneLoads next = fetch(first, 0);

  for (int i1 = first; i1 < last; ++i1) {
#pragma unroll
    for (int m = 0; m < 2 * R; ++m) qa[m] = qa[m + 1];
    const PlaneLoads cur = next;
    qa[2 * R] = cur.q;
    const float up = cur.up, vv = cur.vv, c = cur.c;
    if (i1 + 1 < last) next = fetch(i1 + 1, 1);  // prefetch plane i1+1 (block-uniform condition)
    blk.sync();  // everyone is done reading the previous u^n plane
    own1[0] = qa[R];
    if (klo) own1[-R] = cur.klo;
    if (khi) own1[R] = cur.khi;
    if (jlo) own1[-R * S::P1] = cur.jlo;
    if (jhi) own1[R * S::P1] = cur.jhi;
    blk.sync();
    float u1 = c;
    if (compute(i1)) {
      const auto at = [&qa, own1](int di, int dj, int dk) {
        return (dj == 0 && dk == 0) ? qa[R + di] : own1[dj * S::P1 + dk];
      };
      u1 = physics::leapfrog(up, qa[R], vv, physics::laplacian8(at, a.laplacian));
      if (writes && i1 >= i_begin && i1 < i_end) *p1 = u1;
    }
#pragma unroll
    for (int m = 0; m < 2 * R; ++m) qb[m] = qb[m + 1];
    qb[2 * R] = u1;
#pragma unroll
    for (int m = 0; m < R; ++m) vq[m] = vq[m + 1];
    vq[R] = vv;
    if (i1 - R >= i_begin) {  // the second step at plane i1 - R (block-uniform)
      own2[0] = qb[R];
      blk.sync();
      if (writes) {
        const auto at = [&qb, own2](int di, int dj, int dk) {
          return (dj == 0 && dk == 0) ? qb[R + di] : own2[dj * S::BX + dk];
        };
        *p2 = physics::leapfrog(qa[0], qb[R], vq[0], physics::laplacian8(at, a.laplacian));
      }
    }
    pu += sx;
    pp += sx;
    pv += sx;
    p1 += sx;
    p2 += sx;
  }
}

template <int TK, int TJ>
__global__ void __launch_bounds__(PairShape<TK, TJ>::BX* PairShape<TK, TJ>::BY, 1)
    temporal_iso(IsoPairArgs a, int chunk) {
  extern __shared__ float smem[];
  pair_block<TK, TJ>(DeviceBlock(), a, chunk, smem);
}

struct Variant {
  int x, y;
  void (*kernel)(IsoPairArgs, int);
  int smem_bytes;
  void (*emulate)(const IsoPairArgs&, int);
};

template <int TK, int TJ>
void emulate_kernel(const IsoPairArgs& a, int chunk) {
  using S = PairShape<TK, TJ>;
  const int grid[3] = {static_cast<int>(ceil_div(a.box.n.k, TK)), static_cast<int>(ceil_div(a.box.n.j, TJ)),
                       static_cast<int>(ceil_div(a.box.n.i, chunk))};
  emulate_grid(grid, S::BX, S::BY, S::smem_bytes, [&](HostBlock& blk, unsigned char* raw) {
    pair_block<TK, TJ>(blk, a, chunk, reinterpret_cast<float*>(raw));
  });
}

template <int TK, int TJ>
constexpr Variant variant() {
  return {TK, TJ, &temporal_iso<TK, TJ>, PairShape<TK, TJ>::smem_bytes, &emulate_kernel<TK, TJ>};
}

const Variant kVariants[] = {variant<32, 16>(), variant<32, 8>()};

const Variant& find(const Tile& t) { return find_chunked_variant(kVariants, t, "temporal"); }

void launch_pair(const IsoPairArgs& a, const Tile& t, cudaStream_t s) {
  const Variant& v = find(t);
  if (a.box.empty()) return;
  if (!shares_layout(a)) throw Error("temporal: u_prev, u, u1, u2 and v2dt2 must share one layout");
  static_assert(PairShape<32, 16>::smem_bytes <= 48 * 1024, "static launch without opt-in");
  const dim3 block(t.x + 2 * R, t.y + 2 * R, 1);
  const dim3 grid(ceil_div(a.box.n.k, t.x), ceil_div(a.box.n.j, t.y), ceil_div(a.box.n.i, t.z));
  v.kernel<<<grid, block, static_cast<size_t>(v.smem_bytes), s>>>(a, t.z);
}

cudaFuncAttributes attributes(const Tile& t) {
  return kernel_attributes(reinterpret_cast<const void*>(find(t).kernel));
}

int dynamic_smem(const Tile& t) { return find(t).smem_bytes; }

KernelFamily family() {
  KernelFamily f;
  f.name = "temporal";
  f.propagators = {PropagatorKind::acoustic_iso};
  f.tunables = {{32, 16, 1000}, {32, 16, 256}, {32, 8, 1000}};
  f.launch = &launch_single_by_semi_tma;
  f.launch_pair = &launch_pair;
  f.description = "2 time steps per sweep (temporal blocking): streaming with a ring of 4 recomputed";
  f.attributes = &attributes;
  f.dynamic_smem = &dynamic_smem;
  // Checked on an H100 (6b60a75): the emulation, every tile in the gpu tests, and the pairs
  // against single CPU steps with sources in and around the inner box.
  return f;
}

const bool kRegistered = register_family(family());

}  // namespace

void emulate_temporal(const IsoPairArgs& a, const Tile& t) {
  const Variant& v = find(t);
  if (!a.box.empty()) v.emulate(a, t.z);
}

}  // namespace minimod::kernels::cuda
