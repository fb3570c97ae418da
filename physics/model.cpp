#include "physics/model.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace minimod::physics {

std::vector<float> layered_values(const Index3& n, double dz, const std::vector<Layer>& layers) {
  return layered_values(Box3{{0, 0, 0}, n}, dz, layers);
}

std::vector<float> layered_values(const Box3& box, double dz, const std::vector<Layer>& layers) {
  const Index3 n = box.n;
  std::vector<float> column(static_cast<size_t>(n.k), 0.0f);
  for (int k = 0; k < n.k; ++k) {
    const double z = (box.lo.k + k) * dz;
    double value = layers.empty() ? 0.0 : layers.front().value;
    for (const auto& l : layers)
      if (l.top <= z + 1e-9 * dz) value = l.value;
    column[static_cast<size_t>(k)] = static_cast<float>(value);
  }
  std::vector<float> out(static_cast<size_t>(box.points()));
  const std::int64_t columns = static_cast<std::int64_t>(n.i) * n.j;
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < columns; ++c)
    std::copy(column.begin(), column.end(), out.begin() + static_cast<std::ptrdiff_t>(c * n.k));
  return out;
}

std::vector<float> pad_with_edges(const std::vector<float>& v, const Index3& n,
                                  const std::array<int, 3>& lo, const std::array<int, 3>& hi) {
  const Index3 m{n.i + lo[0] + hi[0], n.j + lo[1] + hi[1], n.k + lo[2] + hi[2]};
  std::vector<float> out(static_cast<size_t>(m.i) * m.j * m.k);
  auto clampi = [](int x, int size) { return std::min(std::max(x, 0), size - 1); };
#pragma omp parallel for schedule(static)
  for (int i = 0; i < m.i; ++i) {
    const int si = clampi(i - lo[0], n.i);
    for (int j = 0; j < m.j; ++j) {
      const int sj = clampi(j - lo[1], n.j);
      const float* src = &v[(static_cast<size_t>(si) * n.j + sj) * n.k];
      float* dst = &out[(static_cast<size_t>(i) * m.j + j) * m.k];
      for (int k = 0; k < m.k; ++k) dst[k] = src[clampi(k - lo[2], n.k)];
    }
  }
  return out;
}

std::vector<float> pad_with_edges(const std::vector<float>& v, const Box3& from, const Index3& n,
                                  const std::array<int, 3>& lo, const Box3& to) {
  if (v.size() != static_cast<size_t>(from.points()))
    throw std::invalid_argument("pad_with_edges: the values do not cover their box");
  auto clampi = [](int x, int size) { return std::min(std::max(x, 0), size - 1); };
  // The model's points the window reads: its corners' nearest ones, and everything between.
  const Index3 first{clampi(to.lo.i - lo[0], n.i), clampi(to.lo.j - lo[1], n.j), clampi(to.lo.k - lo[2], n.k)};
  const Index3 last{clampi(to.hi().i - 1 - lo[0], n.i), clampi(to.hi().j - 1 - lo[1], n.j),
                    clampi(to.hi().k - 1 - lo[2], n.k)};
  if (!to.empty() && (!from.contains(first.i, first.j, first.k) || !from.contains(last.i, last.j, last.k)))
    throw std::invalid_argument("pad_with_edges: the window reads model points beyond the values' box");
  std::vector<float> out(static_cast<size_t>(to.points()));
#pragma omp parallel for schedule(static)
  for (int i = 0; i < to.n.i; ++i) {
    const int si = clampi(to.lo.i + i - lo[0], n.i) - from.lo.i;
    for (int j = 0; j < to.n.j; ++j) {
      const int sj = clampi(to.lo.j + j - lo[1], n.j) - from.lo.j;
      const float* src = &v[(static_cast<size_t>(si) * from.n.j + sj) * from.n.k];
      float* dst = &out[(static_cast<size_t>(i) * to.n.j + j) * to.n.k];
      for (int k = 0; k < to.n.k; ++k) dst[k] = src[clampi(to.lo.k + k - lo[2], n.k) - from.lo.k];
    }
  }
  return out;
}

}  // namespace minimod::physics
