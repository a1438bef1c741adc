// Per-job QoS goals on real daemons (issue 18): pvfs-ctl qos set, list,
// clear, status and policy against the delegate's coordinator; storage
// servers reporting each period and taking the plan; and faults: an
// unknown job, the delegate and a storage server killed with SIGKILL while
// goals are active, a corrupt goals file on a member. Then models: qos
// profile, train and show, the bound following the model under ushape, a
// goal shorter than the profiled run refused, and models that survive a
// kill -9 of the delegate and a corrupt models file.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "shared/proto/mds.capnp.h"
#include "shared/rpc/connection.h"
#include "shared/rpc/run_sync.h"
#include "tests/integration/session.h"
#include "tests/support/run_tool.h"
#include "utils/common/metrics_probe.h"
#include "mds/qos_models.h"
#include "policy/qos/training.h"
#include "utils/ctl/qos_view.h"

namespace pvfs::test::qos_test {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

Secret key_of(const Config& config) {
  auto key = load_secret(config.secret_file);
  REQUIRE_MESSAGE(key.ok(), key.status().to_string());
  return *key;
}

Result<QosView> status_of(const Config& config) {
  return qos_call(config, key_of(config), milliseconds(3000), QosAction{});
}

const QosJobRow* job_in(const QosView& v, const std::string& job) {
  for (const auto& j : v.jobs)
    if (j.job == job) return &j;
  return nullptr;
}

struct Ctl {
  TestCluster& tc;
  Outcome operator()(std::vector<std::string> args) {
    args.push_back("-c");
    args.push_back(tc.cluster().config_path().string());
    return run_tool("PVFS_CTL", tc.dir(), args);
  }
};

std::string log_of(TestCluster& tc, const std::string& name) {
  for (const auto& d : tc.cluster().daemons())
    if (d.name == name) return read_text(d.log);
  return {};
}

size_t count_in(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Writes `bytes` to `name` as job `job`, in 1 MiB pieces, on a client of
// its own (callable from a thread other than the test's).
Status write_as(const Config& config, const std::string& job, const std::string& name, uint64_t bytes) {
  Session s(Session::Deferred{});
  if (Status st = s.connect(config); !st.ok()) return st;
  Credentials cred;
  cred.job_id = job;
  auto made = s.run(s->create(cred, kRootInode, name, 0644, O_RDWR));
  if (!made) return made.status();
  AlignedBuffer buf(1 << 20);
  fill_pattern(buf.span(), 7, 0);
  for (uint64_t off = 0; off < bytes; off += buf.size()) {
    auto n = s.run(s->write(cred, *made->second, off, buf.span()));
    if (!n) return n.status();
  }
  return s.run(s->release(cred, made->second));
}

// Whether the coordinator's plan gives `job` a window of its own within
// `limit`, while `bytes` are written as that job.
bool windowed_while_writing(TestCluster& tc, const std::string& job, const std::string& name, uint64_t bytes,
                            milliseconds limit) {
  Status written;
  std::thread writer([&] { written = write_as(tc.config(), job, name, bytes); });
  bool windowed = false;
  const auto until = Clock::now() + limit;
  while (Clock::now() < until && !windowed) {
    auto v = status_of(tc.config());
    if (v.ok())
      for (const auto& w : v->windows) windowed = windowed || (w.kind == "dedicated" && w.job == job);
    std::this_thread::sleep_for(milliseconds(100));
  }
  writer.join();
  CHECK_MESSAGE(written.ok(), written.to_string());
  return windowed;
}

Result<QosModelView> model_of(const Config& config, const std::string& job) {
  QosModelAction a;
  a.job = job;
  return qos_model_call(config, key_of(config), milliseconds(3000), a);
}

// Writes 1 MiB pieces as `job` over the first 16 MiB of `name`, again and
// again, for `how_long` (on a client of its own).
Status write_for(const Config& config, const std::string& job, const std::string& name, milliseconds how_long) {
  Session s(Session::Deferred{});
  if (Status st = s.connect(config); !st.ok()) return st;
  Credentials cred;
  cred.job_id = job;
  auto made = s.run(s->create(cred, kRootInode, name, 0644, O_RDWR));
  if (!made) return made.status();
  AlignedBuffer buf(1 << 20);
  fill_pattern(buf.span(), 7, 0);
  const auto until = Clock::now() + how_long;
  for (uint64_t i = 0; Clock::now() < until; ++i) {
    auto n = s.run(s->write(cred, *made->second, (i % 16) << 20, buf.span()));
    if (!n) return n.status();
  }
  return s.run(s->release(cred, made->second));
}

// Profiles `job`: starts the run, writes as the job for 2.5 s (the servers
// learn of the run at their next fetch of the plan), and ends it. Returns
// pvfs-ctl's output of the end.
Outcome profile_job(TestCluster& tc, const std::string& job) {
  Ctl ctl{tc};
  const auto started = ctl({"qos", "profile", job});
  REQUIRE_MESSAGE(started.status == 0, started.err);
  CHECK(started.out.find("profile: running since") != std::string::npos);
  const Status written = write_for(tc.config(), job, job + "-profiled", milliseconds(2500));
  REQUIRE_MESSAGE(written.ok(), written.to_string());
  return ctl({"qos", "profile", job, "--end"});
}

ClusterOptions qos_cluster(uint32_t servers, uint32_t mds) {
  ClusterOptions o = with_servers(servers);
  o.mds = mds;
  o.mds_dead_after_ms = 1500;
  return o;
}

// Sets the QoS policy and waits until every storage server has taken it
// (its log says so): until then a server measures nothing of a job's I/O.
void set_policy(TestCluster& tc, const std::string& policy) {
  Ctl ctl{tc};
  REQUIRE(ctl({"qos", "policy", policy}).status == 0);
  REQUIRE_MESSAGE(eventually([&] {
    for (size_t i = 0; i < tc.config().servers.size(); ++i)
      if (log_of(tc, "server" + std::to_string(i)).find("QoS: policy " + policy + " ") == std::string::npos) return false;
    return true;
  }, milliseconds(5000)), "the storage servers did not take QoS policy " << policy);
}

// Whether the coordinator hears from every storage server of the cluster.
bool all_servers_report(const TestCluster& tc) {
  auto v = status_of(tc.config());
  return v.ok() && v->servers.size() == tc.config().servers.size();
}

// The coordinator's bytes done of `job`; 0 when it shows no such job.
uint64_t bytes_done_of(const TestCluster& tc, const std::string& job) {
  auto v = status_of(tc.config());
  const QosJobRow* j = v.ok() ? job_in(*v, job) : nullptr;
  return j ? j->bytes_done : uint64_t{0};
}

}  // namespace

TEST_CASE("pvfs-ctl qos sets, lists and clears goals; an unknown job and bad input get clear errors") {
  TestCluster tc(qos_cluster(2, 1));
  Ctl ctl{tc};

  const auto unknown = ctl({"qos", "clear", "nobody"});
  CHECK(unknown.status == 1);
  CHECK_MESSAGE(unknown.err.find("job nobody has no QoS goal") != std::string::npos, unknown.err);

  const auto zero = ctl({"qos", "set", "jobA", "--runtime", "0"});
  CHECK(zero.status == 2);
  CHECK(zero.err.find("not a duration") != std::string::npos);
  const auto no_runtime = ctl({"qos", "set", "jobA"});
  CHECK(no_runtime.status == 2);
  CHECK(no_runtime.err.find("--runtime") != std::string::npos);
  const auto spaced = ctl({"qos", "set", "job A", "--runtime", "10m"});
  CHECK(spaced.status == 1);
  CHECK(spaced.err.find("no whitespace") != std::string::npos);
  const auto bad_policy = ctl({"qos", "policy", "fastest"});
  CHECK(bad_policy.status == 1);
  CHECK(bad_policy.err.find("unknown QoS policy \"fastest\"") != std::string::npos);

  // Only a storage server reports its period, as itself.
  auto forged = rpc::run_sync([&]() -> asio::awaitable<Status> {
    auto conn = co_await rpc::Connection::connect(tc.config().mds.at(0).address, key_of(tc.config()), milliseconds(2000));
    if (!conn) co_return conn.status();
    (*conn)->start({});
    rpc::OutMessage out;
    auto r = out.init_body<proto::mds::Request>().initQosReport();
    r.setServer(tc.config().servers.at(0).id);
    r.setPeriodMs(1000);
    auto reply = co_await (*conn)->call(out, {}, milliseconds(2000));
    (*conn)->close();
    co_return reply.status();
  }());
  CHECK(forged.code() == Errc::access_denied);

  const auto set = ctl({"qos", "set", "jobA", "--runtime", "10m", "--bytes", "64M"});
  REQUIRE_MESSAGE(set.status == 0, set.err);
  CHECK(set.out.find("jobA") != std::string::npos);
  CHECK(set.out.find("kept by 1 metadata server") != std::string::npos);
  const auto later = ctl({"qos", "set", "jobB", "--runtime", "90s", "--start", "+1h"});
  REQUIRE_MESSAGE(later.status == 0, later.err);

  const auto list = ctl({"qos", "list"});
  CHECK(list.status == 0);
  CHECK(list.out.find("10m00s") != std::string::npos);
  CHECK(list.out.find("at first I/O") != std::string::npos);  // jobA's clock has not started
  auto v = status_of(tc.config());
  REQUIRE_MESSAGE(v.ok(), v.status().to_string());
  REQUIRE(v->jobs.size() == 2);
  const QosJobRow* a = job_in(*v, "jobA");
  REQUIRE(a);
  CHECK(a->runtime_ms == 600000);
  CHECK(a->bytes == 64 << 20);
  CHECK(a->start_unix_ms == 0);
  const QosJobRow* b = job_in(*v, "jobB");
  REQUIRE(b);
  CHECK(b->runtime_ms == 90000);
  CHECK(b->start_unix_ms > 0);

  const auto json = ctl({"qos", "status", "--json"});
  CHECK(json.status == 0);
  CHECK(json.out.find("\"job\":\"jobA\",\"runtime_ms\":600000") != std::string::npos);

  const auto cleared = ctl({"qos", "clear", "jobA"});
  CHECK_MESSAGE(cleared.status == 0, cleared.err);
  v = status_of(tc.config());
  REQUIRE(v.ok());
  CHECK(job_in(*v, "jobA") == nullptr);
  CHECK(job_in(*v, "jobB") != nullptr);
  CHECK(ctl({"qos", "clear", "jobA"}).status == 1);
}

TEST_CASE("with a goal set, the storage servers report the job's I/O, its clock starts, and they take the plan") {
  TestCluster tc(qos_cluster(2, 1));
  Ctl ctl{tc};
  set_policy(tc, "average");
  REQUIRE(ctl({"qos", "set", "qa", "--runtime", "1h", "--bytes", "96M"}).status == 0);
  // Both servers report within a period or two.
  CHECK(eventually([&] { return all_servers_report(tc); }, milliseconds(5000)));

  // While it writes, the plan gives it a window of its own (the baseline
  // reserves one per active job with a goal).
  CHECK_MESSAGE(windowed_while_writing(tc, "qa", "qa-file", 96 << 20, milliseconds(20000)),
                "no dedicated window for the job with a goal");
  auto v = status_of(tc.config());
  REQUIRE(v.ok());
  CHECK(eventually([&] {
    v = status_of(tc.config());
    const QosJobRow* j = v.ok() ? job_in(*v, "qa") : nullptr;
    return j && j->start_unix_ms > 0 && j->bytes_done >= (96u << 20);
  }, milliseconds(5000)));
  const QosJobRow* j = job_in(*v, "qa");
  REQUIRE(j);
  CHECK(j->bound_source == "average");
  CHECK(j->bound_bps == doctest::Approx(96.0 * (1 << 20) / 3600.0));
  CHECK(j->projected_ms > 0);
  CHECK_FALSE(j->behind);
  // The servers switched to the coordinator's policy and use its plans.
  CHECK(log_of(tc, "server0").find("QoS: policy average") != std::string::npos);
  CHECK(log_of(tc, "server1").find("QoS: the coordinator is on mds") != std::string::npos);
  // /metrics of the delegate carries the goal.
  auto families = fetch_metrics(DaemonKind::mds, tc.config().mds.at(0).address, key_of(tc.config()), milliseconds(3000));
  REQUIRE_MESSAGE(families.ok(), families.status().to_string());
  CHECK(metrics::sum(*families, "pvfs_mds_qos_required_seconds", {{"job", "qa"}}) == 3600);
  CHECK(metrics::sum(*families, "pvfs_mds_qos_bound_bytes_per_second", {{"job", "qa"}}) > 0);

  // Switched off at run time: the servers drop their windows.
  REQUIRE(ctl({"qos", "policy", "off"}).status == 0);
  CHECK(eventually([&] { return log_of(tc, "server0").find("QoS: policy off") != std::string::npos; },
                   milliseconds(5000)));
}

TEST_CASE("a job started as soon as its goal is set has every byte counted, and is done: its time stops, "
          "and a goal it met stays met") {
  TestCluster tc(qos_cluster(2, 1));
  Ctl ctl{tc};
  // The servers ask the coordinator for the plan every half period from
  // their start; `qos policy` and `qos set` return once they have been told.
  REQUIRE(eventually([&] {
    for (size_t i = 0; i < tc.config().servers.size(); ++i)
      if (log_of(tc, "server" + std::to_string(i)).find("QoS: the coordinator is on mds") == std::string::npos)
        return false;
    return true;
  }, milliseconds(5000)));
  REQUIRE(ctl({"qos", "policy", "average"}).status == 0);
  REQUIRE(ctl({"qos", "set", "qd", "--runtime", "5s", "--bytes", "8M"}).status == 0);
  const Status written = write_as(tc.config(), "qd", "qd-file", 8 << 20);
  REQUIRE_MESSAGE(written.ok(), written.to_string());
  QosJobRow done;
  REQUIRE_MESSAGE(eventually([&] {
    auto v = status_of(tc.config());
    const QosJobRow* j = v.ok() ? job_in(*v, "qd") : nullptr;
    if (j && j->done_ms > 0) done = *j;
    return done.done_ms > 0;
  }, milliseconds(5000)), "the coordinator never counted the job done");
  CHECK(done.done_ms < 5000);
  CHECK(done.bytes_done == (8u << 20));
  CHECK(done.elapsed_ms == done.done_ms);
  CHECK(done.projected_ms == done.done_ms);
  CHECK_FALSE(done.behind);
  // Past the goal's time the job is still done, in time: not behind.
  REQUIRE(done.start_unix_ms > 0);
  const auto past_goal = std::chrono::system_clock::time_point(milliseconds(done.start_unix_ms + 5500));
  std::this_thread::sleep_until(past_goal);
  auto v = status_of(tc.config());
  REQUIRE(v.ok());
  const QosJobRow* later = job_in(*v, "qd");
  REQUIRE(later);
  CHECK(later->done_ms == done.done_ms);
  CHECK(later->elapsed_ms == done.done_ms);
  CHECK_FALSE(later->behind);
  const auto status = ctl({"qos", "status"});
  CAPTURE(status.out);
  CHECK(status.out.find(" met") != std::string::npos);
  CHECK(status.out.find("BEHIND") == std::string::npos);
  auto families = fetch_metrics(DaemonKind::mds, tc.config().mds.at(0).address, key_of(tc.config()), milliseconds(3000));
  REQUIRE_MESSAGE(families.ok(), families.status().to_string());
  CHECK(metrics::sum(*families, "pvfs_mds_qos_behind", {{"job", "qd"}}) == 0);
  CHECK(metrics::sum(*families, "pvfs_mds_qos_done_seconds", {{"job", "qd"}}) ==
        doctest::Approx(static_cast<double>(done.done_ms) / 1000.0));
}

TEST_CASE("a job given a goal again starts afresh: the new clock waits for its next I/O, and counts only that") {
  TestCluster tc(qos_cluster(2, 1));
  Ctl ctl{tc};
  set_policy(tc, "average");
  REQUIRE(ctl({"qos", "set", "again", "--runtime", "1h", "--bytes", "8M"}).status == 0);
  const Status first = write_as(tc.config(), "again", "again-1", 8 << 20);
  REQUIRE_MESSAGE(first.ok(), first.to_string());
  REQUIRE_MESSAGE(eventually([&] {
    auto v = status_of(tc.config());
    const QosJobRow* j = v.ok() ? job_in(*v, "again") : nullptr;
    return j && j->done_ms > 0;
  }, milliseconds(5000)), "the first goal was never met");

  // The next run of the job: a goal set before it starts. The servers
  // counted 8 MiB for the last goal; none of it is this one's.
  REQUIRE(ctl({"qos", "set", "again", "--runtime", "1h", "--bytes", "8M"}).status == 0);
  std::this_thread::sleep_for(milliseconds(3000));  // three periods without I/O
  auto v = status_of(tc.config());
  REQUIRE_MESSAGE(v.ok(), v.status().to_string());
  const QosJobRow* idle = job_in(*v, "again");
  REQUIRE(idle);
  CHECK(idle->start_unix_ms == 0);
  CHECK(idle->bytes_done == 0);
  CHECK(idle->done_ms == 0);
  const auto listed = ctl({"qos", "status"});
  CAPTURE(listed.out);
  CHECK(listed.out.find("not started") != std::string::npos);
  CHECK(listed.out.find(" met") == std::string::npos);

  const Status second = write_as(tc.config(), "again", "again-2", 4 << 20);
  REQUIRE_MESSAGE(second.ok(), second.to_string());
  QosJobRow half;
  CHECK_MESSAGE(eventually([&] {
    auto w = status_of(tc.config());
    const QosJobRow* j = w.ok() ? job_in(*w, "again") : nullptr;
    if (j) half = *j;
    return j && j->bytes_done >= (4u << 20);
  }, milliseconds(5000)), "the new goal's bytes were never counted");
  CHECK(half.bytes_done == (4u << 20));
  CHECK(half.start_unix_ms > 0);
  CHECK(half.done_ms == 0);  // 4 of its 8 MiB
}

TEST_CASE("a metadata server paused past the servers' report timeout loses none of a job's bytes, and counts none twice") {
  TestCluster tc(qos_cluster(2, 1));
  Ctl ctl{tc};
  set_policy(tc, "average");
  REQUIRE(ctl({"qos", "set", "qp", "--runtime", "1h", "--bytes", "64M"}).status == 0);
  REQUIRE(eventually([&] { return all_servers_report(tc); }, milliseconds(5000)));
  auto done = [&] { return bytes_done_of(tc, "qp"); };

  REQUIRE(write_as(tc.config(), "qp", "qp-1", 16 << 20).ok());
  CHECK(eventually([&] { return done() == (16u << 20); }, milliseconds(5000)));

  // The job writes on while the metadata server stops for three report
  // periods (each server gives up on a report after half a period).
  std::atomic<bool> created = false, stop = false;
  std::atomic<uint64_t> written = 0;
  Status writer_status;
  std::thread writer([&] {
    writer_status = [&]() -> Status {
      Session s(Session::Deferred{});
      if (Status st = s.connect(tc.config()); !st.ok()) return st;
      Credentials cred;
      cred.job_id = "qp";
      auto made = s.run(s->create(cred, kRootInode, "qp-2", 0644, O_RDWR));
      if (!made) return made.status();
      created = true;
      AlignedBuffer buf(1 << 20);
      fill_pattern(buf.span(), 7, 0);
      for (uint64_t i = 0; !stop; ++i) {
        auto n = s.run(s->write(cred, *made->second, (i % 16) << 20, buf.span()));
        if (!n) return n.status();
        written += buf.size();
        std::this_thread::sleep_for(milliseconds(5));  // about 100 MiB/s: reports of each period carry some
      }
      return s.run(s->release(cred, made->second));
    }();
  });
  REQUIRE(eventually([&] { return created.load(); }, milliseconds(5000)));
  std::this_thread::sleep_for(milliseconds(300));
  REQUIRE(tc.cluster().kill_daemon("mds0", SIGSTOP).ok());
  std::this_thread::sleep_for(milliseconds(3000));
  const uint64_t during = written;
  REQUIRE(tc.cluster().kill_daemon("mds0", SIGCONT).ok());
  std::this_thread::sleep_for(milliseconds(300));
  stop = true;
  writer.join();
  REQUIRE_MESSAGE(writer_status.ok(), writer_status.to_string());
  INFO("written while paused: " << during << " of " << written.load());
  CHECK(during > (32u << 20));  // the pause fell in the middle of the writing

  // Every byte counted, once.
  const uint64_t total = (16u << 20) + written.load();
  CHECK(eventually([&] { return done() >= total; }, milliseconds(8000)));
  std::this_thread::sleep_for(milliseconds(2000));
  CHECK(done() == total);
}

TEST_CASE("a job's writes sent away from their home server count as its bytes, and reading them back counts once") {
  ClusterOptions options = qos_cluster(2, 1);
  options.maintainer_threads = 0;  // the redirected ranges stay away, so the read fetches them
  TestCluster tc(options);
  Ctl ctl{tc};
  set_policy(tc, "average");
  REQUIRE(ctl({"qos", "set", "qr", "--runtime", "1h", "--bytes", "64M"}).status == 0);
  REQUIRE(eventually([&] { return all_servers_report(tc); }, milliseconds(5000)));
  auto done = [&] { return bytes_done_of(tc, "qr"); };

  // Random dispatch sends about half the pieces to the other server.
  Session s(Session::Deferred{});
  REQUIRE(s.connect(tc.config()).ok());
  s->set_dispatch_policy(sched::Policy::random);
  Credentials cred;
  cred.job_id = "qr";
  auto made = s.run(s->create(cred, kRootInode, "qr-data", 0644, O_RDWR));
  REQUIRE(made.ok());
  constexpr uint64_t kBytes = 16u << 20;
  AlignedBuffer buf(1 << 20);
  fill_pattern(buf.span(), 9, 0);
  for (uint64_t off = 0; off < kBytes; off += buf.size())
    REQUIRE(s.run(s->write(cred, *made->second, off, buf.span())).ok());
  REQUIRE(s->dispatch_stats().pieces_redirected > 0);
  INFO("pieces redirected: " << s->dispatch_stats().pieces_redirected);
  CHECK(eventually([&] { return done() >= kBytes; }, milliseconds(5000)));
  CHECK(done() == kBytes);

  AlignedBuffer back(kBytes);
  auto got = s.run(s->read(cred, *made->second, 0, back.span()));
  REQUIRE(got.ok());
  REQUIRE(*got == kBytes);
  CHECK(eventually([&] { return done() >= 2 * kBytes; }, milliseconds(5000)));
  std::this_thread::sleep_for(milliseconds(1500));  // a fragment's read counted too would show by now
  CHECK(done() == 2 * kBytes);
  REQUIRE(s.run(s->release(cred, made->second)).ok());
}

TEST_CASE("a job's PVFS_QOS_RUNTIME sets its goal at its first I/O, and never replaces one set with pvfs-ctl") {
  TestCluster tc(qos_cluster(1, 1));
  Ctl ctl{tc};
  REQUIRE(ctl({"qos", "set", "chosen", "--runtime", "1h"}).status == 0);
  Session s(tc.config());
  for (const char* job : {"asks", "chosen"}) {
    Credentials cred;
    cred.job_id = job;
    cred.qos_runtime_ms = 300000;  // as pvfsmount reads PVFS_QOS_RUNTIME=5m from the caller
    auto made = s.run(s->create(cred, kRootInode, std::string("env-") + job, 0644, O_RDWR));
    REQUIRE(made.ok());
    AlignedBuffer buf(4096);
    REQUIRE(s.run(s->write(cred, *made->second, 0, buf.span())).ok());
    REQUIRE(s.run(s->release(cred, made->second)).ok());
  }
  CHECK(eventually([&] {
    auto v = status_of(tc.config());
    const QosJobRow* a = v.ok() ? job_in(*v, "asks") : nullptr;
    return a && a->runtime_ms == 300000;
  }, milliseconds(5000)));
  auto v = status_of(tc.config());
  REQUIRE(v.ok());
  const QosJobRow* chosen = job_in(*v, "chosen");
  REQUIRE(chosen);
  CHECK(chosen->runtime_ms == 3600000);
}

TEST_CASE("under ushape without a model a job's bound is the average one, and says so") {
  TestCluster tc(qos_cluster(1, 1));
  Ctl ctl{tc};
  set_policy(tc, "ushape");
  REQUIRE(ctl({"qos", "set", "known", "--runtime", "10m", "--bytes", "1G"}).status == 0);
  REQUIRE(ctl({"qos", "set", "unknown", "--runtime", "10m"}).status == 0);
  CHECK(eventually([&] {
    auto v = status_of(tc.config());
    const QosJobRow* k = v.ok() ? job_in(*v, "known") : nullptr;
    const QosJobRow* u = v.ok() ? job_in(*v, "unknown") : nullptr;
    return k && u && k->bound_source == "average (no model)" && u->bound_source == "none (no model and no --bytes)";
  }, milliseconds(5000)));
  const auto shown = ctl({"qos", "status"});
  CHECK(shown.out.find("average (no model)") != std::string::npos);
}

TEST_CASE("goals survive a kill -9 of the delegate, and the next delegate plans windows again") {
  TestCluster tc(qos_cluster(2, 3));
  Ctl ctl{tc};
  set_policy(tc, "average");
  const auto set = ctl({"qos", "set", "survivor", "--runtime", "30m", "--bytes", "1G"});
  REQUIRE_MESSAGE(set.status == 0, set.err);
  // Every live member held it before the answer.
  CHECK(set.out.find("kept by 3 metadata server") != std::string::npos);

  REQUIRE(tc.cluster().kill_daemon("mds0", SIGKILL).ok());
  // A goal set while the first delegate is down, on the next one.
  CHECK(eventually([&] { return ctl({"qos", "set", "newcomer", "--runtime", "5m"}).status == 0; },
                   milliseconds(15000)));
  auto v = status_of(tc.config());
  REQUIRE_MESSAGE(v.ok(), v.status().to_string());
  CHECK(v->delegate == tc.config().mds.at(1).id);
  CHECK(v->policy == "average");
  CHECK(job_in(*v, "survivor") != nullptr);
  CHECK(job_in(*v, "newcomer") != nullptr);
  // The servers find the new coordinator and report to it.
  CHECK(eventually([&] { return all_servers_report(tc); }, milliseconds(8000)));
  // The job's I/O gets a window from the new delegate.
  CHECK(windowed_while_writing(tc, "survivor", "after-kill", 64 << 20, milliseconds(20000)));

  // The killed member comes back, learns what changed while it was down,
  // and is the delegate again.
  REQUIRE(tc.cluster().restart_daemon("mds0").ok());
  CHECK(eventually([&] {
    auto now = status_of(tc.config());
    return now.ok() && now->delegate == tc.config().mds.at(0).id && job_in(*now, "newcomer") && job_in(*now, "survivor");
  }, milliseconds(15000)));
}

TEST_CASE("a job's bytes done survive a kill -9 of the delegate: the next one counts on from the servers") {
  TestCluster tc(qos_cluster(2, 3));
  Ctl ctl{tc};
  set_policy(tc, "average");
  REQUIRE(ctl({"qos", "set", "kept", "--runtime", "1h", "--bytes", "1G"}).status == 0);
  // Every storage server learns of the goal from a plan, and counts the
  // job's bytes from there.
  REQUIRE_MESSAGE(eventually([&] {
    for (size_t i = 0; i < tc.config().servers.size(); ++i)
      if (log_of(tc, "server" + std::to_string(i)).find("QoS: job kept has a goal") == std::string::npos) return false;
    return true;
  }, milliseconds(8000)), "a storage server never learned of the goal");
  auto done = [&] { return bytes_done_of(tc, "kept"); };
  REQUIRE(write_as(tc.config(), "kept", "kept-1", 32 << 20).ok());
  REQUIRE(eventually([&] { return done() == (32u << 20); }, milliseconds(5000)));

  REQUIRE(tc.cluster().kill_daemon("mds0", SIGKILL).ok());
  REQUIRE(eventually([&] {
    auto v = status_of(tc.config());
    return v.ok() && v->delegate == tc.config().mds.at(1).id && v->servers.size() == 2;
  }, milliseconds(15000)));
  // The new delegate knows what the job wrote before it took over, with
  // no I/O since, and counts on from there.
  CHECK(eventually([&] { return done() == (32u << 20); }, milliseconds(5000)));
  REQUIRE(write_as(tc.config(), "kept", "kept-2", 16 << 20).ok());
  CHECK(eventually([&] { return done() == (48u << 20); }, milliseconds(5000)));
  std::this_thread::sleep_for(milliseconds(2000));
  CHECK(done() == (48u << 20));
}

TEST_CASE("a storage server killed with SIGKILL while a goal is active reports again when it is back") {
  TestCluster tc(qos_cluster(2, 1));
  Ctl ctl{tc};
  set_policy(tc, "average");
  REQUIRE(ctl({"qos", "set", "steady", "--runtime", "1h", "--bytes", "1G"}).status == 0);
  CHECK(eventually([&] { return all_servers_report(tc); }, milliseconds(5000)));
  const uint32_t victim = tc.config().servers.at(1).id;
  CHECK(eventually([&] { return count_in(log_of(tc, "server1"), "QoS: enforcing the coordinator's windows") == 1; },
                   milliseconds(5000)));
  const size_t switched = count_in(log_of(tc, "server1"), "QoS: policy average");
  REQUIRE(tc.cluster().kill_daemon("server1", SIGKILL).ok());
  // The coordinator forgets a server that stopped reporting, keeps the goal.
  CHECK(eventually([&] {
    auto v = status_of(tc.config());
    return v.ok() && v->servers.size() == 1 && job_in(*v, "steady");
  }, milliseconds(8000)));
  REQUIRE(tc.cluster().restart_daemon("server1").ok());
  CHECK(eventually([&] {
    auto v = status_of(tc.config());
    return v.ok() && std::find(v->servers.begin(), v->servers.end(), victim) != v->servers.end();
  }, milliseconds(8000)));
  // Restarted with [qos] policy off, it takes the coordinator's policy and
  // windows again (its log is appended to: count the lines).
  CHECK(eventually([&] { return count_in(log_of(tc, "server1"), "QoS: policy average") == switched + 1; },
                   milliseconds(5000)));
  CHECK(eventually([&] { return count_in(log_of(tc, "server1"), "QoS: enforcing the coordinator's windows") == 2; },
                   milliseconds(5000)));
}

TEST_CASE("a corrupt goals file costs a member its copy, not its start: the others' copies come back") {
  TestCluster tc(qos_cluster(1, 3));
  Ctl ctl{tc};
  REQUIRE(ctl({"qos", "set", "kept", "--runtime", "20m"}).status == 0);
  REQUIRE(tc.cluster().kill_daemon("mds0", SIGKILL).ok());
  const auto file = tc.config().mds.at(0).data_dir / "qos-goals";
  REQUIRE(std::filesystem::exists(file));
  {
    std::ofstream out(file, std::ios::trunc);
    out << "pvfs-qos-goals 1\nversion 99\npolicy -\ngoal kept 1200000 0 0\nchecksum 0123456789abcdef\n";
  }
  REQUIRE(tc.cluster().restart_daemon("mds0").ok());
  CHECK(log_of(tc, "mds0").find("QoS goals not loaded") != std::string::npos);
  CHECK(eventually([&] {
    auto v = status_of(tc.config());
    return v.ok() && v->delegate == tc.config().mds.at(0).id && job_in(*v, "kept");
  }, milliseconds(15000)));
  // And it wrote the good copy back.
  CHECK(read_text(file).find("checksum 0123456789abcdef") == std::string::npos);
}

TEST_CASE("qos profile, train and show build a job's model, and under ushape its bound follows the model") {
  TestCluster tc(qos_cluster(2, 1));
  Ctl ctl{tc};
  // Under off the servers measure nothing: refused, with the way out.
  const auto off = ctl({"qos", "profile", "pj"});
  CHECK(off.status == 1);
  CHECK_MESSAGE(off.err.find("profiling needs the QoS policy on") != std::string::npos, off.err);
  CHECK(ctl({"qos", "profile", "pj", "--share", "101"}).status == 2);
  CHECK(ctl({"qos", "profile", "pj", "--end"}).status == 1);  // none running
  set_policy(tc, "ushape");
  const auto untrained = ctl({"qos", "train", "pj"});
  CHECK(untrained.status == 1);
  CHECK(untrained.err.find("job pj has no profile") != std::string::npos);

  const auto ended = profile_job(tc, "pj");
  REQUIRE_MESSAGE(ended.status == 0, ended.err);
  CHECK_MESSAGE(ended.out.find("profile: T_profile") != std::string::npos, ended.out);
  auto shown = model_of(tc.config(), "pj");
  REQUIRE_MESSAGE(shown.ok(), shown.status().to_string());
  CHECK(shown->has_profile);
  CHECK_FALSE(shown->profiling);
  CHECK_MESSAGE(shown->records >= 4, "records kept: ", shown->records);  // both servers, several epochs
  CHECK(shown->profile_bytes >= (8u << 20));
  CHECK(shown->profile_ns >= 2'500'000'000);  // the writing alone took 2.5 s
  CHECK_FALSE(shown->has_model);
  CHECK(ctl({"qos", "show", "pj"}).out.find("model: none") != std::string::npos);

  // A goal shorter than the run that had the system to itself is refused.
  const auto hopeless = ctl({"qos", "set", "pj", "--runtime", "500ms"});
  CHECK(hopeless.status == 1);
  CHECK_MESSAGE(hopeless.err.find("cannot be met: its profiling run took") != std::string::npos, hopeless.err);

  const auto trained = ctl({"qos", "train", "pj", "--runtime", "1h"});
  REQUIRE_MESSAGE(trained.status == 0, trained.err);
  CHECK(trained.out.find("model: revision") != std::string::npos);
  MESSAGE(trained.out);
  CHECK(trained.out.find("CV error") != std::string::npos);
  const auto json = ctl({"qos", "show", "pj", "--json"});
  CHECK(json.status == 0);
  CHECK(json.out.find("\"model\":{\"present\":true") != std::string::npos);
  shown = model_of(tc.config(), "pj");
  REQUIRE(shown.ok());
  REQUIRE(shown->has_model);
  CHECK(shown->format_version == qos::Model::kVersion);
  CHECK(shown->leaves >= 1);
  CHECK(shown->samples > shown->profile_samples);  // the synthetic workload too
  CHECK(shown->profile_samples >= 4);
  auto model = qos::parse_model(shown->model);
  REQUIRE_MESSAGE(model.ok(), model.status().to_string());

  // With a goal, the coordinator's bound is the model's on each server's
  // locality, summed and rescaled to the goal: between the smallest leaf
  // and twice (two servers) the largest, so scaled.
  REQUIRE(ctl({"qos", "set", "pj", "--runtime", "30m", "--bytes", "1G"}).status == 0);
  const double scale = *qos::rescale(*model, 1.0, std::chrono::minutes(30));
  double low = 1e300, high = 0;
  for (const auto& n : model->tree.nodes())
    if (n.left < 0) low = std::min(low, n.value), high = std::max(high, n.value);
  std::string source;
  double bound = 0;
  Status written;
  std::thread writer([&] {
    for (int i = 0; i < 12 && written.ok(); ++i) written = write_as(tc.config(), "pj", "run-" + std::to_string(i), 8 << 20);
  });
  const bool followed = eventually([&] {
    auto v = status_of(tc.config());
    const QosJobRow* j = v.ok() ? job_in(*v, "pj") : nullptr;
    if (j) source = j->bound_source, bound = j->bound_bps;
    return j && j->bound_source.starts_with("model r");
  }, milliseconds(15000));
  writer.join();
  CHECK(written.ok());
  CHECK_MESSAGE(followed, "bound source: ", source);
  CHECK(source.starts_with(fmt::format("model r{}", shown->revision)));
  CHECK(bound >= low * scale * 0.999);
  CHECK(bound <= 2 * high * scale * 1.001);
  CHECK(bound != doctest::Approx(double(1 << 30) / 1800.0));  // not the average bound
  CHECK(ctl({"qos", "status"}).out.find("model r") != std::string::npos);

  // Under average the same job's bound is the constant again.
  REQUIRE(ctl({"qos", "policy", "average"}).status == 0);
  CHECK(eventually([&] {
    auto v = status_of(tc.config());
    const QosJobRow* j = v.ok() ? job_in(*v, "pj") : nullptr;
    return j && j->bound_source == "average";
  }, milliseconds(5000)));
}

TEST_CASE("a profiling run's I/O time is the client's timing of the job's requests; its pauses are T_comp") {
  TestCluster tc(qos_cluster(2, 1));
  Ctl ctl{tc};
  set_policy(tc, "ushape");
  REQUIRE(ctl({"qos", "profile", "tj"}).status == 0);
  // The job as one process on one node: computes, writes for 1.5 s,
  // computes for 2 s, writes for 1.5 s more; nobody tells pvfs which is which.
  Session s(Session::Deferred{});
  REQUIRE(s.connect(tc.config()).ok());
  Credentials cred;
  cred.job_id = "tj";
  std::this_thread::sleep_for(milliseconds(1200));  // the servers learn of the run
  auto made = s.run(s->create(cred, kRootInode, "tj-data", 0644, O_RDWR));
  REQUIRE(made.ok());
  AlignedBuffer buf(1 << 20);
  fill_pattern(buf.span(), 7, 0);
  uint64_t i = 0;
  auto write_phase = [&] {
    const auto until = Clock::now() + milliseconds(1500);
    while (Clock::now() < until) {
      auto n = s.run(s->write(cred, *made->second, (i++ % 16) << 20, buf.span()));
      REQUIRE(n.ok());
    }
  };
  write_phase();
  std::this_thread::sleep_for(milliseconds(2000));
  write_phase();
  REQUIRE(s.run(s->release(cred, made->second)).ok());
  const auto ended = ctl({"qos", "profile", "tj", "--end"});
  REQUIRE_MESSAGE(ended.status == 0, ended.err);
  CHECK_MESSAGE(ended.out.find("I/O time timed by 1 client") != std::string::npos, ended.out);
  auto shown = model_of(tc.config(), "tj");
  REQUIRE_MESSAGE(shown.ok(), shown.status().to_string());
  CHECK(shown->io_from_clients);
  CHECK_FALSE(shown->io_from_job);
  CHECK(shown->clients == 1);
  const int64_t io = shown->profile_ns - shown->comp_ns;
  MESSAGE("T_profile ", shown->profile_ns / 1e9, " s, I/O ", io / 1e9, " s, T_comp ", shown->comp_ns / 1e9, " s");
  // The two write phases, not the pauses: 3 s of writing (each phase may
  // overrun by its last write, slow on a loaded machine), where the 2 s
  // pause would make 5; what is not I/O is at least the pause and the
  // 1.2 s before the first write.
  CHECK(io >= 2'000'000'000);
  CHECK(io <= 3'500'000'000);
  CHECK(shown->comp_ns >= 3'200'000'000);
}

TEST_CASE("a model survives a kill -9 of the delegate and a corrupt models file on a member") {
  TestCluster tc(qos_cluster(2, 3));
  Ctl ctl{tc};
  set_policy(tc, "ushape");
  const auto ended = profile_job(tc, "kept");
  REQUIRE_MESSAGE(ended.status == 0, ended.err);
  const auto trained = ctl({"qos", "train", "kept"});
  REQUIRE_MESSAGE(trained.status == 0, trained.err);
  CHECK(trained.out.find("held by 3 metadata server") != std::string::npos);
  auto before = model_of(tc.config(), "kept");
  REQUIRE(before.ok());
  REQUIRE(before->has_model);

  REQUIRE(tc.cluster().kill_daemon("mds0", SIGKILL).ok());
  Result<QosModelView> after = Status(Errc::unavailable, "not asked");
  CHECK(eventually([&] {
    after = model_of(tc.config(), "kept");
    return after.ok();
  }, milliseconds(15000)));
  REQUIRE_MESSAGE(after.ok(), after.status().to_string());
  CHECK(after->has_model);
  CHECK(after->revision == before->revision);
  CHECK(after->model == before->model);
  CHECK(after->records == before->records);
  // The clients' timing of the run is kept with it.
  CHECK(before->io_from_clients);
  CHECK(after->io_from_clients);
  CHECK(after->clients == before->clients);
  CHECK(after->comp_ns == before->comp_ns);

  // Its own copy damaged while it was down: the member starts, says why it
  // has none, takes the others' copy and writes it back.
  const auto file = tc.config().mds.at(0).data_dir / "qos-models";
  REQUIRE(std::filesystem::exists(file));
  std::string text = read_text(file);
  text[text.find("alpha ") + 6] ^= 1;
  {
    std::ofstream out(file, std::ios::trunc);
    out << text;
  }
  REQUIRE(tc.cluster().restart_daemon("mds0").ok());
  CHECK(log_of(tc, "mds0").find("QoS profiles and models not loaded") != std::string::npos);
  CHECK(log_of(tc, "mds0").find("checksum mismatch") != std::string::npos);
  CHECK(eventually([&] {
    auto v = status_of(tc.config());
    if (!v.ok() || v->delegate != tc.config().mds.at(0).id) return false;
    auto m = model_of(tc.config(), "kept");
    return m.ok() && m->has_model && m->model == before->model;
  }, milliseconds(15000)));
  auto reread = mds::parse_models(read_text(file));
  CHECK_MESSAGE(reread.ok(), reread.status().to_string());
}

}  // namespace pvfs::test::qos_test
