// policy/qos: the U-Shape policy objects, each against values worked out
// by hand from the paper's formulas (Zhang, Davis, Jiang, §3.1, §3.2).
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "policy/qos/cart.h"
#include "policy/qos/gate.h"
#include "policy/qos/locality.h"
#include "policy/qos/model.h"
#include "policy/qos/planner.h"
#include "policy/qos/synthetic.h"

using namespace pvfs;
using namespace pvfs::qos;
using namespace std::chrono_literals;

namespace {
constexpr uint64_t KiB = 1024;
}

// ---- locality ----

TEST_CASE("sequential requests have no distance and their mean size") {
  LocalityTracker t(100ms);
  t.record("a", 0, 64 * KiB, 0ms, 1ms);
  t.record("a", 64 * KiB, 64 * KiB, 1ms, 2ms);
  t.record("a", 128 * KiB, 32 * KiB, 2ms, 4ms);
  CHECK(t.close(99ms).empty());  // the epoch is not over yet
  auto s = t.close(100ms);
  REQUIRE(s.size() == 1);
  CHECK(s[0].requests == 3);
  CHECK(s[0].avg_dist_bytes == 0);
  CHECK(s[0].avg_size_bytes == doctest::Approx(160.0 * KiB / 3));
  CHECK(s[0].bytes == 160 * KiB);
  CHECK(s[0].service == 4ms);
  CHECK(s[0].throughput() == doctest::Approx(160.0 * KiB / 0.004));
}

TEST_CASE("a job going back and forth between two regions is not taken for sequential") {
  LocalityTracker t(100ms);
  // Signed distances would be +1 MiB, -1 MiB, ... and average to zero.
  for (int i = 0; i < 4; ++i) t.record("a", (i % 2) * 1024 * KiB + uint64_t(i / 2) * 4 * KiB, 4 * KiB, 0ms, 1ms * i);
  auto s = t.close(100ms);
  REQUIRE(s.size() == 1);
  CHECK(s[0].avg_dist_bytes == doctest::Approx((1020.0 + 1024.0 + 1020.0) * KiB / 3));
}

TEST_CASE("an epoch's first request is measured from the job's previous one and jobs stay apart") {
  LocalityTracker t(100ms);
  t.record("a", 0, 4 * KiB, 0ms, 10ms);
  t.record("b", 1 << 30, 4 * KiB, 0ms, 20ms);     // another job in between does not count for a
  t.record("a", 8 * KiB, 4 * KiB, 140ms, 150ms);  // next epoch, 4 KiB after a's last end
  auto s = t.close(300ms);
  REQUIRE(s.size() == 3);
  CHECK(s[0].job == "a");
  CHECK(s[0].epoch == 0);
  CHECK(s[1].job == "b");
  CHECK(s[2].job == "a");
  CHECK(s[2].epoch == 1);
  CHECK(s[2].requests == 1);
  CHECK(s[2].avg_dist_bytes == 4.0 * KiB);
}

TEST_CASE("requests in flight together count their service once") {
  LocalityTracker t(100ms);
  // Both arrive at 0; the disk serves one until 5 ms and the other until 9 ms.
  t.record("a", 0, 64 * KiB, 0ms, 5ms);
  t.record("a", 64 * KiB, 64 * KiB, 0ms, 9ms);
  auto s = t.close(100ms);
  REQUIRE(s.size() == 1);
  CHECK(s[0].service == 9ms);
}

TEST_CASE("an object's offsets are contiguous in its extent and objects are far apart") {
  const ObjectId a{InodeId::make(FileSetId(1), 7), 0};
  const ObjectId b{InodeId::make(FileSetId(1), 8), 0};
  const ObjectId a1{InodeId::make(FileSetId(1), 7), 1};
  CHECK(object_lba(a, 4096) - object_lba(a, 0) == 4096);
  CHECK(object_lba(a, 0) % (uint64_t{1} << kExtentBits) == 0);
  CHECK(object_slot(a) != object_slot(b));
  CHECK(object_slot(a) != object_slot(a1));
  CHECK(object_slot(a) < (uint64_t{1} << 24));
  // The mapping is part of the model file's meaning: it must not change.
  CHECK(object_slot(a) == object_slot(ObjectId{InodeId::make(FileSetId(1), 7), 0}));
}

