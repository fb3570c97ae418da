#include "physics/model.hpp"

#include <algorithm>
#include <cstdint>

namespace minimod::physics {

std::vector<float> layered_values(const Index3& n, double dz, const std::vector<Layer>& layers) {
  std::vector<float> column(static_cast<size_t>(n.k), 0.0f);
  for (int k = 0; k < n.k; ++k) {
    const double z = k * dz;
    double value = layers.empty() ? 0.0 : layers.front().value;
    for (const auto& l : layers)
      if (l.top <= z + 1e-9 * dz) value = l.value;
    column[static_cast<size_t>(k)] = static_cast<float>(value);
  }
  std::vector<float> out(static_cast<size_t>(n.i) * n.j * n.k);
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

}  // namespace minimod::physics
