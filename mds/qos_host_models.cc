// The QoS coordinator's profiling runs and models (mds/qos_host.h): `qos
// profile` starts and ends a job's run, the servers' per-epoch records of
// the job are gathered from their reports and kept by every member
// (mds/qos_models.h), `qos train` trains the job's CART from them and the
// synthetic workload (policy/qos/training.h), `qos show` prints the result,
// and under `ushape` the model gives each job's bound.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "mds/qos_host.h"
#include "shared/log.h"
#include "shared/rpc/convert.h"

namespace pvfs::mds {

namespace mp = proto::mds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

namespace {

using rpc::text;

// A seed of our own from the job and revision: a model trained again from
// the same profile is the same tree.
uint64_t seed_of(std::string_view job, uint64_t revision) {
  uint64_t h = 0xcbf29ce484222325ull ^ revision;
  for (unsigned char c : job) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

bool QosHost::collecting(const qos::Profile& p) const {
  if (!p.ended()) return true;
  const int64_t grace_ms = int64_t{config_.qos_period_ms} * 5 / 2;
  return unix_ns() / 1'000'000 < p.end_unix_ms + grace_ms;
}

asio::awaitable<Status> QosHost::share_models(QosModels next) {
  if (Status st = cluster_.share_qos_models(std::move(next)); !st.ok()) co_return st;
  model_replicas_ = co_await cluster_.replicate_qos();
  co_return Status{};
}

asio::awaitable<void> QosHost::flush_profiles() {
  if (pending_records_.empty()) co_return;
  QosModels next = cluster_.qos_models();
  size_t kept = 0;
  for (auto& [job, pending] : pending_records_) {
    auto p = next.profiles.find(job);
    if (p == next.profiles.end()) continue;  // cancelled meanwhile
    qos::add_epochs(p->second, pending.records);
    for (const auto& [client, span] : pending.clients) qos::join_span(p->second.clients, client, span);
    kept += pending.records.size() + pending.clients.size();
  }
  pending_records_.clear();
  if (kept == 0) co_return;
  Status st = co_await share_models(std::move(next));
  if (!st.ok()) spdlog::error("QoS: keeping {} profile records: {}", kept, st.to_string());
}

void QosHost::plan_profile(const qos::Profile& p) {
  plan_ = qos::with_profile(plan_, p.job, milliseconds(config_.qos_period_ms), p.share_pct);
}

bool QosHost::model_bound(const std::string& job, const QosGoal& goal, const Measured& m, Run& run) const {
  const auto& models = cluster_.qos_models().models;
  const auto it = models.find(job);
  if (it == models.end()) {
    run.source = "average (no model)";
    return false;
  }
  const std::string name = fmt::format("model r{}", it->second.revision);
  if (m.model_servers == 0) {
    // No I/O measured this period: the last bound from the model stands.
    if (run.model_bound) {
      run.source = name + " (last I/O)";
      return true;
    }
    run.source = fmt::format("average ({}: no I/O measured yet)", name);
    return false;
  }
  auto bound = qos::rescale(it->second.model, m.model_bound, milliseconds(goal.runtime_ms));
  if (!bound) {
    run.source = fmt::format("average ({}: goal shorter than its profile)", name);
    return false;
  }
  run.bound = *bound;
  run.source = name;
  run.model_bound = true;
  return true;
}

asio::awaitable<Status> QosHost::profile(mp::Request::QosProfileRequest::Reader req, mp::Reply::Builder reply) {
  if (!hosting()) co_return not_delegate();
  const std::string job(text(req.getJob()));
  if (Status st = check_goal_job(job); !st.ok()) co_return st;
  QosModels next = cluster_.qos_models();
  const int64_t now_ms = unix_ns() / 1'000'000;
  if (req.getEnd()) {
    auto it = next.profiles.find(job);
    if (it == next.profiles.end() || it->second.ended())
      co_return Status(Errc::not_found, fmt::format("job {} has no profiling run in progress (start one with "
                                                    "pvfs-ctl qos profile {})",
                                                    job, job));
    it->second.end_unix_ms = std::max(now_ms, it->second.start_unix_ms + 1);
    if (req.getIoTimeNs() > 0) {
      it->second.io = nanoseconds(static_cast<int64_t>(std::min<uint64_t>(req.getIoTimeNs(), uint64_t{1} << 62)));
      it->second.io_source = qos::IoSource::job;
    }
    spdlog::info("QoS: job {}'s profiling run ended after {} ms", job, it->second.end_unix_ms - it->second.start_unix_ms);
    if (Status st = co_await share_models(std::move(next)); !st.ok()) co_return st;
    // The servers report the epochs of a period a quarter into the next,
    // and the records are kept at its half: wait for those of the last.
    asio::steady_timer wait(io_);
    wait.expires_after(milliseconds(config_.qos_period_ms * 2 + config_.qos_period_ms / 4));
    asio::error_code ec;
    co_await wait.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (!hosting()) co_return not_delegate();
  } else {
    const uint32_t share = req.getSharePct() == 0 ? 100 : req.getSharePct();
    if (share > 100) co_return Status(Errc::invalid_argument, "a profiling share is a percentage, 1..100");
    if (policy() == qos::QosPolicy::off)
      co_return Status(Errc::invalid_argument,
                       "profiling needs the QoS policy on (pvfs-ctl qos policy ushape): under off the storage "
                       "servers measure nothing");
    for (const auto& [other, p] : next.profiles)
      if (!p.ended() && other != job)
        co_return Status(Errc::invalid_argument,
                         fmt::format("job {} is being profiled; end it first (pvfs-ctl qos profile {} --end)", other, other));
    qos::Profile p;
    p.job = job;
    p.share_pct = share;
    p.start_unix_ms = now_ms;
    next.profiles[job] = std::move(p);  // a new run replaces the job's last one
    pending_records_.erase(job);
    spdlog::info("QoS: profiling job {} with {}% of each period", job, share);
    if (Status st = co_await share_models(std::move(next)); !st.ok()) co_return st;
    if (!hosting()) co_return not_delegate();
  }
  fill_model(job, reply.initQosModel());
  co_return Status{};
}

asio::awaitable<Status> QosHost::train(mp::Request::QosTrainRequest::Reader req, mp::Reply::Builder reply) {
  if (!hosting()) co_return not_delegate();
  const std::string job(text(req.getJob()));
  if (Status st = check_goal_job(job); !st.ok()) co_return st;
  const QosModels& models = cluster_.qos_models();
  const auto it = models.profiles.find(job);
  if (it == models.profiles.end())
    co_return Status(Errc::not_found,
                     fmt::format("job {} has no profile: run it under pvfs-ctl qos profile {} first", job, job));
  if (!it->second.ended())
    co_return Status(Errc::invalid_argument,
                     fmt::format("job {}'s profiling run has not ended (pvfs-ctl qos profile {} --end)", job, job));
  const qos::Profile prof = qos::with_io(it->second);
  nanoseconds required = prof.total();
  if (req.getRuntimeMs() > 0) required = milliseconds(req.getRuntimeMs());
  else if (auto g = cluster_.qos().goals.find(job); g != cluster_.qos().goals.end())
    required = milliseconds(g->second.runtime_ms);
  qos::DiskCost disk;
  if (config_.emulated_bandwidth_bytes > 0) {
    disk.bytes_per_s = static_cast<double>(config_.emulated_bandwidth_bytes);
    disk.seek = std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double, std::milli>(config_.emulated_seek_ms));
  } else {
    auto d = qos::estimate_disk(prof);
    if (!d) co_return Status(Errc::invalid_argument, fmt::format("job {}'s profile: {}", job, d.status().detail()));
    disk = *d;
  }
  qos::TrainOptions o;
  o.grow.max_error = config_.qos_train_max_error;
  o.epoch = milliseconds(config_.qos_epoch_ms);
  const uint64_t revision = models.version + 1;
  std::mt19937_64 rng(seed_of(job, revision));
  auto trained = qos::train(prof, required, disk, o, rng);
  if (!trained) co_return Status(trained.code(), fmt::format("training job {}'s model: {}", job, trained.status().detail()));
  QosModelEntry entry;
  entry.revision = revision;
  entry.samples = trained->profile_samples + trained->synthetic_samples;
  entry.profile_samples = trained->profile_samples;
  entry.required_ns = required.count();
  entry.trained_unix_ms = unix_ns() / 1'000'000;
  entry.met = trained->met;
  entry.model = std::move(trained->model);
  spdlog::info("QoS: job {}'s model r{}: depth {}, {} leaves, CV error {:.3f} on {} samples ({} from its profile)", job,
               revision, entry.model.tree.depth(), entry.model.tree.leaves(), entry.model.cv_error, entry.samples,
               entry.profile_samples);
  QosModels next = cluster_.qos_models();
  next.models[job] = std::move(entry);
  if (Status st = co_await share_models(std::move(next)); !st.ok()) co_return st;
  if (!hosting()) co_return not_delegate();
  fill_model(job, reply.initQosModel());
  co_return Status{};
}

Status QosHost::show(std::string_view job, mp::Reply::Builder reply) {
  if (!hosting()) return not_delegate();
  const QosModels& models = cluster_.qos_models();
  if (!models.profiles.contains(job) && !models.models.contains(job))
    return Status(Errc::not_found, fmt::format("job {} has neither a profile nor a model (pvfs-ctl qos profile {})",
                                               job, job));
  fill_model(job, reply.initQosModel());
  return {};
}

void QosHost::fill_model(std::string_view job, mp::Reply::QosModelState::Builder out) const {
  const QosModels& models = cluster_.qos_models();
  out.setJob(std::string(job));
  out.setVersion(models.version);
  out.setReplicas(std::max<uint32_t>(model_replicas_, 1));
  if (auto it = models.profiles.find(job); it != models.profiles.end()) {
    const qos::Profile p = qos::with_io(it->second);
    out.setHasProfile(true);
    out.setProfiling(!p.ended());
    out.setSharePct(p.share_pct);
    out.setStartUnixMs(p.start_unix_ms);
    out.setEndUnixMs(p.end_unix_ms);
    out.setProfileNs(p.total().count());
    out.setCompNs(p.ended() ? p.comp().count() : 0);
    out.setIoFromJob(p.io_source == qos::IoSource::job);
    out.setIoFromClients(p.io_source == qos::IoSource::clients);
    out.setClients(static_cast<uint32_t>(p.clients.size()));
    out.setRecords(p.epochs.size());
    out.setDropped(p.dropped);
    out.setProfileBytes(p.bytes);
  }
  if (auto it = models.models.find(job); it != models.models.end()) {
    const QosModelEntry& m = it->second;
    out.setHasModel(true);
    out.setRevision(m.revision);
    out.setFormatVersion(qos::Model::kVersion);
    out.setDepth(static_cast<uint32_t>(m.model.tree.depth()));
    out.setLeaves(static_cast<uint32_t>(m.model.tree.leaves()));
    out.setNodes(static_cast<uint32_t>(m.model.tree.nodes().size()));
    out.setCvError(m.model.cv_error);
    out.setMet(m.met);
    out.setSamples(m.samples);
    out.setProfileSamples(m.profile_samples);
    out.setAlpha(m.model.alpha);
    out.setRequiredNs(m.required_ns);
    out.setTrainedUnixMs(m.trained_unix_ms);
    out.setModel(qos::serialize(m.model));
  }
}

}  // namespace pvfs::mds