// ---- CART ----

TEST_CASE("a step is split halfway between its two sides and leaves predict their means") {
  std::vector<Sample> s{{{1, 0}, 1}, {{2, 0}, 3}, {{3, 0}, 10}, {{4, 0}, 12}};
  const auto t = RegressionTree::fit(s, {1, 1, 2});
  REQUIRE(t.nodes().size() == 3);
  CHECK(t.nodes()[0].feature == 0);
  CHECK(t.nodes()[0].threshold == 2.5);
  CHECK(t.predict({2.5, 0}) == 2);
  CHECK(t.predict({2.6, 0}) == 11);
  CHECK(t.depth() == 1);
}

TEST_CASE("the tree splits on the feature that explains the target") {
  std::vector<Sample> s;
  for (int i = 0; i < 40; ++i) s.push_back({{double(i % 5), double(i)}, i < 20 ? 5.0 : 50.0});
  const auto t = RegressionTree::fit(s, {3, 1, 2});
  CHECK(t.nodes()[0].feature == 1);
  CHECK(t.nodes()[0].threshold == 19.5);
  CHECK(t.leaves() == 2);  // both sides are pure: no further split
}

TEST_CASE("no leaf is smaller than min_samples_leaf") {
  std::vector<Sample> s{{{1, 0}, 100}, {{2, 0}, 1}, {{3, 0}, 1}, {{4, 0}, 1}, {{5, 0}, 1}, {{6, 0}, 1}};
  const auto free = RegressionTree::fit(s, {1, 1, 2});
  CHECK(free.nodes()[0].threshold == 1.5);
  const auto held = RegressionTree::fit(s, {1, 3, 2});
  CHECK(held.nodes()[0].threshold == 3.5);
  for (const auto& n : held.nodes()) CHECK(n.samples >= 3);
}

TEST_CASE("growing stops at the first depth whose cross-validated error is under the threshold") {
  std::vector<Sample> s;
  std::mt19937_64 rng(5);
  // Four levels: two splits deep explains it; noise of 1% stays.
  for (int i = 0; i < 400; ++i) {
    const double x0 = double(rng() % 1000), x1 = double(rng() % 1000);
    const double y = (x0 < 500 ? 10.0 : 40.0) + (x1 < 300 ? 0.0 : 100.0);
    s.push_back({{x0, x1}, y * (1 + 0.01 * (uniform01(rng) - 0.5))});
  }
  auto g = grow(s, {0.05, 5, 12, 3});
  REQUIRE(g.ok());
  CHECK(g->depth == 2);
  CHECK(g->met);
  CHECK(g->cv_error < 0.05);
  CHECK(cross_validated_error(s, {1, 3, 2}, 5) > 0.05);
  CHECK_FALSE(grow(std::vector<Sample>(3), {}).ok());
}

TEST_CASE("a tree from nodes refuses a cycle and a bad feature") {
  std::vector<RegressionTree::Node> loop(3);
  loop[0] = {0, 1.0, 1, 2, 0, 1};
  loop[1] = {0, 1.0, 0, 2, 0, 1};  // back to the root
  CHECK(RegressionTree::from_nodes(loop).code() == Errc::corrupt);
  std::vector<RegressionTree::Node> feature(3);
  feature[0] = {7, 1.0, 1, 2, 0, 1};
  CHECK(RegressionTree::from_nodes(feature).code() == Errc::corrupt);
  CHECK(RegressionTree::from_nodes({}).code() == Errc::corrupt);
}

// ---- model, alpha, average ----

