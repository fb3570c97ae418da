// The registry of inner-region kernel families (STYLE.md "Kernel families are plug-ins"). Each
// family is one file kernels/cuda/<name>.cu that ends with a call to register_family.
#pragma once
#include <cuda_runtime_api.h>

#include <string>
#include <utility>
#include <vector>

#include "kernels/tti_cpml.hpp"
#include "kernels/tti_point.hpp"
#include "physics/error.hpp"
#include "physics/stencil.hpp"
#include "physics/view3.hpp"

namespace minimod::kernels::cuda {

enum class PropagatorKind { acoustic_iso, acoustic_tti };

/// Thread-block (or tile) shape: x runs along k (contiguous), y along j, z along i.
struct Tile {
  int x = 32, y = 4, z = 4;
};

/// Minimod's absorbing layer, for a launch whose region reaches into it (families with
/// KernelFamily::fuses_minimod_layer): the points of the region outside `inner` take Minimod's
/// damped update with its auxiliary field (pml/pml_update.hpp, as kernels/cuda/pml.cu does).
/// aux.origin == nullptr: no layer, every point of the region is an inner point.
struct MinimodLayer {
  physics::Box3 inner;
  physics::View3<float> aux;     // same layout as u; updated in place
  const float* eta[3] = {};      // eta[axis][i + 1], i = -1 .. n (eta = eta_x + eta_y + eta_z)
  float inv_4h2[3] = {};
};

/// Everything an acoustic-iso inner-region kernel needs, passed by value. All views share one
/// layout; u_next aliases u_prev (updated in place).
struct IsoStepArgs {
  physics::Box3 region;
  physics::View3<const float> u;
  physics::View3<float> u_next;  // holds u_prev on entry
  physics::View3<const float> v2dt2;
  physics::LaplacianCoeffs laplacian;
  MinimodLayer layer;            // only for families that fuse it
};

/// Two time steps of the inner box in one sweep (families with KernelFamily::launch_pair, temporal
/// blocking): from u_prev = u^{n-1} and u = u^n, u^{n+1} on the box into u1 and u^{n+2} on the box
/// into u2. u1 must already hold u^{n+1} on the points within 4 of the box that are outside it (the
/// PML's update, or zeros of the halo); the kernel reads them, and writes only inside the box. All
/// five views share one layout and are distinct arrays.
struct IsoPairArgs {
  physics::Box3 box;
  physics::View3<const float> u_prev, u;
  physics::View3<float> u1, u2;
  physics::View3<const float> v2dt2;
  physics::LaplacianCoeffs laplacian;
};

/// The staging families index u, u_next and v2dt2 with one offset; the propagator allocates them
/// with one layout, and this checks it once per launch.
inline bool shares_layout(const IsoStepArgs& a) {
  return a.u_next.sx == a.u.sx && a.u_next.sy == a.u.sy && a.v2dt2.sx == a.u.sx &&
         a.v2dt2.sy == a.u.sy;
}

/// The same for the two-step families' five views (strides and box: one offset and one tensor-map
/// origin serve them all).
inline bool shares_layout(const IsoPairArgs& a) {
  const auto same = [&a](const auto& v) { return v.sx == a.u.sx && v.sy == a.u.sy && v.box == a.u.box; };
  return same(a.u_prev) && same(a.u1) && same(a.u2) && same(a.v2dt2);
}

struct KernelFamily {
  std::string name;                      // the config value (execution.kernel)
  std::vector<PropagatorKind> propagators;   // what it implements
  std::vector<Tile> tunables;            // shapes `kernel: auto` may time; the first is the default
  void (*launch)(const IsoStepArgs&, const Tile&, cudaStream_t) = nullptr;
  std::string description;
  /// Registers and static shared memory of the kernel a tile launches (for the benchmark table).
  cudaFuncAttributes (*attributes)(const Tile&) = nullptr;
  /// Dynamic shared memory (bytes) a tile launches with.
  int (*dynamic_smem)(const Tile&) = nullptr;

  // acoustic_tti, for families that list it: the step of every point of `region` (leapfrog of p
  // and q inside args.inner, the damped update outside: kernels/tti_point.hpp), its tiles (the
  // first is the default), its resources.
  void (*launch_tti)(const TtiStepArgs&, const physics::Box3& region, const Tile&, cudaStream_t) = nullptr;
  std::vector<Tile> tti_tunables;
  cudaFuncAttributes (*tti_attributes)(const Tile&) = nullptr;
  int (*tti_dynamic_smem)(const Tile&) = nullptr;
  /// The same of the kernel a tile launches where the model's axis is constant
  /// (TtiStepArgs::constant_axis), for a family that has a kernel of its own there (swic_split_tma).
  cudaFuncAttributes (*tti_axis_attributes)(const Tile&) = nullptr;
  int (*tti_axis_dynamic_smem)(const Tile&) = nullptr;

