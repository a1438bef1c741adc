// The storage service's part in two-choice write scheduling: probes and
// preassign, loads learned from peers, redirect entries, fragments held for
// other servers, garbage, and the status pvfs-ctl shows.
#include <fmt/format.h>

#include "server/storage_service.h"
#include "shared/log.h"
#include "shared/rpc/blocking.h"
#include "shared/rpc/convert.h"

namespace pvfs {

namespace sp = proto::storage;

namespace {

ObjectId fragment_object(uint64_t fragment) { return ObjectId{InodeId(fragment), 0}; }

}  // namespace

load::Nanos StorageService::now() const {
  return std::chrono::duration_cast<load::Nanos>(clock_.now().time_since_epoch());
}

void StorageService::fill_load(sp::ServerLoad::Builder b) {
  preassign_.expire(now());
  b.setServer(id_);
  b.setRequests(load_.requests());
  b.setBytes(load_.bytes());
  b.setPreassigned(preassign_.preassigned_bytes());
  b.setAgeMs(0);
}

void StorageService::probe(sp::Request::Probe::Reader p, Reply reply) {
  ++probes_;
  auto report = reply.initLoad();
  fill_load(report.initSelf());
  // What this server heard of its peers recently: more choices for the
  // client at no extra round trip.
  const std::vector<load::HeardLoad> fresh = learned_.fresh(now(), std::chrono::milliseconds(config_.load_ttl_ms));
  auto others = report.initOthers(static_cast<unsigned>(fresh.size()));
  for (unsigned i = 0; i < fresh.size(); ++i) {
    const load::PeerLoad& l = fresh[i].load;
    auto o = others[i];
    o.setServer(l.server);
    o.setRequests(l.requests);
    o.setBytes(l.bytes);
    o.setPreassigned(l.preassigned);
    o.setAgeMs(static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::milliseconds>(fresh[i].age).count()));
  }
  // Preassign after answering (as the paper does): the expected bytes of
  // this round count as load for whoever probes next.
  if (p.getPreassign() && p.getRound())
    preassign_.on_probe(p.getRound(), load_.bytes() + preassign_.preassigned_bytes(), p.getPieceBytes(),
                        now());
}

void StorageService::learn(capnp::List<sp::ServerLoad>::Reader loads) {
  const load::Nanos t = now();
  for (auto l : loads) {
    // Only servers of the config: a peer's list must not grow this map.
    if (l.getServer() == id_ || !config_.find_server(l.getServer())) continue;
    learned_.learn(load::PeerLoad{l.getServer(), l.getRequests(), l.getBytes(), l.getPreassigned()},
                   std::chrono::milliseconds(l.getAgeMs()), t);
  }
}

Status StorageService::record(ObjectId object, const redirect::Entry& e) {
  redirect::Change change = table_.append(object, e);
  bool kept = false;
  if (const auto* log = table_.find(object))
    for (const auto& x : log->entries()) kept = kept || x.seq == e.seq;
  Status st = db_->apply(object, kept ? &e : nullptr, change);
  const auto t = clock_.now();
  for (const auto& g : change.garbage) garbage_[g] = t;
  return st;
}

Status StorageService::redirect(sp::Request::Redirect::Reader r) {
  const uint64_t offset = r.getOffset(), length = r.getLength();
  if (length == 0 || offset + length < offset || offset + length > ObjectStore::kMaxObjectBytes)
    return Status(Errc::invalid_argument, "bad redirect range");
  if (r.getServer() == id_ || !config_.find_server(r.getServer()))
    return Status(Errc::invalid_argument, fmt::format("cannot redirect to server {}", r.getServer()));
  if (r.getFragment() == 0) return Status(Errc::invalid_argument, "fragment id 0 is reserved");
  ++redirects_recorded_;
  return record(rpc::from_wire(r.getObject()),
                redirect::Entry{table_.next_seq(), offset, offset + length,
                                redirect::Location::remote(ServerId(r.getServer()), r.getFragment(), offset)});
}

asio::awaitable<Status> StorageService::write_fragment(ObjectId object, uint64_t fragment, Buffer& data,
                                                       bool sync, Reply reply, rpc::Origin origin) {
  if (Status room = admit_data(data.size()); !room.ok()) co_return room;
  IoQueue::Op op = fragment_op(fragment, std::move(origin));
  op.write = true;
  op.data = data.span();
  op.sync = sync;
  auto written = co_await io_.submit(op);
  if (!written) co_return written.status();
  auto it = held_.find(fragment);
  if (it == held_.end()) {
    HeldFragment h{fragment, object, data.size()};
    if (Status st = db_->put_fragment(h); !st.ok()) co_return st;
    held_[fragment] = h;
    held_bytes_ += h.bytes;
  }
  reply.setWritten(*written);
  co_return Status{};
}

asio::awaitable<Status> StorageService::read_fragment(sp::Request::ReadFragment::Reader r,
                                                      std::shared_ptr<rpc::Connection>, Buffer& out,
                                                      Reply reply, rpc::Origin origin) {
  const uint64_t fragment = r.getFragment();
  const ObjectId object = rpc::from_wire(r.getObject());
  auto it = held_.find(fragment);
  if (it == held_.end() || !(it->second.object == object))
    co_return Status(Errc::not_found, fmt::format("fragment {:x} of object {:x}.{} is not on server {}",
                                                  fragment, object.ino.value, object.index, id_));
  out = Buffer(r.getLength());
  // The job's read, in its window, but counted at the read's home server.
  IoQueue::Op op = fragment_op(fragment, std::move(origin));
  op.counted = false;
  op.offset = r.getOffset();
  op.out = out.span();
  if (r.getBackground()) op.cls = elevator::Class::background;
  auto got = co_await io_.submit(op);
  if (!got) co_return got.status();
  out.resize(*got);
  auto result = reply.initRead();
  result.setBytes(*got);
  co_return Status{};
}