TEST_CASE("alpha stretches the I/O time only, and a goal shorter than the profile is refused") {
  // T_profile 110 s with 20 s of compute; goal 200 s: alpha = 180 / 90 = 2.
  auto a = alpha(200s, 110s, 20s);
  REQUIRE(a.ok());
  CHECK(*a == doctest::Approx(2.0));
  auto refused = alpha(100s, 110s, 20s);
  CHECK(refused.code() == Errc::invalid_argument);
  CHECK(refused.status().detail().find("cannot be met") != std::string::npos);
  CHECK_FALSE(alpha(200s, 20s, 20s).ok());
  // average: 9 GB over the 180 s of I/O the goal allows.
  CHECK(*average_bound(9'000'000'000, 200s, 20s) == doctest::Approx(50e6));
}

namespace {
Model sample_model() {
  std::vector<Sample> s;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 300; ++i) {
    const double d = double(rng() % 100000), z = double(4096 * (1 + rng() % 32));
    s.push_back({{d, z}, z / (d > 0 ? 0.004 + d * 1e-8 : 0.0001) / 3.1});
  }
  Model m;
  m.job = "slurm.4242";
  m.alpha = 3.1;
  m.profile = 53'500'000'001ns;
  m.comp = 1'234'567ns;
  m.epoch = 100ms;
  m.bytes = 2ull << 30;
  m.cv_error = 0.0731;
  m.tree = grow(s, {}).value().tree;
  return m;
}
}  // namespace

TEST_CASE("a model survives its file bit for bit") {
  const Model m = sample_model();
  const std::string text = serialize(m);
  auto back = parse_model(text);
  REQUIRE_MESSAGE(back.ok(), back.status().detail());
  CHECK(back->job == m.job);
  CHECK(back->alpha == m.alpha);
  CHECK(back->profile == m.profile);
  CHECK(back->comp == m.comp);
  CHECK(back->epoch == m.epoch);
  CHECK(back->bytes == m.bytes);
  CHECK(back->cv_error == m.cv_error);
  REQUIRE(back->tree.nodes().size() == m.tree.nodes().size());
  for (size_t i = 0; i < m.tree.nodes().size(); ++i) {
    CHECK(back->tree.nodes()[i].threshold == m.tree.nodes()[i].threshold);
    CHECK(back->tree.nodes()[i].value == m.tree.nodes()[i].value);
  }
  CHECK(serialize(*back) == text);
  CHECK(m.bound(1000, 65536) == back->bound(1000, 65536));
}

TEST_CASE("a damaged model file is refused with a reason") {
  const std::string text = serialize(sample_model());
  auto detail = [](std::string_view t) {
    auto r = parse_model(t);
    CHECK(r.code() == Errc::corrupt);
    return r.status().detail();
  };
  std::string edited = text;
  edited[edited.find("alpha 3.1") + 6] = '4';
  CHECK(detail(edited).find("checksum mismatch") != std::string::npos);
  CHECK(detail(text.substr(0, text.size() / 2)).find("line") != std::string::npos);
  CHECK(detail(text.substr(0, text.find("checksum"))).find("no checksum") != std::string::npos);
  std::string v2 = text;
  v2.replace(0, 16, "pvfs-qos-model 2");
  CHECK(detail(v2).find("this build reads version 1") != std::string::npos);
  CHECK(detail("hello\n").find("not a pvfs QoS model") != std::string::npos);
  CHECK(detail("").find("empty") != std::string::npos);
  CHECK(detail(text + "more\n").find("after the checksum") != std::string::npos);
}

// ---- synthetic workload ----

TEST_CASE("synthetic requests are whole blocks from 4 KiB to 128 KiB") {
  std::mt19937_64 rng(11);
  SyntheticWorkload w({}, 0);
  double sum = 0;
  uint64_t small = 0, large = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const auto r = w.next(rng);
    REQUIRE(r.length % (4 * KiB) == 0);
    REQUIRE(r.length >= 4 * KiB);
    REQUIRE(r.length <= 128 * KiB);
    small += r.length == 4 * KiB;
    large += r.length == 128 * KiB;
    sum += double(r.length);
  }
  CHECK(sum / n == doctest::Approx(66.0 * KiB).epsilon(0.02));  // uniform over 1..32 blocks
  CHECK(small > n / 40);
  CHECK(large > n / 40);
}

