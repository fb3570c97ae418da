#include "physics/wavelet.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <sstream>

namespace minimod::physics {

double ricker(double t, double f, double delay) {
  const double a = M_PI * f * (t - delay);
  return (1.0 - 2.0 * a * a) * std::exp(-a * a);
}

double minimod_gaussian(double t, double fmax) {
  const double sigma = 0.6 * fmax, tau = 1.0, kappa = 8.0;
  const double x = sigma * t - tau;
  return -2.0 * kappa * sigma * (sigma - 2.0 * sigma * kappa * x * x) * std::exp(-kappa * x * x);
}

double Wavelet::operator()(double t) const {
  switch (kind) {
    case Kind::ricker:
      return amplitude * ricker(t, frequency, delay);
    case Kind::minimod_gaussian:
      return amplitude * minimod_gaussian(t, frequency);
    case Kind::samples: {
      if (samples.empty() || t < 0) return 0;
      const double x = t / sample_dt;
      const auto n = static_cast<size_t>(x);
      if (n + 1 >= samples.size()) return n < samples.size() ? amplitude * samples[n] : 0.0;
      const double f = x - static_cast<double>(n);
      return amplitude * ((1 - f) * samples[n] + f * samples[n + 1]);
    }
  }
  return 0;
}

std::string Wavelet::describe() const {
  std::ostringstream s;
  switch (kind) {
    case Kind::ricker:
      s << "Ricker " << frequency << " Hz, delay " << delay << " s";
      break;
    case Kind::minimod_gaussian:
      s << "Minimod Gaussian derivative, fmax " << frequency << " Hz";
      break;
    case Kind::samples:
      s << samples.size() << " samples at " << sample_dt << " s";
      break;
  }
  return s.str();
}

double wavelet_extent(const Wavelet& w) {
  switch (w.kind) {
    case Wavelet::Kind::ricker:
      return w.delay + 3.0 / w.frequency;
    case Wavelet::Kind::minimod_gaussian:
      return 2.5 / (0.6 * w.frequency);
    case Wavelet::Kind::samples:
      return static_cast<double>(w.samples.size()) * w.sample_dt;
  }
  return 0;
}

double highest_significant_frequency(const Wavelet& w, double dt, double duration,
                                     double fraction) {
  duration = std::max(duration, wavelet_extent(w));
  const int n = std::max(8, static_cast<int>(std::ceil(duration / dt)));
  // Zero-pad to at least 4096 samples for a fine frequency grid; plain DFT over positive bins.
  const int nfft = std::max(4096, n);
  std::vector<double> s(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) s[static_cast<size_t>(i)] = w(i * dt);
  const int bins = nfft / 2;
  const int step = std::max(1, bins / 1024);  // 1024 frequencies are plenty for a warning
  std::vector<double> amp;
  std::vector<double> freq;
  for (int b = 0; b <= bins; b += step) {
    std::complex<double> acc = 0;
    const double omega = -2.0 * M_PI * b / nfft;
    for (int i = 0; i < n; ++i) acc += s[static_cast<size_t>(i)] * std::polar(1.0, omega * i);
    amp.push_back(std::abs(acc));
    freq.push_back(b / (nfft * dt));
  }
  double peak = 0;
  for (double a : amp) peak = std::max(peak, a);
  double f_hi = 0;
  for (size_t b = 0; b < amp.size(); ++b)
    if (amp[b] >= fraction * peak) f_hi = freq[b];
  return f_hi;
}

}  // namespace minimod::physics
