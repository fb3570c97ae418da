// smem: 3D blocking with u staged in shared memory (Sai et al. 2020 §III-B "smem_u"; the 32x4x4
// shape NVIDIA ran in Table III; notes/sai2020-digest.md §3.2).
//
// Idea. One thread per output point; the block (TX, TY, TZ) = (k, j, i) tile plus a halo of
// R = 4 on every side is loaded cooperatively into a shared array s[TZ+8][TY+8][TX+8], then each
// thread evaluates physics::laplacian8 through an accessor that indexes the shared tile.
//  * Load: the block's TY*TZ "thread rows" (TX threads each, threadIdx.x along k) walk the
//    (TY+8)*(TZ+8) rows of the tile. Rows that are halo in both j and i (edges of the box) are
//    never read by a star stencil and are skipped; rows that are halo in j or i need only their
//    TX centre points (one load per thread); interior rows need all TX+8 points (two loads).
//  * Every load is guarded so that nothing beyond region.hi + 4 is touched (partial tiles at the
//    far end of the region): the rows/columns past that are left unset and only ever feed
//    outputs outside the region, which are not written.
//  * u_prev (in u_next) and v2dt2 are read at the thread's own point only.
// Nothing is reordered: laplacian8 is evaluated exactly as in the CPU reference.
// Limits: TX, TY, TZ compile-time (one instantiation per tunable); shared tile must fit in 48 KB
// of static shared memory. Halo/interior ratio is high (3D tile), so this family moves more L2
// traffic than the 2.5D families; DRAM traffic is still ~16 B per point when L2 catches the
// neighbours' halos.
#include <string>

#include "kernels/cuda/registry.hpp"
#include "kernels/cuda/tti_stage.cuh"
#include "physics/error.hpp"
#include "physics/stencil.hpp"