TEST_CASE("the sequential probability sets how often a request follows the previous one") {
  for (double p : {0.0, 0.3, 1.0}) {
    std::mt19937_64 rng(2);
    SyntheticOptions o;
    o.sequential = p;
    SyntheticWorkload w(o, 1 << 20);
    uint64_t end = 1 << 20, follows = 0;
    const int n = 10000;
    for (int i = 0; i < n; ++i) {
      const auto r = w.next(rng);
      follows += r.lba == end;
      end = r.lba + r.length;
      REQUIRE(r.lba >= (1 << 20));
    }
    CHECK(double(follows) / n == doctest::Approx(p).epsilon(0.03));
  }
}

TEST_CASE("jumps spread evenly over the logarithm of the distance") {
  std::mt19937_64 rng(9);
  SyntheticOptions o;
  o.sequential = 0;
  o.span_bytes = uint64_t{1} << 36;
  SyntheticWorkload w(o, uint64_t{1} << 40);
  uint64_t end = uint64_t{1} << 40;
  int below_mid = 0, n = 10000;
  const double mid = std::sqrt(4096.0 * double(o.span_bytes));  // the middle on a log scale
  for (int i = 0; i < n; ++i) {
    const auto r = w.next(rng);
    const double jump = std::abs(double(r.lba) - double(end));
    below_mid += jump < mid;
    end = r.lba + r.length;
  }
  CHECK(double(below_mid) / n == doctest::Approx(0.5).epsilon(0.05));
}

TEST_CASE("a large request is split into sequential pieces of at most 128 KiB") {
  const auto p = split({1000, 300 * KiB, true}, 128 * KiB);
  REQUIRE(p.size() == 3);
  CHECK(p[0].lba == 1000);
  CHECK(p[1].lba == 1000 + 128 * KiB);
  CHECK(p[2].length == 44 * KiB);
  CHECK(p[2].write);
  CHECK_FALSE(validate(SyntheticOptions{4096, 5000, 0.5, 1 << 30, 0.5}).ok());
}

// ---- planner ----

namespace {
JobReport goal(std::string job, double bound, uint64_t bytes, Nanos left, bool own = true) {
  JobReport r;
  r.job = std::move(job);
  r.goal = true;
  r.bound = bound;
  r.bytes = bytes;
  r.window_bytes = bytes;
  r.active = true;
  r.left = left;
  r.seek_cost = own ? 5ms : 1ms;
  r.idle_cost = own ? 1ms : 5ms;
  return r;
}
JobReport best_effort(std::string job) {
  JobReport r;
  r.job = std::move(job);
  r.active = true;
  return r;
}
// A dedicated window's length; "" the shared window, "*" best effort's.
Nanos window_of(const Plan& p, std::string_view job) {
  for (const auto& w : p.windows) {
    if (w.kind == WindowKind::dedicated && w.job == job) return w.length;
    if (w.kind == WindowKind::shared && job.empty()) return w.length;
    if (w.kind == WindowKind::best_effort && job == "*") return w.length;
  }
  return 0ns;
}
void set_bytes(JobReport& r, uint64_t bytes) {
  r.bytes = bytes;
  r.window_bytes = bytes;
}
}  // namespace

