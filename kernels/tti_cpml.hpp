// The CPML layer of the acoustic TTI propagator (TtiLayer::cpml; docs/tti.md, "CPML layer"): where
// its memory fields live (the layer's points only) and the formulas of its two passes, defined once
// for the CPU reference (kernels/cpu/acoustic_tti_cpu.cpp) and the backends that take it up later.
//   pass 1, every layer point:  psi_e <- a_e psi_e + b_e d_e f  (f = p + q and f = p),  V = C psi
//   pass 2, every layer point:  L_c = row_c + d_c V_c,  zeta_c <- a_c zeta_c + b_c L_c,
//                               div(C grad f) -> sum_c (L_c + zeta_c)
// with row_c the 73-point operator's row (physics::tti_rows73) and d_c an 8th-order first
// derivative. Where the layer is elliptic (make_elliptic_layer) q is not driven and takes a
// damping term instead (kQDamping).
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/tti_point.hpp"
#include "physics/box3.hpp"
#include "physics/host_device.hpp"
#include "physics/tti.hpp"
#include "pml/cpml.hpp"
#include "pml/pml_update.hpp"

namespace minimod::kernels {

/// Compact index of the layer, the grid points outside `inner`, as six slabs in this order: the
/// i faces over the whole (j, k) plane, the j faces over the inner i range, the k faces over the
/// inner i and j ranges. An empty `inner` puts the whole grid in the layer.
struct LayerIndex {
  physics::Index3 n;
  physics::Box3 inner;
  std::int64_t start[6] = {};  // first index of each slab
  std::int64_t count = 0;      // points in the layer

  static LayerIndex make(const physics::Index3& n, const physics::Box3& inner) {
    LayerIndex x{n, inner.empty() ? physics::Box3{} : inner};
    for (int s = 0; s < 6; ++s) {
      x.start[s] = x.count;
      x.count += x.slab(s).points();
    }
    return x;
  }

  /// Slab s (0..5, in the order above) as a box: its points' indices are start[s] plus their
  /// C-order position in the box, so a kernel over a slab needs no lookup for its own point.
  MM_HOST_DEVICE physics::Box3 slab(int s) const {
    const physics::Index3 lo = inner.lo, hi = inner.hi();
    physics::Index3 a{0, 0, 0}, b = n;  // the slab is [a, b)
    switch (s) {
      case 0: b.i = lo.i; break;
      case 1: a.i = hi.i; break;
      case 2: a.i = lo.i; b.i = hi.i; b.j = lo.j; break;
      case 3: a.i = lo.i; b.i = hi.i; a.j = hi.j; break;
      case 4: a = {lo.i, lo.j, 0}; b = {hi.i, hi.j, lo.k}; break;
      default: a = {lo.i, lo.j, hi.k}; b = {hi.i, hi.j, n.k}; break;
    }
    const auto extent = [](int from, int to) { return to > from ? to - from : 0; };
    return {a, {extent(a.i, b.i), extent(a.j, b.j), extent(a.k, b.k)}};
  }

  /// The slab (0..5) that holds point (i, j, k), or -1 outside the grid or inside `inner`.
  MM_HOST_DEVICE int slab_of(int i, int j, int k) const {
    if (i < 0 || j < 0 || k < 0 || i >= n.i || j >= n.j || k >= n.k) return -1;
    const physics::Index3 lo = inner.lo, hi = inner.hi();
    if (i < lo.i) return 0;
    if (i >= hi.i) return 1;
    if (j < lo.j) return 2;
    if (j >= hi.j) return 3;
    if (k < lo.k) return 4;
    if (k >= hi.k) return 5;
    return -1;
  }

  /// The point's index, or -1 outside the grid or inside `inner`.
  MM_HOST_DEVICE std::int64_t operator()(int i, int j, int k) const {
    const int s = slab_of(i, j, k);
    if (s < 0) return -1;
    return start[s] + slab(s).position(i, j, k);
  }

