// A job's profile and the training of its model (policy/qos/training.h):
// alpha scales B_profile to B_real, the tree learns a disk's locality
// from the profile plus the synthetic workload, the disk is estimated from
// the profile, bad profiles and goals are refused with the reason.
#include <doctest/doctest.h>

#include <random>

#include "policy/qos/training.h"

namespace pvfs::qos {
namespace {

using namespace std::chrono_literals;

constexpr double kBandwidth = 30e6;
constexpr Nanos kSeek = 10ms;

// A profile as the servers of a disk with a 10 ms seek and 30 MB/s report
// it: two servers, alternating sequential and scattered epochs of
// `requests` 64 KiB requests each, 10 s of I/O in a 20 s run. With 28 a
// record the job has work at each server for all 10 s (50 records of 28
// requests: 10.06 s of service); with 14, for half of them.
Profile disk_profile(int requests = 28) {
  Profile p;
  p.job = "job.1";
  p.start_unix_ms = 1'000'000;
  p.end_unix_ms = 1'020'000;
  const DiskCost disk{kSeek, kBandwidth};
  std::vector<ProfileEpoch> records;
  for (int i = 0; i < 100; ++i) {
    ProfileEpoch e;
    e.server = static_cast<uint32_t>(i % 2);
    e.epoch = i / 2;
    e.requests = static_cast<uint64_t>(requests);
    e.avg_size_bytes = 65536;
    const bool scattered = (i / 2) % 2 == 1;
    e.avg_dist_bytes = scattered ? 1e9 : 0;
    e.bytes = e.requests * 65536;
    e.service = requests * disk.service(scattered ? 1 : 0, 65536);
    records.push_back(e);
  }
  add_epochs(p, records);
  p.io = 10s;
  p.io_source = qos::IoSource::job;
  return p;
}

TrainOptions small_options() { return TrainOptions{}; }

}  // namespace

TEST_CASE("a profile's times: T_profile from start to end, T_comp what its I/O did not take") {
  Profile p = disk_profile();
  CHECK(p.total() == 20s);
  CHECK(p.comp() == 10s);
  p.end_unix_ms = 0;
  CHECK_FALSE(p.ended());
  CHECK(p.total() == 0s);
}

TEST_CASE("records past the limit are counted, not kept; the busiest server's service is the I/O time") {
  Profile p;
  std::vector<ProfileEpoch> many(kMaxProfileEpochs + 5, ProfileEpoch{0, 0, 1, 0, 4096, 4096, 1ms});
  many[0].server = 1;
  many[0].service = 2ms;
  add_epochs(p, many);
  CHECK(p.epochs.size() == kMaxProfileEpochs);
  CHECK(p.dropped == 5);
  CHECK(p.bytes == 4096 * (kMaxProfileEpochs + 5));
  CHECK(busiest_server_service(p) == Nanos((kMaxProfileEpochs - 1) * 1'000'000));
}

TEST_CASE("a profile's I/O time: the job's word, else the clients' timing, else the busiest server") {
  Profile p = disk_profile();  // the job said 10 s
  join_span(p.clients, 1, {2'000'000'000, 5'000'000'000});
  CHECK(with_io(p).io == 10s);
  CHECK(with_io(p).io_source == IoSource::job);
  p.io_source = IoSource::servers;
  p.io = 0s;
  // Two servers saw parts of client 1's requests: the span joins them.
  join_span(p.clients, 1, {1'000'000'000, 4'000'000'000});
  CHECK(p.clients.at(1) == ClientSpan{1'000'000'000, 5'000'000'000});
  // Client 2's processes did their I/O beside client 1's: the longest counts.
  join_span(p.clients, 2, {0, 3'000'000'000});
  const Profile timed = with_io(p);
  CHECK(timed.io == 4s);
  CHECK(timed.io_source == IoSource::clients);
  CHECK(timed.comp() == 16s);
  // A span that goes backwards is no timing; no span: the servers' bound.
  join_span(p.clients, 3, {9, 8});
  CHECK_FALSE(p.clients.contains(3));
  // Past the limit a new client is not kept; the ones kept still join.
  std::map<uint64_t, ClientSpan> many;
  for (uint64_t c = 1; c <= kMaxProfileClients; ++c) join_span(many, c, {0, c});
  join_span(many, kMaxProfileClients + 1, {0, 1});
  join_span(many, 1, {0, 99});
  CHECK(many.size() == kMaxProfileClients);
  CHECK(many.at(1).last_ns == 99);
  p.clients.clear();
  CHECK(with_io(p).io == busiest_server_service(p));
  CHECK(with_io(p).io_source == IoSource::servers);
}

TEST_CASE("the disk is estimated from the profile's sequential and scattered epochs") {
  auto d = estimate_disk(disk_profile());
  REQUIRE(d.ok());
  CHECK(d->bytes_per_s == doctest::Approx(kBandwidth).epsilon(0.01));
  CHECK(std::chrono::duration<double>(d->seek).count() == doctest::Approx(0.010).epsilon(0.01));
  CHECK(estimate_disk(Profile{}).code() == Errc::invalid_argument);
}

TEST_CASE("the trained model gives B_profile / alpha and tells sequential from scattered locality") {
  const Profile p = disk_profile();
  std::mt19937_64 rng(1);
  // A goal of 30 s for a 20 s run with 10 s of compute: alpha = 20 / 10 = 2.
  auto t = train(p, 30s, DiskCost{kSeek, kBandwidth}, small_options(), rng);
  REQUIRE_MESSAGE(t.ok(), t.status().to_string());
  CHECK(t->model.alpha == doctest::Approx(2.0));
  CHECK(t->profile_samples == 100);
  CHECK(t->synthetic_samples > 20);
  CHECK(t->model.job == "job.1");
  CHECK(t->model.profile == 20s);
  CHECK(t->model.comp == 10s);
  const double sequential = t->model.bound(0, 65536);
  const double scattered = t->model.bound(1e9, 65536);
  // Sequential: 30 MB/s on the disk, halved by alpha.
  CHECK(sequential == doctest::Approx(kBandwidth / 2).epsilon(0.1));
  // Scattered: 64 KiB per (10 ms + 2.2 ms), halved: about 2.7 MB/s.
  CHECK(scattered == doctest::Approx(65536 / (0.010 + 65536 / kBandwidth) / 2).epsilon(0.15));
  CHECK(t->model.cv_error > 0);
  CHECK(t->met == (t->model.cv_error < small_options().grow.max_error));
  // The same data and seed train the same tree.
  std::mt19937_64 again(1);
  auto t2 = train(p, 30s, DiskCost{kSeek, kBandwidth}, small_options(), again);
  REQUIRE(t2.ok());
  CHECK(serialize(t2->model) == serialize(t->model));
}

TEST_CASE("a job that leaves its servers idle part of its I/O time is bounded by the rate it got, not the disk's") {
  // Half the requests in the same 10 s of I/O: each server had work for
  // 5.03 s of it. Summed over the servers, B_profile alone would ask for
  // twice what the job needed to finish its I/O in 10 s.
  const Profile p = disk_profile(14);
  const auto busy = busy_fractions(p);
  REQUIRE(busy.size() == 2);
  for (const auto& [server, fraction] : busy) CHECK(fraction == doctest::Approx(0.503).epsilon(0.01));
  std::mt19937_64 rng(1);
  auto t = train(p, 30s, DiskCost{kSeek, kBandwidth}, small_options(), rng);
  REQUIRE_MESSAGE(t.ok(), t.status().to_string());
  CHECK(t->model.alpha == doctest::Approx(2.0));
  // Sequential: 30 MB/s on the disk, half of it used, halved by alpha.
  CHECK(t->model.bound(0, 65536) == doctest::Approx(0.503 * kBandwidth / 2).epsilon(0.1));
  // A server that had work throughout, or an unknown I/O time, counts whole.
  Profile busier = disk_profile(40);
  CHECK(busy_fractions(busier).at(0) == 1.0);
  busier.io = Nanos(0);
  CHECK(busy_fractions(busier).at(1) == 1.0);
}

TEST_CASE("the tree grows until its cross-validated error is under the threshold, or keeps its best depth") {
  TrainOptions loose = small_options();
  loose.grow.max_error = 0.6;
  TrainOptions strict = small_options();
  strict.grow.max_error = 0.001;
  std::mt19937_64 a(4), b(4);
  auto shallow = train(disk_profile(), 30s, DiskCost{kSeek, kBandwidth}, loose, a);
  auto deep = train(disk_profile(), 30s, DiskCost{kSeek, kBandwidth}, strict, b);
  REQUIRE(shallow.ok());
  REQUIRE(deep.ok());
  CHECK(shallow->met);
  CHECK(shallow->model.cv_error < 0.6);
  CHECK_FALSE(deep->met);
  CHECK(deep->model.tree.depth() > shallow->model.tree.depth());
  CHECK(deep->model.cv_error <= shallow->model.cv_error);
}

TEST_CASE("a model trained for one goal is rescaled to another") {
  std::mt19937_64 rng(2);
  auto t = train(disk_profile(), 30s, DiskCost{kSeek, kBandwidth}, small_options(), rng);
  REQUIRE(t.ok());
  // 50 s: alpha (50 - 10) / (20 - 10) = 4, so half the bound trained for alpha 2.
  CHECK(*rescale(t->model, 1000.0, 50s) == doctest::Approx(500.0));
  CHECK(rescale(t->model, 1000.0, 15s).code() == Errc::invalid_argument);
}

TEST_CASE("training refuses a running profile, a goal shorter than the run, too few records, a bad disk") {
  std::mt19937_64 rng(3);
  Profile p = disk_profile();
  auto shorter = train(p, 15s, DiskCost{kSeek, kBandwidth}, small_options(), rng);
  CHECK(shorter.code() == Errc::invalid_argument);
  CHECK(shorter.status().detail().find("cannot be met") != std::string::npos);
  CHECK(train(p, 30s, DiskCost{kSeek, 0}, small_options(), rng).code() == Errc::invalid_argument);
  Profile running = p;
  running.end_unix_ms = 0;
  auto r = train(running, 30s, DiskCost{kSeek, kBandwidth}, small_options(), rng);
  CHECK(r.status().detail().find("not ended") != std::string::npos);
  Profile few = p;
  few.epochs.resize(2);
  auto f = train(few, 30s, DiskCost{kSeek, kBandwidth}, small_options(), rng);
  CHECK(f.code() == Errc::invalid_argument);
  CHECK(f.status().detail().find("fewer than the cross-validation's folds") != std::string::npos);
}

}  // namespace pvfs::qos
