#include "app/plan.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include "io/model_file.hpp"
#include "kernels/backends.hpp"
#include "kernels/tti_cpml.hpp"
#include "physics/cfl.hpp"
#include "physics/error.hpp"
#include "physics/model.hpp"
#include "physics/point_stencil.hpp"
#include "physics/view3.hpp"

namespace minimod::app {
namespace {

using physics::Index3;
using physics::Point3;

// Minimod's benchmark constants (notes/sai2020-digest.md §1.3-1.4; reference/minimod/PROVENANCE.md).
constexpr double kMinimodVmax = 4500.0;  // m/s: used for dt and the PML, whatever the model
constexpr double kMinimodCfl = 0.8;
constexpr double kPpwWarning = 6.0;      // points per shortest wavelength below which we warn

[[noreturn]] void fail(const io::Config& c, const std::string& key, const std::string& msg) {
  throw ConfigError(io::config_error_message(c, key, msg));
}

std::string fmt(double x) {
  std::ostringstream s;
  s.precision(6);
  s << x;
  return s.str();
}

/// The parameter over `box` of the model of `shape` (C order over the box).
std::vector<float> build_parameter(const io::Config& c, const io::ParameterConfig& p, const std::string& key,
                                   const Index3& shape, const physics::Box3& box, double dz) {
  switch (p.kind) {
    case io::ParameterConfig::Kind::constant:
      return std::vector<float>(static_cast<size_t>(box.points()), static_cast<float>(p.constant));
    case io::ParameterConfig::Kind::layers: {
      std::vector<physics::Layer> layers;
      for (const auto& l : p.layers) layers.push_back({l.top, l.value});
      return physics::layered_values(box, dz, layers);
    }
    case io::ParameterConfig::Kind::file:
      if (box == physics::Box3{{0, 0, 0}, shape})
        return io::read_model_dataset(p.file, p.dataset, {shape.i, shape.j, shape.k}, key);
      return io::read_model_dataset(p.file, p.dataset, {shape.i, shape.j, shape.k}, key,
                                    {box.lo.i, box.lo.j, box.lo.k}, {box.n.i, box.n.j, box.n.k});
  }
  fail(c, key, "unknown parameter kind");
}

/// The part of the model a plan builds, and how its figures become the whole model's
/// (ModelShare). Without a share: the whole model, and the figures are already whole.
struct Window {
  const ModelShare* share = nullptr;
  physics::Box3 box;     // grid: the rank's part (the whole grid)
  physics::Box3 stored;  // grid: the problems' arrays, box grown by the radius within the grid
  physics::Box3 built;   // model: the points the stored window and its medium read, grown by one
                         // (the axis-turn scan reads each point's face neighbours)
  physics::Box3 owned;   // model: the points whose figures this rank counts (box less the padding)

  static Window make(const ModelShare* share, const physics::Box3& grid, const Index3& model,
                     const std::array<int, 3>& pad_lo) {
    Window w;
    w.share = share;
    const physics::Box3 whole_model{{0, 0, 0}, model};
    if (!share) {
      w.box = w.stored = grid;
      w.built = w.owned = whole_model;
      return w;
    }
    w.box = share->box;
    w.stored = physics::intersect(physics::grown(w.box, physics::kRadius), grid);
    const physics::Box3 medium = physics::grown(w.stored, physics::kRadius);
    Index3 lo, hi;
    for (int a = 0; a < 3; ++a) {
      const auto at = [&](int g) { return std::clamp(g - pad_lo[static_cast<size_t>(a)], 0, model[a] - 1); };
      lo[a] = at(medium.lo[a]);
      hi[a] = at(medium.hi()[a] - 1) + 1;
    }
    w.built = physics::intersect(physics::grown(physics::box_from_bounds(lo, hi), 1), whole_model);
    w.owned = physics::intersect(
        {{w.box.lo.i - pad_lo[0], w.box.lo.j - pad_lo[1], w.box.lo.k - pad_lo[2]}, w.box.n}, whole_model);
    return w;
  }

  /// The whole model's figures from this rank's (in place): op '+', '<' or '>' (ModelShare::combine).
  void combine(std::vector<double>& v, char op) const {
    if (share) share->combine(v, op);
  }
  double combined(double x, char op) const {
    std::vector<double> v{x};
    combine(v, op);
    return v[0];
  }
  /// Runs `build`; a ConfigError it throws on any rank is thrown on every rank (the lowest's).
  template <class F>
  void agree(const F& build) const {
    std::string error;
    try {
      build();
    } catch (const ConfigError& e) {
      if (!share) throw;
      error = e.what();
    }
    if (share) error = share->first_error(error);
    if (!error.empty()) throw ConfigError(error);
  }
  /// The parameter over the built box, any rank's error thrown on all.
  std::vector<float> parameter(const io::Config& c, const io::ParameterConfig& p, const std::string& key,
                               const Index3& shape, double dz) const {
    std::vector<float> v;
    agree([&] { v = build_parameter(c, p, key, shape, built, dz); });
    return v;
  }
  /// Whether model point p (model coordinates) is this rank's to count.
  bool owns(const Index3& p) const { return owned.contains(p.i, p.j, p.k); }
  /// The built box's point at offset o, in model coordinates.
  Index3 built_point(std::int64_t o) const {
    const Index3 n = built.n;
    return {built.lo.i + static_cast<int>(o / n.k / n.j), built.lo.j + static_cast<int>(o / n.k % n.j),
            built.lo.k + static_cast<int>(o % n.k)};
  }
  /// A stored array's value at grid point g, on every rank (the rank whose box holds g gives it).
  double at_grid(const std::vector<float>& stored_values, const Index3& g) const {
    const bool mine = box.contains(g.i, g.j, g.k);
    const double x = mine ? stored_values[static_cast<size_t>(stored.position(g.i, g.j, g.k))] : 0.0;
    return share ? combined(x, '+') : x;
  }
};

/// The model's coordinates are metres from its first point; the position must lie in the model.
void check_inside(const io::Config& c, const std::string& key, const Point3& x,
                  const Index3& model_shape, const std::array<double, 3>& h,
                  const std::string& which = "") {
  static const char* kAxis[] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    const double hi = (model_shape[a] - 1) * h[a];
    if (!(x[a] >= -1e-9 * h[a] && x[a] <= hi + 1e-9 * h[a])) {
      fail(c, key,
           std::string(kAxis[a]) + " = " + fmt(x[a]) + " m lies outside the model [0, " + fmt(hi) +
               "] m" + which);
    }
  }
}

}  // namespace