  /// f(box, i, j, k, x) at every layer point, slab by slab (box: the slab's), each in C order, x
  /// its index: host loops (tests).
  template <class F>
  void for_each_point(const F& f) const {
    for (int s = 0; s < 6; ++s) {
      const physics::Box3 b = slab(s);
      std::int64_t x = start[s];
      for (int i = b.lo.i; i < b.lo.i + b.n.i; ++i)
        for (int j = b.lo.j; j < b.lo.j + b.n.j; ++j)
          for (int k = b.lo.k; k < b.lo.k + b.n.k; ++k) f(b, i, j, k, x++);
    }
  }
};

/// The step between neighbours along axis A in the compact indices of slab box `slab` (C order).
template <int A>
MM_HOST_DEVICE MM_FORCE_INLINE std::int64_t slab_stride(const physics::Box3& slab) {
  return A == 0 ? static_cast<std::int64_t>(slab.n.j) * slab.n.k : (A == 1 ? slab.n.k : 1);
}

/// The layer's memory fields, per axis c: psi of s = p + q and of p, V = C psi of both tensors
/// (kept for their derivative), zeta of both operators.
enum TtiCpmlField { kPsiS = 0, kPsiP = 3, kVPerp = 6, kVAxis = 9, kZetaPerp = 12, kZetaAxis = 15 };
constexpr int kTtiCpmlFields = 18;

/// q's damping where the layer is elliptic, as a fraction of the sponge's eta (zero at the layer's
/// inner edge): q is not driven there (b = 0) and would keep the rate it entered with; measured,
/// it also drains the shear artefact left in the layer (bench/results/2026-11-25-cpu-tti-cpml.md).
constexpr float kQDamping = 0.3f;

/// Which rows c of the two tensors can be non-zero: all, except on a VTI model (Vti: TtiStepArgs::vti),
/// where C_perp = diag(1, 1, 0) and C_axis = e_z e_z^T / a leave only C_perp's rows x and y and
/// C_axis's row z. There psi_s and psi_p, V, the rows, d_c V_c and zeta of a dead row are zero (psi
/// of a dead row is computed by the general form but never used), so the GPU's point kernels
/// (Vti = true) neither compute, read nor write them: the fields stay at the zero of their reset,
/// and the live ones take the same formula, to the same values as the general form.
template <bool Vti>
MM_HOST_DEVICE constexpr bool perp_row_live(int c) {
  return !Vti || c < 2;
}
template <bool Vti>
MM_HOST_DEVICE constexpr bool axis_row_live(int c) {
  return !Vti || c == 2;
}

/// V = C psi of both tensors at one point: V_perp = (I - n n^T) psi_s, V_axis = n n^T psi_p / a.
MM_HOST_DEVICE MM_FORCE_INLINE void tti_stretch_fluxes(const physics::TtiMediumPoint& m, const float (&psi_s)[3],
                                                      const float (&psi_p)[3], float (&v_perp)[3],
                                                      float (&v_axis)[3]) {
  // Fused multiply-adds spelled out: the CPU evaluates this in vector loops and point by point
  // (halos), which must round alike (pml::first_derivative8).
  const float n[3] = {m.nx, m.ny, m.nz};
  const float n_s = fmaf(n[2], psi_s[2], fmaf(n[1], psi_s[1], n[0] * psi_s[0]));
  const float n_p = fmaf(n[2], psi_p[2], fmaf(n[1], psi_p[1], n[0] * psi_p[0])) * m.inv_a;
  for (int c = 0; c < 3; ++c) {
    v_perp[c] = fmaf(-n[c], n_s, psi_s[c]);
    v_axis[c] = n[c] * n_p;
  }
}

/// Both stretched operators of a layer point, div(C_perp grad s) and div(C_axis grad p), from its
/// rows and the derivatives d_c V_c (dv_perp, dv_axis), with the profiles (a_c, b_c) there;
/// updates zeta (zeta_perp, zeta_axis) in place, which stays 0 where b_c = 0 (a 0 times a, plus
/// 0: no branch, so that the CPU evaluates a row of layer points as one vector loop). The GPU
/// skips zeta's memory there (tti_cpml_finish<true>): once pass 2 read the rows rather than
/// evaluating them, that and pass 1's psi read only where damped took the CPML from 15.55 to
/// 16.19 GPts/s at 1000^3 on an H100 (bench/results/2026-11-27-session20-tti-cpml-bytes.md;
/// with the rows evaluated in pass 2, skipping the update had made no difference).
struct TtiStretched {
  float perp, axis;
};
MM_HOST_DEVICE MM_FORCE_INLINE TtiStretched tti_stretched_operators(const physics::TtiRows& rows,
                                                                  const float (&dv_perp)[3],
                                                                  const float (&dv_axis)[3], const float (&a)[3],
                                                                  const float (&b)[3], float (&zeta_perp)[3],
                                                                  float (&zeta_axis)[3]) {
  TtiStretched out{0, 0};
  for (int c = 0; c < 3; ++c) {
    const float lp = rows.perp[c] + dv_perp[c], la = rows.axis[c] + dv_axis[c];
    zeta_perp[c] = a[c] * zeta_perp[c] + b[c] * lp;
    zeta_axis[c] = a[c] * zeta_axis[c] + b[c] * la;
    out.perp += lp + zeta_perp[c];
    out.axis += la + zeta_axis[c];
  }
  return out;
}

/// p_next and q_next of a layer point from the stretched operators (*p_next, *q_next hold time
/// level n - 1 on entry): p by leapfrog, q damped by kQDamping times the sponge's eta there.
MM_HOST_DEVICE MM_FORCE_INLINE void tti_cpml_update(const TtiStretched& op, float p, float q, float v2dt2,
                                                   float inv_a, float b, float sponge_eta, float* p_next,
                                                   float* q_next) {
  *p_next = physics::leapfrog(*p_next, p, v2dt2, (1.0f / inv_a) * (op.perp + op.axis));
  *q_next = pml::pml_u_next(*q_next, q, v2dt2, b * op.perp, 0.0f, kQDamping * sponge_eta);
}

/// The layer points of a distributed subdomain's halos: across each face shared with a neighbour,
/// the halo box (kHaloWidth deep, the own extent along the other two axes) less the inner region,
/// indexed as a layer of its own. Pass 2 reads V_c across a cut along c (in the other axes' layers,
/// V_c = (C psi)_c is not zero where the tilt couples c to a damped axis), so each rank computes psi
/// and V at these points itself, from the exchanged p and q (edges included) and the neighbour's
/// medium, by the same formula as the neighbour at its own points: bitwise the same, with no
/// exchange of the layer's fields. psi_c itself is zero there: cuts along c keep the halo width
/// away from c's layer (mpi::cut_limits), so its derivative, which would reach beyond the halo, is
/// never taken.
struct TtiCpmlHalo {
  LayerIndex face[6];                    // in the halo box's coordinates; empty (n = 0) without a neighbour
  physics::Index3 lo[6] = {};            // the halo box's corner in grid coordinates
  std::int64_t start[6] = {};            // its first compact index, after the own layer and earlier faces
  std::int64_t count = 0;                // points over all faces