TEST_CASE("a new job's window starts inversely proportional to throughput, then T_adjust meets its bound") {
  WindowPlanner planner({1000ms, 20ms, true});
  // Period 1: a is new; with best effort beside it, two windows of equal
  // (unknown) throughput share the period.
  std::vector<JobReport> r{goal("a", 20e6, 0, 100s), best_effort("be")};
  Plan p = planner.plan(r);
  CHECK(window_of(p, "a") == 500ms);
  CHECK(window_of(p, "*") == 500ms);
  // It got 25 MB in its 500 ms (50 MB/s) but needs 20 MB per period:
  // T_adjust = (20 MB - 25 MB) / 50 MB/s = -100 ms.
  set_bytes(r[0], 25'000'000);
  p = planner.plan(r);
  CHECK(window_of(p, "a") == 400ms);
  CHECK(window_of(p, "*") == 600ms);  // the rest goes to best effort
  CHECK(planner.job("a")->rate == doctest::Approx(50e6));
  // Then it got 10 MB in 400 ms (25 MB/s): it needs 800 ms.
  set_bytes(r[0], 10'000'000);
  p = planner.plan(r);
  CHECK(window_of(p, "a") == 800ms);
  // 5 MB in its 800 ms and 15 MB more in best effort's idle time: it has
  // its 20 MB, so the window stays (T_adjust counts all its bytes, and its
  // rate from its own window only).
  r[0].bytes = 20'000'000;
  r[0].window_bytes = 5'000'000;
  p = planner.plan(r);
  CHECK(window_of(p, "a") == 800ms);
  CHECK(planner.job("a")->rate == doctest::Approx(6.25e6));
}

TEST_CASE("a window that served nothing grows while its job is behind, and stays once it is not") {
  WindowPlanner planner({1000ms, 20ms, true});
  std::vector<JobReport> r{goal("a", 20e6, 0, 100s), best_effort("be")};
  planner.plan(r);
  set_bytes(r[0], 25'000'000);  // 25 MB in 500 ms: 50 MB/s, 100 ms less
  CHECK(window_of(planner.plan(r), "a") == 400ms);
  // Then another job's operations ran through the whole window: a got 5
  // MB elsewhere and nothing in it, so there is no rate to adjust by.
  r[0].bytes = 5'000'000;
  r[0].window_bytes = 0;
  CHECK(window_of(planner.plan(r), "a") == 800ms);
  // Nothing in its window, but its bound met elsewhere: the same window.
  r[0].bytes = 20'000'000;
  CHECK(window_of(planner.plan(r), "a") == 800ms);
  CHECK(window_of(planner.plan(r), "a") == 800ms);
  // Served in it again: T_adjust as before (40 MB in 800 ms, 400 ms less).
  set_bytes(r[0], 40'000'000);
  CHECK(window_of(planner.plan(r), "a") == 400ms);
}

TEST_CASE("a profiled job's window takes its share, and the other jobs' windows shrink into the rest") {
  Plan planned;
  planned.period = 1000ms;
  planned.windows = {{WindowKind::dedicated, "a", 200ms},
                     {WindowKind::dedicated, "p", 100ms},
                     {WindowKind::dedicated, "z", 300ms},
                     {WindowKind::shared, "", 200ms},
                     {WindowKind::best_effort, "", 200ms}};
  planned.shared_members = {"m", "p"};
  const Plan p = with_profile(planned, "p", 1000ms, 50);
  CHECK(p.period == 1000ms);
  CHECK(window_of(p, "p") == 500ms);  // its share, not its planned 100 ms
  // The others keep their order and half their length: their goals go on.
  CHECK(window_of(p, "a") == 100ms);
  CHECK(window_of(p, "z") == 150ms);
  CHECK(window_of(p, "") == 100ms);
  CHECK(window_of(p, "*") == 100ms);
  REQUIRE(p.windows.size() == 5);
  CHECK(p.windows[0].job == "a");  // dedicated windows by name, the profiled one among them
  CHECK(p.windows[1].job == "p");
  CHECK(p.windows[2].job == "z");
  CHECK(p.shared_members == std::vector<std::string>{"m"});
  Nanos total{0};
  for (const auto& w : p.windows) total += w.length;
  CHECK(total <= 1000ms);
  // At 100% and with nothing planned yet (the first period), the job has it all.
  const Plan alone = with_profile(Plan{}, "p", 1000ms, 100);
  REQUIRE(alone.windows.size() == 1);
  CHECK(window_of(alone, "p") == 1000ms);
  CHECK(window_of(with_profile(planned, "p", 1000ms, 100), "a") == 0ns);
}