void check_shot_positions(const io::Config& c, const std::vector<Point3>& shots) {
  const Index3 model{c.grid.shape[0], c.grid.shape[1], c.grid.shape[2]};
  for (size_t s = 0; s < shots.size(); ++s)
    check_inside(c, "shots", shots[s], model, c.grid.spacing,
                 " (shot " + std::to_string(s) + " of " + std::to_string(shots.size()) + ")");
}

std::vector<Point3> positions_of(const std::vector<io::PositionGroupConfig>& groups) {
  std::vector<Point3> out;
  for (const auto& g : groups) {
    switch (g.kind) {
      case io::PositionGroupConfig::Kind::points:
        for (const auto& p : g.points) out.push_back(p);
        break;
      case io::PositionGroupConfig::Kind::line: {
        const int n = g.count[0];
        for (int r = 0; r < n; ++r) {
          const double f = n > 1 ? static_cast<double>(r) / (n - 1) : 0.0;
          out.push_back({g.start[0] + f * (g.end[0] - g.start[0]),
                         g.start[1] + f * (g.end[1] - g.start[1]),
                         g.start[2] + f * (g.end[2] - g.start[2])});
        }
        break;
      }
      case io::PositionGroupConfig::Kind::grid:
        for (int a = 0; a < g.count[0]; ++a)
          for (int b = 0; b < g.count[1]; ++b)
            for (int d = 0; d < g.count[2]; ++d) {
              auto frac = [](int i, int n) { return n > 1 ? static_cast<double>(i) / (n - 1) : 0.0; };
              out.push_back({g.start[0] + frac(a, g.count[0]) * (g.end[0] - g.start[0]),
                             g.start[1] + frac(b, g.count[1]) * (g.end[1] - g.start[1]),
                             g.start[2] + frac(d, g.count[2]) * (g.end[2] - g.start[2])});
            }
        break;
    }
  }
  return out;
}

