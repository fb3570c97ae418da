#include "kernels/cuda/registry.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/resources.hpp"
#include "physics/error.hpp"
#include "physics/log.hpp"

namespace minimod::kernels::cuda {
namespace {
std::vector<KernelFamily>& registry() {
  static std::vector<KernelFamily> r;  // filled during static initialisation, read-only afterwards
  return r;
}
}  // namespace

bool register_family(KernelFamily family) {
  if (implements(family, PropagatorKind::acoustic_tti) && (!family.launch_tti || family.tti_tunables.empty()))
    throw Error("kernel family '" + family.name + "' lists acoustic_tti without its launch and tiles");
  for (const auto& f : registry())
    if (f.name == family.name) throw Error("kernel family '" + family.name + "' registered twice");
  registry().push_back(std::move(family));
  std::sort(registry().begin(), registry().end(),
            [](const KernelFamily& a, const KernelFamily& b) { return a.name < b.name; });
  return true;
}

const std::vector<KernelFamily>& families() { return registry(); }

const KernelFamily& find_family(const std::string& name, PropagatorKind p) {
  std::string able;
  for (const auto& f : registry()) {
    const bool ok = implements(f, p);
    if (ok && f.name == name) return f;
    if (ok) able += (able.empty() ? "" : ", ") + f.name;
  }
  throw ConfigError("config error: execution.kernel: no CUDA kernel family '" + name +
                    "' for this propagator; available: auto, " + able);
}

std::pair<const KernelFamily*, Tile> parse_kernel(const std::string& spec, PropagatorKind p) {
  const auto colon = spec.find(':');
  const KernelFamily& family = find_family(spec.substr(0, colon), p);
  Tile tile = tunables(family, p).front();
  if (colon != std::string::npos &&
      (std::sscanf(spec.c_str() + colon + 1, "%dx%dx%d", &tile.x, &tile.y, &tile.z) != 3 || tile.x < 1 ||
       tile.y < 1 || tile.z < 1))
    throw ConfigError("config error: execution.kernel: bad tile in '" + spec + "' (expected family:XxYxZ)");
  if (family.unverified)
    log::warn("execution.kernel: " + family.name +
              " has not yet been checked against the CPU reference on a GPU; results are unverified");
  return {&family, tile};
}

std::vector<std::string> list_families() {
  std::vector<std::string> out;
  for (const auto& f : registry()) {
    for (auto p : {PropagatorKind::acoustic_iso, PropagatorKind::acoustic_tti}) {
      if (!implements(f, p)) continue;
      std::ostringstream s;
      s << "cuda " << f.name << (p == PropagatorKind::acoustic_iso ? " acoustic_iso" : " acoustic_tti") << " tiles:";
      for (const auto& t : tunables(f, p)) s << " " << t.x << "x" << t.y << "x" << t.z;
      s << "  (" << f.description << ")";
      if (f.unverified) s << " [unverified: not yet checked on a GPU; auto skips it]";
      out.push_back(s.str());
    }
  }
  return out;
}

std::string kernel_resources(const std::string& kernel, bool tti_kernel, bool constant_axis) {
  const PropagatorKind p = tti_kernel ? PropagatorKind::acoustic_tti : PropagatorKind::acoustic_iso;
  const auto colon = kernel.find(':');
  const auto& f = find_family(kernel.substr(0, colon), p);
  Tile t = tunables(f, p).front();
  if (colon != std::string::npos) std::sscanf(kernel.c_str() + colon + 1, "%dx%dx%d", &t.x, &t.y, &t.z);
  const bool tti = p == PropagatorKind::acoustic_tti;
  const bool axis = tti && constant_axis && f.tti_axis_attributes;
  const auto attributes = axis ? f.tti_axis_attributes : (tti ? f.tti_attributes : f.attributes);
  const auto dynamic_smem = axis ? f.tti_axis_dynamic_smem : (tti ? f.tti_dynamic_smem : f.dynamic_smem);
  if (!attributes) return "?";
  const cudaFuncAttributes a = attributes(t);
  const int dyn = dynamic_smem ? dynamic_smem(t) : 0;
  return std::to_string(a.numRegs) + " regs, " + std::to_string(a.sharedSizeBytes + dyn) + " B smem";
}

double measure_copy_bandwidth() {
  const std::int64_t bytes = 1ll << 30;
  DeviceBuffer<char> a(bytes, "bandwidth test"), b(bytes, "bandwidth test");
  MM_CUDA_CHECK(cudaMemset(a.data(), 1, bytes));
  Event start(true), stop(true);
  for (int warm = 0; warm < 2; ++warm)
    MM_CUDA_CHECK(cudaMemcpy(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice));
  const int reps = 10;
  MM_CUDA_CHECK(cudaEventRecord(start.get(), 0));
  for (int r = 0; r < reps; ++r)
    MM_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, 0));
  MM_CUDA_CHECK(cudaEventRecord(stop.get(), 0));
  MM_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0;
  MM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return 2.0 * bytes * reps / (ms * 1e-3);
}

std::string device_name() {
  int dev = 0;
  MM_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  MM_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  return prop.name;
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::string gib(std::int64_t bytes) {
  std::ostringstream s;
  s.precision(3);
  s << bytes / double(1ll << 30) << " GiB";
  return s.str();
}

void check_launch(const char* what, const char* file, int line) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) {
    static const bool sync = [] {
      const char* v = std::getenv("MINIMOD_SYNC_CHECK");
      return v && std::string(v) == "1";
    }();
    if (sync) err = cudaDeviceSynchronize();
  }
  if (err != cudaSuccess)
    throw_cuda_error(err, what, file, line);
}

}  // namespace minimod::kernels::cuda
