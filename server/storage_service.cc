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
                               IoQueueOptions io_options, elevator::BandwidthTable bandwidth)
    : id_(server_id), config_(config), store_(store), fragments_(std::move(fragments)),
      db_(std::move(db)), disk_pool_(disk_pool), io_(ex, disk_pool, std::move(io_options), std::move(bandwidth)),
      requests_(rpc::union_names(capnp::Schema::from<sp::Request>())), straggler_(ex), gates_(ex) {}

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
                                                             asio::any_io_executor ex) {
  auto io = io_setup(config, data_dir, disk_threads);
  if (!io) return io.status();
  auto fragments = ObjectStore::open(data_dir / "fragments");
  if (!fragments) return fragments.status();
  auto db = SchedDb::open(data_dir);
  if (!db) return db.status();
  std::unique_ptr<StorageService> s(new StorageService(server_id, config, store, std::move(*fragments),
                                                       std::move(*db), disk_pool, std::move(ex),
                                                       std::move(io->first), std::move(io->second)));
  const auto start = std::chrono::steady_clock::now();
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
  const uint64_t id = msg->id();
  const auto started = std::chrono::steady_clock::now();
  auto req = msg->body<sp::Request>();
  const std::string job = msg->envelope().getJobId();
  const uint64_t bytes_in = msg->data().size();
  rpc::OutMessage out;
  auto reply = out.init_body<sp::Reply>();
  Buffer reply_data;

  // Data requests are the server's load and what a straggler slows down.
  uint64_t data_bytes = 0;
  bool is_data = true;
  uint64_t reserve = 0;
  switch (req.which()) {
    case sp::Request::WRITE: data_bytes = msg->data().size(); break;
    case sp::Request::READ: data_bytes = reserve = req.getRead().getLength(); break;
    case sp::Request::READ_FRAGMENT: data_bytes = reserve = req.getReadFragment().getLength(); break;
    default: is_data = false;
  }
  if (reserve > rpc::kMaxDataBytes)
    co_return co_await conn->reply_error(id, Status(Errc::invalid_argument, "read too large"));
  // A peer that pipelines large reads and never takes the replies must not
  // make us fill gigabytes of buffers: the connection's budget waits.
  ReplyBudget budget;
  if (reserve) {
    if (!co_await conn->reserve_reply_bytes(reserve)) co_return;
    budget.conn = conn;
    budget.bytes = reserve;
  }
  LoadGuard guard;
  Straggler::Ticket ticket;
  if (is_data) {
    load_.begin(data_bytes);
    guard.load = &load_;
    guard.bytes = data_bytes;
    ticket = co_await straggler_.enter();
    jobs_.count(job, req.isWrite() ? 0 : data_bytes, req.isWrite() ? data_bytes : 0);
  } else {
    jobs_.count(job, 0, 0);
  }
  Status st;
  try {
    st = co_await dispatch(req, *msg, conn, reply, reply_data);
  } catch (const kj::Exception& e) {
    st = Status(Errc::invalid_argument, fmt::format("malformed request: {}", e.getDescription().cStr()));
  }
  if (is_data) co_await straggler_.leave(ticket, msg->receive_time());
  rpc::log_request(*msg, capnp::toDynamic(req), st, std::chrono::steady_clock::now() - started);
  requests_.record(static_cast<size_t>(req.which()), !st.ok(), bytes_in, st.ok() ? reply_data.size() : 0,
                   std::chrono::steady_clock::now() - started);
  if (!st.ok()) co_return co_await conn->reply_error(id, st);
  co_await conn->reply(id, out, reply_data.span());
}