TEST_CASE("locality decides between a dedicated and the shared window") {
  WindowPlanner ushape({1000ms, 20ms, true});
  std::vector<JobReport> r{goal("seq", 10e6, 0, 100s, true), goal("rand", 10e6, 0, 100s, false)};
  Plan p = ushape.plan(r);
  CHECK(ushape.job("seq")->dedicated);
  CHECK_FALSE(ushape.job("rand")->dedicated);
  CHECK(window_of(p, "rand") == 0ns);
  CHECK(window_of(p, "") > 0ns);
  CHECK(p.shared_members == std::vector<std::string>{"rand"});
  // The average baseline gives every job with a goal its own window.
  WindowPlanner average({1000ms, 20ms, false});
  p = average.plan(r);
  CHECK(window_of(p, "seq") > 0ns);
  CHECK(window_of(p, "rand") > 0ns);
}

TEST_CASE("a job behind its bound in the shared window gets its own until it needs no more than the floor") {
  WindowPlanner planner({1000ms, 20ms, true});
  // Both scattered (locality says share); "behind" needs 20 MB a period.
  std::vector<JobReport> r{goal("ahead", 1e6, 0, 100s, false), goal("behind", 20e6, 0, 100s, false)};
  Plan p = planner.plan(r);  // new jobs start in the shared window: nothing measured yet
  CHECK(p.shared_members == std::vector<std::string>{"ahead", "behind"});
  const Nanos shared = window_of(p, "");
  REQUIRE(shared > 0ns);
  // In that window "ahead" got its 1 MB, "behind" 5 MB of its 20 MB.
  set_bytes(r[0], 2'000'000);
  set_bytes(r[1], 5'000'000);
  p = planner.plan(r);
  CHECK(p.shared_members == std::vector<std::string>{"ahead"});
  CHECK(planner.job("behind")->dedicated);
  CHECK(planner.job("behind")->promoted);
  CHECK_FALSE(planner.job("ahead")->dedicated);
  // Its first window of its own is sized from the rate it had in the shared one.
  CHECK(planner.job("behind")->rate == doctest::Approx(5e6 / std::chrono::duration<double>(shared).count()));
  const Nanos own = window_of(p, "behind");
  CHECK(own > 20ms);
  // Still behind in its own window: T_adjust grows it, and it keeps it.
  set_bytes(r[1], 10'000'000);
  p = planner.plan(r);
  CHECK(window_of(p, "behind") > own);
  // Once it needs no more than the floor it goes back where locality puts it.
  r[1].bound = 1e6;
  set_bytes(r[1], 100'000'000);
  p = planner.plan(r);
  CHECK(window_of(p, "behind") < 25ms);  // the floor, and a loss from an overload made up
  CHECK_FALSE(planner.job("behind")->promoted);
  p = planner.plan(r);
  CHECK_FALSE(planner.job("behind")->dedicated);
  CHECK(p.shared_members == std::vector<std::string>{"ahead", "behind"});
  // Promoted again, then its locality earns it the window: no longer "promoted".
  set_bytes(r[1], 0);
  r[1].bound = 20e6;
  planner.plan(r);
  REQUIRE(planner.job("behind")->promoted);
  r[1].seek_cost = 5ms;
  r[1].idle_cost = 1ms;
  planner.plan(r);
  CHECK(planner.job("behind")->dedicated);
  CHECK_FALSE(planner.job("behind")->promoted);
  // The average baseline never shares, so never promotes.
  WindowPlanner average({1000ms, 20ms, false});
  average.plan(r);
  average.plan(r);
  CHECK_FALSE(average.job("behind")->promoted);
}