namespace {

/// The model point of C-order index o in a model of `shape`.
Index3 model_point(std::int64_t o, const Index3& shape) {
  return Index3{static_cast<int>(o / shape.k / shape.j), static_cast<int>(o / shape.k % shape.j),
                static_cast<int>(o % shape.k)};
}
/// "(x, y, z) m": where that point lies, in model coordinates, for messages.
std::string model_point_where(std::int64_t o, const Index3& shape, const std::array<double, 3>& h) {
  const Index3 p = model_point(o, shape);
  return "(" + fmt(p.i * h[0]) + ", " + fmt(p.j * h[1]) + ", " + fmt(p.k * h[2]) + ") m";
}

/// TTI parameters on the model grid (angles in radians), after the isotropic zone and, with
/// model.epsilon_below_delta: clamp, with delta lowered to epsilon where it exceeded it.
struct TtiModel {
  std::vector<float> eps, delta, theta, phi;
  double eps_max = 0, delta_min = 0, delta_max = 0;
  std::int64_t clamped = 0;  // points where delta was lowered to epsilon
  physics::AxisTurns turns;  // against model.elliptic_where_axis_turns, or kAxisTurnWarning
  std::int64_t turns_at_layer = 0;  // of turns.above, within kTurnNearLayer points of a face with a layer
};

/// Points: a turn this close to a model face that has a layer reaches the layer (the padding
/// extends the face's axes through it, and the operator reads this far).
constexpr int kTurnNearLayer = physics::kRadius;

/// Whether the acoustic_tti layer is the CPML (boundary.pml.tti, or app::kDefaultTtiLayer).
bool tti_layer_is_cpml(const io::Config& c) {
  return (c.boundary.tti_layer.empty() ? std::string(kDefaultTtiLayer) : c.boundary.tti_layer) == "cpml";
}

/// Degrees: without model.elliptic_where_axis_turns the plan warns of points whose symmetry axis
/// turns by more than this toward a face neighbour. Blocks of random axes grew without bound
/// (Tti.WhereTheAxisJumpsEllipticPointsKeepTheFieldBounded); a cone of +-20 degrees did not,
/// +-30 did; a single plane where the tilt jumps by up to 90 degrees did not either.
constexpr double kAxisTurnWarning = 30;

/// The TTI model over the window's built box; its figures (ranges, counts, first points) those of
/// the whole model, each rank counting its owned points.
TtiModel build_tti_model(const io::Config& c, const Index3& shape, const std::array<double, 3>& h,
                         const pml::PmlWidths& layer, const Window& win) {
  TtiModel m;
  m.eps = win.parameter(c, c.model.epsilon, "model.epsilon", shape, h[2]);
  m.delta = win.parameter(c, c.model.delta, "model.delta", shape, h[2]);
  m.theta = win.parameter(c, c.model.theta, "model.theta", shape, h[2]);
  m.phi = win.parameter(c, c.model.phi, "model.phi", shape, h[2]);
  // Angles read from files are in the dataset's units; constants and layers are radians already.
  for (const auto& angle : {std::make_pair(&m.theta, &c.model.theta), std::make_pair(&m.phi, &c.model.phi)})
    if (angle.second->scale != 1.0)
      for (auto& x : *angle.first) x = static_cast<float>(x * angle.second->scale);
  // C-order index in the whole model of the built box's point at offset o.
  const auto model_index = [&](std::int64_t o) {
    const Index3 p = win.built_point(o);
    return (static_cast<std::int64_t>(p.i) * shape.j + p.j) * shape.k + p.k;
  };
  // Where the axis turns sharply: counted against the limit, and with model.elliptic_where_axis_turns
  // made elliptic (epsilon = delta: q's source vanishes there). Constant angles turn nowhere. In a
  // window every built point but those on its own edge (within the model) sees all its neighbours,
  // and those are read nowhere: its points are marked as in the whole model.
  const double turn_limit = c.model.elliptic_where_axis_turns > 0 ? c.model.elliptic_where_axis_turns : kAxisTurnWarning;
  if (c.model.theta.kind != io::ParameterConfig::Kind::constant || c.model.phi.kind != io::ParameterConfig::Kind::constant)
  {
    const auto near_layer = [&](const Index3& p) {
      for (int a = 0; a < 3; ++a)
        if ((layer.lo[static_cast<size_t>(a)] > 0 && p[a] < kTurnNearLayer) ||
            (layer.hi[static_cast<size_t>(a)] > 0 && p[a] >= shape[a] - kTurnNearLayer))
          return true;
      return false;
    };
    std::atomic<std::int64_t> above{0}, at_layer{0}, first{-1};
    const physics::AxisTurns built = physics::scan_axis_turns(m.theta, m.phi, win.built.n, turn_limit, [&](std::int64_t o) {
      if (c.model.elliptic_where_axis_turns > 0) m.eps[static_cast<size_t>(o)] = m.delta[static_cast<size_t>(o)];
      const Index3 p = win.built_point(o);
      if (!win.owns(p)) return;
      above.fetch_add(1, std::memory_order_relaxed);
      if (near_layer(p)) at_layer.fetch_add(1, std::memory_order_relaxed);
      const std::int64_t x = model_index(o);
      std::int64_t seen = first.load();
      while ((seen < 0 || x < seen) && !first.compare_exchange_weak(seen, x)) {
      }
    });
    // Every pair of face neighbours lies in some rank's built box: the largest turn is the
    // largest of the ranks'.
    std::vector<double> counts{double(above.load()), double(at_layer.load())};
    win.combine(counts, '+');
    m.turns.above = static_cast<std::int64_t>(counts[0]);
    m.turns_at_layer = static_cast<std::int64_t>(counts[1]);
    m.turns.max_degrees = win.combined(built.max_degrees, '>');
    const double none = 1e300, own_first = first.load() < 0 ? none : double(first.load());
    const double whole_first = win.combined(own_first, '<');
    m.turns.first = whole_first == none ? -1 : static_cast<std::int64_t>(whole_first);
  }
  // Isotropic zone: eps = delta within the radius of the source (no shear artefact from it).
  const double radius = c.model.isotropic_radius;
  const bool clamp = c.model.epsilon_below_delta == "clamp";
  const auto& src = c.source.position;
  // One pass over the built points (OpenMP): the first invalid point and the first with epsilon <
  // delta in the model's C order, as a serial pass would find them, and the ranges, over the
  // owned points; the zone and the clamp everywhere.
  const std::int64_t points = static_cast<std::int64_t>(m.eps.size());
  const double none = 1e300;
  double first_invalid = none, first_below = none, clamped = 0;
  double eps_max = -1e30, delta_min = 1e30, delta_max = -1e30;
#pragma omp parallel for schedule(static) reduction(min : first_invalid, first_below, delta_min) \
    reduction(max : eps_max, delta_max) reduction(+ : clamped)
  for (std::int64_t o = 0; o < points; ++o) {
    const auto x = static_cast<size_t>(o);
    const Index3 p = win.built_point(o);
    const bool own = win.owns(p);
    const double dx = p.i * h[0] - src[0], dy = p.j * h[1] - src[1], dz = p.k * h[2] - src[2];
    if (radius > 0 && dx * dx + dy * dy + dz * dz <= radius * radius) m.eps[x] = m.delta[x];
    if (!(1 + 2 * double(m.delta[x]) > 0) || !std::isfinite(m.eps[x]) || !std::isfinite(m.delta[x]) ||
        !std::isfinite(m.theta[x]) || !std::isfinite(m.phi[x])) {
      if (own) first_invalid = std::min(first_invalid, double(model_index(o)));
      continue;
    }
    if (m.eps[x] < m.delta[x]) {
      if (own) {
        ++clamped;
        first_below = std::min(first_below, double(model_index(o)));
      }
      if (clamp) m.delta[x] = m.eps[x];
    }
    if (!own) continue;
    const double e = m.eps[x], d = m.delta[x];
    eps_max = std::max(eps_max, e);
    delta_min = std::min(delta_min, d);
    delta_max = std::max(delta_max, d);
  }
  std::vector<double> least{first_invalid, first_below, delta_min}, most{eps_max, delta_max};
  win.combine(least, '<');
  win.combine(most, '>');
  const auto where = [&](double o) { return model_point_where(static_cast<std::int64_t>(o), shape, h); };
  if (least[0] != none) fail(c, "model.delta", "delta must be > -0.5 and every TTI parameter finite, at " + where(least[0]));
  m.eps_max = most[0];
  m.delta_min = least[2];
  m.delta_max = most[1];
  m.clamped = static_cast<std::int64_t>(win.combined(clamped, '+'));
  if (m.clamped > 0 && !clamp) {
    // Unclamped: the values as the model gives them, from the rank that owns the point.
    const Index3 b = model_point(static_cast<std::int64_t>(least[1]), shape);
    const bool mine = win.owns(b);
    const auto x = mine ? static_cast<size_t>(win.built.position(b.i, b.j, b.k)) : 0;
    std::vector<double> at{mine ? double(m.eps[x]) : 0.0, mine ? double(m.delta[x]) : 0.0};
    win.combine(at, '+');
    fail(c, "model.epsilon",
         "epsilon " + fmt(at[0]) + " < delta " + fmt(at[1]) + " at " + where(least[1]) +
             " (and at " + std::to_string(m.clamped - 1) +
             " more points): the pseudo-acoustic TTI system is unstable where epsilon < delta (raise "
             "epsilon or lower delta there, or set model.epsilon_below_delta: clamp to lower delta to "
             "epsilon at those points)");
  }
  return m;
}

/// The value of `key` (in kB) of a /proc file of `key value kB` lines, in bytes; 0 where absent.
std::int64_t proc_kib(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::atoll(line.c_str() + key.size()) * 1024;
  return 0;
}

/// The TTI problem on the simulation grid: the model padded like vp, Minimod's damping profiles
/// in the padding (the TTI layer, kernels/tti_propagator.hpp), receivers on p or q.
void finish_tti(const io::Config& c, RunPlan& plan, TtiModel& m, const Window& win) {
  auto& t = plan.tti_problem;
  const auto& iso = plan.problem;
  t.grid = iso.grid;
  t.pml = iso.pml;
  t.free_surface = iso.free_surface;
  const double fastest = plan.vp_max * std::sqrt(1 + 2 * std::max(0.0, plan.eps_max));
  t.damping = pml::make_damping_profiles(t.grid.shape, t.grid.spacing, t.pml,
                                         kernels::tti_layer_profile(plan.dt, fastest));
  t.v2dt2 = std::move(plan.problem.v2dt2);  // a TTI run's only copy (4 GB at 1000^3)
  if (win.share) t.stored = win.stored;
  auto pad = [&](std::vector<float>& v) {
    auto out = physics::pad_with_edges(v, win.built, plan.model_shape, plan.pad_lo, win.stored);
    std::vector<float>().swap(v);
    return out;
  };
  t.theta = pad(m.theta);
  t.phi = pad(m.phi);
  // The layer is as anisotropic as the model's edge. a and b take the padded delta's and
  // epsilon's places (two grid-sized arrays less at the plan's peak).
  t.b = pad(m.eps);
  t.a = pad(m.delta);
  const std::int64_t points = static_cast<std::int64_t>(t.a.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t n = 0; n < points; ++n) {
    const auto x = static_cast<size_t>(n);
    const float eps = t.b[x], delta = t.a[x];
    t.a[x] = 1.0f + 2.0f * delta;
    t.b[x] = 2.0f * (eps - delta);
  }
  t.record_q = c.output.record == "q";
  kernels::finish_problem(t);
  if (tti_layer_is_cpml(c)) {
    pml::CpmlParams cp;
    cp.dt = plan.dt;
    cp.velocity = c.boundary.pml_velocity.value_or(fastest);
    cp.reflection = c.boundary.pml_reflection;
    cp.frequency = c.source.frequency;
    kernels::use_cpml_layer(t, cp, c.boundary.tti_layer_axis == "vertical" ? kernels::TtiLayerAxis::vertical
                                                                        : kernels::TtiLayerAxis::model);
  }
  if (win.share) {
    // The whole model's flags: vertical on every rank's window; one axis there, and the same on all.
    const physics::TtiMediumPoint n = kernels::model_axis(t);
    std::vector<double> least{double(t.vti), double(t.constant_axis), n.nx, n.ny, n.nz}, most{n.nx, n.ny, n.nz};
    win.combine(least, '<');
    win.combine(most, '>');
    t.vti = least[0] > 0;
    t.constant_axis = least[1] > 0 && least[2] == most[0] && least[3] == most[1] && least[4] == most[2];
  }
}

}  // namespace

