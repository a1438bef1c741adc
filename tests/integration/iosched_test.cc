// Jobs' I/O steps under the delegate's scheduler, on real daemons: the
// ioStep protocol spoken by clients faked in the test (each a lease key of
// its own, renewing like pvfsmount does), and real pvfsmount clients whose
// writes wait for their job's token. Faults: a step never ended, a client
// killed mid-step, the delegate killed mid-step, malformed and
// unauthenticated messages, the end of an unknown job.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <asio.hpp>

#include "fs/iostep/pvfs_iostep.h"
#include "shared/proto/mds.capnp.h"
#include "shared/rpc/connection.h"
#include "shared/rpc/run_sync.h"
#include "tests/integration/session.h"
#include "tests/support/run_tool.h"
#include "utils/common/metrics_probe.h"
#include "utils/ctl/iosched_view.h"

namespace pvfs::test::iosched_test {
namespace {

namespace mp = proto::mds;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

struct Claim {
  // No servers: every server. holds_token: re-registering a token.
  Claim(std::string job_id, uint64_t declared, std::vector<uint32_t> on = {}, bool holding = false)
      : job(std::move(job_id)), bytes(declared), servers(std::move(on)), holds_token(holding) {}
  std::string job;
  uint64_t bytes = 0;
  std::vector<uint32_t> servers;
  bool holds_token = false;
};

struct StepAnswer {
  std::vector<std::string> granted;
  std::vector<std::string> ended;
  bool has(const std::string& job) const {
    return std::find(granted.begin(), granted.end(), job) != granted.end();
  }
};

// One ioStep message to member `mds` (by config position), as a client with
// lease key `client` would send it.
Result<StepAnswer> io_step_to(const Config& config, const Secret& key, size_t mds, uint64_t client,
                              const std::vector<Claim>& claims, const std::vector<std::string>& ends = {}) {
  return rpc::run_sync([&]() -> asio::awaitable<Result<StepAnswer>> {
    auto conn = co_await rpc::Connection::connect(config.mds.at(mds).address, key, milliseconds(2000));
    if (!conn) co_return conn.status();
    (*conn)->start({});
    rpc::OutMessage out;
    auto req = out.init_body<mp::Request>().initIoStep();
    req.setClient(client);
    auto c = req.initClaims(static_cast<unsigned>(claims.size()));
    for (size_t i = 0; i < claims.size(); ++i) {
      c[i].setJob(claims[i].job);
      c[i].setDeclaredBytes(claims[i].bytes);
      auto s = c[i].initServers(static_cast<unsigned>(claims[i].servers.size()));
      for (size_t k = 0; k < claims[i].servers.size(); ++k) s.set(static_cast<unsigned>(k), claims[i].servers[k]);
      c[i].setHoldsToken(claims[i].holds_token);
    }
    auto e = req.initEnds(static_cast<unsigned>(ends.size()));
    for (size_t i = 0; i < ends.size(); ++i) e[i].setJob(ends[i]);
    auto reply = co_await (*conn)->call(out, {}, milliseconds(2000));
    (*conn)->close();
    if (!reply) co_return reply.status();
    auto body = (*reply)->body<mp::Reply>();
    if (!body.isIoStep()) co_return Status(Errc::io, "not an ioStep reply");
    StepAnswer a;
    for (auto g : body.getIoStep().getGranted()) a.granted.emplace_back(g.cStr());
    for (auto g : body.getIoStep().getEnded()) a.ended.emplace_back(g.cStr());
    co_return a;
  }());
}

// As pvfsmount sends it: to each member in turn past those that are down
// or say they are not the delegate.
Result<StepAnswer> io_step(const Config& config, const Secret& key, uint64_t client, const std::vector<Claim>& claims,
                           const std::vector<std::string>& ends = {}) {
  Result<StepAnswer> last = Status(Errc::unavailable, "no member");
  for (size_t m = 0; m < config.mds.size(); ++m) {
    last = io_step_to(config, key, m, client, claims, ends);
    if (last || (last.code() != Errc::unavailable && last.code() != Errc::timeout)) return last;
  }
  return last;
}

Secret key_of(const Config& config) {
  auto key = load_secret(config.secret_file);
  REQUIRE_MESSAGE(key.ok(), key.status().to_string());
  return *key;
}

ClusterOptions scheduled(const std::string& policy, uint32_t lease_ms, uint32_t mds = 1) {
  ClusterOptions o = with_servers(2);
  o.mds = mds;
  o.iosched_policy = policy;
  o.iosched_lease_ms = lease_ms;
  return o;
}

IoschedView status_of(const Config& config) {
  auto v = iosched_status(config, key_of(config), milliseconds(2000));
  REQUIRE_MESSAGE(v.ok(), v.status().to_string());
  return *v;
}

std::vector<std::string> jobs_in(const std::vector<IoStepRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.job);
  return out;
}

using Jobs = std::vector<std::string>;

// Waits out the grace a freshly started delegate gives re-registrations.
void wait_for_grants(const Config& config) {
  const Secret key = key_of(config);
  REQUIRE(eventually([&] {
    auto v = iosched_status(config, key, milliseconds(2000));
    return v.ok() && v->grace_ms == 0;
  }, milliseconds(20000)));
}

}  // namespace

