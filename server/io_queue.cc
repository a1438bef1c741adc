#include "server/io_queue.h"

#include <algorithm>
#include <thread>

#include "shared/rpc/blocking.h"

namespace pvfs {

IoQueue::IoQueue(asio::any_io_executor ex, asio::thread_pool& pool, IoQueueOptions options,
                 elevator::BandwidthTable bandwidth, const Clock& clock)
    : ex_(std::move(ex)),
      pool_(pool),
      clock_(clock),
      depth_(options.emulated_disk ? 1 : std::max(1u, options.depth)),
      elevator_(options.elevator, std::move(bandwidth)),
      gate_(options.emulated_disk ? elevator::InlineOptions{0, {}} : options.inline_ops),
      qos_(options.qos),
      window_timer_(ex_) {
  if (options.emulated_disk) disk_.emplace(*options.emulated_disk);
}

void IoQueue::set_qos_policy(qos::QosPolicy policy) {
  qos_ = policy;
  if (policy == qos::QosPolicy::off) clear_plan();
}

void IoQueue::install_plan(qos::Plan plan, elevator::Nanos start, int repeat) {
  if (qos_ == qos::QosPolicy::off) return;
  windows_.install(std::move(plan), start, repeat);
  pump();
}

void IoQueue::clear_plan() {
  windows_.clear();
  pump();
}

void IoQueue::report_served(const Op& op, uint64_t length, elevator::Nanos arrival, uint64_t window_bytes) {
  if (!observer_ || qos_ == qos::QosPolicy::off || !op.counted) return;
  Served s;
  s.job = op.job;
  s.object = op.elevator_key;
  s.offset = op.offset;
  s.length = length;
  s.arrival = arrival;
  s.done = now();
  s.window_bytes = window_bytes;
  s.client = op.client;
  s.client_io_ns = op.client_io_ns;
  observer_(s);
}

std::map<std::string, uint64_t, std::less<>> IoQueue::queued_by_job() const {
  std::map<std::string, uint64_t, std::less<>> out;
  if (qos_ == qos::QosPolicy::off) return out;
  for (const auto& [id, p] : pending_)
    if (!p->done) ++out[p->op.job];
  return out;
}

uint32_t IoQueue::job_number(const std::string& job) {
  if (job.empty()) return 0;
  if (auto it = job_numbers_.find(job); it != job_numbers_.end()) return it->second;
  if (job_names_.size() >= kMaxJobs) return 0;
  const auto n = static_cast<uint32_t>(job_names_.size());
  job_names_.push_back(job);
  job_numbers_.emplace(job, n);
  return n;
}

std::optional<elevator::Dispatch> IoQueue::next_dispatch() {
  const elevator::Nanos t = now();
  if (qos_ == qos::QosPolicy::off || !windows_.installed()) return elevator_.dispatch(t);
  return elevator_.dispatch(t, [&](uint32_t job) {
    switch (windows_.admit(job_names_[job], t)) {
      case qos::Admission::yes: return elevator::Admit::yes;
      case qos::Admission::if_idle: return elevator::Admit::if_idle;
      case qos::Admission::no: return elevator::Admit::no;
    }
    return elevator::Admit::yes;
  });
}

void IoQueue::arm_window_timer() {
  if (qos_ == qos::QosPolicy::off || !windows_.installed() || elevator_.queued() == 0 || window_timer_armed_) return;
  const elevator::Nanos ends = windows_.current(now()).ends;
  if (ends == elevator::Nanos::max()) return;
  window_timer_armed_ = true;
  // `ends` is on the injected clock; the timer only paces, so it waits the
  // time left by that clock.
  window_timer_.expires_after(std::max(elevator::Nanos(0), ends - now()));
  window_timer_.async_wait([this](const asio::error_code& ec) {
    if (ec == asio::error::operation_aborted) return;  // the queue is going away
    window_timer_armed_ = false;
    pump();
  });
}

elevator::Nanos IoQueue::now() const {
  return std::chrono::duration_cast<elevator::Nanos>(clock_.now().time_since_epoch());
}

asio::awaitable<Result<size_t>> IoQueue::submit(Op op) {
  const uint64_t length = op.write ? op.data.size() : op.out.size();
  if (length == 0) {  // nothing to order: creating an empty object, or an empty read
    co_return co_await rpc::run_blocking(pool_, [&]() -> Result<size_t> {
      return op.write ? op.store->write(op.key, op.offset, op.data, op.sync) : size_t{0};
    });
  }
  const uint64_t id = next_id_++;
  const elevator::Nanos arrival = now();
  elevator::Request r;
  r.id = id;
  r.object = op.elevator_key;
  r.write = op.write;
  r.offset = op.offset;
  r.length = length;
  r.cls = op.cls;
  r.max_service = op.max_service;
  if (qos_ != qos::QosPolicy::off) r.job = job_number(op.job);
  if (Status st = elevator_.enqueue(r, now()); !st.ok()) co_return st;
  if (auto done = try_inline(op, id, length)) co_return std::move(*done);
  Pending p;
  p.op = op;
  p.length = length;
  p.arrival = arrival;
  p.wake = std::make_shared<asio::steady_timer>(ex_, asio::steady_timer::time_point::max());
  pending_[id] = &p;
  pump();
  while (!p.done) {
    asio::error_code ec;
    co_await p.wake->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return std::move(p.result);
}

std::optional<Result<size_t>> IoQueue::try_inline(const Op& op, uint64_t id, uint64_t length) {
  // Only when pump() would dispatch this request alone right now: then
  // where it runs changes nothing the elevator decides or records.
  if (in_flight_ >= depth_ || elevator_.queued() != 1 || qos_ != qos::QosPolicy::off ||
      !gate_.should_inline(op.write, op.sync, length))
    return std::nullopt;
  auto d = elevator_.dispatch(now());
  if (!d) return std::nullopt;  // waits for an overlapping request in service
  PVFS_CHECK(d->ids.size() == 1 && d->ids[0] == id);
  const auto start = clock_.now();
  Result<size_t> r = op.write ? op.store->write(op.key, op.offset, op.data, op.sync)
                              : op.store->read(op.key, op.offset, op.out);
  const auto end = clock_.now();
  gate_.observe(op.write, op.sync, length, end - start);
  gate_.count(true);
  elevator_.complete(d->ids, now());
  if (r && op.write) r = static_cast<size_t>(length);
  return r;
}

void IoQueue::pump() {
  while (in_flight_ < depth_) {
    auto d = next_dispatch();
    if (!d) {
      arm_window_timer();
      return;
    }
    ++in_flight_;
    asio::co_spawn(ex_, execute(std::move(*d)), asio::detached);
  }
}

asio::awaitable<void> IoQueue::execute(elevator::Dispatch d) {
  std::vector<Pending*> ops;
  for (uint64_t id : d.ids) ops.push_back(pending_.at(id));
  // Only QoS needs to know when the operation started (its window bytes).
  const bool report = observer_ && qos_ != qos::QosPolicy::off;
  const elevator::Nanos dispatched = report ? now() : elevator::Nanos(0);
  ObjectStore* store = ops.front()->op.store;
  const ObjectId key = ops.front()->op.key;
  bool sync = false;
  std::vector<std::span<const std::byte>> in;
  std::vector<std::span<std::byte>> out;
  for (Pending* p : ops) {
    sync = sync || p->op.sync;
    if (d.write) in.push_back(p->op.data);
    else out.push_back(p->op.out);
  }
  // The modelled disk time is decided here, in dispatch order, on this thread.
  const auto modelled = disk_ ? disk_->service_time(d.object, d.offset, d.length) : elevator::Nanos(0);
  std::chrono::nanoseconds backend{0};  // the store's own time, without the modelled rest
  Result<size_t> done = co_await rpc::run_blocking(pool_, [&]() -> Result<size_t> {
    const auto start = clock_.now();
    Result<size_t> r = d.write ? store->writev(key, d.offset, in, sync) : store->readv(key, d.offset, out);
    const auto spent = clock_.now() - start;
    backend = spent;
    if (modelled > spent) std::this_thread::sleep_for(modelled - spent);
    return r;
  });
  gate_.observe(d.write, sync, d.length, backend);
  gate_.count(false);
  for (size_t i = 0; i < ops.size(); ++i) {
    Pending* p = ops[i];
    if (!done) {
      p->result = done.status();
    } else if (d.write) {
      p->result = p->length;
    } else {
      // Bytes of this request's part that the merged read reached.
      const uint64_t start = p->op.offset - d.offset;
      p->result = static_cast<size_t>(*done > start ? std::min<uint64_t>(*done - start, p->length) : 0);
    }
    p->done = true;
    if (report)
      report_served(p->op, p->length, p->arrival, windows_.own_bytes(p->op.job, p->length, dispatched, now()));
    pending_.erase(d.ids[i]);
    p->wake->cancel();
  }
  elevator_.complete(d.ids, now());
  --in_flight_;
  pump();
}

}  // namespace pvfs