std::int64_t estimate_field_bytes(const Index3& shape, pml::PmlKind kind, bool two_step) {
  const auto layout = physics::FieldLayout::make({{0, 0, 0}, shape}, physics::kRadius);
  return kernels::iso_wavefield_arrays(kind, two_step) * layout.elements() * static_cast<std::int64_t>(sizeof(float));
}

std::int64_t estimate_tti_bytes(const kernels::AcousticTtiProblem& t) {
  const auto layout = physics::FieldLayout::make({{0, 0, 0}, t.grid.shape}, physics::kRadius);
  // p, q at two time levels, two auxiliary fields, (v dt)^2, b and the medium nx, ny, nz, 1/a.
  // A CUDA family that reads the split form's centre weights (swic_split, named explicitly) adds
  // two arrays; the CUDA propagator checks the real total against the GPU before allocating. The
  // CPML layer adds its memory fields over the layer's points (kernels/tti_cpml.hpp).
  std::int64_t floats = 12 * layout.elements();
  if (t.layer == kernels::TtiLayer::cpml) {
    floats += kernels::kTtiCpmlFields * kernels::LayerIndex::make(t.grid.shape, kernels::inner_box(t)).count;
  }
  return floats * static_cast<std::int64_t>(sizeof(float));
}

void release_model_arrays(RunPlan& plan) {
  auto& t = plan.tti_problem;
  for (auto* v : {&plan.problem.v2dt2, &t.v2dt2, &t.b, &t.theta, &t.phi, &t.a}) std::vector<float>().swap(*v);
}

std::int64_t available_host_bytes() { return proc_kib("/proc/meminfo", "MemAvailable:"); }

std::int64_t peak_resident_bytes() { return proc_kib("/proc/self/status", "VmHWM:"); }

std::string host_memory_warning(std::int64_t need, std::int64_t available) {
  if (available <= 0 || need <= available) return "";
  return "host memory: this run needs about " + fmt(need / double(1 << 30)) + " GiB at its peak and " +
         fmt(available / double(1 << 30)) +
         " GiB are available (MemAvailable): it may be killed for want of memory";
}