  /// The halos of `faces` (neighbour[f]) around a grid of n points whose inner region is `inner`.
  /// Along a face's axis the halo lies outside that axis's layer (the cut limits), so it is inner
  /// wherever the grid's inner region spans the other two axes.
  static TtiCpmlHalo make(const physics::Index3& n, const physics::Box3& inner, const std::array<bool, 6>& faces,
                          std::int64_t first, int width) {
    TtiCpmlHalo h;
    std::int64_t next = first;
    for (int f = 0; f < 6; ++f) {
      h.start[f] = next;
      if (!faces[static_cast<size_t>(f)]) continue;
      const int a = f / 2;
      physics::Box3 box{{0, 0, 0}, n};
      box.lo[a] = f % 2 == 0 ? -width : n[a];
      box.n[a] = width;
      physics::Box3 in = inner;  // the inner region's extent along the other axes, all along a
      if (!in.empty()) {
        in.lo[a] = box.lo[a];
        in.n[a] = width;
        for (int c = 0; c < 3; ++c) in.lo[c] -= box.lo[c];
      }
      h.lo[f] = box.lo;
      h.face[f] = LayerIndex::make(box.n, in);
      next += h.face[f].count;
    }
    h.count = next - first;
    return h;
  }
  /// Face f's halo box in grid coordinates (empty without a neighbour).
  physics::Box3 box(int f) const { return {lo[f], face[f].n}; }
};

/// Throws std::invalid_argument when a face shared with a neighbour lies within `width` points of
/// its axis's layer: b (the CPML profile of that axis, pml::CpmlProfiles) not zero on the own points
/// next to it. psi along that axis would then be needed in the neighbour's halo (TtiCpmlHalo); as
/// each rank checks its own side of every cut, the two halos of a cut are both checked.
/// mpi::cut_limits keeps cuts that far out.
inline void check_cuts_outside_layer(const std::array<std::vector<float>, 3>& b, const physics::Index3& n,
                                     const std::array<bool, 6>& faces, int width) {
  for (int f = 0; f < 6; ++f) {
    if (!faces[static_cast<size_t>(f)]) continue;
    const int a = f / 2;
    const auto& profile = b[static_cast<size_t>(a)];
    for (int d = 0; d < width && d < n[a]; ++d) {
      const int i = f % 2 == 0 ? d : n[a] - 1 - d;
      if (static_cast<size_t>(i) < profile.size() && profile[static_cast<size_t>(i)] != 0.0f)
        throw std::invalid_argument("acoustic_tti: a subdomain's face " + std::to_string(f) +
                                    " lies within " + std::to_string(width) +
                                    " points of the CPML layer of its axis (mpi::cut_limits keeps cuts out)");
    }
  }
}

/// The layer's fields and profiles as a step reads them (host or device pointers).
struct TtiCpmlArgs {
  LayerIndex layer;
  TtiCpmlHalo halo;                  // a distributed subdomain's halo points (none on one rank)
  std::int64_t count = 0;            // layer.count + halo.count: the length of one field
  float* fields = nullptr;           // kTtiCpmlFields arrays of count floats, one after another
  const float* a[3] = {};            // CPML profiles per axis, by grid index (pml::CpmlProfiles)
  const float* b[3] = {};
  pml::AxisDerivatives d1{};
  /// The rows' centre weights (physics::tti_row_centres: perp x, y, z, then axis x, y, z), 6 arrays
  /// of layer.count floats, for a family that takes the rows from its split-form sums
  /// (KernelFamily::launch_tti_cpml_layer); null otherwise.
  float* row_centres = nullptr;
  /// The rows themselves (physics::TtiRows: perp x, y, z, then axis x, y, z), 6 arrays of
  /// layer.count floats, written by such a family before pass 2 reads them; null otherwise.
  float* rows = nullptr;
  /// Whether that family's CPML launch also takes pass 1 at the points of slabs 2-5 (the j and k
  /// faces: damped along y and z only, the axes of the planes it stages), which tti_cpml_psi then
  /// skips. Only for a step whose pass 2 runs after every slab's CPML launch (not the overlapped
  /// step, whose parts' pass 2 reads V of the other part), and only where x is not damped over
  /// the inner i range.
  bool psi_in_rows = false;
  MM_HOST_DEVICE MM_FORCE_INLINE bool psi_by_rows(int slab) const { return psi_in_rows && slab >= 2; }
  /// Field f (TtiCpmlField), axis c, at compact index x.
  MM_HOST_DEVICE MM_FORCE_INLINE float& at(int f, int c, std::int64_t x) const {
    return fields[(f + c) * count + x];
  }
  /// The same at index y, or zero where nothing is stored (y = -1: index, along).
  MM_HOST_DEVICE MM_FORCE_INLINE float at_or_zero(int f, int c, std::int64_t y) const {
    return y < 0 ? 0.0f : at(f, c, y);
  }

