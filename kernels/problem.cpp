#include "kernels/propagator.hpp"

#include <algorithm>
#include <chrono>

namespace minimod::kernels {

void finish_problem(AcousticIsoProblem& p) {
  const auto& h = p.grid.spacing;
  p.laplacian = physics::make_laplacian_coeffs(h[0], h[1], h[2]);
  for (int a = 0; a < 3; ++a) p.inv_4h2[a] = static_cast<float>(1.0 / (4.0 * h[a] * h[a]));
  p.derivatives = pml::make_axis_derivatives(h);
}

std::vector<pml::Region> problem_regions(const AcousticIsoProblem& p) {
  return p.regions.empty() ? pml::make_regions(p.grid.shape, p.pml) : p.regions;
}

double Propagator::timed_steps(int first, int steps, const std::vector<NodeWeight>& source,
                               float (*amplitude)(int, const void*), const void* ctx) {
  const auto start = std::chrono::steady_clock::now();
  for (int n = first; n < first + steps; ++n) step(source, amplitude(n, ctx));
  health();  // touches the field, so the work is complete (and checked) before the clock stops
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

float* Propagator::snapshot_buffer(int slot, std::int64_t count) {
  auto& b = host_slots_[slot];
  if (static_cast<std::int64_t>(b.size()) < count) b.resize(static_cast<size_t>(count));
  return b.data();
}

void Propagator::copy_field_async(const std::string& name, const physics::Box3& box,
                                  const physics::Index3& stride, int slot) {
  read_field(name, box, stride, host_slots_[slot].data());
}

void Propagator::read_field_by_parts(const std::string& name, const physics::Box3& box,
                                     const physics::Index3& stride, std::int64_t max_floats,
                                     const FieldPartSink& sink) {
  const physics::Index3 count = physics::strided_shape(box, stride);
  if (static_cast<std::int64_t>(count.i) * count.j * count.k <= 0) return;
  const int planes = planes_per_part(count, max_floats);
  std::vector<float> data;
  for (int i0 = 0; i0 < count.i; i0 += planes) {
    const int n = std::min(planes, count.i - i0);
    data.resize(static_cast<size_t>(n) * count.j * count.k);
    read_field(name, strided_planes(box, stride, i0, n), stride, data.data());
    sink({{i0, 0, 0}, {n, count.j, count.k}, data.data()});
  }
}

void Propagator::wait_copy(int /*slot*/) {}

}  // namespace minimod::kernels