TEST_CASE("under fcfs a second job waits for the first's token, and gets it when the first ends") {
  TestCluster tc(scheduled("fcfs", 2000));
  const Config& config = tc.config();
  const Secret key = key_of(config);
  wait_for_grants(config);
  auto a = io_step(config, key, 11, {{"job-a", 1 << 20}});
  REQUIRE_MESSAGE(a.ok(), a.status().to_string());
  CHECK(a->has("job-a"));
  auto b = io_step(config, key, 22, {{"job-b", 1 << 10}});
  REQUIRE(b.ok());
  CHECK_FALSE(b->has("job-b"));
  const IoschedView v = status_of(config);
  CHECK(v.policy == "fcfs");
  CHECK(jobs_in(v.active) == Jobs{"job-a"});
  CHECK(jobs_in(v.pending) == Jobs{"job-b"});
  CHECK(v.pending[0].bytes == 1024);

  auto end = io_step(config, key, 11, {}, {"job-a"});
  REQUIRE(end.ok());
  CHECK(end->ended == Jobs{"job-a"});
  auto again = io_step(config, key, 22, {{"job-b", 1 << 10}});
  REQUIRE(again.ok());
  CHECK(again->has("job-b"));
  auto families = fetch_metrics(DaemonKind::mds, config.mds.at(0).address, key, milliseconds(3000));
  REQUIRE_MESSAGE(families.ok(), families.status().to_string());
  CHECK(metrics::sum(*families, "pvfs_mds_iosched_steps_total", {{"job", "job-a"}}) == 1);
  CHECK(metrics::sum(*families, "pvfs_mds_iosched_tokens", {{"job", "job-b"}}) == 1);
  CHECK(metrics::sum(*families, "pvfs_mds_iosched_tokens", {{"job", "job-a"}}) == 0);

  // pvfs-ctl shows it, and switches the policy at run time.
  const auto shown = run_tool("PVFS_CTL", tc.dir(), {"iosched", "-c", tc.cluster().config_path().string(), "--json"});
  CHECK(shown.status == 0);
  CHECK(shown.out.find("\"active\":[{\"job\":\"job-b\"") != std::string::npos);
  const auto switched =
      run_tool("PVFS_CTL", tc.dir(), {"iosched", "-c", tc.cluster().config_path().string(), "policy", "sa-sjf"});
  CHECK(switched.status == 0);
  CHECK(switched.out.find("policy sa-sjf") != std::string::npos);
  const auto refused =
      run_tool("PVFS_CTL", tc.dir(), {"iosched", "-c", tc.cluster().config_path().string(), "policy", "lifo"});
  CHECK(refused.status == 1);
  CHECK(refused.err.find("unknown I/O scheduling policy \"lifo\"") != std::string::npos);
  CHECK(status_of(config).policy == "sa-sjf");
}

TEST_CASE("under none a new delegate gives tokens at once; switched to fcfs it waits out its grace") {
  // A lease of 20 s: the grace would outlast the test.
  TestCluster tc(scheduled("none", 20000));
  const Config& config = tc.config();
  const Secret key = key_of(config);
  auto a = io_step(config, key, 11, {{"job-a", 1 << 20}});
  REQUIRE_MESSAGE(a.ok(), a.status().to_string());
  CHECK(a->has("job-a"));
  CHECK(status_of(config).grace_ms == 0);
  auto end = io_step(config, key, 11, {}, {"job-a"});
  REQUIRE(end.ok());
  CHECK(end->ended == Jobs{"job-a"});
  // Tokens of a former delegate may be out there: under fcfs a new step
  // waits for them to be re-registered or run out, with nothing queued.
  const auto switched =
      run_tool("PVFS_CTL", tc.dir(), {"iosched", "-c", tc.cluster().config_path().string(), "policy", "fcfs"});
  REQUIRE(switched.status == 0);
  CHECK(status_of(config).grace_ms > 10000);
  auto b = io_step(config, key, 22, {{"job-b", 1 << 10}});
  REQUIRE(b.ok());
  CHECK_FALSE(b->has("job-b"));
}

