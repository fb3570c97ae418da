// io/config_yaml.cpp: YAML text -> io::Config, following the schema of docs/config.md. The only
// file that includes yaml-cpp. It applies `--set key=value` overrides to the tree, records key
// path -> line, and rejects unknown keys (suggesting the nearest), wrong types and bad values.
// Cross-field checks (dt vs the CFL limit, positions inside the model) belong to later stages.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <utility>

#include "io/config.hpp"
#include "physics/error.hpp"

namespace minimod::io {
namespace {

namespace fs = std::filesystem;
using Keys = std::vector<std::string>;

constexpr int kMaxShape = 100000;   // points per axis
constexpr int kMaxPmlWidth = 1000;  // points per face

// ---------------------------------------------------------------------------------------------
// Small text helpers.

std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string index_path(const std::string& parent, std::size_t i) {
  return parent + "[" + std::to_string(i) + "]";
}

std::string join_words(const Keys& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) out += (i ? ", " : "") + words[i];
  return out;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Levenshtein distance, one row at a time.
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// The candidate nearest to `word`, or "" when none is close enough to be a plausible typo.
std::string nearest(const std::string& word, const Keys& candidates) {
  const std::size_t limit =
      std::max<std::size_t>(1, std::min<std::size_t>(3, (word.size() + 1) / 2));
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::string format_error(const SourceMap& lines, const std::string& key,
                         const std::string& message) {
  std::string out = "config error: " + key;
  const auto it = lines.find(key);
  if (it != lines.end()) {
    out += it->second > 0 ? " (line " + std::to_string(it->second) + ")" : " (--set)";
  }
  return out + ": " + message;
}

/// How a node looks, for messages: the scalar as written, or its kind.
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing (an empty value)";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    case YAML::NodeType::Sequence:
      return "a list of " + std::to_string(node.size()) + (node.size() == 1 ? " item" : " items");
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

bool only_chars(const std::string& s, const char* allowed) {
  return !s.empty() && s.find_first_not_of(allowed) == std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// --set overrides: "a.b[2].c=value", the value parsed as YAML.

struct Step {
  std::string key;  // map key, or empty for a list index
  std::size_t index = 0;
};

struct Override {
  std::string text;  // as given, for messages
  std::string key;   // the key path, trimmed
  std::vector<Step> steps;
  YAML::Node value;
};

[[noreturn]] void bad_override(const std::string& text, const std::string& why) {
  throw ConfigError("config error: --set '" + text + "': " + why);
}

Override parse_override(const std::string& text) {
  Override o;
  o.text = text;
  const auto eq = text.find('=');
  if (eq == std::string::npos) bad_override(text, "expected key=value, e.g. time.dt=0.001");
  o.key = trim(text.substr(0, eq));
  if (o.key.empty()) bad_override(text, "the key before '=' is empty");
  std::stringstream parts(o.key);
  std::string part;
  while (std::getline(parts, part, '.')) {
    const auto bracket = part.find('[');
    const std::string name = part.substr(0, bracket);
    if (name.empty()) bad_override(text, "empty name in key path '" + o.key + "'");
    o.steps.push_back({name, 0});
    std::size_t pos = bracket;
    while (pos != std::string::npos) {
      const auto close = part.find(']', pos);
      const std::string digits =
          close == std::string::npos ? "" : part.substr(pos + 1, close - pos - 1);
      if (!only_chars(digits, "0123456789") || digits.size() > 9 ||
          (close + 1 < part.size() && part[close + 1] != '[')) {
        bad_override(text, "bad list index in key path '" + o.key + "'; write e.g. receivers[0]");
      }
      o.steps.push_back({"", static_cast<std::size_t>(std::stoul(digits))});
      pos = close + 1 < part.size() ? close + 1 : std::string::npos;
    }
  }
  if (o.key.back() == '.' || o.steps.empty())
    bad_override(text, "key path '" + o.key + "' ends in '.'");
  try {
    o.value = YAML::Load(text.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    bad_override(text, "the value is not valid YAML: " + e.msg);
  }
  return o;
}

void assign(YAML::Node node, const Override& o, std::size_t i) {
  const Step& step = o.steps[i];
  const bool last = i + 1 == o.steps.size();
  if (step.key.empty()) {
    if (!node.IsSequence() || step.index >= node.size()) {
      bad_override(o.text, "index [" + std::to_string(step.index) + "] is not in an existing list");
    }
    if (last) {
      node[step.index] = o.value;
    } else {
      assign(node[step.index], o, i + 1);
    }
    return;
  }
  if (!node.IsMap()) bad_override(o.text, "'" + step.key + "' is inside a value that is not a map");
  if (last) {
    node[step.key] = o.value;
    return;
  }
  if (!node[step.key].IsMap() && !node[step.key].IsSequence()) {
    if (node[step.key].IsDefined() && !node[step.key].IsNull()) {
      bad_override(o.text, "'" + step.key + "' holds a single value, not a map");
    }
    node[step.key] = YAML::Node(YAML::NodeType::Map);
  }
  assign(node[step.key], o, i + 1);
}

bool under_any(const std::string& path, const std::vector<std::string>& prefixes) {
  for (const auto& p : prefixes) {
    if (path.compare(0, p.size(), p) == 0 &&
        (path.size() == p.size() || path[p.size()] == '.' || path[p.size()] == '[')) {
      return true;
    }
  }
  return false;
}

/// Key path -> 1-based line of the key (map entries) or the item (list entries); 0 for values that
/// came from --set, which have no line in the file.
void record_lines(const YAML::Node& node, const std::string& path,
                  const std::vector<std::string>& overridden, SourceMap& lines) {
  auto line_of = [&](const YAML::Node& n, const std::string& p) {
    const YAML::Mark mark = n.Mark();
    return mark.is_null() || under_any(p, overridden) ? 0 : mark.line + 1;
  };
  if (node.IsMap()) {
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) continue;
      const std::string child = join_path(path, kv.first.Scalar());
      if (!lines.count(child)) lines[child] = line_of(kv.first, child);
      record_lines(kv.second, child, overridden, lines);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string child = index_path(path, i);
      lines[child] = line_of(node[i], child);
      record_lines(node[i], child, overridden, lines);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The reader: typed access to the tree, with every failure naming the key path and line.

class Reader {
 public:
  Reader(const SourceMap& lines, fs::path base_dir)
      : lines_(lines), base_dir_(std::move(base_dir)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw ConfigError(format_error(lines_, path, message));
  }

  /// Checks that `node` is a map whose keys are all in `allowed`, each once.
  void expect_map(const YAML::Node& node, const std::string& path, const Keys& allowed) const {
    if (!node.IsMap()) {
      fail(path, "expected a map with keys {" + join_words(allowed) + "}, got " + describe(node));
    }
    std::map<std::string, int> seen;  // key -> line of its first appearance
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) fail(path, "keys must be plain names, got " + describe(kv.first));
      const std::string& key = kv.first.Scalar();
      const std::string child = join_path(path, key);
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        const std::string guess = nearest(key, allowed);
        fail(child, guess.empty() ? "unknown key; valid keys here: " + join_words(allowed)
                                  : "unknown key; did you mean '" + guess + "'?");
      }
      const YAML::Mark mark = kv.first.Mark();
      const auto [first, fresh] = seen.emplace(key, mark.line + 1);
      if (!fresh) {
        // The line map holds the first appearance; cite the second one here.
        throw ConfigError("config error: " + child + " (line " + std::to_string(mark.line + 1) +
                          "): key given twice (first at line " + std::to_string(first->second) +
                          ")");
      }
    }
  }

  void require(const YAML::Node& map, const std::string& path, const std::string& key) const {
    if (map[key]) return;
    const auto it = lines_.find(path);
    std::string where;
    if (it != lines_.end() && it->second > 0) {
      where = " (in '" + path + "' at line " + std::to_string(it->second) + ")";
    }
    fail(join_path(path, key), "required key is missing" + where);
  }

  double number(const YAML::Node& node, const std::string& path) const {
    if (node.IsScalar()) {
      const std::string& s = node.Scalar();
      double v = 0;
      if (only_chars(s, "0123456789+-.eE")) {
        char* end = nullptr;
        v = std::strtod(s.c_str(), &end);
        if (end == s.c_str() + s.size()) {
          if (std::isfinite(v)) return v;
          fail(path, "got " + s + "; must be a finite number");
        }
      } else if (YAML::convert<double>::decode(node, v) && !std::isfinite(v)) {
        fail(path, "got " + s + "; must be a finite number");  // .inf, .nan
      }
    }
    fail(path, "expected a number, got " + describe(node));
  }

  int integer(const YAML::Node& node, const std::string& path) const {
    if (node.IsScalar()) {
      const std::string& s = node.Scalar();
      if (only_chars(s, "0123456789+-")) {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(s.c_str(), &end, 10);
        if (end == s.c_str() + s.size()) {
          if (errno == 0 && v >= std::numeric_limits<int>::min() &&
              v <= std::numeric_limits<int>::max()) {
            return static_cast<int>(v);
          }
          fail(path, "got " + s + "; must be an integer that fits in 32 bits");
        }
      }
    }
    fail(path, "expected an integer, got " + describe(node));
  }

  bool boolean(const YAML::Node& node, const std::string& path) const {
    bool v = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, v)) {
      fail(path, "expected true or false, got " + describe(node));
    }
    return v;
  }