std::int64_t estimate_building_bytes(const RunPlan& plan) {
  const auto& grid = plan.problem.grid;
  const double points = static_cast<double>(grid.points()), model = static_cast<double>(plan.model_shape.i) *
                                                                        plan.model_shape.j * plan.model_shape.k;
  // (isotropic: the plan's (v dt)^2 and the propagator's copy of its problem, while it lays it out)
  if (!plan.tti) return static_cast<std::int64_t>(4 * (model + points));
  const double medium = static_cast<double>(kernels::medium_box(grid).points());
  // vp, eps, delta and the angles on the model while vp is padded; (v dt)^2 and the last model
  // array padded; (v dt)^2, the angles, a and b with one of them grown to the medium box
  return static_cast<std::int64_t>(4 * std::max({5 * model + points, model + 5 * points, 5 * points + medium}));
}

std::int64_t estimate_host_bytes(const RunPlan& plan, bool gpu) {
  const auto& grid = plan.problem.grid;
  const auto layout = physics::FieldLayout::make(grid.box(), physics::kRadius);
  const double points = static_cast<double>(grid.points());
  const double traces = static_cast<double>(plan.samples()) * plan.receiver_count();
  double kept = 2 * points, backend = gpu ? 0.0 : plan.field_bytes / 4.0;  // floats
  if (plan.tti) {
    kept = 2 * points + 3 * static_cast<double>(kernels::medium_box(grid).points());
    if (gpu) backend = 4.0 * kernels::kTtiMediumSlab * layout.nz_alloc * layout.ny_alloc;
  }
  return std::max(estimate_building_bytes(plan), static_cast<std::int64_t>(4 * (kept + backend + traces)));
}

