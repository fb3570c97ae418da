#include "mpi/subdomain.hpp"

namespace minimod::mpi {

using physics::Box3;

namespace {

std::vector<float> slice(const std::vector<float>& v, int first, int count) {
  if (v.empty()) return {};
  return {v.begin() + first, v.begin() + first + count};
}

}  // namespace

kernels::AcousticIsoProblem subdomain_problem(const kernels::AcousticIsoProblem& g, const Box3& box,
                                              const kernels::HaloFaces& halo) {
  kernels::AcousticIsoProblem p;
  p.grid = g.grid;
  p.grid.shape = box.n;
  for (int a = 0; a < 3; ++a) p.grid.origin[a] = g.grid.origin[a] + box.lo[a] * g.grid.spacing[a];
  p.pml = g.pml;
  p.pml_kind = g.pml_kind;
  for (int a = 0; a < 3; ++a) {
    p.damping.eta[a] = slice(g.damping.eta[a], box.lo[a], box.n[a] + 2);  // i = -1 .. n
    p.cpml.a[a] = slice(g.cpml.a[a], box.lo[a], box.n[a]);
    p.cpml.b[a] = slice(g.cpml.b[a], box.lo[a], box.n[a]);
  }
  const auto& n = g.grid.shape;
  p.v2dt2.resize(static_cast<size_t>(box.points()));
  for (int i = 0; i < box.n.i; ++i)
    for (int j = 0; j < box.n.j; ++j) {
      const auto* src = &g.v2dt2[(static_cast<size_t>(box.lo.i + i) * n.j + box.lo.j + j) * n.k + box.lo.k];
      std::copy(src, src + box.n.k, &p.v2dt2[(static_cast<size_t>(i) * box.n.j + j) * box.n.k]);
    }
  for (int f = 0; f < 6; ++f) {
    const int a = f / 2;
    const bool on_boundary = f % 2 == 0 ? box.lo[a] == 0 : box.hi()[a] == n[a];
    p.free_surface[static_cast<size_t>(f)] = g.free_surface[static_cast<size_t>(f)] && on_boundary &&
                                             !halo.neighbour[static_cast<size_t>(f)];
  }
  p.laplacian = g.laplacian;
  p.inv_4h2 = g.inv_4h2;
  p.derivatives = g.derivatives;
  for (const auto& r : kernels::problem_regions(g)) {
    Box3 b = physics::intersect(r.box, box);
    // The inner region stays first even when this rank has none of it (the backends look there).
    if (b.empty() && r.is_pml) continue;
    for (int a = 0; a < 3; ++a) b.lo[a] -= box.lo[a];
    if (b.empty()) b = Box3{};
    p.regions.push_back({r.name, b, r.is_pml});
  }
  p.halo = halo;
  return p;
}

CutLimits cut_limits(const kernels::AcousticIsoProblem& problem) {
  CutLimits l;
  if (problem.pml_kind != pml::PmlKind::cpml) return l;
  for (int a = 0; a < 3; ++a) {
    if (problem.pml.lo[static_cast<size_t>(a)] > 0) l.lo[a] = problem.pml.lo[static_cast<size_t>(a)] + kernels::kHaloWidth;
    if (problem.pml.hi[static_cast<size_t>(a)] > 0) l.hi[a] = problem.pml.hi[static_cast<size_t>(a)] + kernels::kHaloWidth;
  }
  return l;
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