  std::string text(const YAML::Node& node, const std::string& path) const {
    if (!node.IsScalar() || node.Scalar().empty()) {
      fail(path, "expected a non-empty string, got " + describe(node));
    }
    return node.Scalar();
  }

  /// A string that must be one of `choices`.
  std::string choice(const YAML::Node& node, const std::string& path, const Keys& choices) const {
    if (!node.IsScalar())
      fail(path, "expected one of " + join_words(choices) + ", got " + describe(node));
    const std::string& s = node.Scalar();
    if (std::find(choices.begin(), choices.end(), s) != choices.end()) return s;
    const std::string guess = nearest(s, choices);
    fail(path, "unknown value " + describe(node) + "; expected one of " + join_words(choices) +
                   (guess.empty() ? "" : "; did you mean '" + guess + "'?"));
  }

  bool is_auto(const YAML::Node& node) const { return node.IsScalar() && node.Scalar() == "auto"; }

  /// The items of a list of exactly `n` items (any length when n == 0, but not empty).
  void expect_list(const YAML::Node& node, const std::string& path, std::size_t n,
                   const std::string& what) const {
    if (!node.IsSequence() || (n > 0 && node.size() != n) || (n == 0 && node.size() == 0)) {
      fail(path, "expected " + what + ", got " + describe(node));
    }
  }