asio::awaitable<Status> StorageService::dispatch(Request req, rpc::InMessage& msg,
                                                 std::shared_ptr<rpc::Connection> conn, Reply reply,
                                                 Buffer& reply_data) {
  switch (req.which()) {
    case sp::Request::WRITE: co_return co_await write(req.getWrite(), msg.data(), reply, msg.envelope().getJobId());
    case sp::Request::READ:
      co_return co_await read(req.getRead(), conn, reply, reply_data, msg.envelope().getJobId());
    case sp::Request::READ_FRAGMENT:
      co_return co_await read_fragment(req.getReadFragment(), conn, reply_data, reply);
    case sp::Request::TRUNCATE: {
      auto t = req.getTruncate();
      Status st = co_await truncate(rpc::from_wire(t.getObject()), t.getSize());
      if (st.ok()) reply.setNone();
      co_return st;
    }
    case sp::Request::REMOVE: {
      std::vector<ObjectId> objects;
      for (auto o : req.getRemove().getObjects()) objects.push_back(rpc::from_wire(o));
      Status st = co_await remove(std::move(objects));
      if (st.ok()) reply.setNone();
      co_return st;
    }
    case sp::Request::FSYNC: {
      Status st = co_await fsync(rpc::from_wire(req.getFsync()));
      if (st.ok()) reply.setNone();
      co_return st;
    }
    case sp::Request::STAT: {
      const ObjectId obj = rpc::from_wire(req.getStat());
      auto st = co_await stat(obj);
      if (!st) co_return st.status();
      auto s = reply.initStat();
      s.setExists(st->exists);
      s.setSize(st->size);
      // Redirected writes live in fragments until pulled home: the log's
      // bounds say how far they reach. Read after the await: no state held.
      const auto* log = table_.find(obj);
      s.setDataEnd(std::max(st->size, log && !log->empty() ? log->max() : 0));
      s.setBlocks(st->blocks);
      co_return Status{};
    }
    case sp::Request::ALLOCATE: {
      auto a = req.getAllocate();
      Status st =
          co_await allocate(rpc::from_wire(a.getObject()), a.getOffset(), a.getLength(), a.getPunch());
      if (st.ok()) reply.setNone();
      co_return st;
    }
    case sp::Request::SEEK: {
      auto k = req.getSeek();
      auto found = co_await seek(rpc::from_wire(k.getObject()), k.getOffset(), k.getHole());
      if (!found) co_return found.status();
      auto r = reply.initSeek();
      r.setFound(found->has_value());
      r.setOffset(found->value_or(0));
      co_return Status{};
    }
    case sp::Request::STATFS: {
      auto space = co_await rpc::run_blocking(disk_pool_, [&] { return store_.space(); });
      if (!space) co_return space.status();
      auto s = reply.initStatfs();
      s.setCapacityBytes(space->capacity_bytes);
      s.setFreeBytes(space->free_bytes);
      co_return Status{};
    }
    case sp::Request::STATUS: {
      auto s = reply.initStatus();
      s.setKind("server");
      s.setId(id_);
      s.setVersion(PVFS_VERSION);
      s.setUptimeMs(std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - started_)
                        .count());
      jobs_.fill(s, 100);
      co_return Status{};
    }
    case sp::Request::PROBE: probe(req.getProbe(), reply); co_return Status{};
    case sp::Request::PROBE_DONE:
      preassign_.on_outcome(req.getProbeDone().getRound(), false);
      reply.setNone();
      co_return Status{};
    case sp::Request::REDIRECT: {
      auto r = req.getRedirect();
      Status st = redirect(r);
      if (st.ok() && r.getSync()) st = co_await sync_db();
      if (st.ok()) reply.setNone();
      co_return st;
    }
    case sp::Request::DROP_FRAGMENTS: {
      std::vector<std::pair<ObjectId, uint64_t>> list;
      for (auto f : req.getDropFragments()) list.emplace_back(rpc::from_wire(f.getObject()), f.getFragment());
      Status st = co_await drop_fragments(std::move(list));
      if (st.ok()) reply.setNone();
      co_return st;
    }
    case sp::Request::INJECT: {
      auto i = req.getInject();
      if (!(i.getDelayFactor() >= 1.0) || i.getDelayFactor() > 1000)
        co_return Status(Errc::invalid_argument, "delay factor must be between 1 and 1000");
      straggler_.set(i.getDelayFactor(), std::chrono::seconds(i.getSeconds()));
      spdlog::info("straggler injection: delay factor {} for {}", i.getDelayFactor(),
                   i.getSeconds() ? fmt::format("{} s", i.getSeconds()) : std::string("ever"));
      reply.setNone();
      co_return Status{};
    }
    case sp::Request::SCHED_STATUS: sched_status(reply); co_return Status{};
    case sp::Request::SCAN_OBJECTS: co_return co_await scan_objects(req.getScanObjects(), reply);
    case sp::Request::SCAN_FRAGMENTS: co_return co_await scan_fragments(req.getScanFragments(), reply);
    case sp::Request::SCAN_REDIRECTS: scan_redirects(req.getScanRedirects(), reply); co_return Status{};
    case sp::Request::DROP_REDIRECT: co_return co_await drop_redirect(req.getDropRedirect(), reply);
    case sp::Request::METRICS: {
      const auto families = metrics();
      rpc::to_wire(families, reply.initMetrics(static_cast<unsigned>(families.size())));
      co_return Status{};
    }
    case sp::Request::SET_LOG_LEVEL: {
      const auto level = req.getSetLogLevel();
      Status st = set_log_level(std::string_view(level.begin(), level.size()));
      if (st.ok()) reply.setNone();
      co_return st;
    }
    case sp::Request::ELEVATOR: {
      Status st;
      elevator_status(req.getElevator(), reply, st);
      co_return st;
    }
  }
  co_return Status(Errc::not_supported, "unknown storage request");
}

asio::awaitable<Status> StorageService::write(sp::Request::Write::Reader w, Buffer& data, Reply reply,
                                              std::string job) {
  const ObjectId obj = rpc::from_wire(w.getObject());
  const uint64_t offset = w.getOffset();
  const bool sync = w.getSync();
  if (w.getRound()) preassign_.on_outcome(w.getRound(), true);
  learn(w.getSeen());
  if (w.getFallback()) ++fallbacks_;
  if (w.getFragment()) {
    Status st = co_await write_fragment(obj, w.getFragment(), data, sync, reply);
    if (st.ok()) {
      fill_load(reply.initWriteLoad());
      leave_out_write(reply.getWriteLoad(), data.size());
    }
    co_return st;
  }

  auto gate = co_await gates_.enter_shared(obj);
  IoQueue::Op op = object_op(obj);
  op.write = true;
  op.offset = offset;
  op.data = data.span();
  op.sync = sync;
  op.job = std::move(job);
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
                                             std::string job) {
  const ObjectId obj = rpc::from_wire(r.getObject());
  const uint64_t offset = r.getOffset();
  const uint32_t length = r.getLength();
  if (offset + length < offset) co_return Status(Errc::invalid_argument, "read range overflows");
  // Ask the log first: an acknowledged write is either in it (redirected)
  // or already on the local disk.
  auto segments = table_.query(obj, offset, offset + length);
  out = Buffer(length);
  IoQueue::Op op = object_op(obj);
  op.offset = offset;
  op.out = out.span();
  op.job = std::move(job);
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
      for (const auto& g : change.garbage) garbage_[g] = std::chrono::steady_clock::now();
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