  /// Compact index of point (i, j, k): the own layer's, a face halo's (beyond the grid along one
  /// axis), or -1 (inner, an edge or beyond).
  MM_HOST_DEVICE std::int64_t index(int i, int j, int k) const {
    const int idx[3] = {i, j, k};
    const int n[3] = {layer.n.i, layer.n.j, layer.n.k};
    int f = -1;
    for (int a = 0; a < 3; ++a) {
      if (idx[a] >= 0 && idx[a] < n[a]) continue;
      if (f >= 0) return -1;
      f = 2 * a + (idx[a] < 0 ? 0 : 1);
    }
    if (f < 0) return layer(i, j, k);
    const physics::Index3 lo = halo.lo[f];
    const std::int64_t x = halo.face[f](i - lo.i, j - lo.j, k - lo.k);
    return x < 0 ? -1 : halo.start[f] + x;
  }

  /// The index of the point m steps along axis A from point (i, j, k) of own slab box `slab`,
  /// whose index is x: by the slab's strides while the step stays in it, else looked up (-1
  /// where nothing is stored: V is zero there).
  template <int A>
  MM_HOST_DEVICE MM_FORCE_INLINE std::int64_t along(const physics::Box3& slab, int i, int j, int k, std::int64_t x,
                                                    int m) const {
    const int t = (A == 0 ? i : (A == 1 ? j : k)) + m;
    const int lo = slab.lo[A];
    if (t >= lo && t < lo + slab.n[A])
      return x + m * slab_stride<A>(slab);
    return index(A == 0 ? t : i, A == 1 ? t : j, A == 2 ? t : k);
  }
};

/// The layer's memory fields a step carries to the next, by the names read_field and write_field
/// take (a checkpoint's): psi of s and of p and zeta of both operators, per axis. V is not among
/// them: pass 1 forms it anew every step from psi.
struct TtiCpmlStateName {
  const char* name;
  int field;  // TtiCpmlField + axis
};
inline constexpr TtiCpmlStateName kTtiCpmlState[] = {
    {"cpml_psi_s_x", kPsiS + 0},         {"cpml_psi_s_y", kPsiS + 1},         {"cpml_psi_s_z", kPsiS + 2},
    {"cpml_psi_p_x", kPsiP + 0},         {"cpml_psi_p_y", kPsiP + 1},         {"cpml_psi_p_z", kPsiP + 2},
    {"cpml_zeta_perp_x", kZetaPerp + 0}, {"cpml_zeta_perp_y", kZetaPerp + 1}, {"cpml_zeta_perp_z", kZetaPerp + 2},
    {"cpml_zeta_axis_x", kZetaAxis + 0}, {"cpml_zeta_axis_y", kZetaAxis + 1}, {"cpml_zeta_axis_z", kZetaAxis + 2},
};

/// The field (TtiCpmlField + axis) of a memory field's name, or -1 where `name` names none.
inline int tti_cpml_field_named(const std::string& name) {
  for (const auto& s : kTtiCpmlState)
    if (name == s.name) return s.field;
  return -1;
}

/// Between a strided box of grid points (dense [i][j][k], C order) and one memory field (`field`:
/// its `cpml.count` floats): to_dense reads the own layer's points, with 0 elsewhere; else writes
/// the own layer's points and a distributed subdomain's halo points (which pass 1 carries from
/// step to step like its own) and leaves the rest.
inline void copy_layer_box(const TtiCpmlArgs& cpml, const physics::Box3& box, const physics::Index3& stride,
                           float* field, float* dense, bool to_dense) {
  std::int64_t o = 0;
  for (int i = box.lo.i; i < box.hi().i; i += stride.i)
    for (int j = box.lo.j; j < box.hi().j; j += stride.j)
      for (int k = box.lo.k; k < box.hi().k; k += stride.k, ++o) {
        if (to_dense) {
          const std::int64_t x = cpml.layer(i, j, k);
          dense[o] = x < 0 ? 0.0f : field[x];
        } else if (const std::int64_t x = cpml.index(i, j, k); x >= 0) {
          field[x] = dense[o];
        }
      }
}


/// Pass 1's psi of axis E at compact index x, where E is damped (a, b its profile there): psi_s
/// and psi_p (their values on entry) from the current p and q around the point (`field(di, dj,
/// dk)`: s = p + q and p there, physics::TtiFieldPoint), stored and returned; with Vti, only
/// those of live rows (perp_row_live, axis_row_live).
template <int E, bool Vti = false, class Field>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_cpml_psi_axis(const TtiCpmlArgs& c, std::int64_t x, float a, float b,
                                                     const Field& field, float& psi_s, float& psi_p) {
  if constexpr (perp_row_live<Vti>(E)) {
    psi_s = pml::cpml_psi_next<E>(psi_s, a, b, [&field](int di, int dj, int dk) { return field(di, dj, dk).s; }, c.d1);
    c.at(kPsiS, E, x) = psi_s;
  }
  if constexpr (axis_row_live<Vti>(E)) {
    psi_p = pml::cpml_psi_next<E>(psi_p, a, b, [&field](int di, int dj, int dk) { return field(di, dj, dk).p; }, c.d1);
    c.at(kPsiP, E, x) = psi_p;
  }
}
/// The same at the point at offset o of the step's arrays.
template <int E, bool Vti = false>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_cpml_psi_axis(const TtiStepArgs& g, const TtiCpmlArgs& c, std::int64_t o,
                                                     std::int64_t x, float a, float b, float& psi_s, float& psi_p) {
  const TtiGlobalPoint pt{g, o};
  tti_cpml_psi_axis<E, Vti>(c, x, a, b, [&pt](int di, int dj, int dk) { return pt.field(di, dj, dk); }, psi_s,
                            psi_p);
}

/// Pass 1's end at compact index x, whose medium is m: V = C psi of both tensors, from psi. With
/// Vti, V_perp = (psi_s x, psi_s y, 0) and V_axis = (0, 0, psi_p z / a), the live rows stored:
/// what tti_stretch_fluxes gives there with n = (0, 0, 1).
template <bool Vti = false>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_cpml_fluxes(const TtiCpmlArgs& c, std::int64_t x,
                                                   const physics::TtiMediumPoint& m, const float (&psi_s)[3],
                                                   const float (&psi_p)[3]) {
  if constexpr (Vti) {
    c.at(kVPerp, 0, x) = psi_s[0];
    c.at(kVPerp, 1, x) = psi_s[1];
    c.at(kVAxis, 2, x) = psi_p[2] * m.inv_a;
    return;
  }
  float v_perp[3], v_axis[3];
  tti_stretch_fluxes(m, psi_s, psi_p, v_perp, v_axis);
  for (int e = 0; e < 3; ++e) {
    c.at(kVPerp, e, x) = v_perp[e];
    c.at(kVAxis, e, x) = v_axis[e];
  }
}
/// The same at the point at offset o of the step's arrays.
template <bool Vti = false>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_cpml_fluxes(const TtiStepArgs& g, const TtiCpmlArgs& c, std::int64_t o,
                                                   std::int64_t x, const float (&psi_s)[3], const float (&psi_p)[3]) {
  tti_cpml_fluxes<Vti>(c, x, TtiGlobalPoint{g, o}.medium(0, 0, 0), psi_s, psi_p);
}

/// Pass 1 at point (i, j, k) of the layer or of a face halo's layer (nothing elsewhere): psi of
/// the damped axes from the current p, q, then V. Along a halo's own axis psi stays zero
/// (TtiCpmlHalo). The CPU reference runs the same two pieces a row at a time. Vti: the live rows
/// only (perp_row_live, axis_row_live; the GPU where g.vti).
template <bool Vti = false>
MM_HOST_DEVICE inline void tti_cpml_psi_point(const TtiStepArgs& g, const TtiCpmlArgs& c, int i, int j, int k) {
  const std::int64_t x = c.index(i, j, k);
  if (x < 0) return;
  const std::int64_t o = g.p.offset(i, j, k);
  const int idx[3] = {i, j, k};
  float psi_s[3] = {}, psi_p[3] = {};  // kept for V: read and written where axis e is damped
  for (int e = 0; e < 3; ++e) {
    if (idx[e] < 0 || idx[e] >= c.layer.n[e]) continue;  // a halo's own axis: zero
    const float a = c.a[e][idx[e]], b = c.b[e][idx[e]];
    if (b == 0.0f) continue;  // axis e is not damped here: psi is zero, never written
    if (perp_row_live<Vti>(e)) psi_s[e] = c.at(kPsiS, e, x);
    if (axis_row_live<Vti>(e)) psi_p[e] = c.at(kPsiP, e, x);
    if (e == 0) tti_cpml_psi_axis<0, Vti>(g, c, o, x, a, b, psi_s[e], psi_p[e]);
    if (e == 1) tti_cpml_psi_axis<1, Vti>(g, c, o, x, a, b, psi_s[e], psi_p[e]);
    if (e == 2) tti_cpml_psi_axis<2, Vti>(g, c, o, x, a, b, psi_s[e], psi_p[e]);
  }
  tti_cpml_fluxes<Vti>(g, c, o, x, psi_s, psi_p);
}

/// Whether the 8 points around (i, j, k) along axis A all lie in slab box `slab`: then V there is
/// read by the slab's strides (tti_flux_derivatives_inside) rather than looked up.
template <int A>
MM_HOST_DEVICE MM_FORCE_INLINE bool flux_line_inside(const physics::Box3& slab, int i, int j, int k) {
  const int t = A == 0 ? i : (A == 1 ? j : k);
  return t - physics::kRadius >= slab.lo[A] && t + physics::kRadius < slab.lo[A] + slab.n[A];
}

/// d V_A / dx_A of both stretched fluxes (kVPerp, kVAxis), V at the line's point m steps along A
/// being v(field, m) (m in -R..R, not 0): the one formula of every path below, which differ only in
/// how they reach V. Vti: of the live rows only (the others are zero).
template <int A, bool Vti, class V>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_flux_derivatives_of(const TtiCpmlArgs& c, const V& v, float& dv_perp,
                                                            float& dv_axis) {
  const auto derivative = [&](int field) {
    return pml::first_derivative8<A>([&](int di, int dj, int dk) { return v(field, di + dj + dk); }, c.d1);
  };  // (one offset is non-zero)
  dv_perp = perp_row_live<Vti>(A) ? derivative(kVPerp) : 0.0f;
  dv_axis = axis_row_live<Vti>(A) ? derivative(kVAxis) : 0.0f;
}

/// tti_flux_derivatives where flux_line_inside holds: neighbours by the strides.
template <int A, bool Vti = false>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_flux_derivatives_inside(const TtiCpmlArgs& c, const physics::Box3& slab,
                                                               std::int64_t x, float& dv_perp, float& dv_axis) {
  const std::int64_t stride = slab_stride<A>(slab);
  tti_flux_derivatives_of<A, Vti>(
      c, [&](int field, int m) { return c.at(field, A, x + m * stride); }, dv_perp, dv_axis);
}

/// d V_A / dx_A of both stretched fluxes at point (i, j, k) of layer slab `slab`, compact index x,
/// every neighbour's index looked up; V is zero outside the layer (inner points, beyond the grid).
template <int A, bool Vti = false>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_flux_derivatives_by_lookup(const TtiCpmlArgs& c, const physics::Box3& slab,
                                                                  int i, int j, int k, std::int64_t x, float& dv_perp,
                                                                  float& dv_axis) {
  std::int64_t line[2 * physics::kRadius + 1];  // the layer indices along axis A, once for both
  MM_UNROLL
  for (int m = -physics::kRadius; m <= physics::kRadius; ++m)
    line[m + physics::kRadius] = c.along<A>(slab, i, j, k, x, m);
  tti_flux_derivatives_of<A, Vti>(
      c, [&](int field, int m) { return c.at_or_zero(field, A, line[m + physics::kRadius]); }, dv_perp, dv_axis);
}

/// Whether nothing is stored at the points of the line along A through own point (i, j, k) that
/// lie beyond own slab box `slab` on side `up` (above it, else below), so that V there is zero
/// without a lookup: there are none, or they all lie in the own inner box, or beyond the grid on
/// a side without a halo face (TtiCpmlArgs::index gives -1 at each of them). Where a line leaves
/// its slab for another slab or a halo, false.
template <int A>
MM_HOST_DEVICE MM_FORCE_INLINE bool nothing_stored_beyond(const TtiCpmlArgs& c, const physics::Box3& slab, int i,
                                                         int j, int k, bool up) {
  const int idx[3] = {i, j, k};
  const int t = idx[A], first = up ? slab.lo[A] + slab.n[A] : slab.lo[A] - 1;
  const int last = up ? t + physics::kRadius : t - physics::kRadius;
  if (up ? last < first : last > first) return true;  // the line stays in the slab on this side
  if (up ? first >= c.layer.n[A] : first < 0) return c.halo.face[2 * A + (up ? 1 : 0)].count == 0;
  const physics::Box3& in = c.layer.inner;
  if (in.empty()) return false;
  for (int b = 0; b < 3; ++b)
    if (b != A && (idx[b] < in.lo[b] || idx[b] >= in.lo[b] + in.n[b])) return false;
  const int lo = up ? first : last, hi = up ? last : first;  // the run [lo, hi] along A, inside the inner box?
  return lo >= in.lo[A] && hi < in.lo[A] + in.n[A];
}

/// Whether d V_A / dx_A at own point (i, j, k) of slab box `slab` takes its neighbours by the
/// slab's strides (tti_flux_derivatives_by_strides): where nothing is stored beyond the slab on
/// either side of its line (nothing_stored_beyond), which holds at most of a slab's points whose
/// line leaves it (a face slab's line across the face runs into the inner box or off the grid).
template <int A>
MM_HOST_DEVICE MM_FORCE_INLINE bool flux_line_by_strides(const TtiCpmlArgs& c, const physics::Box3& slab, int i, int j,
                                                        int k) {
  return nothing_stored_beyond<A>(c, slab, i, j, k, true) && nothing_stored_beyond<A>(c, slab, i, j, k, false);
}

/// tti_flux_derivatives_by_lookup where flux_line_by_strides holds: the neighbours in the slab by
/// its strides, zero beyond it. The same operands in the same formula, so the same result bit for bit.
template <int A, bool Vti = false>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_flux_derivatives_by_strides(const TtiCpmlArgs& c, const physics::Box3& slab,
                                                                   int i, int j, int k, std::int64_t x,
                                                                   float& dv_perp, float& dv_axis) {
  const std::int64_t stride = slab_stride<A>(slab);
  const int t = A == 0 ? i : (A == 1 ? j : k);
  const int below = slab.lo[A] - t, above = slab.lo[A] + slab.n[A] - t;  // the slab's m range: [below, above)
  tti_flux_derivatives_of<A, Vti>(
      c, [&](int field, int m) { return m >= below && m < above ? c.at(field, A, x + m * stride) : 0.0f; }, dv_perp,
      dv_axis);
}

/// d V_A / dx_A at point (i, j, k) of layer slab `slab`, compact index x: by the slab's strides
/// where the line lies in the slab; where it leaves the slab only for points where nothing is
/// stored (flux_line_by_strides), by the strides with zeros beyond; else by lookups (the same
/// formula). At 512^3 on an H200 the lookups everywhere made pass 2 of the layer cost 3.4 ms a
/// step besides its rows, 2.9 with the strides where the line lies in the slab. Taking every
/// point by strides with zeros beyond (no separate path for the lines inside) made the k faces'
/// pass 2 12% faster at 1000^3 with a 27-point layer, and the i and j faces' 8-12% slower
/// (H200, session 31).
template <int A, bool Vti = false>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_flux_derivatives(const TtiCpmlArgs& c, const physics::Box3& slab, int i, int j,
                                                        int k, std::int64_t x, float& dv_perp, float& dv_axis) {
  if (flux_line_inside<A>(slab, i, j, k))
    tti_flux_derivatives_inside<A, Vti>(c, slab, x, dv_perp, dv_axis);
  else if (flux_line_by_strides<A>(c, slab, i, j, k))
    tti_flux_derivatives_by_strides<A, Vti>(c, slab, i, j, k, x, dv_perp, dv_axis);
  else
    tti_flux_derivatives_by_lookup<A, Vti>(c, slab, i, j, k, x, dv_perp, dv_axis);
}

/// The operator's rows at offset o from the step's arrays: physics::tti_rows73, or vti_rows25
/// (Vti; where g.vti). Branch-free, so the CPU reference evaluates a row of them as one vector loop.
template <bool Vti>
MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiRows tti_rows_of(const TtiStepArgs& g, std::int64_t o) {
  const TtiGlobalPoint pt{g, o};
  const auto field = [&pt](int di, int dj, int dk) { return pt.field(di, dj, dk); };
  const auto medium = [&pt](int di, int dj, int dk) { return pt.medium(di, dj, dk); };
  if constexpr (Vti) return physics::vti_rows25(field, medium, g.stencil);
  else return physics::tti_rows73(field, medium, g.stencil);
}

/// tti_rows_of where the model has one axis n (g.constant_axis; the CPU reference's row loops).
MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiRows tti_rows_axis_of(const TtiStepArgs& g, std::int64_t o,
                                                                const physics::TtiMediumPoint& n) {
  const TtiGlobalPoint pt{g, o};
  const auto field = [&pt](int di, int dj, int dk) { return pt.field(di, dj, dk); };
  return physics::tti_rows73(field, TtiAxisMedium{n, g.inv_a.origin + o, g.p.sx, g.p.sy}, g.stencil);
}

/// tti_rows_of for the step's operator (g.vti), for the kernels that take one point at a time.
MM_HOST_DEVICE MM_FORCE_INLINE physics::TtiRows tti_rows_at(const TtiStepArgs& g, std::int64_t o) {
  return g.vti ? tti_rows_of<true>(g, o) : tti_rows_of<false>(g, o);
}

/// The end of pass 2 at layer point (i, j, k), compact index x, given its rows (tti_rows_at) and
/// flux derivatives (tti_flux_derivatives): the stretched operators, zeta and the update.
/// Branch-free, so the CPU reference evaluates a row of them as one vector loop. kDampedOnly (the
/// GPU's point kernels): zeta of an axis is read and written only where the axis is damped (b
/// not zero); elsewhere it is zero and stays so, so the result is the same bit for bit. Vti: zeta
/// of the live rows only (the others are zero, and their rows and d_c V_c too).
template <bool kDampedOnly = false, bool Vti = false>
MM_HOST_DEVICE MM_FORCE_INLINE void tti_cpml_finish(const TtiStepArgs& g, const TtiCpmlArgs& c, int i, int j, int k,
                                                   std::int64_t x, const physics::TtiRows& rows,
                                                   const float (&dv_perp)[3], const float (&dv_axis)[3]) {
  const std::int64_t o = g.p.offset(i, j, k);
  float a[3], b[3], zeta_perp[3], zeta_axis[3];
  a[0] = c.a[0][i], a[1] = c.a[1][j], a[2] = c.a[2][k];
  b[0] = c.b[0][i], b[1] = c.b[1][j], b[2] = c.b[2][k];
  bool perp[3], axis[3];  // whether zeta of row e is read and written
  for (int e = 0; e < 3; ++e) {
    const bool damped = !kDampedOnly || b[e] != 0.0f;
    perp[e] = damped && perp_row_live<Vti>(e);
    axis[e] = damped && axis_row_live<Vti>(e);
    zeta_perp[e] = perp[e] ? c.at(kZetaPerp, e, x) : 0.0f;
    zeta_axis[e] = axis[e] ? c.at(kZetaAxis, e, x) : 0.0f;
  }
  const TtiStretched op = tti_stretched_operators(rows, dv_perp, dv_axis, a, b, zeta_perp, zeta_axis);
  for (int e = 0; e < 3; ++e) {
    if (perp[e]) c.at(kZetaPerp, e, x) = zeta_perp[e];
    if (axis[e]) c.at(kZetaAxis, e, x) = zeta_axis[e];
  }
  tti_cpml_update(op, load(g.p.origin + o), load(g.q.origin + o), load(g.v2dt2.origin + o), load(g.inv_a.origin + o),
                  load(g.b.origin + o), g.eta[0][i + 1] + g.eta[1][j + 1] + g.eta[2][k + 1], g.p_next.origin + o,
                  g.q_next.origin + o);
}

/// Pass 2 at point (i, j, k) of layer slab `slab` (LayerIndex::slab), compact index x, given its
/// rows (tti_rows_at): the flux derivatives, then tti_cpml_finish. Vti: the live rows' only, the
/// rows given by vti_rows25 (whose dead rows are zero).
template <bool Vti = false>
MM_HOST_DEVICE inline void tti_cpml_layer_update(const TtiStepArgs& g, const TtiCpmlArgs& c, const physics::Box3& slab,
                                                 int i, int j, int k, std::int64_t x, const physics::TtiRows& rows) {
  float dv_perp[3], dv_axis[3];
  tti_flux_derivatives<0, Vti>(c, slab, i, j, k, x, dv_perp[0], dv_axis[0]);
  tti_flux_derivatives<1, Vti>(c, slab, i, j, k, x, dv_perp[1], dv_axis[1]);
  tti_flux_derivatives<2, Vti>(c, slab, i, j, k, x, dv_perp[2], dv_axis[2]);
  tti_cpml_finish<true, Vti>(g, c, i, j, k, x, rows, dv_perp, dv_axis);
}

/// A per-row pair of both tensors (physics::TtiRows, physics::TtiRowCentres: perp x, y, z, then
/// axis x, y, z) at own layer point x of six arrays of layer.count floats from `base`
/// (TtiCpmlArgs::rows, ::row_centres): stored, and loaded.
template <class Rows>
MM_HOST_DEVICE MM_FORCE_INLINE void store_by_rows(float* base, const TtiCpmlArgs& c, std::int64_t x, const Rows& r) {
  for (int a = 0; a < 3; ++a) {
    base[a * c.layer.count + x] = r.perp[a];
    base[(3 + a) * c.layer.count + x] = r.axis[a];
  }
}
template <class Rows>
MM_HOST_DEVICE MM_FORCE_INLINE Rows load_by_rows(const float* base, const TtiCpmlArgs& c, std::int64_t x) {
  Rows r;
  for (int a = 0; a < 3; ++a) {
    r.perp[a] = load(base + a * c.layer.count + x);
    r.axis[a] = load(base + (3 + a) * c.layer.count + x);
  }
  return r;
}

/// Pass 2 at point (i, j, k) of layer slab `slab`, compact index x.
MM_HOST_DEVICE MM_FORCE_INLINE void tti_cpml_layer_point(const TtiStepArgs& g, const TtiCpmlArgs& c,
                                                        const physics::Box3& slab, int i, int j, int k,
                                                        std::int64_t x) {
  tti_cpml_layer_update(g, c, slab, i, j, k, x, tti_rows_at(g, g.p.offset(i, j, k)));
}

}  // namespace minimod::kernels