  Vec3 vec3(const YAML::Node& node, const std::string& path) const {
    expect_list(node, path, 3, "a list of 3 numbers [x, y, z] in m");
    Vec3 v{};
    for (std::size_t a = 0; a < 3; ++a) v[a] = number(node[a], index_path(path, a));
    return v;
  }

  /// `n` integers, each in [lo, hi].
  template <std::size_t N>
  std::array<int, N> integers(const YAML::Node& node, const std::string& path, int lo, int hi,
                              const std::string& what) const {
    expect_list(node, path, N, what);
    std::array<int, N> v{};
    for (std::size_t a = 0; a < N; ++a) {
      const std::string p = index_path(path, a);
      v[a] = integer(node[a], p);
      if (v[a] < lo || v[a] > hi) {
        fail(p, "got " + std::to_string(v[a]) + "; must be between " + std::to_string(lo) +
                    " and " + std::to_string(hi));
      }
    }
    return v;
  }

  /// Fails with "got <value>; <rule>" unless `ok`.
  void check(bool ok, const YAML::Node& node, const std::string& path,
             const std::string& rule) const {
    if (!ok) fail(path, "got " + (node.IsScalar() ? node.Scalar() : describe(node)) + "; " + rule);
  }

  /// A file name resolved against the config's folder; the file must exist.
  std::string existing_file(const YAML::Node& node, const std::string& path) const {
    fs::path file = text(node, path);
    if (file.is_relative() && !base_dir_.empty()) file = base_dir_ / file;
    file = file.lexically_normal();
    std::error_code ec;
    if (!fs::exists(file, ec)) fail(path, "file '" + file.string() + "' does not exist");
    if (fs::is_directory(file, ec)) fail(path, "'" + file.string() + "' is a folder, not a file");
    return file.string();
  }

