// Unit tests of policy/load/preassign: load levels, the Laplace-smoothed
// probability, probe bookkeeping, outcomes, expiry after the time-to-live,
// history halving, and learning per level. Pure; time is passed by hand.
#include "policy/load/preassign.h"

#include <doctest/doctest.h>

#include <random>

namespace pvfs::load {
namespace {

using std::chrono::milliseconds;

constexpr uint64_t kUnit = 1000;

PreassignOptions small_options() {
  PreassignOptions o;
  o.level_bytes = kUnit;
  o.levels = 5;
  o.ttl = milliseconds(100);
  o.history_window = 1000;
  return o;
}

Nanos at_ms(int ms) { return milliseconds(ms); }

}  // namespace

TEST_CASE("load levels are log2 buckets of level_bytes units, the last one open-ended") {
  PreassignEstimator est(small_options());
  CHECK(est.level_of(0) == 0);
  CHECK(est.level_of(kUnit - 1) == 0);
  CHECK(est.level_of(kUnit) == 1);
  CHECK(est.level_of(2 * kUnit - 1) == 1);
  CHECK(est.level_of(2 * kUnit) == 2);
  CHECK(est.level_of(4 * kUnit - 1) == 2);
  CHECK(est.level_of(4 * kUnit) == 3);
  CHECK(est.level_of(8 * kUnit) == 4);
  CHECK(est.level_of(1000 * kUnit) == 4);
  CHECK(est.level_of(UINT64_MAX) == 4);

  PreassignEstimator defaults;
  CHECK(defaults.level_of((uint64_t{256} << 10) - 1) == 0);
  CHECK(defaults.level_of(uint64_t{1} << 20) == 3);  // 4 units
  CHECK(defaults.level_of(UINT64_MAX) == 23);
}

TEST_CASE("an unseen level has probability one half") {
  PreassignEstimator est(small_options());
  CHECK(est.probability(0) == doctest::Approx(0.5));
  CHECK(est.probability(100 * kUnit) == doctest::Approx(0.5));
  CHECK(est.preassigned_bytes() == 0);
  CHECK(est.pending() == 0);
}

TEST_CASE("a probe adds probability times the piece length and remembers its round") {
  PreassignEstimator est(small_options());
  CHECK(est.on_probe(7, 0, 1000, at_ms(0)) == 500);
  CHECK(est.preassigned_bytes() == 500);
  CHECK(est.pending() == 1);
  CHECK(est.on_probe(8, 3 * kUnit, 2000, at_ms(1)) == 1000);
  CHECK(est.preassigned_bytes() == 1500);
  CHECK(est.pending() == 2);
}

TEST_CASE("a second probe of a pending round and round zero are ignored") {
  PreassignEstimator est(small_options());
  CHECK(est.on_probe(7, 0, 1000, at_ms(0)) == 500);
  CHECK(est.on_probe(7, 0, 1000, at_ms(1)) == 0);
  CHECK(est.on_probe(7, 10 * kUnit, 9000, at_ms(1)) == 0);
  CHECK(est.on_probe(0, 0, 1000, at_ms(1)) == 0);
  CHECK(est.preassigned_bytes() == 500);
  CHECK(est.pending() == 1);
}

TEST_CASE("an outcome removes the round's expected bytes and records at the probe's level") {
  PreassignEstimator est(small_options());
  (void)est.on_probe(1, 0, 1000, at_ms(0));          // level 0
  (void)est.on_probe(2, 4 * kUnit, 1000, at_ms(0));  // level 3
  est.on_outcome(1, true);
  CHECK(est.pending() == 1);
  CHECK(est.preassigned_bytes() == 500);
  // One chosen out of one: (1 + 1) / (1 + 2).
  CHECK(est.probability(0) == doctest::Approx(2.0 / 3));
  CHECK(est.probability(4 * kUnit) == doctest::Approx(0.5));

  est.on_outcome(2, false);
  CHECK(est.pending() == 0);
  CHECK(est.preassigned_bytes() == 0);
  CHECK(est.probability(4 * kUnit) == doctest::Approx(1.0 / 3));
  CHECK(est.probability(0) == doctest::Approx(2.0 / 3));
}

TEST_CASE("the level is the one the probe saw, not the load at the outcome") {
  PreassignEstimator est(small_options());
  // The probe saw level 2; the round's outcome is recorded there.
  (void)est.on_probe(5, 2 * kUnit, 1000, at_ms(0));
  est.on_outcome(5, true);
  CHECK(est.probability(2 * kUnit) == doctest::Approx(2.0 / 3));
  CHECK(est.probability(3 * kUnit) == doctest::Approx(2.0 / 3));  // same bucket
  CHECK(est.probability(0) == doctest::Approx(0.5));
  CHECK(est.probability(kUnit) == doctest::Approx(0.5));
}

TEST_CASE("outcomes of unknown or already decided rounds are ignored") {
  PreassignEstimator est(small_options());
  est.on_outcome(3, true);
  CHECK(est.probability(0) == doctest::Approx(0.5));
  (void)est.on_probe(3, 0, 1000, at_ms(0));
  est.on_outcome(3, false);
  est.on_outcome(3, true);
  CHECK(est.probability(0) == doctest::Approx(1.0 / 3));
  CHECK(est.preassigned_bytes() == 0);
  // A decided round may be probed again (a new round reusing the number).
  CHECK(est.on_probe(3, 0, 3000, at_ms(1)) == 1000);
}

TEST_CASE("a probe older than the time-to-live expires and counts as not chosen") {
  PreassignEstimator est(small_options());
  (void)est.on_probe(1, 0, 1000, at_ms(0));
  (void)est.on_probe(2, 0, 1000, at_ms(50));
  est.expire(at_ms(99));
  CHECK(est.pending() == 2);
  CHECK(est.preassigned_bytes() == 1000);

  est.expire(at_ms(100));  // round 1 has waited the whole ttl
  CHECK(est.pending() == 1);
  CHECK(est.preassigned_bytes() == 500);
  CHECK(est.probability(0) == doctest::Approx(1.0 / 3));

  // The late outcome of an expired round changes nothing.
  est.on_outcome(1, true);
  CHECK(est.probability(0) == doctest::Approx(1.0 / 3));

  est.expire(at_ms(1000));
  CHECK(est.pending() == 0);
  CHECK(est.preassigned_bytes() == 0);
  CHECK(est.probability(0) == doctest::Approx(1.0 / 4));
}

TEST_CASE("a level's counts are halved when they reach the history window") {
  PreassignOptions o = small_options();
  o.history_window = 8;
  PreassignEstimator est(o);
  uint64_t round = 1;
  // Seven not-chosen outcomes: 1 / 9.
  for (int i = 0; i < 7; ++i) {
    (void)est.on_probe(round, 0, 1000, at_ms(0));
    est.on_outcome(round++, false);
  }
  CHECK(est.probability(0) == doctest::Approx(1.0 / 9));
  // The eighth (chosen) reaches the window: 8 outcomes, 1 chosen -> 4, 0.
  (void)est.on_probe(round, 0, 1000, at_ms(0));
  est.on_outcome(round++, true);
  CHECK(est.probability(0) == doctest::Approx(1.0 / 6));
  // Four chosen in a row now move the estimate faster than without halving
  // would: 8 outcomes again -> halved to 4 outcomes, 2 chosen.
  for (int i = 0; i < 4; ++i) {
    (void)est.on_probe(round, 0, 1000, at_ms(0));
    est.on_outcome(round++, true);
  }
  CHECK(est.probability(0) == doctest::Approx(3.0 / 6));
}

TEST_CASE("the estimate learns per level: chosen at light loads, ignored at heavy ones") {
  PreassignEstimator est(small_options());
  std::mt19937_64 rng(7);
  uint64_t round = 1;
  int now_ms = 0;
  for (int i = 0; i < 500; ++i) {
    // Light (level 0): always chosen. Heavy (level 4): chosen one time in ten.
    (void)est.on_probe(round, 0, 1000, at_ms(now_ms));
    est.on_outcome(round++, true);
    (void)est.on_probe(round, 50 * kUnit, 1000, at_ms(now_ms));
    est.on_outcome(round++, rng() % 10 == 0);
    ++now_ms;
  }
  CHECK(est.probability(0) > 0.99);
  CHECK(est.probability(50 * kUnit) == doctest::Approx(0.1).epsilon(0.05));
  // Untouched levels are still at one half.
  CHECK(est.probability(kUnit) == doctest::Approx(0.5));
  CHECK(est.probability(4 * kUnit) == doctest::Approx(0.5));
  // A probe at the light level now preassigns almost the whole piece.
  CHECK(est.on_probe(round, 0, 10000, at_ms(now_ms)) >= 9900);
}

TEST_CASE("many outstanding probes add up and drain back to zero") {
  PreassignEstimator est(small_options());
  uint64_t total = 0;
  for (uint64_t round = 1; round <= 100; ++round) {
    total += est.on_probe(round, round * 100, 1000 + round, at_ms(static_cast<int>(round)));
  }
  CHECK(est.pending() == 100);
  CHECK(est.preassigned_bytes() == total);
  for (uint64_t round = 1; round <= 100; round += 2) est.on_outcome(round, round % 4 == 1);
  CHECK(est.pending() == 50);
  est.expire(at_ms(10000));
  CHECK(est.pending() == 0);
  CHECK(est.preassigned_bytes() == 0);
}

}  // namespace pvfs::load
