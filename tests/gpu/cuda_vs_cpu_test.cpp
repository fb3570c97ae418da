// CUDA backend against the CPU reference (DESIGN.md §7): every registered family and tile, random
// fields and models, a shape that divides no tile, every grid point checked; the halo must still
// be zero afterwards (no kernel writes outside its region). Skipped where no GPU exists.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include "kernels/backends.hpp"
#include "kernels/cuda/autotune.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/registry.hpp"
#include "physics/cfl.hpp"
#include "physics/error.hpp"
#include "blow_up_check.hpp"
#include "random_problem.hpp"
#include "test_support.hpp"

namespace minimod {
namespace {

using physics::Box3;
using physics::Index3;
using testing::random_field;
using testing::random_problem;
using testing::read_all;

struct Case {
  std::string kernel;  // "family:XxYxZ"
};

std::vector<Case> all_kernels() {
  std::vector<Case> out;
  for (const auto& f : kernels::cuda::families())
    for (const auto& t : f.tunables)
      out.push_back({f.name + ":" + std::to_string(t.x) + "x" + std::to_string(t.y) + "x" +
                     std::to_string(t.z)});
  return out;
}

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  }
};

class CudaFamily : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  }
};

/// Mismatch count, the worst point and its error relative to max |ref|.
::testing::AssertionResult expect_fields_close(const std::vector<float>& ref,
                                               const std::vector<float>& out, Index3 n, double tol) {
  double scale = 0;
  for (float r : ref) scale = std::max(scale, double(std::fabs(r)));
  size_t bad = 0, worst = 0;
  double worst_err = 0;
  for (size_t o = 0; o < ref.size(); ++o) {
    const double e = std::fabs(double(out[o]) - ref[o]) / scale;
    if (!(e <= tol)) ++bad;
    if (!(e <= worst_err)) {
      worst_err = e;
      worst = o;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  const int k = static_cast<int>(worst % n.k), j = static_cast<int>((worst / n.k) % n.j),
            i = static_cast<int>(worst / (size_t(n.k) * n.j));
  return ::testing::AssertionFailure()
         << bad << " of " << ref.size() << " points differ; worst (" << i << ", " << j << ", " << k
         << "): ref " << ref[worst] << ", got " << out[worst] << ", error " << worst_err
         << " of max|ref| (tolerance " << tol << ")";
}


TEST_F(CudaTest, ABlowUpIsLocated) {
  const Index3 n{37, 29, 53}, c{20, 12, 30};
  auto problem = random_problem(21, n, false);
  testing::make_unstable_around(problem.v2dt2, n, c);
  auto gpu = kernels::make_acoustic_iso(problem, "cuda", all_kernels().front().kernel);
  gpu->write_state(random_field(1, problem.grid.points()).data(), random_field(2, problem.grid.points()).data());
  testing::expect_blow_up_located(*gpu, c, {"u"});
}

TEST_P(CudaFamily, OneStepEqualsCpuReferenceAtEveryPoint) {
  for (int variant = 0; variant < 3; ++variant) {
    const bool free_top = variant == 1;
    const auto kind = variant == 2 ? pml::PmlKind::minimod : pml::PmlKind::cpml;
    const unsigned seed = 1234u + variant;
    SCOPED_TRACE("seed " + std::to_string(seed) + (free_top ? ", free surface" : "") +
                 (variant == 2 ? ", Minimod PML" : ", CPML"));
    const Index3 n{37, 29, 53};
    const auto problem = random_problem(seed, n, free_top, kind);
    const auto u_prev = random_field(seed + 1, problem.grid.points());
    const auto u = random_field(seed + 2, problem.grid.points());
    auto cpu = kernels::make_acoustic_iso(problem, "cpu", "reference");
    auto gpu = kernels::make_acoustic_iso(problem, "cuda", GetParam().kernel);
    cpu->write_state(u_prev.data(), u.data());
    gpu->write_state(u_prev.data(), u.data());
    const std::vector<kernels::NodeWeight> source = {{{18, 14, 26}, 0.7f, 0}, {{19, 14, 26}, 0.3f, 0}};
    for (int s = 0; s < 3; ++s) {  // 3 steps: the PML memory fields take part from the second on
      cpu->step(source, 0.5f);
      gpu->step(source, 0.5f);
    }
    // fp32; nvcc contracts multiply-adds into FMAs where the host compiler may not: 1e-5 of max.
    const std::vector<std::string> fields =
        kind == pml::PmlKind::minimod
            ? std::vector<std::string>{"u", "u_prev", "pml_aux"}
            : std::vector<std::string>{"u", "u_prev", "psi_x", "psi_y", "psi_z", "zeta_x", "zeta_y",
                                       "zeta_z"};
    for (const auto& field : fields) {
      SCOPED_TRACE(field);
      EXPECT_TRUE(expect_fields_close(read_all(*cpu, field, problem.grid.box()),
                                      read_all(*gpu, field, problem.grid.box()), n, 1e-5));
    }
    // The halo stays zero (except the free surface's mirror image, checked by the CPU match).
    const Box3 halo_x{{-4, 0, 0}, {4, n.j, n.k}};
    for (float x : read_all(*gpu, "u", halo_x)) ASSERT_EQ(x, 0.0f);
  }
}

TEST_P(CudaFamily, TracesMatchCpuOverManySteps) {
  const Index3 n{41, 33, 47};
  const auto problem = random_problem(77, n, true);
  auto cpu = kernels::make_acoustic_iso(problem, "cpu", "reference");
  auto gpu = kernels::make_acoustic_iso(problem, "cuda", GetParam().kernel);
  std::vector<kernels::NodeWeight> rec = {{{10, 10, 3}, 1.0f, 0}, {{30, 20, 40}, 0.5f, 1},
                                          {{31, 20, 40}, 0.5f, 1}, {{2, 2, 2}, 1.0f, 2}};
  cpu->set_receivers(rec, 3);
  gpu->set_receivers(rec, 3);
  const std::vector<kernels::NodeWeight> source = {{{20, 16, 20}, 1.0f, 0}};
  for (int s = 0; s < 300; ++s) {
    const float amp = static_cast<float>(physics::ricker(s * 1e-3, 25, 0.04));
    cpu->step(source, amp);
    gpu->step(source, amp);
  }
  std::vector<float> a, b;
  cpu->take_traces(a);
  gpu->take_traces(b);
  ASSERT_EQ(a.size(), 300u * 3);
  ASSERT_EQ(b.size(), a.size());
  EXPECT_TRUE(expect_fields_close(a, b, {1, 300, 3}, 1e-4));  // 300 steps of fp32 round-off
}

// Families that advance two steps per launch (KernelFamily::launch_pair): the propagator's pairs
// against single CPU steps, with sources where the second step of a pair needs its correction
// (inside the inner box, on its edges, in the PML, within 4 of the box from outside), an odd step
// count (the state between the halves of a pair is read), the state rewritten between pairs, and
// receivers. Two grids: the pair kernel's box is the inner box with its z+ face moved inward to
// a 32-B boundary of the rows (5 columns) on the first, with both z faces moved (1 and 3
// columns, as Minimod's 27-point layer) on the second: the layer kernel takes those columns.
TEST(CudaTwoStepFamilies, PairsEqualSingleCpuStepsWithSourcesEverywhere) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  int tested = 0;
  for (const auto& f : kernels::cuda::families()) {
    if (f.launch_pair == nullptr) continue;
    for (const auto& t : f.tunables)
    for (const std::array<int, 2> z : {std::array<int, 2>{4, 8}, std::array<int, 2>{27, 9}}) {
      const std::string kernel = f.name + ":" + kernels::cuda::tile_string(t);
      SCOPED_TRACE(kernel + ", z layer " + std::to_string(z[0]) + "/" + std::to_string(z[1]));
      // PML 5/7 (x), 6/3 (y), z: inner box i 5..26, j 6..25, k 4..32 (or 27..62 on 72 points)
      const Index3 n{34, 29, z[0] == 4 ? 41 : 72};
      const auto problem = random_problem(4321u, n, false, pml::PmlKind::minimod, z);
      auto cpu = kernels::make_acoustic_iso(problem, "cpu", "reference");
      auto gpu = kernels::make_acoustic_iso(problem, "cuda", kernel);
      std::vector<kernels::NodeWeight> source = {
          {{15, 14, 20}, 0.6f, 0}, {{5, 14, 20}, 0.2f, 0},  {{26, 10, 18}, 0.3f, 0},
          {{2, 9, 9}, 0.4f, 0},    {{28, 25, 3}, 0.5f, 0},  {{16, 27, 33}, 0.7f, 0},
          {{12, 4, 12}, 0.25f, 0}, {{20, 20, 36}, 0.35f, 0}, {{10, 12, 1}, 0.45f, 0}};
      if (n.k == 72)  // on the columns the layer kernel takes (27; 60..62), next to them, within 4 outside
        source.insert(source.end(), {{{15, 14, 27}, 0.5f, 0}, {{14, 13, 28}, 0.3f, 0}, {{12, 10, 60}, 0.4f, 0},
                                     {{20, 20, 62}, 0.6f, 0}, {{18, 16, 59}, 0.2f, 0}, {{16, 14, 24}, 0.3f, 0}});
      const std::vector<kernels::NodeWeight> rec = {{{15, 14, 20}, 1.0f, 0}, {{3, 3, 3}, 1.0f, 1},
                                                    {{26, 25, 32}, 1.0f, 2}};
      cpu->set_receivers(rec, 3);
      gpu->set_receivers(rec, 3);
      const auto compare = [&](const char* when) {
        SCOPED_TRACE(when);
        for (const std::string field : {"u", "u_prev", "pml_aux"})
          EXPECT_TRUE(expect_fields_close(read_all(*cpu, field, problem.grid.box()),
                                          read_all(*gpu, field, problem.grid.box()), n, 1e-5))
              << field;
      };
      int step = 0;
      const auto run = [&](int steps) {
        for (int s = 0; s < steps; ++s, ++step) {
          const float amp = static_cast<float>(physics::ricker(step * 2e-3, 25, 0.03));
          cpu->step(source, amp);
          gpu->step(source, amp);
        }
      };
      run(7);  // three pairs and the first half of a fourth
      compare("after 7 steps (a pair half done)");
      run(6);
      compare("after 13 steps");
      const auto u_prev = random_field(99, problem.grid.points()), u = random_field(98, problem.grid.points());
      cpu->write_state(u_prev.data(), u.data());  // drops the GPU's waiting half
      gpu->write_state(u_prev.data(), u.data());
      run(4);
      compare("after the state was rewritten and 4 more steps");
      std::vector<float> a, b;
      cpu->take_traces(a);
      gpu->take_traces(b);
      ASSERT_EQ(b.size(), a.size());
      EXPECT_TRUE(expect_fields_close(a, b, {1, 17, 3}, 1e-4));
      ++tested;
    }
  }
  EXPECT_GT(tested, 0) << "no two-step family registered";
}

INSTANTIATE_TEST_SUITE_P(AllFamilies, CudaFamily, ::testing::ValuesIn(all_kernels()),
                         [](const auto& info) {
                           std::string s = info.param.kernel;
                           for (auto& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });


TEST_F(CudaTest, MinimodReferenceReproducedOnGpu) {
  const double e250 = testing::minimod_reference_error(250, "cuda"),
               e1000 = testing::minimod_reference_error(1000, "cuda");
  std::printf("GPU relative L2 error vs Minimod: %.3e (250 steps), %.3e (1000 steps)\n", e250, e1000);
  EXPECT_LE(e250, 1e-4);
  EXPECT_LE(e1000, 1e-3);
}

TEST_F(CudaTest, AnalyticPointSourceOnGpu) {
  auto c = testing::homogeneous_config({106, 61, 61}, 10, 2000, 10);
  c.time.duration = 0.55;
  c.time.cfl = 0.5;
  c.source.position = {300, 300, 300};
  c.output.seismogram_interval = 0.002;
  io::PositionGroupConfig rec;
  rec.points = {{750, 300, 300}};
  c.receivers = {rec};
  const auto shot = testing::run_config(c, "cuda");
  const double r = 450;
  std::vector<double> exact(static_cast<size_t>(shot.run.samples));
  for (size_t s = 0; s < exact.size(); ++s)
    exact[s] = shot.plan.wavelet(s * shot.plan.record_every * shot.plan.dt - r / 2000) / (4 * M_PI * r);
  const double err = testing::relative_l2(shot.trace(0), exact);
  std::printf("GPU analytic relative L2 error %.4f\n", err);
  EXPECT_LE(err, 0.02);
}

TEST_F(CudaTest, RefusesAPlanLargerThanTheGpu) {
  kernels::AcousticIsoProblem p;
  p.grid.shape = {4000, 4000, 4000};  // 1 TiB of fields
  p.grid.spacing = {10, 10, 10};
  try {
    kernels::make_acoustic_iso(p, "cuda", "gmem");
    FAIL() << "expected a refusal";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("GPUs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace minimod
