// The storage service's request dispatch and object I/O. Scheduling state
// (probes, redirects, fragments, status) is in storage_sched.cc.
#include "server/storage_service.h"

#include <fmt/format.h>

#include "server/calibration.h"
#include "shared/log.h"
#include "shared/log_level.h"
#include "shared/rpc/blocking.h"
#include "shared/rpc/convert.h"
#include "shared/rpc/fan_out.h"
#include "shared/rpc/frame.h"
#include "shared/rpc/request_log.h"
#include "shared/rpc/metrics_wire.h"

namespace pvfs {

namespace sp = proto::storage;

namespace {

// Counts a data request as outstanding load from arrival to reply.
struct LoadGuard {
  load::LoadDetector* load = nullptr;
  uint64_t bytes = 0;
  LoadGuard() = default;
  LoadGuard(const LoadGuard&) = delete;
  LoadGuard& operator=(const LoadGuard&) = delete;
  ~LoadGuard() { if (load) load->end(bytes); }
};

// Reply bytes a read holds against its connection's budget until replied.
struct ReplyBudget {
  std::shared_ptr<rpc::Connection> conn;
  uint64_t bytes = 0;
  ReplyBudget() = default;
  ReplyBudget(const ReplyBudget&) = delete;
  ReplyBudget& operator=(const ReplyBudget&) = delete;
  ~ReplyBudget() { if (conn) conn->release_reply_bytes(bytes); }
};

// A write's reply carries the server's load (LoadGuard still counts the
// write until the reply is sent): leave the write out, so the figure says
// what the next write would queue behind.
void leave_out_write(proto::storage::ServerLoad::Builder l, uint64_t bytes) {
  l.setBytes(l.getBytes() - std::min(l.getBytes(), bytes));
  l.setRequests(l.getRequests() - std::min<uint32_t>(l.getRequests(), 1));
}

}  // namespace

StorageService::StorageService(uint32_t server_id, const Config& config, ObjectStore& store,
                               std::unique_ptr<ObjectStore> fragments, std::unique_ptr<SchedDb> db,
                               asio::thread_pool& disk_pool, asio::any_io_executor ex,
                               IoQueueOptions io_options, elevator::BandwidthTable bandwidth,
                               const Clock& clock)
    : id_(server_id), config_(config), clock_(clock), store_(store), fragments_(std::move(fragments)),
      db_(std::move(db)), disk_pool_(disk_pool),
      io_(ex, disk_pool, std::move(io_options), std::move(bandwidth), clock),
      requests_(rpc::union_names(capnp::Schema::from<sp::Request>())), started_(clock.now()),
      straggler_(ex), gates_(ex) {}

namespace {

// The elevator and disk the config asks for, and the bandwidth table its
// dynamic deadlines use.
Result<std::pair<IoQueueOptions, elevator::BandwidthTable>> io_setup(const Config& config,
                                                                     const std::filesystem::path& data_dir,
                                                                     unsigned disk_threads) {
  IoQueueOptions o;
  o.elevator = config.elevator;
  if (Status st = elevator::validate(o.elevator); !st.ok()) return st;
  o.depth = config.elevator_queue_depth ? config.elevator_queue_depth : disk_threads;
  o.qos = config.qos_policy;
  o.inline_ops = config.storage_inline;
  if (config.emulated_bandwidth_bytes > 0) {
    elevator::EmulatedDiskOptions disk;
    disk.seek = elevator::from_seconds(config.emulated_seek_ms / 1000.0);
    disk.bytes_per_second = config.emulated_bandwidth_bytes;
    o.emulated_disk = disk;
    auto table = elevator::modelled_bandwidth(
        disk, std::vector<uint64_t>(std::begin(kCalibratedRecordSizes), std::end(kCalibratedRecordSizes)));
    return std::make_pair(o, table);
  }
  auto table = load_or_calibrate(data_dir, false);
  if (!table) return table.status();
  return std::make_pair(o, *table);
}

}  // namespace

Result<std::unique_ptr<StorageService>> StorageService::open(uint32_t server_id, const Config& config,
                                                             const std::filesystem::path& data_dir,
                                                             ObjectStore& store,
                                                             asio::thread_pool& disk_pool,
                                                             unsigned disk_threads,
                                                             asio::any_io_executor ex,
                                                             const Clock& clock,
                                                             std::unique_ptr<ObjectStore> fragments) {
  auto io = io_setup(config, data_dir, disk_threads);
  if (!io) return io.status();
  if (!fragments) {
    auto opened = ObjectStore::open(data_dir / "fragments");
    if (!opened) return opened.status();
    fragments = std::move(*opened);
  }
  auto db = SchedDb::open(data_dir);
  if (!db) return db.status();
  std::unique_ptr<StorageService> s(new StorageService(server_id, config, store, std::move(fragments),
                                                       std::move(*db), disk_pool, std::move(ex),
                                                       std::move(io->first), std::move(io->second),
                                                       clock));
  const auto start = clock.now();
  Status st = s->db_->load(
      s->table_,
      [&](const HeldFragment& f) {
        s->held_[f.fragment] = f;
        s->held_bytes_ += f.bytes;
      },
      [&](const redirect::Garbage& g) { s->garbage_[g] = start; });
  if (!st.ok()) return st;
  if (s->table_.object_count() || !s->held_.empty() || !s->garbage_.empty())
    spdlog::info("restored {} redirected objects ({} entries), {} fragments held, {} to drop",
                 s->table_.object_count(), s->table_.remote_entry_count(), s->held_.size(),
                 s->garbage_.size());
  return s;
}

asio::awaitable<void> StorageService::handle(std::shared_ptr<rpc::Connection> conn,
                                             std::unique_ptr<rpc::InMessage> msg) {
  Call ex(std::move(conn), std::move(msg));
  const metrics::OpenRequests::Guard open(open_, ex.started());
  ex.bulk_in = ex.msg->data().size();
  const auto req = ex.req;

  // Data requests are the server's load and what a straggler slows down.
  uint64_t data_bytes = 0;
  bool is_data = true;
  uint64_t reserve = 0;
  switch (req.which()) {
    case sp::Request::WRITE: data_bytes = ex.msg->data().size(); break;
    case sp::Request::READ: data_bytes = reserve = req.getRead().getLength(); break;
    case sp::Request::READ_FRAGMENT: data_bytes = reserve = req.getReadFragment().getLength(); break;
    default: is_data = false;
  }
  if (reserve > rpc::kMaxDataBytes)
    co_return co_await ex.refuse(Status(Errc::invalid_argument, "read too large"));
  // A peer that pipelines large reads and never takes the replies must not
  // make us fill gigabytes of buffers: the connection's budget waits.
  ReplyBudget budget;
  if (reserve) {
    if (!co_await ex.conn->reserve_reply_bytes(reserve)) co_return;
    budget.conn = ex.conn;
    budget.bytes = reserve;
  }
  LoadGuard guard;
  Straggler::Ticket ticket;
  if (is_data) {
    load_.begin(data_bytes);
    guard.load = &load_;
    guard.bytes = data_bytes;
    ticket = co_await straggler_.enter();
    jobs_.count(ex.counted_job(), req.isWrite() ? 0 : data_bytes, req.isWrite() ? data_bytes : 0);
  } else {
    jobs_.count(ex.counted_job(), 0, 0);
  }
  const Route* route = rpc::find_handler(routes(), req.which());
  Status st(Errc::not_supported, "unknown storage request");
  if (route) st = co_await ex.run([&] { return route->handler(*this, ex); });
  if (is_data) co_await straggler_.leave(ticket, ex.msg->receive_time());
  co_await ex.finish(st, requests_);
}

// Adding a request to the storage server: its message in
// shared/proto/storage.capnp, and one row here whose handler decodes it and
// calls the StorageService method doing the work. The envelope (handle()
// above) does the rest: data load, the request log, statistics, the reply.
std::span<const StorageService::Route> StorageService::routes() {
  using R = sp::Request;
  using A = asio::awaitable<Status>;
  // Replies none when `st` is ok.
  static constexpr auto none_or = [](Status st, Reply reply) {
    if (st.ok()) reply.setNone();
    return st;
  };
  static constexpr Route kRoutes[] = {
      {R::WRITE, [](StorageService& s, Call& c) -> A {
         co_return co_await s.write(c.req.getWrite(), c.msg->data(), c.reply, rpc::origin_of(*c.msg));
       }},
      {R::READ, [](StorageService& s, Call& c) -> A {
         co_return co_await s.read(c.req.getRead(), c.conn, c.reply, c.reply_data, rpc::origin_of(*c.msg));
       }},
      {R::READ_FRAGMENT, [](StorageService& s, Call& c) -> A {
         co_return co_await s.read_fragment(c.req.getReadFragment(), c.conn, c.reply_data, c.reply,
                                            rpc::origin_of(*c.msg));
       }},
      {R::TRUNCATE, [](StorageService& s, Call& c) -> A {
         auto t = c.req.getTruncate();
         co_return none_or(co_await s.truncate(rpc::from_wire(t.getObject()), t.getSize()), c.reply);
       }},
      {R::REMOVE, [](StorageService& s, Call& c) -> A {
         std::vector<ObjectId> objects;
         for (auto o : c.req.getRemove().getObjects()) objects.push_back(rpc::from_wire(o));
         co_return none_or(co_await s.remove(std::move(objects)), c.reply);
       }},
      {R::FSYNC, [](StorageService& s, Call& c) -> A {
         co_return none_or(co_await s.fsync(rpc::from_wire(c.req.getFsync())), c.reply);
       }},
      {R::STAT, [](StorageService& s, Call& c) -> A {
         const ObjectId obj = rpc::from_wire(c.req.getStat());
         auto st = co_await s.stat(obj);
         if (!st) co_return st.status();
         auto out = c.reply.initStat();
         out.setExists(st->exists);
         out.setSize(st->size);
         // Redirected writes live in fragments until pulled home: the log's
         // bounds say how far they reach. Read after the await: no state held.
         const auto* log = s.table_.find(obj);
         out.setDataEnd(std::max(st->size, log && !log->empty() ? log->max() : 0));
         out.setBlocks(st->blocks);
         co_return Status{};
       }},
      {R::ALLOCATE, [](StorageService& s, Call& c) -> A {
         auto a = c.req.getAllocate();
         co_return none_or(
             co_await s.allocate(rpc::from_wire(a.getObject()), a.getOffset(), a.getLength(), a.getPunch()),
             c.reply);
       }},
      {R::SEEK, [](StorageService& s, Call& c) -> A {
         auto k = c.req.getSeek();
         auto found = co_await s.seek(rpc::from_wire(k.getObject()), k.getOffset(), k.getHole());
         if (!found) co_return found.status();
         auto r = c.reply.initSeek();
         r.setFound(found->has_value());
         r.setOffset(found->value_or(0));
         co_return Status{};
       }},
      {R::STATFS, [](StorageService& s, Call& c) -> A {
         auto space = co_await rpc::run_blocking(s.disk_pool_, [&s] { return s.store_.space(); });
         if (!space) co_return space.status();
         auto out = c.reply.initStatfs();
         out.setCapacityBytes(space->capacity_bytes);
         out.setFreeBytes(space->free_bytes);
         co_return Status{};
       }},
      {R::STATUS, [](StorageService& s, Call& c) -> A {
         auto out = c.reply.initStatus();
         out.setKind("server");
         out.setId(s.id_);
         out.setVersion(PVFS_VERSION);
         out.setUptimeMs(std::chrono::duration_cast<std::chrono::milliseconds>(
                             s.clock_.now() - s.started_)
                             .count());
         s.jobs_.fill(out, 100);
         out.setUnixMs(std::chrono::duration_cast<std::chrono::milliseconds>(
                           s.clock_.wall().time_since_epoch())
                           .count());
         out.setInProgress(static_cast<uint32_t>(s.open_.count()));
         out.setOldestRequestMs(
             static_cast<uint64_t>(s.open_.oldest_age(std::chrono::steady_clock::now()).count()));
         co_return Status{};
       }},
      {R::PROBE, [](StorageService& s, Call& c) -> A {
         s.probe(c.req.getProbe(), c.reply);
         co_return Status{};
       }},
      {R::PROBE_DONE, [](StorageService& s, Call& c) -> A {
         s.preassign_.on_outcome(c.req.getProbeDone().getRound(), false);
         c.reply.setNone();
         co_return Status{};
       }},
      {R::REDIRECT, [](StorageService& s, Call& c) -> A {
         auto r = c.req.getRedirect();
         Status st = s.redirect(r);
         if (st.ok() && r.getSync()) st = co_await s.sync_db();
         co_return none_or(st, c.reply);
       }},
      {R::DROP_FRAGMENTS, [](StorageService& s, Call& c) -> A {
         std::vector<std::pair<ObjectId, uint64_t>> list;
         for (auto f : c.req.getDropFragments()) list.emplace_back(rpc::from_wire(f.getObject()), f.getFragment());
         co_return none_or(co_await s.drop_fragments(std::move(list)), c.reply);
       }},
      {R::INJECT, [](StorageService& s, Call& c) -> A {
         auto i = c.req.getInject();
         if (!(i.getDelayFactor() >= 1.0) || i.getDelayFactor() > 1000)
           co_return Status(Errc::invalid_argument, "delay factor must be between 1 and 1000");
         s.straggler_.set(i.getDelayFactor(), std::chrono::seconds(i.getSeconds()));
         spdlog::info("straggler injection: delay factor {} for {}", i.getDelayFactor(),
                      i.getSeconds() ? fmt::format("{} s", i.getSeconds()) : std::string("ever"));
         c.reply.setNone();
         co_return Status{};
       }},
      {R::SCHED_STATUS, [](StorageService& s, Call& c) -> A {
         s.sched_status(c.reply);
         co_return Status{};
       }},
      {R::SCAN_OBJECTS, [](StorageService& s, Call& c) -> A {
         co_return co_await s.scan_objects(c.req.getScanObjects(), c.reply);
       }},
      {R::SCAN_FRAGMENTS, [](StorageService& s, Call& c) -> A {
         co_return co_await s.scan_fragments(c.req.getScanFragments(), c.reply);
       }},
      {R::SCAN_REDIRECTS, [](StorageService& s, Call& c) -> A {
         s.scan_redirects(c.req.getScanRedirects(), c.reply);
         co_return Status{};
       }},
      {R::DROP_REDIRECT, [](StorageService& s, Call& c) -> A {
         co_return co_await s.drop_redirect(c.req.getDropRedirect(), c.reply);
       }},
      {R::METRICS, [](StorageService& s, Call& c) -> A {
         const auto families = s.metrics();
         rpc::to_wire(families, c.reply.initMetrics(static_cast<unsigned>(families.size())));
         co_return Status{};
       }},
      {R::SET_LOG_LEVEL, [](StorageService&, Call& c) -> A {
         const auto level = c.req.getSetLogLevel();
         co_return none_or(set_log_level(std::string_view(level.begin(), level.size())), c.reply);
       }},
      {R::ELEVATOR, [](StorageService& s, Call& c) -> A {
         Status st;
         s.elevator_status(c.req.getElevator(), c.reply, st);
         co_return st;
       }},
  };
  return kRoutes;
}

asio::awaitable<Status> StorageService::write(sp::Request::Write::Reader w, Buffer& data, Reply reply,
                                              rpc::Origin origin) {
  const ObjectId obj = rpc::from_wire(w.getObject());
  const uint64_t offset = w.getOffset();
  const bool sync = w.getSync();
  if (w.getRound()) preassign_.on_outcome(w.getRound(), true);
  learn(w.getSeen());
  if (w.getFallback()) ++fallbacks_;
  if (w.getFragment()) {
    Status st = co_await write_fragment(obj, w.getFragment(), data, sync, reply, std::move(origin));
    if (st.ok()) {
      fill_load(reply.initWriteLoad());
      leave_out_write(reply.getWriteLoad(), data.size());
    }
    co_return st;
  }

  if (Status room = admit_data(data.size()); !room.ok()) co_return room;
  auto gate = co_await gates_.enter_shared(obj);
  IoQueue::Op op = object_op(obj, std::move(origin));
  op.write = true;
  op.offset = offset;
  op.data = data.span();
  op.sync = sync;
  if (w.getUrgent()) {
    op.cls = elevator::Class::urgent;
    op.max_service = std::chrono::milliseconds(std::max<uint32_t>(1, w.getMaxServiceMs()));
  }
  auto written = co_await io_.submit(op);
  if (!written) co_return written.status();
  // The newest write wins: if part of this range was redirected earlier,
  // a local entry now says the bytes are here again.
  const uint64_t end = offset + data.size();
  if (data.size() && table_.overlaps_remote(obj, offset, end)) {
    Status st = record(obj, redirect::Entry{table_.next_seq(), offset, end, redirect::Location::home()});
    if (st.ok() && sync) st = co_await sync_db();
    if (!st.ok()) co_return st;
  }
  reply.setWritten(*written);
  fill_load(reply.initWriteLoad());
  leave_out_write(reply.getWriteLoad(), data.size());
  co_return Status{};
}

asio::awaitable<Status> StorageService::read(sp::Request::Read::Reader r,
                                             std::shared_ptr<rpc::Connection>, Reply reply, Buffer& out,
                                             rpc::Origin origin) {
  const ObjectId obj = rpc::from_wire(r.getObject());
  const uint64_t offset = r.getOffset();
  const uint32_t length = r.getLength();
  if (offset + length < offset) co_return Status(Errc::invalid_argument, "read range overflows");
  // Ask the log first: an acknowledged write is either in it (redirected)
  // or already on the local disk.
  auto segments = table_.query(obj, offset, offset + length);
  out = Buffer(length);
  IoQueue::Op op = object_op(obj, std::move(origin));
  op.offset = offset;
  op.out = out.span();
  if (r.getUrgent()) {
    op.cls = elevator::Class::urgent;
    op.max_service = std::chrono::milliseconds(std::max<uint32_t>(1, r.getMaxServiceMs()));
  }
  auto got = co_await io_.submit(op);
  if (!got) co_return got.status();
  out.resize(*got);
  auto result = reply.initRead();
  result.setBytes(*got);
  size_t remote = 0;
  for (const auto& s : segments) remote += s.where.local ? 0 : 1;
  auto list = result.initRedirected(static_cast<unsigned>(remote));
  unsigned i = 0;
  for (const auto& s : segments) {
    if (s.where.local) continue;
    auto e = list[i++];
    e.setOffset(s.begin);
    e.setLength(s.end - s.begin);
    e.setServer(s.where.server.value);
    e.setFragment(s.where.fragment);
    e.setFragmentOffset(s.begin - s.where.fragment_base);
  }
  co_return Status{};
}

asio::awaitable<Status> StorageService::truncate(ObjectId obj, uint64_t size) {
  auto gate = co_await gates_.enter_shared(obj);
  Status st = co_await rpc::run_blocking(disk_pool_, [&] { return store_.truncate(obj, size); });
  if (!st.ok()) co_return st;
  // Bytes past the new end read as zeros, wherever they were redirected.
  if (table_.overlaps_remote(obj, size, redirect::kEnd))
    st = record(obj, redirect::Entry{table_.next_seq(), size, redirect::kEnd, redirect::Location::home()});
  co_return st;
}

asio::awaitable<Status> StorageService::remove(std::vector<ObjectId> objects) {
  // A pull copying into one of these objects finishes before its file goes.
  std::vector<ObjectGates::Shared> gates;
  gates.reserve(objects.size());
  for (const auto& obj : objects) gates.push_back(co_await gates_.enter_shared(obj));
  // The unlinks go to the disk pool in chunks queued all at once: a large
  // batch (the MDS's orphan collector sends thousands) keeps every disk
  // thread busy, and reads and writes queued meanwhile run between chunks.
  constexpr size_t kChunk = 256;
  std::vector<Status> results(objects.size());
  std::vector<asio::awaitable<Status>> chunks;
  for (size_t from = 0; from < objects.size(); from += kChunk) {
    const size_t n = std::min(kChunk, objects.size() - from);
    chunks.push_back([](asio::thread_pool& pool, ObjectStore& store, std::span<const ObjectId> objs,
                        std::span<Status> out) -> asio::awaitable<Status> {
      co_return co_await rpc::run_blocking(pool, [&] {
        for (size_t i = 0; i < objs.size(); ++i) out[i] = store.remove(objs[i]);
        return Status{};
      });
    }(disk_pool_, store_, std::span<const ObjectId>(objects).subspan(from, n),
                      std::span<Status>(results).subspan(from, n)));
  }
  (void)co_await rpc::run_all(std::move(chunks));
  Status first;
  for (size_t i = 0; i < objects.size(); ++i) {
    Status s = results[i];
    if (s.ok()) {
      redirect::Change change = table_.drop(objects[i]);
      s = db_->apply(objects[i], nullptr, change);
      for (const auto& g : change.garbage) garbage_[g] = clock_.now();
    }
    if (!s.ok() && first.ok()) first = s;
  }
  co_return first;
}

asio::awaitable<Status> StorageService::fsync(ObjectId obj) {
  std::vector<ObjectId> fragment_keys;
  for (const auto& [f, held] : held_)
    if (held.object == obj) fragment_keys.push_back(ObjectId{InodeId(f), 0});
  Status st = co_await rpc::run_blocking(disk_pool_, [&] {
    Status s = store_.fsync(obj);
    for (const auto& key : fragment_keys)
      if (s.ok()) s = fragments_->fsync(key);
    return s;
  });
  if (!st.ok()) co_return st;
  co_return co_await sync_db();
}

asio::awaitable<Status> StorageService::write_local(ObjectId object, uint64_t offset,
                                                    std::span<const std::byte> data) {
  if (Status room = admit_data(data.size()); !room.ok()) co_return room;
  IoQueue::Op op = object_op(object);
  op.write = true;
  op.offset = offset;
  op.data = data;
  op.cls = elevator::Class::background;
  auto written = co_await io_.submit(op);
  co_return written.status();
}

asio::awaitable<Status> StorageService::sync_db() {
  co_return co_await rpc::run_blocking(disk_pool_, [&] { return db_->sync(); });
}

}  // namespace pvfs