 private:
  const SourceMap& lines_;
  fs::path base_dir_;
};

// ---------------------------------------------------------------------------------------------
// One function per section (SeisSol's ParameterReader pattern).

void read_grid(const Reader& r, const YAML::Node& node, GridConfig& grid) {
  const std::string path = "grid";
  r.expect_map(node, path, {"shape", "spacing"});
  r.require(node, path, "shape");
  r.require(node, path, "spacing");
  grid.shape =
      r.integers<3>(node["shape"], "grid.shape", 1, kMaxShape, "a list of 3 integers [nx, ny, nz]");
  const YAML::Node spacing = node["spacing"];
  if (spacing.IsScalar()) {
    const double d = r.number(spacing, "grid.spacing");
    r.check(d > 0, spacing, "grid.spacing", "must be > 0 m");
    grid.spacing = {d, d, d};
  } else {
    r.expect_list(spacing, "grid.spacing", 3, "a number or a list of 3 numbers [dx, dy, dz] in m");
    for (std::size_t a = 0; a < 3; ++a) {
      const std::string p = index_path("grid.spacing", a);
      grid.spacing[a] = r.number(spacing[a], p);
      r.check(grid.spacing[a] > 0, spacing[a], p, "must be > 0 m");
    }
  }
}

/// A positive, finite model value (vp in m/s).
double model_value(const Reader& r, const YAML::Node& node, const std::string& path,
                   const std::string& unit) {
  const double v = r.number(node, path);
  r.check(v > 0, node, path, "must be > 0 " + unit);
  return v;
}

/// What a model parameter holds; it fixes the allowed range and whether `units` may be given.
enum class ValueKind {
  velocity,  // m/s, > 0
  thomsen,   // dimensionless, in (-0.5, 1): 1 + 2 x scales a squared velocity, so stays > 0
  angle,     // any finite value; `units: deg` (default) or `rad`, stored in rad
};

constexpr double kPi = 3.14159265358979323846;

/// The factor from the YAML values of an angle to radians: pi/180 for `units: deg` (the default),
/// 1 for `rad`.
double angle_scale(const Reader& r, const YAML::Node& node, const std::string& path) {
  const YAML::Node u = node["units"];
  if (!u) return kPi / 180;
  return r.choice(u, join_path(path, "units"), {"deg", "rad"}) == "rad" ? 1 : kPi / 180;
}

/// One value of a parameter (a constant or a layer's value), range-checked in the YAML's units and
/// returned in SI (times `scale`).
double parameter_value(const Reader& r, const YAML::Node& node, const std::string& path,
                       const std::string& name, const std::string& unit, ValueKind kind,
                       double scale) {
  if (kind == ValueKind::velocity) return model_value(r, node, path, unit);
  const double v = r.number(node, path);  // finite, or it fails
  if (kind == ValueKind::thomsen) {
    r.check(v > -0.5 && v < 1, node, path,
            "must be > -0.5 (so that 1 + 2 " + name + " > 0) and < 1");
  }
  return v * scale;
}

void read_parameter(const Reader& r, const YAML::Node& node, const std::string& path,
                    const std::string& name, const std::string& unit, ParameterConfig& p,
                    ValueKind kind = ValueKind::velocity) {
  const bool angle = kind == ValueKind::angle;
  // Checked before the key list so that the message says why, not just "unknown key".
  if (!angle && node.IsMap() && node["units"]) {
    r.fail(join_path(path, "units"), "only the angles theta and phi take units; " + name + " is " +
                                         (unit.empty() ? "dimensionless" : "in " + unit));
  }
  if (angle) {
    r.expect_map(node, path, {"constant", "layers", "file", "dataset", "units"});
  } else {
    r.expect_map(node, path, {"constant", "layers", "file", "dataset"});
  }
  const double scale = angle ? angle_scale(r, node, path) : 1;
  const int given = (node["constant"] ? 1 : 0) + (node["layers"] ? 1 : 0) + (node["file"] ? 1 : 0);
  if (given != 1) {
    r.fail(path,
           "give exactly one of constant, layers or file (got " + std::to_string(given) + ")");
  }
  if (node["dataset"] && !node["file"]) {
    r.fail(join_path(path, "dataset"), "dataset is only used with file");
  }
  if (node["constant"]) {
    p.kind = ParameterConfig::Kind::constant;
    p.constant =
        parameter_value(r, node["constant"], join_path(path, "constant"), name, unit, kind, scale);
  } else if (node["layers"]) {
    p.kind = ParameterConfig::Kind::layers;
    const std::string lp = join_path(path, "layers");
    const YAML::Node layers = node["layers"];
    r.expect_list(layers, lp, 0, "a non-empty list of {top, value}");
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const std::string ip = index_path(lp, i);
      r.expect_map(layers[i], ip, {"top", "value"});
      r.require(layers[i], ip, "top");
      r.require(layers[i], ip, "value");
      ParameterConfig::Layer layer;
      const std::string tp = join_path(ip, "top");
      layer.top = r.number(layers[i]["top"], tp);
      if (i == 0) {
        r.check(layer.top == 0, layers[i]["top"], tp, "the first layer's top must be 0 m");
      } else {
        r.check(layer.top > p.layers.back().top, layers[i]["top"], tp,
                "layer tops must increase with depth (previous top " +
                    layers[i - 1]["top"].Scalar() + " m)");
      }
      layer.value =
          parameter_value(r, layers[i]["value"], join_path(ip, "value"), name, unit, kind, scale);
      p.layers.push_back(layer);
    }
  } else {
    p.kind = ParameterConfig::Kind::file;
    p.file = r.existing_file(node["file"], join_path(path, "file"));
    p.dataset = node["dataset"] ? r.text(node["dataset"], join_path(path, "dataset")) : name;
    p.scale = scale;
  }
}

/// The model. The TTI keys are rejected for other propagators rather than ignored, so that a
/// config never looks anisotropic while running isotropic; absent, they keep their defaults (0).
void read_model(const Reader& r, const YAML::Node& node, const std::string& propagator,
                ModelConfig& model) {
  r.expect_map(node, "model",
               {"vp", "epsilon", "delta", "theta", "phi", "isotropic_radius", "epsilon_below_delta",
                "elliptic_where_axis_turns"});
  r.require(node, "model", "vp");
  read_parameter(r, node["vp"], "model.vp", "vp", "m/s", model.vp);
  if (propagator != "acoustic_tti") {
    for (const char* key : {"epsilon", "delta", "theta", "phi", "isotropic_radius", "epsilon_below_delta",
                            "elliptic_where_axis_turns"}) {
      if (node[key]) r.fail(join_path("model", key), "only for propagator: acoustic_tti");
    }
    return;
  }
  // Per-point checks (epsilon >= delta, file values) need the whole model: the plan makes them.
  const struct {
    const char* name;
    ValueKind kind;
    ParameterConfig* p;
  } tti[] = {{"epsilon", ValueKind::thomsen, &model.epsilon},
             {"delta", ValueKind::thomsen, &model.delta},
             {"theta", ValueKind::angle, &model.theta},
             {"phi", ValueKind::angle, &model.phi}};
  for (const auto& t : tti) {
    if (node[t.name])
      read_parameter(r, node[t.name], join_path("model", t.name), t.name, "", *t.p, t.kind);
  }
  if (const YAML::Node i = node["isotropic_radius"]) {
    model.isotropic_radius = r.number(i, "model.isotropic_radius");
    r.check(model.isotropic_radius >= 0, i, "model.isotropic_radius", "must be >= 0 m (0 = none)");
  }
  if (const YAML::Node e = node["epsilon_below_delta"])
    model.epsilon_below_delta = r.choice(e, "model.epsilon_below_delta", {"error", "clamp"});
  if (const YAML::Node t = node["elliptic_where_axis_turns"]) {
    model.elliptic_where_axis_turns = r.number(t, "model.elliptic_where_axis_turns");
    r.check(model.elliptic_where_axis_turns > 0 && model.elliptic_where_axis_turns <= 90, t,
            "model.elliptic_where_axis_turns", "must be an angle in degrees in (0, 90]");
  }
}