// The row of `job` in pvfs-ctl jobs' table, split into its cells.
std::vector<std::string> jobs_row(const std::string& table, const std::string& job) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream cells(line);
    std::vector<std::string> row;
    for (std::string cell; cells >> cell;) row.push_back(cell);
    if (!row.empty() && row[0] == job) return row;
  }
  return {};
}

TEST_CASE("pvfs-ctl jobs, /metrics and top show each job's I/O time and token wait, and who holds tokens") {
  TestCluster tc(scheduled("fcfs", 2000));
  const Config& config = tc.config();
  const Secret key = key_of(config);
  const std::string cfg = tc.cluster().config_path().string();
  wait_for_grants(config);
  auto a = io_step(config, key, 11, {{"ckpt-a", 1 << 20}});
  REQUIRE(a.ok());
  REQUIRE(a->has("ckpt-a"));
  REQUIRE(io_step(config, key, 22, {{"ckpt-b", 1 << 10}}).ok());
  // Both renew (as pvfsmount does) for 1.2 s: A holds, B waits.
  const auto start = Clock::now();
  while (Clock::now() - start < milliseconds(1200)) {
    REQUIRE(io_step(config, key, 11, {{"ckpt-a", 1 << 20, {}, true}}).ok());
    REQUIRE(io_step(config, key, 22, {{"ckpt-b", 1 << 10}}).ok());
    std::this_thread::sleep_for(milliseconds(200));
  }

  // pvfs-ctl jobs: JOB OPS READ WRITTEN I/O-TIME TOKEN-WAIT STEP, in seconds.
  const auto jobs = run_tool("PVFS_CTL", tc.dir(), {"jobs", "-c", cfg});
  REQUIRE_MESSAGE(jobs.status == 0, jobs.err);
  CHECK(jobs.out.find("I/O-TIME  TOKEN-WAIT  STEP") != std::string::npos);
  const auto row_a = jobs_row(jobs.out, "ckpt-a");
  const auto row_b = jobs_row(jobs.out, "ckpt-b");
  REQUIRE_MESSAGE(row_a.size() == 11, jobs.out);  // READ and WRITTEN are "0 B", times "1.23 s"
  REQUIRE_MESSAGE(row_b.size() == 11, jobs.out);
  CHECK(row_a[10] == "holding");
  CHECK(std::stod(row_a[6]) >= 1.1);  // held since before the renewals
  CHECK(row_b[10] == "waiting");
  CHECK(std::stod(row_b[8]) >= 1.1);  // its wait so far, before any step ended

  // /metrics: the same, live, on the delegate.
  auto families = fetch_metrics(DaemonKind::mds, config.mds.at(0).address, key, milliseconds(3000));
  REQUIRE_MESSAGE(families.ok(), families.status().to_string());
  CHECK(metrics::sum(*families, "pvfs_mds_iosched_token_wait_seconds_total", {{"job", "ckpt-b"}}) >= 1.1);
  CHECK(metrics::sum(*families, "pvfs_mds_iosched_io_seconds_total", {{"job", "ckpt-a"}}) >= 1.1);
  CHECK(metrics::sum(*families, "pvfs_mds_iosched_waiting", {{"job", "ckpt-b"}}) == 1);

  // top: who holds the token, who waits.
  const auto top = run_tool("PVFS_CTL", tc.dir(), {"top", "-n", "1", "-d", "0.2", "-c", cfg});
  REQUIRE_MESSAGE(top.status == 0, top.err);
  CHECK_MESSAGE(top.out.find("I/O tokens: ckpt-a; waiting: ckpt-b") != std::string::npos, top.out);

  // A ends: its I/O time stays in the table, B holds and its wait stops growing.
  REQUIRE(io_step(config, key, 11, {}, {"ckpt-a"}).ok());
  auto b = io_step(config, key, 22, {{"ckpt-b", 1 << 10}});
  REQUIRE(b.ok());
  CHECK(b->has("ckpt-b"));
  const auto after = run_tool("PVFS_CTL", tc.dir(), {"jobs", "-c", cfg});
  REQUIRE(after.status == 0);
  const auto done_a = jobs_row(after.out, "ckpt-a");
  REQUIRE_MESSAGE(done_a.size() == 11, after.out);
  CHECK(done_a[10] == "-");
  CHECK(std::stod(done_a[6]) >= 1.1);
  CHECK(jobs_row(after.out, "ckpt-b").at(10) == "holding");
  const auto top_after = run_tool("PVFS_CTL", tc.dir(), {"top", "-n", "1", "-d", "0.2", "-c", cfg});
  CHECK_MESSAGE(top_after.out.find("I/O tokens: ckpt-b\n") != std::string::npos, top_after.out);
}

