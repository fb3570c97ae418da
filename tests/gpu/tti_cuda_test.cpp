// Every CUDA acoustic-TTI kernel family and tile against the CPU reference (DESIGN.md §7): random
// smooth models with varying tilt (beyond 90 degrees too) and azimuth, eps >= delta, random
// initial p and q, the PML with and without a free surface, a shape that divides no tile; every
// point of p and q and every trace sample checked. Skipped where no GPU exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kernels/backends.hpp"
#include "kernels/cuda/autotune.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/tti_propagator.hpp"
#include "physics/error.hpp"
#include "physics/tti.hpp"
#include "pml/cpml.hpp"
#include "blow_up_check.hpp"
#include "differences.hpp"
#include "random_problem.hpp"

namespace minimod {
namespace {

using physics::Index3;

/// "family:XxYxZ" for every tile of every family that implements acoustic_tti on any model
/// (`vti_only`: of those that take VTI models only).
std::vector<std::string> tti_kernels(bool vti_only = false) {
  std::vector<std::string> out;
  for (const auto& f : kernels::cuda::families())
    if (kernels::cuda::implements(f, kernels::cuda::PropagatorKind::acoustic_tti) && f.tti_vti_only == vti_only)
      for (const auto& t : f.tti_tunables) out.push_back(f.name + ":" + kernels::cuda::tile_string(t));
  return out;
}

/// random_tti with its axis vertical everywhere (VTI: delta, eps and vp still vary), which
/// finish_problem marks, so that the propagators take the VTI form (physics::vti_rhs25).
kernels::AcousticTtiProblem made_vti(kernels::AcousticTtiProblem p) {
  std::fill(p.theta.begin(), p.theta.end(), 0.0f);
  kernels::finish_problem(p);
  return p;
}

/// random_tti with one axis everywhere, tilted off the grid's planes (tilt 0.9, azimuth 2.2 rad;
/// delta, eps and vp still vary), which finish_problem marks, so that swic_split_tma takes the
/// constant-axis form (physics::tti_rhs73_axis).
kernels::AcousticTtiProblem made_constant_axis(kernels::AcousticTtiProblem p) {
  std::fill(p.theta.begin(), p.theta.end(), 0.9f);
  std::fill(p.phi.begin(), p.phi.end(), 2.2f);
  kernels::finish_problem(p);
  return p;
}

/// The model's axis: random_tti's (varying), vertical everywhere (made_vti) or one tilted axis
/// everywhere (made_constant_axis).
enum class Axis { varying, vertical, constant };

/// On a vertical or constant axis, the GPU's forms for it against the CPU's 73-point form (the
/// flags cleared). `pml_hi`: the layer's widths on the high faces (random_tti's by default).
void expect_equal_to_cpu(const std::string& kernel, const Index3& n, unsigned seed, bool cpml = false,
                         Axis axis = Axis::varying, const std::array<int, 3>& pml_hi = testing::kRandomTtiPmlHi,
                         kernels::TtiLayerAxis layer_axis = kernels::TtiLayerAxis::model) {
  const char* const axis_names[] = {"", " (VTI)", " (constant axis)"};
  for (const bool free_top : {false, true}) {
    const bool vertical_layer = layer_axis == kernels::TtiLayerAxis::vertical;
    SCOPED_TRACE(kernel + (free_top ? " (free top)" : "") + (cpml ? " (CPML layer)" : "") +
                 (vertical_layer ? " (its axis vertical)" : "") + axis_names[static_cast<int>(axis)]);
    auto random = testing::random_tti(seed, n, free_top, pml_hi);
    if (axis == Axis::vertical) random = made_vti(random);
    if (axis == Axis::constant) random = made_constant_axis(random);
    ASSERT_EQ(random.vti, axis == Axis::vertical);
    ASSERT_EQ(random.constant_axis, axis != Axis::varying);
    const auto problem = cpml ? testing::with_cpml_layer(random, layer_axis) : random;
    // A vertical layer axis turns a tilted constant axis into a varying one; VTI stays VTI.
    if (vertical_layer) ASSERT_EQ(problem.constant_axis, axis == Axis::vertical);
    auto general = problem;
    general.vti = false;
    general.constant_axis = false;
    auto cpu = kernels::make_cpu_acoustic_tti(general);
    auto gpu = kernels::make_acoustic_tti(problem, "cuda", kernel);
    const auto pts = problem.grid.points();
    const auto box = problem.grid.box();
    // Source and receivers inside any shape (the small one too).
    const Index3 c{n.i / 2, n.j / 2, n.k / 2};
    std::vector<kernels::NodeWeight> rec, src = {{c, 0.7f, 0}, {{c.i + 1, c.j, c.k}, 0.3f, 0}};
    for (int r = 0; r < 9; ++r)
      rec.push_back({{(4 * r + 1) % n.i, (3 * r) % n.j, (5 * r + 2) % n.k}, 0.5f + 0.1f * r, r});
    for (auto* prop : {cpu.get(), gpu.get()}) {
      prop->write_state(testing::random_field(1, pts).data(), testing::random_field(2, pts).data());
      prop->write_field("q_prev", box, testing::random_field(3, pts).data());
      prop->write_field("q", box, testing::random_field(4, pts).data());
      prop->set_receivers(rec, 9);
      for (int s = 0; s < 25; ++s) prop->step(src, std::sin(0.3f * s));
    }
    for (const char* f : {"p", "p_prev", "q", "q_prev", "aux_p", "aux_q"}) {
      const auto a = testing::read_all(*cpu, f, box), b = testing::read_all(*gpu, f, box);
      double scale = 0;
      for (size_t e = 0; e < a.size(); ++e) scale = std::max(scale, double(std::fabs(a[e])));
      const double worst = testing::max_difference(a, b);
      EXPECT_LE(worst, 2e-5 * std::max(scale, 1e-30)) << f << ": max |diff| " << worst << " of max " << scale;
    }
    std::vector<float> ta, tb;
    cpu->take_traces(ta);
    gpu->take_traces(tb);
    ASSERT_EQ(ta.size(), tb.size());
    double scale = 0;
    for (size_t e = 0; e < ta.size(); ++e) scale = std::max(scale, double(std::fabs(ta[e])));
    const double worst = testing::max_difference(ta, tb);
    EXPECT_LE(worst, 2e-5 * scale) << "traces";
  }
}

TEST(CudaTti, EveryFamilyEqualsTheCpuReferenceAtEveryPoint) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  const auto all = tti_kernels();
  ASSERT_GE(all.size(), 2u);
  for (const auto& kernel : all) expect_equal_to_cpu(kernel, {37, 29, 43}, 77);
}

TEST(CudaTti, TheCpmlLayerEqualsTheCpuReferenceAtEveryPoint) {
  // The family on the inner box, the layer by the CPML's two passes (kernels/tti_cpml.hpp).
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  for (const auto& kernel : tti_kernels())
    if (kernel.rfind("gmem", 0) == 0 || kernel.rfind("swic_split_tma:32x8", 0) == 0 ||
        kernel.rfind("swic_split_tma:32x16", 0) == 0)
      expect_equal_to_cpu(kernel, {37, 29, 43}, 77, true);
  expect_equal_to_cpu("swic", {14, 20, 13}, 5, true);  // inner region 2 x 11 x 1: partial tiles
  // swic_split_tma's CPML launch in narrow tiles on the k faces (8 x 16 up to 8 points deep, 16 x
  // 8 up to 16): the low k face 4 deep (none under a free top), the high one 13; 8 deep above.
  expect_equal_to_cpu("swic_split_tma:32x16x64", {37, 29, 43}, 80, true, Axis::varying, {7, 3, 13});
}

TEST(CudaTti, AVerticalLayerAxisEqualsTheCpuReferenceAtEveryPoint) {
  // boundary.pml.tti_axis: vertical (kernels::TtiLayerAxis): the layer's medium only changes, so
  // the families take a tilted constant-axis model's varying-axis forms and a VTI model's VTI ones.
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  const auto vertical = kernels::TtiLayerAxis::vertical;
  for (const char* kernel : {"gmem:32x8x1", "swic_split_tma:32x8x512", "swic_split_tma:32x16x64"}) {
    expect_equal_to_cpu(kernel, {37, 29, 43}, 83, true, Axis::constant, testing::kRandomTtiPmlHi, vertical);
    expect_equal_to_cpu(kernel, {37, 29, 43}, 84, true, Axis::varying, testing::kRandomTtiPmlHi, vertical);
  }
  for (const auto& kernel : tti_kernels(true))
    expect_equal_to_cpu(kernel, {37, 29, 43}, 85, true, Axis::vertical, testing::kRandomTtiPmlHi, vertical);
}

TEST(CudaTti, VtiModelsEqualTheCpusSeventyThreePointFormAtEveryPoint) {
  // The point kernels (gmem; the CPML's pass 2) and the families for VTI models only (streaming)
  // take the VTI form where the model is VTI, the staging families keep the 73-point one: all
  // against the CPU's 73-point form, also where the tiles overhang a small region.
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  const auto vti_only = tti_kernels(true);
  ASSERT_FALSE(vti_only.empty());
  for (const auto& kernel : vti_only)
    for (const bool cpml : {false, true}) expect_equal_to_cpu(kernel, {37, 29, 43}, 78, cpml, Axis::vertical);
  for (const auto& kernel : tti_kernels())
    if (kernel.rfind("gmem", 0) == 0 || kernel.rfind("swic_split_tma:32x16", 0) == 0)
      for (const bool cpml : {false, true}) expect_equal_to_cpu(kernel, {37, 29, 43}, 78, cpml, Axis::vertical);
  for (const auto& kernel : vti_only) expect_equal_to_cpu(kernel, {14, 20, 13}, 5, false, Axis::vertical);
  // The CPML passes' narrow blocks on the k faces (streaming: 8 x 16 up to 8 points deep, 16 x 8
  // up to 16): the low k face 4 deep (none under a free top), the high one 13; 8 deep above.
  for (const auto& kernel : vti_only) expect_equal_to_cpu(kernel, {37, 29, 43}, 80, true, Axis::vertical, {7, 3, 13});
  // Chunks of 5 planes along i: each column starts its queue and its loads a plane ahead anew.
  for (const auto& kernel : vti_only) {
    const std::string chunked = kernel.substr(0, kernel.rfind('x') + 1) + "5";
    for (const bool cpml : {false, true}) expect_equal_to_cpu(chunked, {37, 29, 43}, 79, cpml, Axis::vertical);
  }
  // On a tilted model a family for VTI models only is refused by name.
  try {
    kernels::make_acoustic_tti(testing::random_tti(5, {14, 20, 13}, false), "cuda", vti_only.front());
    ADD_FAILURE() << vti_only.front() << " accepted a tilted model";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("execution.kernel"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("VTI"), std::string::npos) << e.what();
  }
}

TEST(CudaTti, ConstantAxisModelsEqualTheCpusSeventyThreePointFormAtEveryPoint) {
  // swic_split_tma takes the constant-axis form (s, p, p / a staged, three sums an output) on
  // every tile, with the sponge and on the CPML's inner box, with chunks of 5 planes, and where
  // its tiles overhang a small region; the other families keep their forms.
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  for (const auto& kernel : tti_kernels()) {
    if (kernel.rfind("swic_split_tma", 0) != 0 && kernel.rfind("gmem", 0) != 0) continue;
    expect_equal_to_cpu(kernel, {37, 29, 43}, 81, false, Axis::constant);
    if (kernel.rfind("swic_split_tma:32x16", 0) == 0 || kernel.rfind("gmem", 0) == 0)
      expect_equal_to_cpu(kernel, {37, 29, 43}, 81, true, Axis::constant);
  }
  expect_equal_to_cpu("swic_split_tma:32x16x5", {37, 29, 43}, 82, true, Axis::constant);
  expect_equal_to_cpu("swic_split_tma:32x8x64", {14, 20, 13}, 5, false, Axis::constant);
  expect_equal_to_cpu("swic_split_tma:32x8x64", {14, 20, 13}, 5, true, Axis::constant);
}

TEST(CudaTti, FamiliesHandleTilesLargerThanTheRegion) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  // Inner region 2 x 11 x 1 points (PML 5+7, 6+3, 4+8): partial tiles everywhere.
  for (const auto& f : kernels::cuda::families())
    if (kernels::cuda::implements(f, kernels::cuda::PropagatorKind::acoustic_tti) && !f.tti_vti_only)
      expect_equal_to_cpu(f.name, {14, 20, 13}, 5);
}