TEST_CASE("overload cuts windows in proportion to time left and records the loss") {
  WindowPlanner planner({1000ms, 20ms, true});
  std::vector<JobReport> r{goal("near", 0, 0, 100s), goal("far", 0, 0, 300s)};
  planner.plan(r);  // both start at 500 ms
  // Each got 50 MB/s in its 500 ms and now needs 35 MB: 700 ms each, 400 ms
  // too many. Cuts in proportion to 100 s : 300 s are 100 ms and 300 ms.
  r[0].bound = r[1].bound = 35e6;
  set_bytes(r[0], 25'000'000);
  set_bytes(r[1], 25'000'000);
  Plan p = planner.plan(r);
  CHECK(window_of(p, "near") == 600ms);
  CHECK(window_of(p, "far") == 400ms);
  CHECK(window_of(p, "*") == 0ns);  // nothing left for best effort
  // T_loss = D * (T_cut / T_window) / B: 25 MB * (100 / 500) / 35 MB/s.
  CHECK(planner.job("near")->loss.count() == doctest::Approx(5.0 / 35 * 1e9).epsilon(1e-6));
  CHECK(planner.job("far")->loss.count() == doctest::Approx(15.0 / 35 * 1e9).epsilon(1e-6));
  CHECK(planner.job("far")->cut == 300ms);
}

TEST_CASE("slack makes up the most urgent job's loss first, then goes to best effort") {
  WindowPlanner planner({1000ms, 20ms, true});
  std::vector<JobReport> r{goal("near", 0, 0, 100s), goal("far", 0, 0, 300s)};
  planner.plan(r);
  r[0].bound = r[1].bound = 35e6;
  set_bytes(r[0], 25'000'000);
  set_bytes(r[1], 25'000'000);
  planner.plan(r);  // losses 0.143 s and 0.429 s
  // Now each needs 10 MB at 41.67 MB/s (25 MB in 600 ms, 16.67 MB in 400 ms)...
  r[0].bound = 10e6;
  r[1].bound = 10e6;
  set_bytes(r[0], 25'000'000);  // near: 25 MB in 600 ms
  set_bytes(r[1], 16'666'667);  // far: 16.67 MB in 400 ms
  r.push_back(best_effort("be"));
  Plan p = planner.plan(r);
  // near needs 240 ms, far 240 ms; 520 ms of slack. near's loss: 0.143 s *
  // 10 MB/s / 41.67 MB/s = 34.3 ms; far's: 102.9 ms; the rest is best effort's.
  CHECK(window_of(p, "near").count() == doctest::Approx(274.3e6).epsilon(1e-3));
  CHECK(window_of(p, "far").count() == doctest::Approx(342.9e6).epsilon(1e-3));
  CHECK(planner.job("near")->loss.count() < 1000);
  CHECK(planner.job("far")->loss.count() < 1000);
  CHECK(window_of(p, "*").count() == doctest::Approx(382.9e6).epsilon(1e-3));
  Nanos total{0};
  for (const auto& w : p.windows) total += w.length;
  CHECK(total <= 1000ms);
}

TEST_CASE("a job that left is forgotten and an idle job holds no window") {
  WindowPlanner planner({1000ms, 20ms, true});
  std::vector<JobReport> r{goal("a", 1e6, 0, 10s), best_effort("be")};
  planner.plan(r);
  r[0].active = false;
  Plan p = planner.plan(r);
  CHECK(window_of(p, "a") == 0ns);
  CHECK(window_of(p, "*") == 1000ms);
  p = planner.plan(std::vector<JobReport>{best_effort("be")});
  CHECK(planner.job("a") == nullptr);
}

// ---- gate ----

TEST_CASE("the average baseline shares a shortage evenly and records no loss") {
  WindowPlanner planner({1000ms, 20ms, false, false});
  std::vector<JobReport> r{goal("near", 0, 0, 100s), goal("far", 0, 0, 300s)};
  planner.plan(r);
  r[0].bound = r[1].bound = 35e6;
  set_bytes(r[0], 25'000'000);
  set_bytes(r[1], 25'000'000);
  Plan p = planner.plan(r);
  CHECK(window_of(p, "near") == 500ms);
  CHECK(window_of(p, "far") == 500ms);
  CHECK(planner.job("near")->loss == 0ns);
  CHECK(planner.job("far")->cut == 200ms);
}