  /// acoustic_tti with the CPML layer (TtiLayer::cpml), optional: the operator's rows at the layer
  /// points of `region`, a box of the layer's slab `slab` (kernels/tti_cpml.hpp), from the family's
  /// own sums into TtiCpmlArgs::rows (it reads ::row_centres); the layer kernel then takes them for
  /// pass 2. Without it the layer kernel evaluates the rows too (the pair form, one thread a point).
  void (*launch_tti_cpml_layer)(const TtiStepArgs&, const TtiCpmlArgs&, int slab, const physics::Box3& region,
                                cudaStream_t) = nullptr;
  /// acoustic_tti with the CPML layer, optional: the CPML's pass 1 (psi and V: kernels/tti_cpml.hpp,
  /// tti_cpml_psi_point) at the layer points of `region`, a box of slab `slab`, by the family's own
  /// kernel, with the tile chosen for the inner box; the point kernel still takes the halos' points.
  void (*launch_tti_cpml_psi)(const TtiStepArgs&, const TtiCpmlArgs&, int slab, const physics::Box3& region,
                              const Tile& tile, cudaStream_t) = nullptr;
  /// acoustic_tti with the CPML layer, optional: the CPML's whole pass 2 (the rows, d_c V_c, zeta
  /// and the update: kernels/tti_cpml.hpp, tti_cpml_layer_update) at the layer points of `region`,
  /// a box of slab `slab`, by the family's own kernel, with the tile chosen for the inner
  /// box; taken instead of launch_tti_cpml_layer and the layer kernel.
  void (*launch_tti_cpml_pass2)(const TtiStepArgs&, const TtiCpmlArgs&, int slab, const physics::Box3& region,
                                const Tile& tile, cudaStream_t) = nullptr;
  /// Its acoustic_tti launch takes VTI models only (TtiStepArgs::vti, physics::vti_rhs25) and
  /// refuses others: `kernel: auto` skips it there, naming it in execution.kernel is an error.
  bool tti_vti_only = false;
  /// Its acoustic_tti launch reads TtiStepArgs::kappa_perp/kappa_axis (the split form's centre
  /// weights): the propagator allocates those two arrays only for such a family.
  bool tti_reads_centre_weights = false;
  /// Its acoustic_iso launch takes IsoStepArgs::layer: the propagator then gives it the whole grid
  /// in one launch instead of the inner box plus the PML kernel's six slabs (Minimod's PML only).
  bool fuses_minimod_layer = false;
  /// Two steps per launch (IsoPairArgs): the propagator then advances in pairs where it can (one
  /// subdomain, Minimod's PML, no free surface) and takes single steps with `launch` otherwise.
  void (*launch_pair)(const IsoPairArgs&, const Tile&, cudaStream_t) = nullptr;
  /// Not yet checked against the CPU reference on a GPU (DESIGN.md §7): `kernel: auto` skips it,
  /// `--list-kernels` says so, and naming it in execution.kernel logs a warning. The gpu tests
  /// still run it, which is how it stops being unverified.
  bool unverified = false;
};

inline bool implements(const KernelFamily& f, PropagatorKind p) {
  for (auto q : f.propagators)
    if (q == p) return true;
  return false;
}
/// The tiles `kernel: auto` times for that propagator.
inline const std::vector<Tile>& tunables(const KernelFamily& f, PropagatorKind p) {
  return p == PropagatorKind::acoustic_tti ? f.tti_tunables : f.tunables;
}

/// Adds a family; throws on a duplicate name. Returns true (for `const bool kRegistered = ...`).
bool register_family(KernelFamily family);
const std::vector<KernelFamily>& families();
/// The family of that name that implements the propagator; ConfigError listing those that do.
const KernelFamily& find_family(const std::string& name, PropagatorKind propagator);

/// The single steps of the two-step families (several subdomains, the CPML, free surfaces):
/// semi_tma's default tile (looked up once).
inline void launch_single_by_semi_tma(const IsoStepArgs& a, const Tile&, cudaStream_t s) {
  static const KernelFamily& f = find_family("semi_tma", PropagatorKind::acoustic_iso);
  f.launch(a, f.tunables.front(), s);
}

/// Registers and static shared memory of `kernel`; zeros where no GPU driver answers (the
/// registry's tables on a machine without one).
inline cudaFuncAttributes kernel_attributes(const void* kernel) {
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
    cudaGetLastError();
    attr = cudaFuncAttributes{};
  }
  return attr;
}

/// "family" or "family:XxYxZ" of that propagator: the family and the tile (its default without
/// one). ConfigError for an unknown family or a malformed tile; each launch checks its shapes.
std::pair<const KernelFamily*, Tile> parse_kernel(const std::string& spec, PropagatorKind propagator);

inline unsigned ceil_div(int a, int b) { return static_cast<unsigned>((a + b - 1) / b); }

/// The width along k of the CPML launches' blocks over a region `depth` points deep along k: 8 or
/// 16 where that spans it (a thin layer's k face), else `tile_x`, the family's own. An 8-point
/// layer's k faces in 32-wide blocks kept 8 of 32 lanes busy and took 3-4x as long as its other
/// faces (bench/results/2026-11-29-session28-tti-thin-layer.md).
constexpr int thin_k_width(int depth, int tile_x) { return depth <= 8 ? 8 : depth <= 16 ? 16 : tile_x; }

/// For the streaming families, whose kernels are compiled per (x, y) and whose tile.z is the
/// chunk length (any value >= 1): the entry of `table` (members x, y) for the tile, else a
/// ConfigError naming `family` and the valid tiles.
template <class Variant, std::size_t N>
const Variant& find_chunked_variant(const Variant (&table)[N], const Tile& t, const std::string& family) {
  std::string valid;
  for (const auto& v : table) {
    if (v.x == t.x && v.y == t.y && t.z >= 1) return v;
    valid += " " + std::to_string(v.x) + "x" + std::to_string(v.y) + "xN";
  }
  throw ConfigError("config error: execution.kernel: " + family + " has no tile " + std::to_string(t.x) + "x" +
                    std::to_string(t.y) + "x" + std::to_string(t.z) + "; valid tiles:" + valid +
                    " (N = planes per chunk along i, >= 1)");
}

}  // namespace minimod::kernels::cuda
