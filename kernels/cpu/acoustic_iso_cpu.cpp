// CPU reference backend for the acoustic-isotropic propagator (OpenMP, vectorised along k,
// cache-blocked along j). Fields carry a 4-point halo that stays zero (Dirichlet behind the PML)
// except at free surfaces, where it holds the odd mirror image of the field.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "kernels/aligned_buffer.hpp"
#include "kernels/propagator.hpp"
#include "physics/view3.hpp"
#include "pml/pml_update.hpp"

namespace minimod::kernels {
namespace {

using physics::Box3;
using physics::FieldLayout;
using physics::Index3;
using physics::View3;

constexpr int kTileJ = 16;  // rows per cache block: 9 planes x (16 + 8) rows of u stay in L2

class CpuAcousticIso final : public Propagator {
 public:
  explicit CpuAcousticIso(const AcousticIsoProblem& problem)
      : p_(problem),
        layout_(FieldLayout::make(problem.grid.box(), physics::kRadius)),
        u_(layout_.elements()),
        u_prev_(layout_.elements()),
        v2dt2_(layout_.elements()),
        aux_(layout_.elements()),
        regions_(pml::make_regions(problem.grid.shape, problem.pml)) {
    const auto m = view(v2dt2_);
    const Index3 n = p_.grid.shape;
    for (int i = 0; i < n.i; ++i)
      for (int j = 0; j < n.j; ++j)
        std::memcpy(m.ptr(i, j, 0), &p_.v2dt2[(static_cast<size_t>(i) * n.j + j) * n.k],
                    sizeof(float) * n.k);
  }

  std::string backend() const override { return "cpu"; }
  std::string kernel() const override { return "reference"; }
  std::int64_t allocated_bytes() const override {
    return 4 * layout_.elements() * static_cast<std::int64_t>(sizeof(float));
  }

  void set_receivers(const std::vector<NodeWeight>& nodes, int count) override {
    receivers_ = nodes;
    receiver_count_ = count;
  }

  void step(const std::vector<NodeWeight>& source, float amplitude) override {
    for (const auto& r : regions_) {
      if (r.is_pml) {
        update_pml(r.box);
      } else {
        update_inner(r.box);
      }
    }
    const auto un = view(u_prev_);
    for (const auto& s : source) un(s.node.i, s.node.j, s.node.k) += s.weight * amplitude;
    apply_free_surfaces(un);
    std::swap(u_, u_prev_);
    record();
  }

  void take_traces(std::vector<float>& out) override {
    out.swap(traces_);
    traces_.clear();
  }

  void read_field(const std::string& name, const Box3& box, const Index3& stride,
                  float* out) override {
    const auto f = view(field(name));
    std::int64_t o = 0;
    for (int i = box.lo.i; i < box.hi().i; i += stride.i)
      for (int j = box.lo.j; j < box.hi().j; j += stride.j)
        for (int k = box.lo.k; k < box.hi().k; k += stride.k) out[o++] = f(i, j, k);
  }

  void write_state(const float* u_prev, const float* u) override {
    const Index3 n = p_.grid.shape;
    const auto a = view(u_prev_), b = view(u_);
    for (int i = 0; i < n.i; ++i)
      for (int j = 0; j < n.j; ++j) {
        const size_t o = (static_cast<size_t>(i) * n.j + j) * n.k;
        std::memcpy(a.ptr(i, j, 0), u_prev + o, sizeof(float) * n.k);
        std::memcpy(b.ptr(i, j, 0), u + o, sizeof(float) * n.k);
      }
    apply_free_surfaces(b);
  }

  FieldHealth health() override {
    const auto u = view(u_);
    const Index3 n = p_.grid.shape;
    FieldHealth h;
    for (int i = 0; i < n.i; ++i) {
      for (int j = 0; j < n.j; ++j) {
        const float* row = u.ptr(i, j, 0);
        for (int k = 0; k < n.k; ++k) {
          const float a = std::fabs(row[k]);
          if (!std::isfinite(a)) return {false, a, {i, j, k}};
          if (a > h.max_abs) h = {true, a, {i, j, k}};
        }
      }
    }
    return h;
  }

 private:
  View3<float> view(const AlignedBuffer& b) const { return layout_.view(b.data()); }
  const AlignedBuffer& field(const std::string& name) const {
    if (name == "u") return u_;
    if (name == "u_prev") return u_prev_;
    if (name == "pml_aux") return aux_;
    if (name == "v2dt2") return v2dt2_;
    throw std::invalid_argument("no field named '" + name + "' in the acoustic_iso propagator");
  }