asio::awaitable<Status> StorageService::drop_fragments(std::vector<std::pair<ObjectId, uint64_t>> list) {
  // Idempotent: collectors re-send a drop every round until they hear it
  // succeeded, and one request may name a fragment twice, so a fragment
  // that is not (or no longer) held here counts as dropped. Another drop of
  // the same fragment may run while this one waits for the disk: nothing
  // found in held_ is kept across the await; it is looked up again after.
  std::vector<uint64_t> dropped;
  Status first;
  for (const auto& [object, fragment] : list) {
    if (auto it = held_.find(fragment); it == held_.end() || !(it->second.object == object)) continue;
    Status st = co_await rpc::run_blocking(disk_pool_, [&, f = fragment] {
      return fragments_->remove(fragment_object(f));
    });
    if (!st.ok()) {
      first = st;
      break;
    }
    auto it = held_.find(fragment);
    if (it == held_.end() || !(it->second.object == object)) continue;  // the other drop got here first
    held_bytes_ -= it->second.bytes;
    held_.erase(it);
    dropped.push_back(fragment);
  }
  // What left held_ leaves the database too, even when a later removal failed.
  Status forgotten = db_->delete_fragments(dropped);
  co_return first.ok() ? forgotten : first;
}

std::map<ServerId, std::vector<redirect::Garbage>> StorageService::due_garbage(
    std::chrono::milliseconds grace) const {
  std::map<ServerId, std::vector<redirect::Garbage>> due;
  const auto t = clock_.now();
  for (const auto& [g, since] : garbage_)
    if (t - since >= grace) due[g.server].push_back(g);
  return due;
}

Status StorageService::garbage_dropped(std::span<const redirect::Garbage> done) {
  for (const auto& g : done) garbage_.erase(g);
  return db_->delete_garbage(done);
}

void StorageService::elevator_status(sp::Request::ElevatorControl::Reader c, Reply reply, Status& st) {
  const std::string want = c.getPolicy();
  if (!want.empty()) {
    auto policy = elevator::parse_policy(want);
    if (!policy) {
      st = Status(Errc::invalid_argument, fmt::format("unknown elevator '{}': use obrr or fcfs", want));
      return;
    }
    io_.set_policy(*policy);
    spdlog::info("elevator switched to {}", want);
  }
  const auto stats = io_.stats();
  auto e = reply.initElevator();
  e.setPolicy(std::string(elevator::policy_name(stats.policy)));
  auto queued = e.initQueued(elevator::kClasses), in_service = e.initInService(elevator::kClasses),
       completed = e.initCompleted(elevator::kClasses), p50 = e.initP50Us(elevator::kClasses),
       p99 = e.initP99Us(elevator::kClasses);
  for (unsigned i = 0; i < elevator::kClasses; ++i) {
    const auto& c = stats.by_class[i];
    queued.set(i, c.queued);
    in_service.set(i, c.in_service);
    completed.set(i, c.completed);
    p50.set(i, static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(c.p50).count()));
    p99.set(i, static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(c.p99).count()));
  }
  e.setObjectsQueued(stats.objects_queued);
  e.setDispatches(stats.dispatches);
  e.setSeeks(stats.seeks);
  e.setDynamicExpiries(stats.dynamic_expiries);
  e.setMandatoryExpiries(stats.mandatory_expiries);
  e.setExpirationUs(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(stats.expiration).count()));
  auto sizes = e.initDispatchedSizes(static_cast<unsigned>(stats.dispatched_sizes.size()));
  for (unsigned i = 0; i < stats.dispatched_sizes.size(); ++i) sizes.set(i, stats.dispatched_sizes[i]);
  e.setEmulatedDisk(io_.emulated());
  e.setEmulatedSeeks(io_.emulated_seeks());
  e.setBandwidth(io_.bandwidth().to_text());
  e.setQueueDepth(io_.depth());
}

void StorageService::sched_status(Reply reply) {
  auto s = reply.initSchedStatus();
  fill_load(s.initLoad());
  s.setRedirectObjects(table_.object_count());
  s.setRedirectEntries(table_.remote_entry_count());
  s.setFragments(held_.size());
  s.setFragmentBytes(held_bytes_);
  s.setPulledBytes(pulled_bytes_);
  s.setPulls(pulls_);
  s.setRedirectsRecorded(redirects_recorded_);
  s.setFallbacks(fallbacks_);
  s.setProbes(probes_);
  s.setGcPending(garbage_.size());
  s.setDelayFactor(straggler_.factor());
  s.setDelayRemainingMs(static_cast<uint32_t>(straggler_.remaining().count()));
  constexpr unsigned kLevels = 12;
  auto p = s.initPreassignProbability(kLevels);
  for (unsigned i = 0; i < kLevels; ++i) {
    const uint64_t bytes = i == 0 ? 0 : (uint64_t{256} << 10) << (i - 1);
    p.set(i, preassign_.probability(bytes));
  }
}

}  // namespace pvfs
