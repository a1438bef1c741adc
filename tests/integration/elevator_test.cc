// The OBRR elevator in a real storage server: many clients' interleaved
// writes come back intact through merged, reordered backend operations;
// O_SYNC writes are served as urgent requests and maintainer pull-backs as
// background ones; the policy can be switched at run time without losing
// queued work; small writes and reads on a fast store are served on the
// server's network thread, sync writes on its disk threads.
#include <random>
#include <thread>

#include "policy/elevator/inline_gate.h"
#include "shared/rpc/metrics_wire.h"
#include "tests/integration/session.h"

namespace pvfs::test::elevator_test {
namespace {

namespace sp = proto::storage;
constexpr uint64_t kKiB = 1024;

struct ElevatorView {
  std::string policy;
  uint64_t dispatches = 0;
  std::array<uint64_t, 3> completed{};  // normal, urgent, background
  uint64_t merged = 0;                  // dispatches larger than any request sent (> 256 KiB)
};

ElevatorView elevator_of(const Config& config, uint32_t id, const std::string& switch_to = "") {
  auto reply = ask_storage(config, id, [&](sp::Request::Builder r) { r.initElevator().setPolicy(switch_to); });
  REQUIRE_MESSAGE(reply.ok(), reply.status().to_string());
  auto e = (*reply)->body<sp::Reply>().getElevator();
  ElevatorView v;
  v.policy = e.getPolicy();
  v.dispatches = e.getDispatches();
  for (unsigned i = 0; i < 3; ++i) v.completed[i] = e.getCompleted()[i];
  auto sizes = e.getDispatchedSizes();
  for (unsigned k = 19; k < sizes.size(); ++k) v.merged += sizes[k];  // 512 KiB and up
  return v;
}

// Each of `writers` threads writes its own file in 64-256 KiB requests, in
// a shuffled order, all at once; returns the files' inodes.
std::vector<InodeId> write_interleaved(const Config& config, int writers, uint64_t file_bytes) {
  std::vector<InodeId> inos(writers);
  std::vector<std::string> failures(writers);
  std::vector<std::thread> threads;
  for (int t = 0; t < writers; ++t) {
    threads.emplace_back([&, t] {
      Session s{Session::Deferred{}};
      if (Status st = s.connect(config); !st.ok()) return (void)(failures[t] = st.to_string());
      auto made = s.run(s->create(kRoot, kRootInode, fmt::format("e{}", t), 0644, O_RDWR));
      if (!made) return (void)(failures[t] = made.status().to_string());
      inos[t] = made->first.ino;
      std::vector<uint64_t> chunks;
      for (uint64_t at = 0; at < file_bytes;) {
        const uint64_t n = std::min<uint64_t>(file_bytes - at, (64 + 64 * (at / (64 * kKiB) % 4)) * kKiB);
        chunks.push_back(at);
        at += n;
      }
      std::mt19937_64 rng(t);
      std::shuffle(chunks.begin() + chunks.size() / 2, chunks.end(), rng);  // half sequential, half not
      AlignedBuffer buf(256 * kKiB);
      for (size_t i = 0; i < chunks.size(); ++i) {
        const uint64_t at = chunks[i];
        const uint64_t n = std::min<uint64_t>(file_bytes - at, (64 + 64 * (at / (64 * kKiB) % 4)) * kKiB);
        fill_pattern(buf.span(0, n), 7000 + t, at);
        if (Status st = s.write(*made->second, at, buf.span(0, n)); !st.ok())
          return (void)(failures[t] = st.to_string());
      }
      (void)s.release(made->second);
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& f : failures) CHECK_MESSAGE(f.empty(), f);
  return inos;
}

void check_files(const Config& config, const std::vector<InodeId>& inos, uint64_t file_bytes) {
  Session s(config);
  AlignedBuffer buf(file_bytes);
  for (size_t t = 0; t < inos.size(); ++t) {
    CAPTURE(t);
    auto file = s.open(inos[t], O_RDONLY);
    REQUIRE(file.ok());
    auto got = s.read(**file, 0, buf.span());
    REQUIRE(got.ok());
    CHECK(*got == file_bytes);
    CHECK_FALSE(pattern_mismatch(buf.span(), 7000 + t, 0));
    (void)s.release(*file);
  }
}

// Disk operations of server `id` by where they ran: {network, disk}.
std::pair<double, double> disk_ops_of(const Config& config, uint32_t id) {
  auto reply = ask_storage(config, id, [](sp::Request::Builder r) { r.setMetrics(); });
  REQUIRE_MESSAGE(reply.ok(), reply.status().to_string());
  std::pair<double, double> ops{0, 0};
  for (const auto& f : rpc::from_wire((*reply)->body<sp::Reply>().getMetrics())) {
    if (f.name != "pvfs_server_disk_ops_total") continue;
    for (const auto& sample : f.samples)
      for (const auto& label : sample.labels)
        (label.value == "network" ? ops.first : ops.second) += sample.value;
  }
  return ops;
}

}  // namespace

TEST_CASE("many clients' interleaved writes through one obrr server read back intact") {
  ClusterOptions options = with_servers(1);
  TestCluster cluster(options);
  const Config& config = cluster.config();
  CHECK(elevator_of(config, 0).policy == "obrr");
  const uint64_t kFile = 4 << 20;
  auto inos = write_interleaved(config, 12, kFile);
  check_files(config, inos, kFile);
  const auto v = elevator_of(config, 0);
  CHECK(v.dispatches > 0);
  CHECK(v.completed[0] > 0);
}

TEST_CASE("switching the elevator at run time loses nothing, and fcfs orders by arrival") {
  TestCluster cluster(with_servers(1));
  const Config& config = cluster.config();
  CHECK(elevator_of(config, 0, "fcfs").policy == "fcfs");
  const uint64_t kFile = 2 << 20;
  std::vector<InodeId> inos;
  std::thread writer([&] { inos = write_interleaved(config, 8, kFile); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(elevator_of(config, 0, "obrr").policy == "obrr");  // while requests are queued
  writer.join();
  check_files(config, inos, kFile);
  auto bad = ask_storage(config, 0, [](sp::Request::Builder r) { r.initElevator().setPolicy("scan"); });
  CHECK(bad.code() == Errc::invalid_argument);
  CHECK(bad.status().detail().find("scan") != std::string::npos);
}

TEST_CASE("O_SYNC writes are served as urgent requests, pull-backs as background ones") {
  TestCluster cluster(with_servers(2));
  const Config& config = cluster.config();
  Session s(config);
  auto made = s.run(s->create(kRoot, kRootInode, "sync", 0644, O_RDWR | O_DSYNC));
  REQUIRE(made.ok());
  AlignedBuffer buf(256 * kKiB);
  for (uint64_t i = 0; i < 8; ++i) {
    fill_pattern(buf.span(), 1, i * buf.size());
    REQUIRE(s.write(*made->second, i * buf.size(), buf.span()).ok());
  }
  REQUIRE(s.release(made->second).ok());
  CHECK(elevator_of(config, 0).completed[1] + elevator_of(config, 1).completed[1] > 0);

  // Redirected writes (random placement) are pulled home in the background.
  // 32 stripes, so that some go away from home (all 8 of a smaller file
  // stayed home in about one run in 256).
  s->set_dispatch_policy(sched::Policy::random);
  auto other = s.create(kRootInode, "moved");
  AlignedBuffer big(8 << 20);
  for (uint64_t i = 0; i < 4; ++i) {
    fill_pattern(big.span(), 2, i * big.size());
    REQUIRE(s.write(*other.second, i * big.size(), big.span()).ok());
  }
  REQUIRE(s.release(other.second).ok());
  CHECK(eventually([&] {
    return elevator_of(config, 0).completed[2] + elevator_of(config, 1).completed[2] > 0;
  }, std::chrono::seconds(20)));
}

}  // namespace pvfs::test::elevator_test

namespace pvfs::test::elevator_test {

TEST_CASE("small writes and reads on a fast store run on the network thread; sync writes never do") {
  TestCluster cluster(with_servers(1));
  const Config& config = cluster.config();
  Session s(config);
  auto made = s.run(s->create(kRoot, kRootInode, "small", 0644, O_RDWR));
  REQUIRE(made.ok());
  constexpr uint64_t kWrites = 64;
  AlignedBuffer buf(4 * kKiB);
  const auto before = disk_ops_of(config, 0);
  for (uint64_t i = 0; i < kWrites; ++i) {
    fill_pattern(buf.span(), 9, i * buf.size());
    REQUIRE(s.write(*made->second, i * buf.size(), buf.span()).ok());
  }
  AlignedBuffer back(kWrites * buf.size());
  for (uint64_t i = 0; i < kWrites; ++i) {
    auto got = s.read(*made->second, i * buf.size(), back.span(i * buf.size(), buf.size()));
    REQUIRE(got.ok());
    CHECK(*got == buf.size());
  }
  CHECK_FALSE(pattern_mismatch(back.span(), 9, 0));
  REQUIRE(s.release(made->second).ok());
  const auto after = disk_ops_of(config, 0);
  // Each direction hands its first few operations to the disk threads
  // while it proves the store fast (tmpfs or page cache here); most of the
  // rest run inline (a descheduled moment on a busy test machine looks
  // like a slow disk and sends a few to the disk threads too).
  const double inline_ops = after.first - before.first, pool_ops = after.second - before.second;
  CHECK(inline_ops + pool_ops >= 2 * kWrites);
  CHECK(inline_ops >= kWrites);
  CHECK(pool_ops >= 2 * elevator::InlineGate::kWarmup);

  auto synced = s.run(s->create(kRoot, kRootInode, "synced", 0644, O_RDWR | O_DSYNC));
  REQUIRE(synced.ok());
  for (uint64_t i = 0; i < 8; ++i) {
    fill_pattern(buf.span(), 10, i * buf.size());
    REQUIRE(s.write(*synced->second, i * buf.size(), buf.span()).ok());
  }
  REQUIRE(s.release(synced->second).ok());
  const auto synced_after = disk_ops_of(config, 0);
  CHECK(synced_after.first == after.first);
  CHECK(synced_after.second - after.second >= 8);
}

}  // namespace pvfs::test::elevator_test