RunPlan make_plan(const io::Config& c, const std::function<void(const RunPlan&)>& before_model, const ShareOf& share_of) {
  RunPlan plan;
  plan.config = c;
  const bool minimod = c.mode == "minimod";
  plan.tti = c.propagator == "acoustic_tti";
  if (c.propagator != "acoustic_iso" && !plan.tti) {
    fail(c, "propagator", "'" + c.propagator + "' is not available; use acoustic_iso or acoustic_tti");
  }
  if (plan.tti && minimod) fail(c, "mode", "minimod mode is for propagator: acoustic_iso");
  if (!plan.tti && !c.boundary.tti_layer.empty())
    fail(c, "boundary.pml.tti", "applies to propagator: acoustic_tti only (acoustic_iso's layer is a CPML already)");
  if (!c.boundary.tti_layer_axis.empty() && (!plan.tti || c.boundary.tti_layer == "sponge"))
    fail(c, "boundary.pml.tti_axis", "applies to the acoustic_tti CPML layer only (boundary.pml.tti: cpml)");
  if (!plan.tti && c.output.record != "p")
    fail(c, "output.record", "'" + c.output.record + "' exists only for propagator: acoustic_tti");
  const auto h = c.grid.spacing;
  plan.model_shape = {c.grid.shape[0], c.grid.shape[1], c.grid.shape[2]};

  // --- PML widths and padding
  auto& pml = plan.problem.pml;
  if (minimod) {
    // Minimod: ndamp = 3 * (vmax / fmax) / dx points, inside the grid (sai2020-digest §1.4).
    const int ndamp = static_cast<int>(3.0 * (kMinimodVmax / c.source.frequency) / h[0]);
    for (int a = 0; a < 3; ++a) {
      pml.lo[a] = pml.hi[a] = ndamp;
      if (2 * ndamp >= plan.model_shape[a])
        fail(c, "grid.shape", "Minimod's PML (" + std::to_string(ndamp) +
                                  " points per side) leaves no inner region");
    }
  } else {
    for (int a = 0; a < 3; ++a) {
      pml.lo[a] = c.boundary.free_surface[2 * a] ? 0 : c.boundary.pml_width;
      pml.hi[a] = c.boundary.free_surface[2 * a + 1] ? 0 : c.boundary.pml_width;
      plan.pad_lo[a] = pml.lo[a];
      plan.pad_hi[a] = pml.hi[a];
    }
  }
  auto& grid = plan.problem.grid;
  grid.spacing = h;
  grid.shape = {plan.model_shape.i + plan.pad_lo[0] + plan.pad_hi[0],
                plan.model_shape.j + plan.pad_lo[1] + plan.pad_hi[1],
                plan.model_shape.k + plan.pad_lo[2] + plan.pad_hi[2]};
  grid.origin = {-plan.pad_lo[0] * h[0], -plan.pad_lo[1] * h[1], -plan.pad_lo[2] * h[2]};
  for (int f = 0; f < 6; ++f) plan.problem.free_surface[static_cast<size_t>(f)] = !minimod && c.boundary.free_surface[f];

  // The layer's kind, as a decomposition's cut limits read it (mpi::cut_limits), before the model.
  plan.problem.pml_kind = minimod ? pml::PmlKind::minimod : pml::PmlKind::cpml;
  if (plan.tti) {
    plan.tti_problem.grid = grid;
    plan.tti_problem.pml = pml;
    plan.tti_problem.layer = tti_layer_is_cpml(c) ? kernels::TtiLayer::cpml : kernels::TtiLayer::sponge;
  }
  // The figure of what building the model takes (its peak for TTI), before it is built: a run that
  // the machine cannot hold is warned of before it is killed for want of memory.
  if (before_model) before_model(plan);
  // A distributed run's rank builds its window of the model only (ModelShare).
  const std::optional<ModelShare> share = share_of ? share_of(plan) : std::nullopt;
  const Window win = Window::make(share ? &*share : nullptr, grid.box(), plan.model_shape, plan.pad_lo);

  // --- model (user grid) and velocity range, over this rank's owned points, then the whole model's
  std::vector<float> vp = win.parameter(c, c.model.vp, "model.vp", plan.model_shape, h[2]);
  float mn = std::numeric_limits<float>::infinity(), mx = 0;
  int bad = 0;  // a NaN compares false everywhere: count it explicitly
  const std::int64_t nvp = static_cast<std::int64_t>(vp.size());
#pragma omp parallel for reduction(min : mn) reduction(max : mx) reduction(+ : bad)
  for (std::int64_t n = 0; n < nvp; ++n) {
    if (!win.owns(win.built_point(n))) continue;
    const float v = vp[static_cast<size_t>(n)];
    bad += !(v > 0 && v <= std::numeric_limits<float>::max());
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  plan.vp_min = win.combined(mn, '<');
  plan.vp_max = win.combined(mx, '>');
  bad = static_cast<int>(win.combined(bad, '+'));
  if (bad > 0 || !(plan.vp_min > 0) || !std::isfinite(plan.vp_max)) {
    fail(c, "model.vp", "velocities must be positive and finite (min " + fmt(plan.vp_min) + ")");
  }

  TtiModel tti_model;
  const double model_points = double(plan.model_shape.i) * plan.model_shape.j * plan.model_shape.k;
  if (plan.tti) {
    tti_model = build_tti_model(c, plan.model_shape, h, plan.problem.pml, win);
    plan.eps_max = tti_model.eps_max;
    plan.delta_min = tti_model.delta_min;
    plan.delta_max = tti_model.delta_max;
    plan.delta_clamped = tti_model.clamped;
    if (tti_model.clamped > 0) {
      const double percent = 100.0 * double(tti_model.clamped) / double(model_points);
      plan.warnings.push_back("model.epsilon_below_delta: clamp: delta lowered to epsilon at " +
                              std::to_string(tti_model.clamped) + " of the model's points (" + fmt(percent) +
                              "%), where epsilon < delta");
    }
    plan.axis_turn_max = tti_model.turns.max_degrees;
    const physics::AxisTurns& turns = tti_model.turns;
    if (turns.above > 0) {
      const double percent = 100.0 * double(turns.above) / double(model_points);
      const std::string where = std::to_string(turns.above) + " of the model's points (" + fmt(percent) +
                                "%; the largest turn " + fmt(turns.max_degrees) + " degrees, the first point at " +
                                model_point_where(turns.first, plan.model_shape, h) + ")";
      if (c.model.elliptic_where_axis_turns > 0) {
        plan.axis_turn_elliptic = turns.above;
        plan.warnings.push_back("model.elliptic_where_axis_turns: epsilon set to delta at " + where +
                                ", where the symmetry axis turns by more than " +
                                fmt(c.model.elliptic_where_axis_turns) + " degrees toward a neighbour");
      } else {
        plan.warnings.push_back(
            "the symmetry axis turns by more than " + fmt(kAxisTurnWarning) + " degrees toward a neighbour at " +
            where + ": where it turns that sharply in several directions the pseudo-acoustic system can grow "
            "without bound (smooth theta and phi there, or set model.elliptic_where_axis_turns: " +
            fmt(kAxisTurnWarning) + " to make those points elliptic, epsilon = delta: docs/tti.md, \"Where the "
            "axis turns sharply\")");
      }
      if (tti_layer_is_cpml(c) && c.boundary.tti_layer_axis != "vertical" && tti_model.turns_at_layer > 0)
        plan.warnings.push_back(
            std::to_string(tti_model.turns_at_layer) + " of those points lie within " + std::to_string(kTurnNearLayer) +
            " points of a face's CPML layer, which the padding fills with the face's axes: a CPML over axes that "
            "turn sharply can grow without bound even where the model is made elliptic; set "
            "boundary.pml.tti_axis: vertical (the layer elliptic from its edge, its axis turned to vertical; "
            "reflects more) or boundary.pml.tti: sponge");
    }
  }

  // --- time step
  const double v_dt = minimod ? kMinimodVmax : plan.vp_max;
  plan.dt_limit = plan.tti ? physics::tti_critical_dt(plan.vp_max, h, plan.eps_max, plan.delta_min,
                                                      plan.delta_max)
                           : physics::critical_dt(v_dt, h);
  const double interval = c.output.seismogram_interval;
  if (minimod) {
    plan.dt = kMinimodCfl * plan.dt_limit;
  } else if (c.time.dt) {
    plan.dt = *c.time.dt;
    if (plan.dt > plan.dt_limit) {
      fail(c, "time.dt", "dt = " + fmt(plan.dt) + " s is above the stability limit " +
                             fmt(plan.dt_limit) + " s (vp max " + fmt(plan.vp_max) + " m/s)");
    }
  } else {
    plan.dt = c.time.cfl * plan.dt_limit;
    if (interval > 0) plan.dt = interval / std::ceil(interval / plan.dt);  // whole steps per sample
  }
  if (interval > 0) {
    if (interval < plan.dt * (1 - 1e-9)) {
      fail(c, "output.seismograms.interval", "interval " + fmt(interval) +
                                                 " s is shorter than the time step " + fmt(plan.dt) + " s");
    }
    plan.record_every = std::max(1, static_cast<int>(std::lround(interval / plan.dt)));
  }
  plan.steps = c.time.steps ? *c.time.steps : static_cast<int>(std::ceil(c.time.duration / plan.dt - 1e-9));
  if (plan.steps < 1) fail(c, "time.duration", "gives no time step");

  // --- PML profiles: Minimod's damped equation in the compatibility mode, the CPML otherwise
  if (minimod) {
    pml::ProfileParams pp;
    pp.dt = plan.dt;
    pp.velocity = kMinimodVmax;
    pp.reflection = 1e-3;
    pp.index_shift = 1;
    plan.problem.pml_kind = pml::PmlKind::minimod;
    plan.problem.damping = pml::make_damping_profiles(grid.shape, h, pml, pp);
  } else {
    pml::CpmlParams cp;
    cp.dt = plan.dt;
    cp.velocity = c.boundary.pml_velocity.value_or(plan.vp_max);
    cp.reflection = c.boundary.pml_reflection;
    cp.frequency = c.source.frequency;
    plan.problem.pml_kind = pml::PmlKind::cpml;
    plan.problem.cpml = pml::make_cpml_profiles(grid.shape, h, pml, cp);
  }

  // --- model on the simulation grid, as (v dt)^2: in place, and the model's vp freed first (at
  // 1000^3 each of these arrays is 4 GB, and the TTI model's come next)
  std::vector<float> v2dt2 = physics::pad_with_edges(vp, win.built, plan.model_shape, plan.pad_lo, win.stored);
  std::vector<float>().swap(vp);
  const std::int64_t npts = static_cast<std::int64_t>(v2dt2.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t n = 0; n < npts; ++n) {
    const float vdt = static_cast<float>(v2dt2[static_cast<size_t>(n)] * plan.dt);
    v2dt2[static_cast<size_t>(n)] = vdt * vdt;
  }
  plan.problem.v2dt2 = std::move(v2dt2);
  if (win.share) plan.problem.stored = win.stored;
  kernels::finish_problem(plan.problem);

  // --- wavelet
  auto& w = plan.wavelet;
  w.frequency = c.source.frequency;
  w.amplitude = c.source.amplitude;
  switch (minimod ? io::SourceConfig::Wavelet::minimod_gaussian : c.source.wavelet) {
    case io::SourceConfig::Wavelet::ricker:
      w.kind = physics::Wavelet::Kind::ricker;
      w.delay = c.source.delay.value_or(1.5 / c.source.frequency);
      break;
    case io::SourceConfig::Wavelet::minimod_gaussian:
      w.kind = physics::Wavelet::Kind::minimod_gaussian;
      break;
    case io::SourceConfig::Wavelet::file:
      w.kind = physics::Wavelet::Kind::samples;
      w.samples = io::read_wavelet_dataset(c.source.file, c.source.dataset, "source.file");
      w.sample_dt = c.source.file_dt;
      break;
  }
  plan.max_frequency = physics::highest_significant_frequency(w, plan.dt, plan.steps * plan.dt);
  const double h_max = std::max({h[0], h[1], h[2]});
  plan.points_per_wavelength =
      plan.max_frequency > 0 ? plan.vp_min / plan.max_frequency / h_max : 1e9;
  if (plan.points_per_wavelength < kPpwWarning) {
    std::ostringstream s;
    s << "only " << fmt(plan.points_per_wavelength) << " points per shortest wavelength (vp min "
      << fmt(plan.vp_min) << " m/s, wavelet content up to " << fmt(plan.max_frequency)
      << " Hz, spacing " << fmt(h_max) << " m); below " << kPpwWarning
      << " the result is dispersive: refine the grid or lower source.frequency";
    plan.warnings.push_back(s.str());
  }

  // --- source: trilinear weights; physical injection adds (v dt)^2 s / (dx dy dz). A survey's
  // shots are checked all at once, so that no shot starts before a bad one is named.
  const std::vector<Point3> shots = positions_of(c.shots);
  check_shot_positions(c, shots);
  check_inside(c, "source.position", c.source.position, plan.model_shape, h);
  const auto source_at = [&](const Point3& position) {
    std::vector<kernels::NodeWeight> nodes;
    const auto src = physics::make_point_stencil(grid, position);
    const double cell = h[0] * h[1] * h[2];
    for (int n = 0; n < 8; ++n) {
      if (src.weight[static_cast<size_t>(n)] == 0.0f) continue;
      const Index3 node = src.node(n);
      float wgt = src.weight[static_cast<size_t>(n)];
      const bool raw = minimod || c.source.injection == io::SourceConfig::Injection::raw;
      if (!raw) wgt = static_cast<float>(wgt * static_cast<float>(win.at_grid(plan.problem.v2dt2, node)) / cell);
      nodes.push_back({node, wgt, 0});
    }
    return nodes;
  };
  plan.source = source_at(c.source.position);
  plan.shots_share_model = !(plan.tti && c.model.isotropic_radius > 0);
  if (plan.shots_share_model)
    for (const Point3& x : shots) plan.shot_sources.push_back(source_at(x));

  // --- receivers
  plan.receiver_positions = positions_of(c.receivers);
  for (size_t r = 0; r < plan.receiver_positions.size(); ++r) {
    check_inside(c, "receivers", plan.receiver_positions[r], plan.model_shape, h,
                 " (receiver " + std::to_string(r) + " of " +
                     std::to_string(plan.receiver_positions.size()) + ")");
    const auto st = physics::make_point_stencil(grid, plan.receiver_positions[r]);
    for (int n = 0; n < 8; ++n)
      if (st.weight[static_cast<size_t>(n)] != 0.0f)
        plan.receivers.push_back({st.node(n), st.weight[static_cast<size_t>(n)], static_cast<int>(r)});
  }

  // --- snapshots: model-index box (default: the whole model), strided
  const auto& snap = c.output.snapshots;
  plan.snapshot_every = snap.every;
  physics::Box3 box{{0, 0, 0}, plan.model_shape};
  if (snap.box) {
    const auto& b = *snap.box;
    for (int a = 0; a < 3; ++a) {
      if (b[2 * a] < 0 || b[2 * a + 1] > plan.model_shape[a] || b[2 * a] >= b[2 * a + 1])
        fail(c, "output.snapshots.box", "axis " + std::to_string(a) + " range [" +
                                            std::to_string(b[2 * a]) + ", " + std::to_string(b[2 * a + 1]) +
                                            ") is empty or outside the model [0, " +
                                            std::to_string(plan.model_shape[a]) + ")");
    }
    box = physics::box_from_bounds({b[0], b[2], b[4]}, {b[1], b[3], b[5]});
  }
  plan.snapshot_box = {{box.lo.i + plan.pad_lo[0], box.lo.j + plan.pad_lo[1], box.lo.k + plan.pad_lo[2]},
                       box.n};
  plan.snapshot_stride = {snap.stride[0], snap.stride[1], snap.stride[2]};
  for (int a = 0; a < 3; ++a)
    plan.snapshot_shape[a] = (box.n[a] + plan.snapshot_stride[a] - 1) / plan.snapshot_stride[a];

  // The TTI problem last: it takes (v dt)^2 from the isotropic one (the sources' weights read it above).
  if (plan.tti) finish_tti(c, plan, tti_model, win);

  // The plan's problem is the whole grid (no halo exchange): in a distributed run a two-step
  // family takes single steps, so its two spare wavefields make the figure an upper bound there.
  // With backend auto they count only where a GPU is visible (else the CPU reference runs).
  const std::string& backend = c.execution.backend;
  const bool gpu = backend == "cuda" || (backend == "auto" && kernels::resolve_backend("auto") == "cuda");
  const bool two_step = gpu && kernels::two_step_kernel(plan.problem, c.execution.kernel);
  plan.field_bytes =
      plan.tti ? estimate_tti_bytes(plan.tti_problem) : estimate_field_bytes(grid.shape, plan.problem.pml_kind, two_step);
  plan.memory_bytes = plan.field_bytes + static_cast<std::int64_t>(plan.samples()) * plan.receiver_count() * 4;
  plan.host_bytes = estimate_host_bytes(plan, gpu);
  // A rank's share: its box's part of the fields (its halos aside) and its window's of the host's
  // figure (the model, fields and slabs scale with it); the traces stay whole (rank 0 sums them).
  if (win.share) {
    const auto share_of_grid = [&](std::int64_t bytes, const physics::Box3& b) {
      return static_cast<std::int64_t>(double(bytes) * double(b.points()) / double(grid.points()));
    };
    plan.field_bytes = share_of_grid(plan.field_bytes, win.box);
    plan.memory_bytes = plan.field_bytes + static_cast<std::int64_t>(plan.samples()) * plan.receiver_count() * 4;
    plan.host_bytes = share_of_grid(plan.host_bytes, win.stored);
  }
  return plan;
}

std::string describe(const RunPlan& p) {
  std::ostringstream s;
  const auto& g = p.problem.grid;
  s << "propagator   " << p.config.propagator << (p.config.mode == "minimod" ? " (Minimod-compatible mode)" : "")
    << "\n";
  s << "model        " << p.model_shape.i << " x " << p.model_shape.j << " x " << p.model_shape.k
    << " points, spacing " << g.spacing[0] << " x " << g.spacing[1] << " x " << g.spacing[2]
    << " m, vp " << fmt(p.vp_min) << " .. " << fmt(p.vp_max) << " m/s\n";
  s << "grid         " << g.shape.i << " x " << g.shape.j << " x " << g.shape.k << " = "
    << fmt(g.points() / 1e6) << " M points (PML " << p.problem.pml.lo[0] << "/" << p.problem.pml.hi[0]
    << ", " << p.problem.pml.lo[1] << "/" << p.problem.pml.hi[1] << ", " << p.problem.pml.lo[2] << "/"
    << p.problem.pml.hi[2] << " points x-/x+, y-/y+, z-/z+"
    << (p.config.mode == "minimod" ? ", Minimod's, inside the grid"
        : p.tti ? (p.tti_problem.layer != kernels::TtiLayer::cpml ? ", Minimod's damping, padded around the model"
                   : p.tti_problem.layer_axis == kernels::TtiLayerAxis::vertical
                       ? ", CPML of the TTI operator, elliptic from its edge, its axis turned to vertical, padded around the model"
                       : ", CPML of the TTI operator, elliptic at depth, padded around the model")
                : ", CPML, padded around the model")
    << ")\n";
  if (p.tti)
    s << "anisotropy   TTI: epsilon max " << fmt(p.eps_max) << ", delta " << fmt(p.delta_min) << " .. "
      << fmt(p.delta_max) << (p.delta_clamped > 0 ? " (lowered to epsilon at " + std::to_string(p.delta_clamped) + " points)" : "")
      << "; the axis turns by up to " << fmt(p.axis_turn_max) << " degrees between neighbours"
      << (p.axis_turn_elliptic > 0 ? " (elliptic at " + std::to_string(p.axis_turn_elliptic) + " points)" : "")
      << "; receivers record " << (p.tti_problem.record_q ? "q" : "p") << "\n";
  static const char* kFaces[] = {"x-", "x+", "y-", "y+", "z- (top)", "z+"};
  for (int f = 0; f < 6; ++f)
    if (p.problem.free_surface[static_cast<size_t>(f)]) s << "free surface " << kFaces[f] << "\n";
  s << "time         dt " << fmt(p.dt) << " s (stability limit " << fmt(p.dt_limit) << " s), "
    << p.steps << " steps, " << fmt(p.steps * p.dt) << " s\n";
  s << "source       " << p.wavelet.describe() << " at (" << p.config.source.position[0] << ", "
    << p.config.source.position[1] << ", " << p.config.source.position[2] << ") m, "
    << fmt(p.points_per_wavelength) << " points per shortest wavelength (" << fmt(p.max_frequency)
    << " Hz)\n";
  s << "receivers    " << p.receiver_count() << ", " << p.samples() << " samples every "
    << fmt(p.record_every * p.dt) << " s\n";
  if (p.snapshot_every > 0)
    s << "snapshots    " << p.snapshot_count() << " of " << p.snapshot_shape.i << " x "
      << p.snapshot_shape.j << " x " << p.snapshot_shape.k << " every " << p.snapshot_every << " steps\n";
  const char* each = p.problem.stored.empty() ? "" : " a rank";  // a distributed plan's share
  s << "memory       " << fmt(p.memory_bytes / double(1 << 30)) << " GiB" << each << " (fields "
    << fmt(p.field_bytes / double(1 << 30))
    << " GiB); host " << fmt(p.host_bytes / double(1 << 30)) << " GiB" << each << " at its peak\n";
  s << "output       " << p.config.output.file << "\n";
  return s.str();
}

}  // namespace minimod::app