TEST(CudaTti, ABlowUpIsLocated) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  const Index3 n{24, 20, 28}, c{14, 9, 17};
  auto problem = testing::random_tti(5, n, false);
  testing::make_unstable_around(problem.v2dt2, n, c);
  auto gpu = kernels::make_acoustic_tti(problem, "cuda", tti_kernels().front());
  const auto pts = problem.grid.points();
  gpu->write_state(testing::random_field(1, pts).data(), testing::random_field(2, pts).data());
  testing::expect_blow_up_located(*gpu, c, {"p", "q"});
}

TEST(CudaTti, AutoPicksARegisteredFamilyAndRuns) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  ::setenv("MINIMOD_AUTOTUNE_CACHE", "", 1);  // no cache: time every candidate
  const auto problem = testing::random_tti(9, {40, 36, 44}, false);
  auto gpu = kernels::make_acoustic_tti(problem, "cuda", "auto");
  const auto outcome = kernels::cuda::last_tuning();
  ASSERT_FALSE(outcome.table.empty());
  EXPECT_EQ(gpu->kernel(), outcome.best().family + " " + kernels::cuda::tile_string(outcome.best().tile));
  EXPECT_NO_THROW(kernels::cuda::find_family(outcome.best().family, kernels::cuda::PropagatorKind::acoustic_tti));
  for (const auto& r : outcome.table) EXPECT_GE(outcome.best().gpts, r.gpts);
  // Reset to rest after tuning: stepping without a source keeps p exactly zero.
  gpu->step({}, 0.0f);
  EXPECT_EQ(gpu->health().max_abs, 0.0f);
}

}  // namespace
}  // namespace minimod