  void update_inner(const Box3& b) {
    const auto u = view(u_), un = view(u_prev_), m = view(v2dt2_);
    const auto c = p_.laplacian;
    const std::int64_t sx = u.sx, sy = u.sy;
    const int tiles = (b.n.j + kTileJ - 1) / kTileJ;
    const int k0 = b.lo.k, k1 = b.hi().k;
#pragma omp parallel for schedule(static)
    for (int t = 0; t < tiles; ++t) {
      const int j0 = b.lo.j + t * kTileJ, j1 = std::min(j0 + kTileJ, b.hi().j);
      for (int i = b.lo.i; i < b.hi().i; ++i) {
        for (int j = j0; j < j1; ++j) {
          const float* __restrict up = u.ptr(i, j, 0);
          float* __restrict unp = un.ptr(i, j, 0);
          const float* __restrict mp = m.ptr(i, j, 0);
#pragma omp simd
          for (int k = k0; k < k1; ++k) {
            const auto at = [up, k, sx, sy](int di, int dj, int dk) {
              return up[k + di * sx + dj * sy + dk];
            };
            unp[k] = physics::leapfrog(unp[k], up[k], mp[k], physics::laplacian8(at, c));
          }
        }
      }
    }
  }

  void update_pml(const Box3& b) {
    const auto u = view(u_), un = view(u_prev_), m = view(v2dt2_), ax = view(aux_);
    const auto c = p_.laplacian;
    const auto q = p_.inv_4h2;
    const float* ex = p_.damping.eta[0].data() + 1;  // ex[i], i = -1 .. n
    const float* ey = p_.damping.eta[1].data() + 1;
    const float* ez = p_.damping.eta[2].data() + 1;
    const std::int64_t sx = u.sx, sy = u.sy;
    const int k0 = b.lo.k, k1 = b.hi().k;
#pragma omp parallel for collapse(2) schedule(static)
    for (int i = b.lo.i; i < b.hi().i; ++i) {
      for (int j = b.lo.j; j < b.hi().j; ++j) {
        const float* __restrict up = u.ptr(i, j, 0);
        float* __restrict unp = un.ptr(i, j, 0);
        const float* __restrict mp = m.ptr(i, j, 0);
        float* __restrict ap = ax.ptr(i, j, 0);
        const float exy = ex[i] + ey[j];
        const float dex = ex[i + 1] - ex[i - 1], dey = ey[j + 1] - ey[j - 1];
#pragma omp simd
        for (int k = k0; k < k1; ++k) {
          const auto at = [up, k, sx, sy](int di, int dj, int dk) {
            return up[k + di * sx + dj * sy + dk];
          };
          const float eta = exy + ez[k];
          const float lap = physics::laplacian8(at, c);
          const float aux = ap[k];
          unp[k] = pml::pml_u_next(unp[k], up[k], mp[k], lap, aux, eta);
          const float grad =
              pml::pml_gradient_term(dex, 0.0f, at(1, 0, 0), at(-1, 0, 0), q[0]) +
              pml::pml_gradient_term(dey, 0.0f, at(0, 1, 0), at(0, -1, 0), q[1]) +
              pml::pml_gradient_term(ez[k + 1], ez[k - 1], at(0, 0, 1), at(0, 0, -1), q[2]);
          ap[k] = pml::pml_aux_next(aux, eta, grad);
        }
      }
    }
  }

  /// Pressure-release surface on the face's first grid plane: u = 0 there and the halo holds the
  /// odd mirror image u(-m) = -u(m), so the stencil sees an antisymmetric field across the surface.
  void apply_free_surfaces(const View3<float>& f) const {
    const Index3 n = p_.grid.shape;
    for (int face = 0; face < 6; ++face) {
      if (!p_.free_surface[face]) continue;
      const int axis = face / 2;
      const bool hi = face % 2;
      const int s = hi ? n[axis] - 1 : 0;  // surface plane
      const int dir = hi ? 1 : -1;          // towards the halo
      const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
      for (int x1 = 0; x1 < n[a1]; ++x1) {
        for (int x2 = 0; x2 < n[a2]; ++x2) {
          auto at = [&](int along) -> float& {
            int idx[3];
            idx[axis] = along;
            idx[a1] = x1;
            idx[a2] = x2;
            return f(idx[0], idx[1], idx[2]);
          };
          at(s) = 0.0f;
          for (int mm = 1; mm <= physics::kRadius; ++mm) at(s + dir * mm) = -at(s - dir * mm);
        }
      }
    }
  }

  void record() {
    if (receiver_count_ == 0) return;
    const size_t base = traces_.size();
    traces_.resize(base + static_cast<size_t>(receiver_count_), 0.0f);
    const auto u = view(u_);
    for (const auto& r : receivers_)
      traces_[base + static_cast<size_t>(r.point)] += r.weight * u(r.node.i, r.node.j, r.node.k);
  }

  AcousticIsoProblem p_;
  FieldLayout layout_;
  AlignedBuffer u_, u_prev_, v2dt2_, aux_;
  std::vector<pml::Region> regions_;
  std::vector<NodeWeight> receivers_;
  int receiver_count_ = 0;
  std::vector<float> traces_;
};

}  // namespace

std::unique_ptr<Propagator> make_cpu_acoustic_iso(const AcousticIsoProblem& problem) {
  return std::make_unique<CpuAcousticIso>(problem);
}

}  // namespace minimod::kernels