TEST_CASE("the gate serves each window's jobs in turn and opens when no plan is in force") {
  WindowGate g;
  CHECK(g.admit("a", 5ms) == qos::Admission::yes);
  Plan plan{1000ms,
            {{WindowKind::dedicated, "a", 300ms}, {WindowKind::dedicated, "b", 200ms},
             {WindowKind::shared, "", 200ms}, {WindowKind::best_effort, "", 200ms}},
            {"c"}};
  g.install(plan, 2000ms, 2);
  CHECK(g.admit("b", 1999ms) == qos::Admission::yes);  // before the plan's start
  CHECK(g.admit("a", 2000ms) == qos::Admission::yes);
  CHECK(g.admit("b", 2000ms) == qos::Admission::no);
  CHECK(g.admit("be", 2299ms) == qos::Admission::no);
  CHECK(g.admit("b", 2300ms) == qos::Admission::yes);
  CHECK(g.current(2300ms).ends == 2500ms);
  // The shared window: its members only.
  CHECK(g.admit("c", 2500ms) == qos::Admission::yes);
  CHECK(g.admit("a", 2500ms) == qos::Admission::no);
  CHECK(g.admit("be", 2500ms) == qos::Admission::no);
  // Best effort's: jobs without a goal, the others when those have nothing.
  CHECK(g.admit("be", 2700ms) == qos::Admission::yes);
  CHECK(g.admit("a", 2700ms) == qos::Admission::if_idle);
  CHECK(g.admit("c", 2700ms) == qos::Admission::if_idle);
  CHECK(g.admit("b", 2850ms) == qos::Admission::if_idle);
  CHECK(g.admit("b", 2950ms) == qos::Admission::yes);  // the unplanned tail
  CHECK(g.admit("b", 3000ms) == qos::Admission::no);  // second period
  CHECK(g.current(3000ms).job == "a");
  CHECK(g.admit("b", 4000ms) == qos::Admission::yes);  // no plan for the third: open
  CHECK(g.current(4000ms).kind == WindowGate::Current::Kind::open);
  g.clear();
  CHECK(g.admit("b", 2000ms) == qos::Admission::yes);
  // A plan shorter than its period leaves the tail open.
  g.install({1000ms, {{WindowKind::dedicated, "a", 600ms}}, {}}, 0ms);
  CHECK(g.admit("b", 599ms) == qos::Admission::no);
  CHECK(g.admit("b", 600ms) == qos::Admission::yes);
}

TEST_CASE("an operation counts for its job's window only in the part that fell there") {
  WindowGate g;
  CHECK(g.own_time("a", 0ms, 100ms) == 0ms);  // no plan: no window of its own
  Plan plan{1000ms,
            {{WindowKind::dedicated, "a", 50ms}, {WindowKind::dedicated, "b", 450ms},
             {WindowKind::shared, "", 300ms}, {WindowKind::best_effort, "", 200ms}},
            {"c"}};
  g.install(plan, 0ms, 2);
  // a's 115 ms write dispatched as its 50 ms window opened.
  CHECK(g.own_time("a", 0ms, 115ms) == 50ms);
  CHECK(g.own_time("b", 0ms, 115ms) == 65ms);
  // A shared member's, from b's window into the shared one.
  CHECK(g.own_time("c", 450ms, 550ms) == 50ms);
  // Across the period's end: best effort's window is no one's own, a's next one is.
  CHECK(g.own_time("a", 900ms, 1030ms) == 30ms);
  CHECK(g.own_time("c", 900ms, 1030ms) == 0ms);
  // Past the plan's last period the gate is open: no one's own.
  CHECK(g.own_time("a", 1990ms, 2100ms) == 0ms);
  // In bytes: 1.15 MB over those first 115 ms, 50 of them in a's window.
  CHECK(g.own_bytes("a", 1'150'000, 0ms, 115ms) == 500'000);
  CHECK(g.own_bytes("a", 4096, 10ms, 10ms) == 4096);  // an instant in a's window
  CHECK(g.own_bytes("a", 4096, 60ms, 60ms) == 0);
}