TEST_CASE("a client that neither renews nor ends loses its token when its lease lapses") {
  constexpr uint32_t kLeaseMs = 1500;
  TestCluster tc(scheduled("fcfs", kLeaseMs));
  const Config& config = tc.config();
  const Secret key = key_of(config);
  wait_for_grants(config);
  auto a = io_step(config, key, 11, {{"silent", 100}});
  REQUIRE(a.ok());
  REQUIRE(a->has("silent"));
  const auto last_renewal = Clock::now();
  // The waiting client renews every 100 ms, as pvfsmount does while it waits.
  Clock::time_point granted_at{};
  while (Clock::now() - last_renewal < milliseconds(kLeaseMs + 3000)) {
    auto b = io_step(config, key, 22, {{"waiting", 100}});
    REQUIRE(b.ok());
    if (b->has("waiting")) {
      granted_at = Clock::now();
      break;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  REQUIRE(granted_at != Clock::time_point{});
  const auto after = std::chrono::duration_cast<milliseconds>(granted_at - last_renewal).count();
  CHECK(after >= kLeaseMs - 50);
  CHECK(after <= kLeaseMs + 1000);
  CHECK(status_of(config).jobs.at(0).job == "silent");  // its step counted as finished
}

TEST_CASE("malformed and unauthenticated ioStep messages get clear errors and the scheduler goes on") {
  TestCluster tc(scheduled("fcfs", 2000));
  const Config& config = tc.config();
  const Secret key = key_of(config);
  wait_for_grants(config);

  auto zero = io_step(config, key, 0, {{"j", 1}});
  CHECK(zero.code() == Errc::invalid_argument);
  CHECK(zero.status().detail().find("client key 0") != std::string::npos);
  auto empty = io_step(config, key, 5, {{"", 1}});
  CHECK(empty.code() == Errc::invalid_argument);
  CHECK(empty.status().detail().find("needs a job id") != std::string::npos);
  auto long_job = io_step(config, key, 5, {{std::string(65, 'x'), 1}});
  CHECK(long_job.code() == Errc::invalid_argument);
  // A bad claim beside a good one: nothing of the message is applied.
  auto mixed = io_step(config, key, 5, {{"good", 1}, {"", 1}});
  CHECK(mixed.code() == Errc::invalid_argument);
  CHECK(status_of(config).active.empty());

  Secret wrong = key;
  wrong[0] ^= 0xff;
  auto stranger = io_step_to(config, wrong, 0, 5, {{"intruder", 1}});
  CHECK(stranger.code() == Errc::access_denied);

  auto fine = io_step(config, key, 5, {{"good", 1}});
  REQUIRE(fine.ok());
  CHECK(fine->has("good"));
  CHECK(jobs_in(status_of(config).active) == Jobs{"good"});
}

TEST_CASE("ending an unknown job's step is not_found naming the job, and changes nothing") {
  // A lease a loaded machine's few requests cannot outlast, so "held" can
  // only go by an end (the client claims it again before the last checks).
  // The delegate's first grace is a lease long: the shorter, the sooner.
  TestCluster tc(scheduled("sjf", 5000));
  const Config& config = tc.config();
  const Secret key = key_of(config);
  wait_for_grants(config);
  REQUIRE(io_step(config, key, 5, {{"held", 1}}).ok());
  auto unknown = io_step(config, key, 5, {}, {"nobody"});
  CHECK(unknown.code() == Errc::not_found);
  CHECK(unknown.status().detail().find("job nobody has no I/O step") != std::string::npos);
  REQUIRE(io_step(config, key, 5, {{"held", 1}}).ok());
  auto not_mine = io_step(config, key, 6, {}, {"held"});
  CHECK(not_mine.code() == Errc::not_found);
  CHECK(jobs_in(status_of(config).active) == Jobs{"held"});
}

TEST_CASE("killing the delegate mid-step: the next one resumes from re-registrations and two conflicting steps "
          "never hold tokens at once") {
  constexpr uint32_t kLeaseMs = 1500;
  // Three members: the two left after the kill are a quorum, so the second
  // may act as the delegate (pvfs-mds(8), fencing).
  ClusterOptions options = scheduled("fcfs", kLeaseMs, 3);
  options.mds_dead_after_ms = 1500;
  TestCluster tc(options);
  const Config& config = tc.config();
  const Secret key = key_of(config);
  wait_for_grants(config);
  REQUIRE(status_of(config).delegate == config.mds.at(0).id);

  // Two clients renewing every 100 ms; each uses its token for a lease
  // after the request that confirmed it was sent, as pvfsmount does.
  struct Fake {
    uint64_t key;
    std::string job;
    bool granted = false;
    Clock::time_point valid_until{};
    std::vector<std::pair<Clock::time_point, Clock::time_point>> held;  // token valid from, to
  };
  Fake a{11, "first", false, {}, {}}, b{22, "second", false, {}, {}};
  const auto renew = [&](Fake& f, bool end) {
    const auto sent = Clock::now();
    auto r = end ? io_step(config, key, f.key, {}, {f.job}) : io_step(config, key, f.key, {{f.job, 100, {}, f.granted}});
    if (!r) return;  // no delegate right now: keep using the token until it runs out
    if (end) {
      f.granted = false;
      if (!f.held.empty()) f.held.back().second = sent;
      f.valid_until = sent;
      return;
    }
    if (r->has(f.job)) {
      if (!f.granted || sent > f.valid_until) f.held.push_back({sent, sent + milliseconds(kLeaseMs)});
      f.granted = true;
      f.valid_until = sent + milliseconds(kLeaseMs);
      f.held.back().second = f.valid_until;
    } else {
      f.granted = false;
    }
  };
  // The first grant on a loaded machine: wait for it rather than take one
  // slow or refused call for a failure (renew() keeps going on errors).
  REQUIRE(eventually([&] {
    renew(a, false);
    return a.granted;
  }, milliseconds(10000)));
  renew(b, false);
  REQUIRE_FALSE(b.granted);

  REQUIRE(tc.cluster().kill_daemon("mds0", SIGKILL).ok());
  const auto killed = Clock::now();
  // First keeps its step a while on the new delegate, then ends it.
  while (Clock::now() - killed < milliseconds(6000)) {
    renew(a, false);
    renew(b, false);
    std::this_thread::sleep_for(milliseconds(100));
  }
  CHECK_MESSAGE(a.granted, "the re-registered token was not given back");
  CHECK_FALSE(b.granted);
  renew(a, true);
  CHECK(eventually([&] {
    renew(b, false);
    return b.granted;
  }, milliseconds(5000)));
  CHECK(status_of(config).delegate == config.mds.at(1).id);
  for (const auto& [a_from, a_to] : a.held)
    for (const auto& [b_from, b_to] : b.held) CHECK_MESSAGE((a_to <= b_from || b_to <= a_from), "tokens overlapped");
}

TEST_CASE("a delegate whose cluster lease lapses for a moment keeps its queues and grants again without a grace") {
  // dead_after 6 s gives a cluster lease of 4.33 s (heartbeats every 1 s):
  // with the other members stopped 4.7 s the delegate's lease lapses, yet
  // nobody counts it dead. The I/O lease (10 s) outlasts the lapse.
  constexpr uint32_t kLeaseMs = 10000;
  ClusterOptions options = scheduled("fcfs", kLeaseMs, 3);
  options.mds_dead_after_ms = 6000;
  TestCluster tc(options);
  const Config& config = tc.config();
  const Secret key = key_of(config);
  wait_for_grants(config);
  REQUIRE(status_of(config).delegate == config.mds.at(0).id);
  // A delegate that took over just now grants after its grace: claim again
  // (the same client and job join the same step) until the token comes.
  REQUIRE(eventually([&] {
    auto w = io_step(config, key, 33, {{"warmup", 1}});
    return w.ok() && w->has("warmup");
  }, milliseconds(20000)));
  REQUIRE(io_step(config, key, 33, {}, {"warmup"}).ok());
  REQUIRE(eventually([&] {
    auto a = io_step(config, key, 11, {{"holder", 100}});
    return a.ok() && a->has("holder");
  }, milliseconds(20000)));
  REQUIRE(io_step(config, key, 22, {{"waiter", 100}}).ok());

  REQUIRE(tc.cluster().kill_daemon("mds1", SIGSTOP).ok());
  REQUIRE(tc.cluster().kill_daemon("mds2", SIGSTOP).ok());
  std::this_thread::sleep_for(milliseconds(4700));
  REQUIRE(tc.cluster().kill_daemon("mds1", SIGCONT).ok());
  REQUIRE(tc.cluster().kill_daemon("mds2", SIGCONT).ok());
  // The delegate serves the scheduler again once a heartbeat is answered.
  IoschedView back;
  REQUIRE(eventually([&] {
    auto v = iosched_status(config, key, milliseconds(2000));
    if (!v) return false;
    back = *v;
    return true;
  }, milliseconds(5000)));
  const std::string log = read_text(tc.cluster().dir() / "logs" / "mds0.log");
  REQUIRE_MESSAGE(log.find("no lease: mds 0") != std::string::npos, "the lease never lapsed: nothing tested");
  CHECK(back.delegate == config.mds.at(0).id);
  CHECK(back.grace_ms == 0);
  CHECK(jobs_in(back.active) == Jobs{"holder"});
  CHECK(jobs_in(back.pending) == Jobs{"waiter"});
  CHECK(std::find_if(back.jobs.begin(), back.jobs.end(), [](const IoJobRow& j) { return j.job == "warmup"; }) !=
        back.jobs.end());

  auto renewed = io_step(config, key, 11, {{"holder", 100, {}, true}});
  REQUIRE(renewed.ok());
  CHECK(renewed->has("holder"));
  REQUIRE(io_step(config, key, 11, {}, {"holder"}).ok());
  // No grace: the waiter gets the token with its next renewal, not a lease later.
  auto next = io_step(config, key, 22, {{"waiter", 100}});
  REQUIRE(next.ok());
  CHECK(next->has("waiter"));
}

TEST_CASE("a policy switched at run time outlives the delegate that took it") {
  ClusterOptions options = scheduled("fcfs", 1500, 3);
  options.mds_dead_after_ms = 1500;
  TestCluster tc(options);
  const Config& config = tc.config();
  wait_for_grants(config);
  REQUIRE(status_of(config).delegate == config.mds.at(0).id);
  const auto switched =
      run_tool("PVFS_CTL", tc.dir(), {"iosched", "-c", tc.cluster().config_path().string(), "policy", "sa-sjf"});
  REQUIRE_MESSAGE(switched.status == 0, switched.err);
  // The members learn it with the next heartbeat; the next delegate hosts
  // the scheduler under it, not under the configuration's fcfs.
  std::this_thread::sleep_for(milliseconds(3 * config.heartbeat_interval_ms));
  REQUIRE(tc.cluster().kill_daemon("mds0", SIGKILL).ok());
  IoschedView after;
  CHECK(eventually([&] {
    auto v = iosched_status(config, key_of(config), milliseconds(2000));
    if (!v) return false;
    after = *v;
    return v->delegate == config.mds.at(1).id;
  }, milliseconds(20000)));
  CHECK(after.policy == "sa-sjf");
}

TEST_CASE("two jobs writing through one mount are serialized under fcfs, and pvfs-ctl iosched shows it") {
  if (skip_without_fuse()) return;
  ClusterOptions options = scheduled("fcfs", 2000);
  options.iosched_idle_ms = 400;
  TestCluster tc(options, true);
  const Config& config = tc.config();
  wait_for_grants(config);
  const std::string mnt = std::filesystem::absolute(tc.mnt()).string();
  const std::string scratch = tc.dir().string();
  // Job A writes a MiB every 100 ms for about 3 s; B writes once, starting 1 s in.
  const std::string a = "env PVFS_JOBID=A sh -c 'for i in $(seq 30); do dd if=/dev/zero of=" + mnt +
                        "/a bs=1M count=1 seek=$i conv=notrunc status=none; sleep 0.1; done; date +%s%N > " +
                        scratch + "/a.done' &";
  REQUIRE(std::system(a.c_str()) == 0);
  REQUIRE(eventually([&] { return jobs_in(status_of(config).active) == Jobs{"A"}; }, milliseconds(5000)));
  std::this_thread::sleep_for(milliseconds(1000));
  const std::string b = "env PVFS_JOBID=B PVFS_IOSTEP_BYTES=1m sh -c 'dd if=/dev/zero of=" + mnt + "/b bs=1M count=1 status=none; " +
                        "date +%s%N > " + scratch + "/b.done' &";
  REQUIRE(std::system(b.c_str()) == 0);
  CHECK(eventually([&] { return jobs_in(status_of(config).pending) == Jobs{"B"}; }, milliseconds(3000)));
  const IoschedView waiting = status_of(config);
  CHECK(jobs_in(waiting.active) == Jobs{"A"});
  REQUIRE(waiting.pending.size() == 1);
  CHECK(waiting.pending[0].source == "declared");  // PVFS_IOSTEP_BYTES
  CHECK(waiting.pending[0].bytes == 1 << 20);
  const auto done = [&](const char* name) { return std::filesystem::exists(tc.dir() / name); };
  REQUIRE(eventually([&] { return done("a.done") && done("b.done") && !read_text(tc.dir() / "b.done").empty(); },
                     milliseconds(20000)));
  const long long a_ns = std::stoll(read_text(tc.dir() / "a.done"));
  const long long b_ns = std::stoll(read_text(tc.dir() / "b.done"));
  CHECK_MESSAGE(b_ns > a_ns, "B finished writing before A's step ended");
  CHECK(std::filesystem::file_size(tc.mnt() / "b") == 1 << 20);
}

TEST_CASE("a transparent step ends as soon as its declared bytes are written, not idle_ms later") {
  if (skip_without_fuse()) return;
  ClusterOptions options = scheduled("fcfs", 2000);
  options.iosched_idle_ms = 6000;  // an end by idle time would come long after the checks below
  TestCluster tc(options, true);
  const Config& config = tc.config();
  wait_for_grants(config);
  const std::string mnt = std::filesystem::absolute(tc.mnt()).string();
  const auto write = [&](const std::string& job, const std::string& declared, const std::string& file) {
    const std::string cmd = "env PVFS_JOBID=" + job + " PVFS_IOSTEP_BYTES=" + declared +
                            " dd if=/dev/zero of=" + mnt + "/" + file + " bs=1M count=2 status=none";
    REQUIRE(std::system(cmd.c_str()) == 0);
  };
  const auto steps_of = [&](const std::string& job) {
    for (const auto& j : status_of(config).jobs)
      if (j.job == job) return j.steps;
    return uint64_t{0};
  };
  // Declared 2 MiB and wrote them: the step ends with the last write.
  write("exact", "2m", "exact");
  CHECK(eventually([&] { return status_of(config).active.empty() && steps_of("exact") == 1; }, milliseconds(1500)));
  // Declared 8 MiB and wrote 2: the step stays until its writes were idle
  // idle_ms, and the next job waits for it.
  write("more", "8m", "more");
  std::this_thread::sleep_for(milliseconds(1500));
  const IoschedView held = status_of(config);
  CHECK(jobs_in(held.active) == Jobs{"more"});
  CHECK(steps_of("more") == 0);
  CHECK(eventually([&] { return steps_of("more") == 1; }, milliseconds(8000)));
  CHECK(std::filesystem::file_size(tc.mnt() / "exact") == 2 << 20);
}

TEST_CASE("an explicit step never ended is given up a lease after its last write, and an unknown job's end is "
          "refused") {
  if (skip_without_fuse()) return;
  constexpr uint32_t kLeaseMs = 1500;
  TestCluster tc(scheduled("fcfs", kLeaseMs), true);
  const Config& config = tc.config();
  const Secret key = key_of(config);
  wait_for_grants(config);
  const std::string mnt = std::filesystem::absolute(tc.mnt()).string();
  const auto begun = run_tool("PVFS_CTL", tc.dir(), {"iostep", "begin", "--job", "forgetful", "--bytes", "4M", mnt});
  REQUIRE_MESSAGE(begun.status == 0, begun.err);
  REQUIRE(eventually([&] { return jobs_in(status_of(config).active) == Jobs{"forgetful"}; }, milliseconds(3000)));
  const auto state = run_tool("PVFS_CTL", tc.dir(), {"iostep", "status", "--job", "forgetful", mnt});
  CHECK(state.out == "granted\n");
  const auto start = Clock::now();
  Clock::time_point granted_at{};
  while (Clock::now() - start < milliseconds(3 * kLeaseMs + 3000)) {
    auto b = io_step(config, key, 22, {{"patient", 1}});
    REQUIRE(b.ok());
    if (b->has("patient")) {
      granted_at = Clock::now();
      break;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  REQUIRE(granted_at != Clock::time_point{});
  CHECK(granted_at - start >= milliseconds(kLeaseMs - 300));

  const auto unknown = run_tool("PVFS_CTL", tc.dir(), {"iostep", "end", "--job", "nobody", mnt});
  CHECK(unknown.status == 1);
  CHECK(unknown.err.find("job nobody has no I/O step on this mount") != std::string::npos);
  // A path off pvfs is named as such, before anything is asked.
  const auto elsewhere = run_tool("PVFS_CTL", tc.dir(), {"iostep", "begin", "--job", "nobody", tc.dir().string()});
  CHECK(elsewhere.status == 1);
  CHECK(elsewhere.err == "pvfs-ctl: iostep begin: " + tc.dir().string() + ": not on a pvfs file system\n");
}

TEST_CASE("a pvfsmount killed mid-step loses its token within the lease, and what it acknowledged stays") {
  if (skip_without_fuse()) return;
  constexpr uint32_t kLeaseMs = 1500;
  ClusterOptions options = scheduled("fcfs", kLeaseMs);
  options.iosched_idle_ms = 60000;  // the step stays open until the client dies
  TestCluster tc(options, true);
  const Config& config = tc.config();
  const Secret key = key_of(config);
  wait_for_grants(config);
  const std::string mnt = std::filesystem::absolute(tc.mnt()).string();
  const std::string write = "env PVFS_JOBID=victim dd if=/dev/urandom of=" + mnt +
                            "/kept bs=64K count=16 conv=fsync status=none";
  REQUIRE(std::system(write.c_str()) == 0);
  const std::string written = pvfs::test::read_text(tc.mnt() / "kept");
  REQUIRE(written.size() == 16 * 65536);
  REQUIRE(jobs_in(status_of(config).active) == Jobs{"victim"});

  int mounter = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string cmdline = read_text(entry.path() / "cmdline");
    if (cmdline.find("pvfsmount") != std::string::npos && cmdline.find(mnt) != std::string::npos)
      mounter = std::stoi(entry.path().filename().string());
  }
  REQUIRE(mounter > 0);
  REQUIRE(::kill(mounter, SIGKILL) == 0);
  const auto killed = Clock::now();
  Clock::time_point granted_at{};
  while (Clock::now() - killed < milliseconds(kLeaseMs + 3000)) {
    auto b = io_step(config, key, 22, {{"next", 1}});
    REQUIRE(b.ok());
    if (b->has("next")) {
      granted_at = Clock::now();
      break;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  REQUIRE(granted_at != Clock::time_point{});
  CHECK(granted_at - killed <= milliseconds(kLeaseMs + 1000));

  Session s(config);
  auto found = s.lookup(kRootInode, "kept");
  REQUIRE(found.ok());
  auto file = s.open(found->ino, O_RDONLY);
  REQUIRE(file.ok());
  AlignedBuffer got(written.size());
  auto n = s.read(**file, 0, got.span());
  REQUIRE(n.ok());
  CHECK(*n == written.size());
  CHECK(std::memcmp(got.data(), written.data(), written.size()) == 0);
  CHECK(s.release(*file).ok());
}

TEST_CASE("libpvfs-iostep opens a declared step, waits for its token and ends it") {
  if (skip_without_fuse()) return;
  TestCluster tc(scheduled("sjf", 2000), true);
  const Config& config = tc.config();
  wait_for_grants(config);
  const std::string mnt = std::filesystem::absolute(tc.mnt()).string();
  CHECK(pvfs_iostep_state(mnt.c_str(), "lib-job") == PVFS_IOSTEP_NONE);
  REQUIRE(pvfs_iostep_begin(mnt.c_str(), "lib-job", 3 << 20, "0") == 0);
  REQUIRE(pvfs_iostep_wait(mnt.c_str(), "lib-job", 5000) == 0);
  CHECK(pvfs_iostep_state(mnt.c_str(), "lib-job") == PVFS_IOSTEP_GRANTED);
  const IoschedView v = status_of(config);
  REQUIRE(jobs_in(v.active) == Jobs{"lib-job"});
  CHECK(v.active[0].bytes == 3 << 20);
  CHECK(v.active[0].source == "declared");
  CHECK(v.active[0].servers == std::vector<uint32_t>{0});
  REQUIRE(pvfs_iostep_end(mnt.c_str(), "lib-job") == 0);
  CHECK(pvfs_iostep_state(mnt.c_str(), "lib-job") == PVFS_IOSTEP_NONE);
  CHECK(eventually([&] { return status_of(config).active.empty(); }, milliseconds(3000)));
  errno = 0;
  CHECK(pvfs_iostep_end(mnt.c_str(), "lib-job") == -1);
  CHECK(errno == ENOENT);
  errno = 0;
  CHECK(pvfs_iostep_begin(mnt.c_str(), "two words", 0, nullptr) == -1);
  CHECK(errno == EINVAL);
  errno = 0;
  CHECK(pvfs_iostep_wait(mnt.c_str(), "never-begun", 100) == -1);
  CHECK(errno == ENOENT);
}

}  // namespace pvfs::test::iosched_test