void read_time(const Reader& r, const YAML::Node& node, TimeConfig& time) {
  r.expect_map(node, "time", {"duration", "steps", "dt", "cfl"});
  if (node["duration"] && node["steps"]) {
    r.fail("time.steps", "give either time.duration or time.steps, not both");
  }
  if (!node["duration"] && !node["steps"]) {
    r.fail("time.duration", "required key is missing (or give time.steps)");
  }
  if (const YAML::Node d = node["duration"]) {
    time.duration = r.number(d, "time.duration");
    r.check(time.duration > 0, d, "time.duration", "must be > 0 s");
  }
  if (const YAML::Node s = node["steps"]) {
    time.steps = r.integer(s, "time.steps");
    r.check(*time.steps >= 1, s, "time.steps", "must be >= 1");
  }
  if (const YAML::Node dt = node["dt"]) {
    if (!r.is_auto(dt)) {
      if (!dt.IsScalar()) r.fail("time.dt", "expected a number (s) or auto, got " + describe(dt));
      time.dt = r.number(dt, "time.dt");
      r.check(*time.dt > 0, dt, "time.dt", "must be > 0 s, or auto");
    }
  }
  if (const YAML::Node c = node["cfl"]) {
    time.cfl = r.number(c, "time.cfl");
    r.check(time.cfl > 0 && time.cfl <= 1, c, "time.cfl", "must be in (0, 1]");
  }
}

void read_source(const Reader& r, const YAML::Node& node, SourceConfig& source) {
  r.expect_map(node, "source",
               {"wavelet", "frequency", "delay", "amplitude", "file", "position", "injection"});
  if (const YAML::Node w = node["wavelet"]) {
    const std::string s = r.choice(w, "source.wavelet", {"ricker", "minimod_gaussian", "file"});
    source.wavelet = s == "ricker"             ? SourceConfig::Wavelet::ricker
                     : s == "minimod_gaussian" ? SourceConfig::Wavelet::minimod_gaussian
                                               : SourceConfig::Wavelet::file;
  }
  if (const YAML::Node f = node["frequency"]) {
    source.frequency = r.number(f, "source.frequency");
    r.check(source.frequency > 0, f, "source.frequency", "must be > 0 Hz");
  }
  if (const YAML::Node d = node["delay"]) {
    source.delay = r.number(d, "source.delay");
    r.check(*source.delay >= 0, d, "source.delay", "must be >= 0 s");
  }
  if (const YAML::Node a = node["amplitude"]) source.amplitude = r.number(a, "source.amplitude");
  const bool from_file = source.wavelet == SourceConfig::Wavelet::file;
  if (from_file && !node["file"]) r.fail("source.file", "required with wavelet: file");
  if (const YAML::Node f = node["file"]) {
    if (!from_file) r.fail("source.file", "only used with wavelet: file");
    r.expect_map(f, "source.file", {"path", "dataset", "dt"});
    r.require(f, "source.file", "path");
    r.require(f, "source.file", "dt");
    source.file = r.existing_file(f["path"], "source.file.path");
    source.dataset = f["dataset"] ? r.text(f["dataset"], "source.file.dataset") : "wavelet";
    source.file_dt = r.number(f["dt"], "source.file.dt");
    r.check(source.file_dt > 0, f["dt"], "source.file.dt", "must be > 0 s");
  }
  if (const YAML::Node p = node["position"]) source.position = r.vec3(p, "source.position");
  if (const YAML::Node i = node["injection"]) {
    source.injection = r.choice(i, "source.injection", {"physical", "raw"}) == "raw"
                           ? SourceConfig::Injection::raw
                           : SourceConfig::Injection::physical;
  }
}

int group_count(const Reader& r, const YAML::Node& node, const std::string& path) {
  const int n = r.integer(node, path);
  r.check(n >= 1, node, path, "must be >= 1");
  return n;
}

