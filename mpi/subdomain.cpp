#include "mpi/subdomain.hpp"

#include <stdexcept>

namespace minimod::mpi {

using physics::Box3;
using physics::Index3;

namespace {

using kernels::stored_box;

/// `box` in the coordinates of the problem's stored arrays (the grid, or a plan's window of it).
template <class Problem>
Box3 in_stored(const Problem& g, const Box3& box) {
  const Box3 s = stored_box(g);
  return {{box.lo.i - s.lo.i, box.lo.j - s.lo.j, box.lo.k - s.lo.k}, box.n};
}

std::vector<float> slice(const std::vector<float>& v, int first, int count) {
  if (v.empty()) return {};
  return {v.begin() + first, v.begin() + first + count};
}

/// The box `b` (indices of a dense [i][j][k] array of `shape`) of `v`, dense.
std::vector<float> cut(const std::vector<float>& v, const Index3& shape, const Box3& b) {
  if (!physics::covers({{0, 0, 0}, shape}, b))
    throw std::invalid_argument("subdomain_problem: the subdomain reaches beyond the problem's stored window");
  std::vector<float> out(static_cast<size_t>(b.points()));
  for (int i = 0; i < b.n.i; ++i)
    for (int j = 0; j < b.n.j; ++j) {
      const auto* src =
          &v[(static_cast<size_t>(b.lo.i + i) * shape.j + b.lo.j + j) * shape.k + b.lo.k];
      std::copy(src, src + b.n.k, &out[(static_cast<size_t>(i) * b.n.j + j) * b.n.k]);
    }
  return out;
}

/// The parts every problem type cuts alike: the grid (origin moved to the box), the damping
/// profiles (Minimod's: i = -1 .. n), the free surfaces this box has, the regions clipped to it.
template <class Problem>
void cut_common(const Problem& g, const Box3& box, const kernels::HaloFaces& halo, Problem& p) {
  p.grid = g.grid;
  p.grid.shape = box.n;
  for (int a = 0; a < 3; ++a) p.grid.origin[a] = g.grid.origin[a] + box.lo[a] * g.grid.spacing[a];
  p.pml = g.pml;
  for (int a = 0; a < 3; ++a) p.damping.eta[a] = slice(g.damping.eta[a], box.lo[a], box.n[a] + 2);
  const auto& n = g.grid.shape;
  for (int f = 0; f < 6; ++f) {
    const int a = f / 2;
    const bool on_boundary = f % 2 == 0 ? box.lo[a] == 0 : box.hi()[a] == n[a];
    p.free_surface[static_cast<size_t>(f)] = g.free_surface[static_cast<size_t>(f)] && on_boundary &&
                                             !halo.neighbour[static_cast<size_t>(f)];
  }
  p.inv_4h2 = g.inv_4h2;
  p.regions.clear();
  for (const auto& r : kernels::problem_regions(g)) {
    Box3 b = physics::intersect(r.box, box);
    // The inner region stays first even when this rank has none of it (the backends look there).
    if (b.empty() && r.is_pml) continue;
    for (int a = 0; a < 3; ++a) b.lo[a] -= box.lo[a];
    if (b.empty()) b = Box3{};
    p.regions.push_back({r.name, b, r.is_pml});
  }
  p.halo = halo;
}

}  // namespace

kernels::AcousticIsoProblem subdomain_problem(const kernels::AcousticIsoProblem& g, const Box3& box,
                                              const kernels::HaloFaces& halo) {
  kernels::AcousticIsoProblem p;
  cut_common(g, box, halo, p);
  p.pml_kind = g.pml_kind;
  for (int a = 0; a < 3; ++a) {
    p.cpml.a[a] = slice(g.cpml.a[a], box.lo[a], box.n[a]);
    p.cpml.b[a] = slice(g.cpml.b[a], box.lo[a], box.n[a]);
  }
  p.v2dt2 = cut(g.v2dt2, stored_box(g).n, in_stored(g, box));
  p.laplacian = g.laplacian;
  p.derivatives = g.derivatives;
  return p;
}

kernels::AcousticTtiProblem subdomain_problem(const kernels::AcousticTtiProblem& g, const Box3& box,
                                              const kernels::HaloFaces& halo) {
  const Box3 gm = kernels::stored_medium_box(g);
  for (const auto* v : {&g.theta, &g.phi, &g.a})
    if (v->size() != static_cast<size_t>(gm.points()))
      throw std::invalid_argument(
          "subdomain_problem: finish_problem the global TTI problem first "
          "(theta, phi, a over medium_box)");
  kernels::AcousticTtiProblem p;
  cut_common(g, box, halo, p);
  p.v2dt2 = cut(g.v2dt2, stored_box(g).n, in_stored(g, box));
  p.b = cut(g.b, stored_box(g).n, in_stored(g, box));
  // The medium over the box grown by the radius, from the stored medium box (the grid's, or a
  // window's, grown by the radius): the neighbours' values inside the grid, the clamped ones only
  // beyond its boundary.
  const Box3 from = physics::grown(box, physics::kRadius);
  const Box3 at{{from.lo.i - gm.lo.i, from.lo.j - gm.lo.j, from.lo.k - gm.lo.k}, from.n};
  p.theta = cut(g.theta, gm.n, at);
  p.phi = cut(g.phi, gm.n, at);
  p.a = cut(g.a, gm.n, at);
  p.record_q = g.record_q;
  p.vti = g.vti;  // the global model's: every decomposition evaluates the same formula
  p.constant_axis = g.constant_axis;
  p.stencil = g.stencil;
  p.layer = g.layer;
  for (int a = 0; a < 3; ++a) {  // the CPML's profiles (TtiLayer::cpml), by grid index
    p.cpml.a[a] = slice(g.cpml.a[a], box.lo[a], box.n[a]);
    p.cpml.b[a] = slice(g.cpml.b[a], box.lo[a], box.n[a]);
  }
  return p;
}

namespace {
/// Cuts along each axis keep the halo width away from that axis's layer: a CPML's psi along an
/// axis is then never read (iso) or computed (TTI, kernels/tti_cpml.hpp TtiCpmlHalo) across a cut.
CutLimits outside_layers(const pml::PmlWidths& pml) {
  CutLimits l;
  for (int a = 0; a < 3; ++a) {
    if (pml.lo[static_cast<size_t>(a)] > 0) l.lo[a] = pml.lo[static_cast<size_t>(a)] + kernels::kHaloWidth;
    if (pml.hi[static_cast<size_t>(a)] > 0) l.hi[a] = pml.hi[static_cast<size_t>(a)] + kernels::kHaloWidth;
  }
  return l;
}
}  // namespace

CutLimits cut_limits(const kernels::AcousticIsoProblem& problem) {
  return problem.pml_kind == pml::PmlKind::cpml ? outside_layers(problem.pml) : CutLimits{};
}

CutLimits cut_limits(const kernels::AcousticTtiProblem& problem) {
  return problem.layer == kernels::TtiLayer::cpml ? outside_layers(problem.pml) : CutLimits{};
}

std::vector<kernels::NodeWeight> nodes_in(const std::vector<kernels::NodeWeight>& nodes,
                                          const Box3& box, std::vector<int>* index) {
  std::vector<kernels::NodeWeight> out;
  if (index) index->clear();
  for (size_t e = 0; e < nodes.size(); ++e) {
    const auto& nw = nodes[e];
    if (!box.contains(nw.node.i, nw.node.j, nw.node.k)) continue;
    auto local = nw;
    for (int a = 0; a < 3; ++a) local.node[a] -= box.lo[a];
    out.push_back(local);
    if (index) index->push_back(static_cast<int>(e));
  }
  return out;
}

}  // namespace minimod::mpi
