// Seeded randomness for the simulator: the 64-bit Mersenne Twister (whose
// output the C++ standard fixes) with our own draws on top, because the
// standard distributions may differ between library implementations and a
// seed must give the same CSV everywhere. Plain value; not thread-safe.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace pvfs::sim {

// SplitMix64: spreads related seeds (seed, seed + 1, ...) apart.
inline uint64_t mix_seed(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(mix_seed(seed)) {}

  // An independent generator for sub-stream `stream` of `seed`: the same
  // (seed, stream) always gives the same numbers, whatever else was drawn.
  static Random stream(uint64_t seed, uint64_t stream) {
    return Random(mix_seed(seed) ^ mix_seed(stream * 0x2545f4914f6cdd1dULL + 1));
  }

  // The engine itself, for the policies that take one (policy/dispatch).
  std::mt19937_64& engine() { return engine_; }

  // Uniform in [0, n) for n > 0, without modulo bias.
  uint64_t below(uint64_t n) {
    const uint64_t rejected = (UINT64_MAX % n + 1) % n;
    uint64_t x = engine_();
    while (x < rejected) x = engine_();
    return x % n;
  }
  // Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Normal, by Box-Muller (one pair per call, the second value discarded,
  // so no hidden state).
  double normal(double mean, double sd) {
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    return mean + sd * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  // Exponential with the given mean.
  double exponential(double mean) { return -mean * std::log(1.0 - uniform()); }

 private:
  std::mt19937_64 engine_;
};

}  // namespace pvfs::sim