/// The receivers' or a survey's shots' positions (`key`: receivers, shots): a list of groups,
/// each {points: [...]}, {line: {start, end, count}} or {grid: {start, end, count}}.
void read_position_groups(const Reader& r, const YAML::Node& node, const std::string& key,
                          std::vector<PositionGroupConfig>& groups) {
  const std::string what = key == "shots" ? "shot" : "receiver";
  if (!node.IsSequence()) {
    r.fail(key, "expected a list of " + what + " groups ({points}, {line} or {grid}), got " +
                    describe(node));
  }
  if (key == "shots" && node.size() == 0) r.fail(key, "expected at least one shot group (or leave shots out)");
  for (std::size_t g = 0; g < node.size(); ++g) {
    const std::string gp = index_path(key, g);
    const YAML::Node item = node[g];
    r.expect_map(item, gp, {"points", "line", "grid"});
    if (item.size() != 1) r.fail(gp, "give exactly one of points, line or grid per group");
    PositionGroupConfig group;
    if (const YAML::Node pts = item["points"]) {
      const std::string pp = join_path(gp, "points");
      group.kind = PositionGroupConfig::Kind::points;
      r.expect_list(pts, pp, 0, "a non-empty list of [x, y, z]");
      for (std::size_t i = 0; i < pts.size(); ++i) {
        group.points.push_back(r.vec3(pts[i], index_path(pp, i)));
      }
    } else {
      const bool line = static_cast<bool>(item["line"]);
      const std::string kp = join_path(gp, line ? "line" : "grid");
      const YAML::Node k = item[line ? "line" : "grid"];
      group.kind = line ? PositionGroupConfig::Kind::line : PositionGroupConfig::Kind::grid;
      r.expect_map(k, kp, {"start", "end", "count"});
      for (const char* key : {"start", "end", "count"}) r.require(k, kp, key);
      group.start = r.vec3(k["start"], join_path(kp, "start"));
      group.end = r.vec3(k["end"], join_path(kp, "end"));
      const std::string cp = join_path(kp, "count");
      if (line) {
        group.count = {group_count(r, k["count"], cp), 1, 1};
      } else {
        group.count =
            r.integers<3>(k["count"], cp, 1, kMaxShape, "a list of 3 integers [nx, ny, nz]");
      }
    }
    groups.push_back(std::move(group));
  }
}

void read_boundary(const Reader& r, const YAML::Node& node, BoundaryConfig& boundary) {
  r.expect_map(node, "boundary", {"pml", "free_surface"});
  if (const YAML::Node pml = node["pml"]) {
    r.expect_map(pml, "boundary.pml", {"width", "reflection", "velocity", "tti", "tti_axis"});
    if (const YAML::Node w = pml["width"]) {
      boundary.pml_width = r.integer(w, "boundary.pml.width");
      r.check(boundary.pml_width >= 0 && boundary.pml_width <= kMaxPmlWidth, w,
              "boundary.pml.width", "must be between 0 and " + std::to_string(kMaxPmlWidth));
    }
    if (const YAML::Node rc = pml["reflection"]) {
      boundary.pml_reflection = r.number(rc, "boundary.pml.reflection");
      r.check(boundary.pml_reflection > 0 && boundary.pml_reflection < 1, rc,
              "boundary.pml.reflection", "must be in (0, 1)");
    }
    if (const YAML::Node t = pml["tti"]) boundary.tti_layer = r.choice(t, "boundary.pml.tti", {"sponge", "cpml"});
    if (const YAML::Node t = pml["tti_axis"])
      boundary.tti_layer_axis = r.choice(t, "boundary.pml.tti_axis", {"model", "vertical"});
    if (const YAML::Node v = pml["velocity"]) {
      if (!r.is_auto(v)) {
        boundary.pml_velocity = r.number(v, "boundary.pml.velocity");
        r.check(*boundary.pml_velocity > 0, v, "boundary.pml.velocity", "must be > 0 m/s, or auto");
      }
    }
  }
  if (const YAML::Node faces = node["free_surface"]) {
    // Order of BoundaryConfig::free_surface: x-, x+, y-, y+, z-, z+.
    const Keys names = {"x-", "x+", "y-", "y+", "z-", "z+", "top", "bottom"};
    const int face_of[] = {0, 1, 2, 3, 4, 5, 4, 5};
    auto add = [&](const YAML::Node& face, const std::string& path) {
      const std::string s = r.choice(face, path, names);
      boundary.free_surface[face_of[std::find(names.begin(), names.end(), s) - names.begin()]] =
          true;
    };
    if (faces.IsScalar() && faces.Scalar() == "none") {
      // No free surface: every face is PML.
    } else if (faces.IsScalar()) {
      add(faces, "boundary.free_surface");
    } else if (faces.IsSequence()) {
      for (std::size_t i = 0; i < faces.size(); ++i) {
        add(faces[i], index_path("boundary.free_surface", i));
      }
    } else {
      r.fail("boundary.free_surface",
             "expected a list of faces (top, bottom, x-, x+, y-, y+) or "
             "none, got " +
                 describe(faces));
    }
  }
}

