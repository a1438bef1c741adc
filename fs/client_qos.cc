// The client's part in QoS. A job's goal from its environment
// (PVFS_QOS_RUNTIME, pvfsmount(8)): the first I/O of a job that asks for one
// sets it on the delegate's QoS coordinator (mds/qos_host.h), which keeps a
// goal set earlier (pvfs-ctl qos set wins). Best effort: the I/O never
// waits for it; a failure is logged once per job. And each job's I/O time
// on this mount, stamped on its data requests. Runs on the client's
// executor.
#include <fmt/format.h>

#include "fs/client_impl.h"
#include "shared/log.h"

namespace pvfs {

namespace mp = proto::mds;

void Client::Impl::qos_announce(const std::string& job, uint64_t runtime_ms) {
  if (runtime_ms == 0 || job.empty() || qos_announced.contains(job)) return;
  if (qos_announced.size() >= kMaxQosAnnounced) return;
  qos_announced.insert(job);
  asio::co_spawn(io, [this, job, runtime_ms, alive = alive]() -> asio::awaitable<void> {
    auto reply = co_await call_delegate([&](rpc::OutMessage& out) {
      auto g = out.init_body<mp::Request>().initQosSet();
      g.setJob(job);
      g.setRuntimeMs(runtime_ms);
      g.setFromEnv(true);
    });
    if (!*alive) co_return;
    if (reply) spdlog::info("QoS: job {}'s PVFS_QOS_RUNTIME of {} ms sent (a goal set before stays)", job, runtime_ms);
    else spdlog::warn("QoS: job {}'s PVFS_QOS_RUNTIME not set as its goal: {}", job, reply.status().to_string());
  }, asio::detached);
}

namespace {

// The client's clock as JobIoClock counts it.
JobIoClock::Nanos io_now() {
  return std::chrono::duration_cast<JobIoClock::Nanos>(rpc::Clock::now().time_since_epoch());
}

}  // namespace

rpc::Origin Client::Impl::data_origin(const Credentials& who, bool& timed) {
  rpc::Origin o = origin_of(who);
  const auto so_far = job_io.begin(who.job_id, io_now());
  timed = so_far.has_value();
  if (timed) {
    o.client = client_id;
    o.job_io_ns = *so_far;
  }
  return o;
}

void Client::Impl::job_io_end(const std::string& job) { job_io.end(job, io_now()); }

}  // namespace pvfs
