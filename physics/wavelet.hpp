// Source wavelets s(t): Ricker by peak frequency, Minimod's Gaussian derivative, or samples read
// from a file (linearly interpolated). Units: t in s, f in Hz; amplitude is dimensionless.
#pragma once
#include <string>
#include <vector>

namespace minimod::physics {

/// Ricker: (1 - 2 (pi f tau)^2) exp(-(pi f tau)^2), tau = t - delay.
double ricker(double t, double peak_frequency, double delay);

/// Minimod's source: -2 k s (s - 2 s k (s t - c)^2) exp(-k (s t - c)^2), s = 0.6 fmax, c = 1, k = 8
/// (notes/sai2020-digest.md §1.3).
double minimod_gaussian(double t, double fmax);

struct Wavelet {
  enum class Kind { ricker, minimod_gaussian, samples } kind = Kind::ricker;
  double frequency = 10;        // Hz
  double delay = 0;             // s (Ricker)
  double amplitude = 1;
  std::vector<double> samples;  // Kind::samples, at sample_dt from t = 0
  double sample_dt = 0;         // s

  double operator()(double t) const;
  std::string describe() const;
};

/// Time (s) after which the wavelet is negligible: Ricker delay + 3 / f (e^-89 of the peak),
/// Minimod's Gaussian 2.5 / (0.6 fmax) (its centre at 1 / (0.6 fmax), e^-18 by then), samples
/// their length.
double wavelet_extent(const Wavelet& w);

/// Highest frequency (Hz) where the wavelet's amplitude spectrum, sampled at dt over `duration`
/// (at least the wavelet's extent: a run shorter than its wavelet must not see the truncated tail
/// as broadband), is still above `fraction` of its peak: the frequency the grid must resolve.
double highest_significant_frequency(const Wavelet& w, double dt, double duration,
                                     double fraction = 0.05);

}  // namespace minimod::physics