void read_execution(const Reader& r, const YAML::Node& node, ExecutionConfig& execution) {
  r.expect_map(node, "execution",
               {"backend", "kernel", "decomposition", "transport", "threads", "shot_groups"});
  if (const YAML::Node b = node["backend"]) {
    execution.backend = r.choice(b, "execution.backend", {"auto", "cpu", "cuda"});
  }
  // Kernel names are checked against the kernel registry later, where it is known.
  if (const YAML::Node k = node["kernel"]) execution.kernel = r.text(k, "execution.kernel");
  if (const YAML::Node d = node["decomposition"]) {
    if (!r.is_auto(d)) {
      execution.decomposition = r.integers<3>(d, "execution.decomposition", 1, kMaxShape,
                                              "auto or a list of 3 integers [px, py, pz]");
    }
  }
  if (const YAML::Node t = node["transport"]) {
    execution.transport =
        r.choice(t, "execution.transport", {"auto", "host", "cuda_aware_mpi", "nccl"});
  }
  if (const YAML::Node t = node["threads"]) {
    execution.threads = r.integer(t, "execution.threads");
    r.check(execution.threads >= 0, t, "execution.threads", "must be >= 0 (0 = default)");
  }
  if (const YAML::Node g = node["shot_groups"]) {
    execution.shot_groups = r.integer(g, "execution.shot_groups");
    r.check(execution.shot_groups >= 1, g, "execution.shot_groups", "must be >= 1");
  }
}

void read_output(const Reader& r, const YAML::Node& node, const std::string& propagator,
                 const GridConfig& grid, OutputConfig& output) {
  r.expect_map(node, "output",
               {"file", "overwrite", "record", "seismograms", "snapshots", "final_wavefield"});
  if (const YAML::Node f = node["file"]) output.file = r.text(f, "output.file");
  if (const YAML::Node o = node["overwrite"]) output.overwrite = r.boolean(o, "output.overwrite");
  if (const YAML::Node rec = node["record"]) {
    // q is the second field of the coupled TTI system; the isotropic propagator has only p.
    output.record = r.choice(rec, "output.record", {"p", "q"});
    r.check(output.record == "p" || propagator == "acoustic_tti", rec, "output.record",
            "q is only for propagator: acoustic_tti");
  }
  if (const YAML::Node s = node["seismograms"]) {
    r.expect_map(s, "output.seismograms", {"interval"});
    if (const YAML::Node i = s["interval"]) {
      output.seismogram_interval = r.number(i, "output.seismograms.interval");
      r.check(output.seismogram_interval >= 0, i, "output.seismograms.interval",
              "must be >= 0 s (0 = every step)");
    }
  }
  if (const YAML::Node s = node["snapshots"]) {
    SnapshotConfig& snap = output.snapshots;
    r.expect_map(s, "output.snapshots", {"every", "stride", "box"});
    if (const YAML::Node e = s["every"]) {
      snap.every = r.integer(e, "output.snapshots.every");
      r.check(snap.every >= 0, e, "output.snapshots.every", "must be >= 0 steps (0 = none)");
    }
    if (const YAML::Node st = s["stride"]) {
      snap.stride = r.integers<3>(st, "output.snapshots.stride", 1, kMaxShape,
                                  "a list of 3 integers [sx, sy, sz]");
    }
    if (const YAML::Node b = s["box"]) {
      const auto box = r.integers<6>(b, "output.snapshots.box", 0, kMaxShape,
                                     "a list of 6 integers [i0, i1, j0, j1, k0, k1]");
      for (std::size_t a = 0; a < 3; ++a) {
        const std::string p = index_path("output.snapshots.box", 2 * a + 1);
        r.check(box[2 * a] < box[2 * a + 1] && box[2 * a + 1] <= grid.shape[a], b[2 * a + 1], p,
                "each axis must satisfy lower < upper <= grid.shape (" +
                    std::to_string(grid.shape[a]) + "), got [" + std::to_string(box[2 * a]) + ", " +
                    std::to_string(box[2 * a + 1]) + ")");
      }
      snap.box = box;
    }
  }
  if (const YAML::Node f = node["final_wavefield"]) {
    output.final_wavefield = r.boolean(f, "output.final_wavefield");
  }
}

void read_checkpoint(const Reader& r, const YAML::Node& node, CheckpointConfig& checkpoint) {
  r.expect_map(node, "checkpoint", {"every", "every_minutes", "file", "on_signal", "stop_at"});
  checkpoint.enabled = true;
  if (const YAML::Node e = node["every"]) {
    checkpoint.every = r.integer(e, "checkpoint.every");
    r.check(checkpoint.every >= 0, e, "checkpoint.every", "must be >= 0 steps (0 = only on a signal)");
  }
  if (const YAML::Node m = node["every_minutes"]) {
    checkpoint.every_minutes = r.number(m, "checkpoint.every_minutes");
    r.check(checkpoint.every_minutes >= 0, m, "checkpoint.every_minutes", "must be >= 0 minutes (0 = none)");
  }
  if (const YAML::Node f = node["file"]) {
    checkpoint.file = r.text(f, "checkpoint.file");
    r.check(!checkpoint.file.empty(), f, "checkpoint.file", "must not be empty");
  }
  if (const YAML::Node s = node["on_signal"]) checkpoint.on_signal = r.boolean(s, "checkpoint.on_signal");
  if (const YAML::Node s = node["stop_at"]) {
    checkpoint.stop_at = r.integer(s, "checkpoint.stop_at");
    r.check(checkpoint.stop_at >= 0, s, "checkpoint.stop_at", "must be >= 0 (a step; 0 = never)");
  }
}