namespace minimod::kernels::cuda {
namespace {

constexpr int R = physics::kRadius;
using physics::Box3;

template <int TX, int TY, int TZ>
__global__ void __launch_bounds__(TX* TY* TZ) smem_iso(IsoStepArgs a) {
  constexpr int SX = TX + 2 * R, SY = TY + 2 * R, SZ = TZ + 2 * R;
  static_assert(SX * SY * SZ * 4 <= 48 * 1024, "tile too large for static shared memory");
  __shared__ float s[SZ][SY][SX];

  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  const physics::Index3 hi = a.region.hi();
  const int k0 = a.region.lo.k + static_cast<int>(blockIdx.x) * TX;
  const int j0 = a.region.lo.j + static_cast<int>(blockIdx.y) * TY;
  const int i0 = a.region.lo.i + static_cast<int>(blockIdx.z) * TZ;
  const std::int64_t sx = a.u.sx, sy = a.u.sy;
  // Tile-local index x (k), y (j), z (i) maps to grid (k0-R+x, j0-R+y, i0-R+z); readable while
  // the grid index is < hi + R (the lower side is always >= lo - R).
  const int lim_k = hi.k - k0 + 2 * R, lim_j = hi.j - j0 + 2 * R, lim_i = hi.i - i0 + 2 * R;
  const float* base = a.u.ptr(i0 - R, j0 - R, k0 - R);

  for (int r = ty + TY * tz; r < SY * SZ; r += TY * TZ) {
    const int y = r % SY, z = r / SY;
    const bool yh = y < R || y >= TY + R, zh = z < R || z >= TZ + R;
    if ((yh && zh) || y >= lim_j || z >= lim_i) continue;
    const float* row = base + z * sx + y * sy;
    if (yh || zh) {
      const int x = tx + R;
      if (x < lim_k) s[z][y][x] = __ldg(row + x);
    } else {
#pragma unroll
      for (int x = tx; x < SX; x += TX)
        if (x < lim_k) s[z][y][x] = __ldg(row + x);
    }
  }
  __syncthreads();

  const int k = k0 + tx, j = j0 + ty, i = i0 + tz;
  if (k >= hi.k || j >= hi.j || i >= hi.i) return;  // after the only barrier
  const auto at = [tx, ty, tz](int di, int dj, int dk) {
    return s[tz + R + di][ty + R + dj][tx + R + dk];
  };
  const std::int64_t o = a.u.offset(i, j, k);  // all views share one layout (checked in launch)
  float* out = a.u_next.origin + o;
  *out = physics::leapfrog(*out, s[tz + R][ty + R][tx + R], __ldg(a.v2dt2.origin + o),
                           physics::laplacian8(at, a.laplacian));
}

struct Variant {
  Tile tile;
  void (*kernel)(IsoStepArgs);
};

template <int TX, int TY, int TZ>
constexpr Variant variant() {
  return {{TX, TY, TZ}, &smem_iso<TX, TY, TZ>};
}

const Variant kVariants[] = {variant<32, 4, 4>(), variant<32, 8, 4>(), variant<64, 4, 2>(),
                             variant<32, 8, 2>()};

const Variant& find(const Tile& t) {
  std::string valid;
  for (const auto& v : kVariants) {
    if (v.tile.x == t.x && v.tile.y == t.y && v.tile.z == t.z) return v;
    valid += " " + std::to_string(v.tile.x) + "x" + std::to_string(v.tile.y) + "x" +
             std::to_string(v.tile.z);
  }
  throw ConfigError("config error: execution.kernel: smem has no tile " + std::to_string(t.x) +
                    "x" + std::to_string(t.y) + "x" + std::to_string(t.z) + "; valid tiles:" +
                    valid);
}

void check_layout(const IsoStepArgs& a) {
  if (!shares_layout(a))
    throw Error("smem: u, u_next and v2dt2 must share one layout");
}

void launch(const IsoStepArgs& a, const Tile& t, cudaStream_t s) {
  const Variant& v = find(t);
  if (a.region.empty()) return;
  check_layout(a);
  const dim3 block(t.x, t.y, t.z);
  const dim3 grid(ceil_div(a.region.n.k, t.x), ceil_div(a.region.n.j, t.y),
                  ceil_div(a.region.n.i, t.z));
  v.kernel<<<grid, block, 0, s>>>(a);
}

cudaFuncAttributes attributes(const Tile& t) {
  cudaFuncAttributes attr{};
  cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(find(t).kernel));
  return attr;
}

// --- acoustic_tti -------------------------------------------------------------------------------
// The same 3D blocking for the 73-point TTI operator: the tile and its halo of 4 (points with
// all three coordinates in the halo are never read and are skipped) staged as 24-B points
// (kernels/cuda/tti_stage.cuh) in dynamic shared memory, then one thread per point evaluates
// physics::tti_rhs73 exactly as the CPU reference does (same order, same formula).
// Shared memory: (TX+8)(TY+8)(TZ+8) x 24 B, e.g. 115 KB for 32x4x2: one or two blocks per SM.

template <int TX, int TY, int TZ>
struct TtiBox {
  static constexpr int SX = TX + 2 * R, SY = TY + 2 * R, SZ = TZ + 2 * R, kPoints = SX * SY * SZ;
  static constexpr int kBytes = kPoints * kTtiStagedBytes;
};

template <int TX, int TY, int TZ>
__global__ void __launch_bounds__(TX* TY* TZ) smem_tti(TtiStepArgs g, Box3 region) {
  using B = TtiBox<TX, TY, TZ>;
  extern __shared__ __align__(16) unsigned char smem_tti_raw[];
  const TtiStage st = TtiStage::carve(smem_tti_raw, B::kPoints);
  const physics::Index3 hi = region.hi();
  const int k0 = region.lo.k + static_cast<int>(blockIdx.x) * TX;
  const int j0 = region.lo.j + static_cast<int>(blockIdx.y) * TY;
  const int i0 = region.lo.i + static_cast<int>(blockIdx.z) * TZ;
  const int t = threadIdx.x + TX * (threadIdx.y + TY * threadIdx.z);
  for (int e = t; e < B::kPoints; e += TX * TY * TZ) {
    const int x = e % B::SX, y = (e / B::SX) % B::SY, z = e / (B::SX * B::SY);
    const int i = i0 - R + z, j = j0 - R + y, k = k0 - R + x;
    const bool hx = x < R || x >= TX + R, hy = y < R || y >= TY + R, hz = z < R || z >= TZ + R;
    if ((hx && hy && hz) || i >= hi.i + R || j >= hi.j + R || k >= hi.k + R) continue;
    stage_tti_point(g, g.p.offset(i, j, k), st, e);
  }
  __syncthreads();
  const int i = i0 + static_cast<int>(threadIdx.z), j = j0 + static_cast<int>(threadIdx.y),
            k = k0 + static_cast<int>(threadIdx.x);
  if (i >= hi.i || j >= hi.j || k >= hi.k) return;
  const int c = ((threadIdx.z + R) * B::SY + threadIdx.y + R) * B::SX + threadIdx.x + R;
  const auto index = [c](int di, int dj, int dk) { return c + (di * B::SY + dj) * B::SX + dk; };
  const std::int64_t o = g.p.offset(i, j, k);
  tti_update_from_rhs(g, i, j, k, o, staged_tti_rhs(st, index, __ldg(g.b.origin + o), g.stencil));
}

struct TtiVariant {
  int x, y, z;
  const void* kernel;
  void (*launch)(const TtiStepArgs&, const Box3&, cudaStream_t);
  int smem_bytes;
};

template <int TX, int TY, int TZ>
void launch_tti_variant(const TtiStepArgs& g, const Box3& region, cudaStream_t s) {
  using B = TtiBox<TX, TY, TZ>;
  ensure_smem_limit<&smem_tti<TX, TY, TZ>>(B::kBytes);
  const dim3 grid(ceil_div(region.n.k, TX), ceil_div(region.n.j, TY), ceil_div(region.n.i, TZ));
  smem_tti<TX, TY, TZ><<<grid, dim3(TX, TY, TZ), B::kBytes, s>>>(g, region);
}

template <int TX, int TY, int TZ>
constexpr TtiVariant tti_variant() {
  return {TX, TY, TZ, reinterpret_cast<const void*>(&smem_tti<TX, TY, TZ>), &launch_tti_variant<TX, TY, TZ>,
          TtiBox<TX, TY, TZ>::kBytes};
}

const TtiVariant kTtiVariants[] = {tti_variant<32, 4, 2>(), tti_variant<32, 8, 1>(), tti_variant<32, 4, 1>(),
                                   tti_variant<16, 8, 2>()};

const TtiVariant& find_tti(const Tile& t) {
  std::string valid;
  for (const auto& v : kTtiVariants) {
    if (v.x == t.x && v.y == t.y && v.z == t.z) return v;
    valid += " " + std::to_string(v.x) + "x" + std::to_string(v.y) + "x" + std::to_string(v.z);
  }
  throw ConfigError("config error: execution.kernel: smem (acoustic_tti) has no tile " + std::to_string(t.x) +
                    "x" + std::to_string(t.y) + "x" + std::to_string(t.z) + "; valid tiles:" + valid);
}

void launch_tti(const TtiStepArgs& g, const Box3& region, const Tile& t, cudaStream_t s) {
  const TtiVariant& v = find_tti(t);
  if (!region.empty()) v.launch(g, region, s);
}

cudaFuncAttributes tti_attributes(const Tile& t) {
  cudaFuncAttributes attr{};
  cudaFuncGetAttributes(&attr, find_tti(t).kernel);
  return attr;
}

int tti_dynamic_smem(const Tile& t) { return find_tti(t).smem_bytes; }

KernelFamily family() {
  KernelFamily f;
  f.name = "smem";
  f.propagators = {PropagatorKind::acoustic_iso, PropagatorKind::acoustic_tti};
  f.tunables = {{32, 4, 4}, {32, 8, 4}, {64, 4, 2}, {32, 8, 2}};
  f.launch = &launch;
  f.description = "3D tile in shared memory (halo 4), one thread per point";
  f.attributes = &attributes;  // no dynamic shared memory for acoustic_iso
  f.launch_tti = &launch_tti;
  for (const auto& v : kTtiVariants) f.tti_tunables.push_back({v.x, v.y, v.z});
  f.tti_attributes = &tti_attributes;
  f.tti_dynamic_smem = &tti_dynamic_smem;
  return f;
}

const bool kRegistered = register_family(family());

}  // namespace
}  // namespace minimod::kernels::cuda