/// `node` written out with its maps in key order (scalars as written), for a digest.
void write_canonical(const YAML::Node& node, std::string& out) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      out += "'" + node.Scalar() + "'";
      break;
    case YAML::NodeType::Sequence:
      out += "[";
      for (const auto& item : node) {
        write_canonical(item, out);
        out += ",";
      }
      out += "]";
      break;
    case YAML::NodeType::Map: {
      std::map<std::string, YAML::Node> sorted;
      for (const auto& kv : node) sorted.emplace(kv.first.Scalar(), kv.second);
      out += "{";
      for (const auto& [key, value] : sorted) {
        out += key + ":";
        write_canonical(value, out);
        out += ",";
      }
      out += "}";
      break;
    }
    default:
      out += "~";
  }
}

/// Config::fingerprint of the tree: FNV-1a (64 bits) of its canonical text, in hex.
std::string fingerprint_of(const YAML::Node& root) {
  YAML::Node tree = YAML::Clone(root);
  tree.remove("execution");
  tree.remove("checkpoint");
  if (tree["output"] && tree["output"].IsMap()) tree["output"].remove("overwrite");
  std::string text;
  write_canonical(tree, text);
  std::uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

Config parse(const std::string& yaml_text, const std::vector<std::string>& overrides,
             const std::string& base_dir, const std::string& source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError("config error: " + source_name + " (line " + std::to_string(e.mark.line + 1) +
                      "): YAML syntax error: " + e.msg);
  }
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) {
    throw ConfigError("config error: " + source_name +
                      ": the top level must be a map of sections (grid, model, ...), got " +
                      describe(root));
  }

  std::vector<std::string> overridden;
  for (const auto& text : overrides) {
    const Override o = parse_override(text);
    assign(root, o, 0);
    overridden.push_back(o.key);
  }

  const YAML::Node& doc = root;  // const: lookups below must not add keys
  Config config;
  if (overrides.empty()) {
    config.text = yaml_text;
  } else {
    YAML::Emitter out;
    out << root;
    config.text = std::string(out.c_str()) + "\n";
  }
  record_lines(doc, "", overridden, config.lines);

  const Reader r(config.lines, base_dir);
  r.expect_map(doc, "",
               {"propagator", "mode", "grid", "model", "time", "source", "receivers", "shots",
                "boundary", "execution", "output", "checkpoint"});
  if (const YAML::Node p = doc["propagator"]) {
    config.propagator = r.choice(p, "propagator", {"acoustic_iso", "acoustic_tti"});
  }
  if (const YAML::Node m = doc["mode"]) config.mode = r.choice(m, "mode", {"standard", "minimod"});
  if (!doc["grid"]) r.fail("grid.shape", "required key is missing (no grid section)");
  read_grid(r, doc["grid"], config.grid);
  if (!doc["model"]) r.fail("model.vp", "required key is missing (no model section)");
  read_model(r, doc["model"], config.propagator, config.model);
  if (!doc["time"]) r.fail("time.duration", "required key is missing (or give time.steps)");
  read_time(r, doc["time"], config.time);
  if (!doc["source"]) r.fail("source.position", "required key is missing (no source section)");
  read_source(r, doc["source"], config.source);
  if (const YAML::Node n = doc["receivers"]) read_position_groups(r, n, "receivers", config.receivers);
  // One shot at source.position, or a survey's shots: one of the two.
  if (const YAML::Node n = doc["shots"]) {
    if (doc["source"]["position"])
      r.fail("source.position", "give either source.position (one shot) or shots (a survey), not both");
    read_position_groups(r, n, "shots", config.shots);
  } else if (!doc["source"]["position"]) {
    r.fail("source.position", "required key is missing (or give shots: a survey)");
  }
  if (const YAML::Node n = doc["boundary"]) read_boundary(r, n, config.boundary);
  if (const YAML::Node n = doc["execution"]) read_execution(r, n, config.execution);
  if (const YAML::Node n = doc["output"])
    read_output(r, n, config.propagator, config.grid, config.output);
  if (const YAML::Node n = doc["checkpoint"]) read_checkpoint(r, n, config.checkpoint);
  config.fingerprint = fingerprint_of(root);
  return config;
}

}  // namespace

std::string config_error_message(const Config& config, const std::string& key,
                                 const std::string& message) {
  return format_error(config.lines, key, message);
}

Config parse_config(const std::string& yaml_text, const std::vector<std::string>& overrides,
                    const std::string& base_dir, SourceMap* lines) {
  Config config = parse(yaml_text, overrides, base_dir, "config text");
  if (lines) *lines = config.lines;
  return config;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw ConfigError("config error: cannot read config file '" + path + "': it does not exist");
  }
  if (fs::is_directory(path, ec)) {
    throw ConfigError("config error: cannot read config file '" + path + "': it is a folder");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in || in.bad()) throw ConfigError("config error: cannot read config file '" + path + "'");
  std::string base_dir = fs::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  Config config = parse(text.str(), overrides, base_dir, path);
  config.path = path;
  return config;
}

}  // namespace minimod::io
