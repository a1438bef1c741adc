// The storage service: answers storage.capnp requests from clients, tools
// and other storage servers. Object I/O goes through the IoQueue against
// the ObjectStore (on the blocking pool, or inline on the network thread
// for small operations on a fast store); on top of it the service keeps what the two-choice write
// scheduler needs (Dai et al.): the load detector and preassign estimator
// that answer probes, the redirect logs of the objects this server is home
// to (persisted in SchedDb), the fragments it holds for other servers, and
// straggler injection. Everything but the disk I/O runs on the daemon's
// single network thread, so none of it is locked. The maintainer
// (server/maintainer.h) pulls redirected ranges home through this class.
// Time comes from the injected Clock (load ages, garbage grace, uptime,
// request latency); the straggler's holds and the object gates' patience
// still wait on asio timers, on the steady clock.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>

#include <asio.hpp>

#include "server/io_queue.h"
#include "policy/load/load_detector.h"
#include "policy/load/peer_loads.h"
#include "policy/load/preassign.h"
#include "server/object_gates.h"
#include "server/object_store.h"
#include "policy/redirect/redirect_table.h"
#include "server/sched_db.h"
#include "server/straggler.h"
#include "config/config.h"
#include "shared/clock.h"
#include "shared/metrics/open_requests.h"
#include "shared/metrics/request_stats.h"
#include "shared/proto/storage.capnp.h"
#include "shared/rpc/connection.h"
#include "shared/rpc/exchange.h"
#include "shared/rpc/job_counters.h"
#include "shared/rpc/origin.h"

namespace pvfs {

class StorageService {
 public:
  // Opens the scheduling state under data_dir (data_dir/sched for LMDB,
  // data_dir/fragments for fragment data) and rebuilds the redirect logs.
  // `store` and `disk_pool` must outlive the service. Errors: busy (another
  // server holds the directory), corrupt, io.
  // Data requests go through an IoQueue ordered by the elevator the config
  // chooses, with `disk_threads` operations on the disk at once (unless
  // [elevator] queue_depth says otherwise). `clock` must outlive the
  // service; `fragments` (tests) replaces the store of data_dir/fragments.
  static Result<std::unique_ptr<StorageService>> open(uint32_t server_id, const Config& config,
                                                      const std::filesystem::path& data_dir,
                                                      ObjectStore& store,
                                                      asio::thread_pool& disk_pool,
                                                      unsigned disk_threads,
                                                      asio::any_io_executor ex,
                                                      const Clock& clock = real_clock(),
                                                      std::unique_ptr<ObjectStore> fragments = nullptr);

  // The RpcServer handler: decodes one request, runs it, sends one reply.
  asio::awaitable<void> handle(std::shared_ptr<rpc::Connection> conn,
                               std::unique_ptr<rpc::InMessage> msg);

  // One request as its handler sees it (shared/rpc/exchange.h).
  using Call = rpc::Exchange<proto::storage::Request, proto::storage::Reply>;
  struct Route {
    proto::storage::Request::Which kind;
    asio::awaitable<Status> (*handler)(StorageService& service, Call& call);
  };
  // The table from request kind to handler, every kind this server serves
  // once (storage_service.cc says how to add one). A kind not in it (a
  // newer peer's) is answered not_supported.
  static std::span<const Route> routes();

  Straggler& straggler() { return straggler_; }
  // The I/O queue, for the QoS agent (server/qos_agent.h) on this thread.
  IoQueue& io_queue() { return io_; }
  const Clock& clock() const { return clock_; }

  // The server's counters and gauges as metric families (pvfs-ctl stats and
  // top, /metrics; names in docs/metrics.md). In server/storage_metrics.cc.
  metrics::Families metrics();

  // --- for the maintainer (same thread) ---
  redirect::RedirectTable& table() { return table_; }
  // No client data request is outstanding here.
  bool idle() const { return load_.idle(); }
  // Waits until no local write of `object` runs and keeps new ones out.
  asio::awaitable<ObjectGates::Exclusive> lock_for_pull(ObjectId object) {
    return gates_.enter_exclusive(object, std::chrono::milliseconds(1000));
  }
  // Writes pulled bytes into the local object (background class: after
  // every client request).
  asio::awaitable<Status> write_local(ObjectId object, uint64_t offset, std::span<const std::byte> data);
  // Appends `e` to the object's log and persists the change.
  Status record(ObjectId object, const redirect::Entry& e);
  // Garbage older than `grace`, by server, and forgetting what was dropped.
  std::map<ServerId, std::vector<redirect::Garbage>> due_garbage(std::chrono::milliseconds grace) const;
  Status garbage_dropped(std::span<const redirect::Garbage> done);
  void count_pull(uint64_t bytes) { pulled_bytes_ += bytes; ++pulls_; }
  // Whether `bytes` of data may be written here: the disk keeps [storage]
  // reserve_mb free for the redirect log (storage_space.cc). Errors: no_space.
  Status admit_data(uint64_t bytes);

 private:
  StorageService(uint32_t server_id, const Config& config, ObjectStore& store,
                 std::unique_ptr<ObjectStore> fragments, std::unique_ptr<SchedDb> db,
                 asio::thread_pool& disk_pool, asio::any_io_executor ex, IoQueueOptions io_options,
                 elevator::BandwidthTable bandwidth, const Clock& clock);

  using Reply = proto::storage::Reply::Builder;
  using Request = proto::storage::Request::Reader;
  // An IoQueue operation on the local object or on a fragment held here.
  // `origin` says whose request it is (none for the server's own work).
  IoQueue::Op object_op(ObjectId object, rpc::Origin origin = {}) {
    IoQueue::Op op = op_of(std::move(origin));
    op.store = &store_;
    op.key = op.elevator_key = object;
    return op;
  }
  IoQueue::Op fragment_op(uint64_t fragment, rpc::Origin origin = {}) {
    // Fragments are files of their own: the elevator must not merge them
    // with the object whose bytes they hold.
    IoQueue::Op op = op_of(std::move(origin));
    op.store = fragments_.get();
    op.key = ObjectId{InodeId(fragment), 0};
    op.elevator_key = ObjectId{InodeId(fragment), UINT32_MAX};
    return op;
  }
  static IoQueue::Op op_of(rpc::Origin origin) {
    IoQueue::Op op;
    op.job = std::move(origin.job);
    op.client = origin.client;
    op.client_io_ns = origin.job_io_ns;
    return op;
  }
  void elevator_status(proto::storage::Request::ElevatorControl::Reader c, Reply reply, Status& st);
  // Data requests (counted as load, slowed by straggler injection).
  // `origin`: the request's job id, for the QoS windows of the I/O queue,
  // and the client's I/O time of that job, for a profiling run.
  asio::awaitable<Status> write(proto::storage::Request::Write::Reader w, Buffer& data, Reply reply,
                                rpc::Origin origin);
  asio::awaitable<Status> write_fragment(ObjectId object, uint64_t fragment, Buffer& data, bool sync,
                                         Reply reply, rpc::Origin origin);
  asio::awaitable<Status> read(proto::storage::Request::Read::Reader r,
                               std::shared_ptr<rpc::Connection> conn, Reply reply, Buffer& out, rpc::Origin origin);
  asio::awaitable<Status> read_fragment(proto::storage::Request::ReadFragment::Reader r,
                                        std::shared_ptr<rpc::Connection> conn, Buffer& out, Reply reply,
                                        rpc::Origin origin);
  // Object management.
  asio::awaitable<Status> truncate(ObjectId object, uint64_t size);
  asio::awaitable<Status> remove(std::vector<ObjectId> objects);
  asio::awaitable<Status> fsync(ObjectId object);
  // Space (storage_space.cc): fallocate of an object range (reserve, or
  // punch), SEEK_DATA / SEEK_HOLE, and stat with the blocks the object
  // takes here and in its redirected ranges. Redirected ranges are data.
  asio::awaitable<Status> allocate(ObjectId object, uint64_t offset, uint64_t length, bool punch);
  asio::awaitable<Result<std::optional<uint64_t>>> seek(ObjectId object, uint64_t offset, bool hole);
  asio::awaitable<Result<ObjectStat>> stat(ObjectId object);
  // The redirected ranges of `object` from offset `from` on, in order.
  std::vector<std::pair<uint64_t, uint64_t>> remote_ranges(ObjectId object, uint64_t from) const;
  asio::awaitable<Status> drop_fragments(std::vector<std::pair<ObjectId, uint64_t>> fragments);
  // Scheduling.
  Status redirect(proto::storage::Request::Redirect::Reader r);
  asio::awaitable<Status> sync_db();
  void probe(proto::storage::Request::Probe::Reader p, Reply reply);
  void learn(capnp::List<proto::storage::ServerLoad>::Reader loads);
  void fill_load(proto::storage::ServerLoad::Builder b);
  void sched_status(Reply reply);
  load::Nanos now() const;
  // fsck (storage_fsck.cc): pages of what is stored here, and forgetting
  // the redirect entries that name one fragment.
  asio::awaitable<Status> scan_objects(proto::storage::Request::Scan::Reader s, Reply reply);
  asio::awaitable<Status> scan_fragments(proto::storage::Request::Scan::Reader s, Reply reply);
  void scan_redirects(proto::storage::Request::Scan::Reader s, Reply reply);
  asio::awaitable<Status> drop_redirect(proto::storage::FragmentRef::Reader f, Reply reply);

  uint32_t id_;
  const Config& config_;
  const Clock& clock_;
  ObjectStore& store_;
  std::unique_ptr<ObjectStore> fragments_;  // fragment f lives as object (f, 0)
  std::unique_ptr<SchedDb> db_;
  asio::thread_pool& disk_pool_;
  IoQueue io_;
  rpc::JobCounters jobs_;
  metrics::RequestStats requests_;  // by Request union member
  metrics::OpenRequests open_;      // in progress, for the slow-request check
  TimePoint started_;

  load::LoadDetector load_;
  load::PreassignEstimator preassign_;
  load::PeerLoads learned_;
  Straggler straggler_;
  ObjectGates gates_;
  redirect::RedirectTable table_;
  // Fragments held here for other servers' objects.
  std::map<uint64_t, HeldFragment> held_;
  uint64_t held_bytes_ = 0;
  // Fragments elsewhere to drop, with when they became garbage.
  std::map<redirect::Garbage, TimePoint> garbage_;

  uint64_t pulled_bytes_ = 0, pulls_ = 0, redirects_recorded_ = 0, fallbacks_ = 0, probes_ = 0;
  // The disk's free bytes as last measured (statvfs at most every 100 ms),
  // and data writes refused for want of room.
  std::optional<TimePoint> space_measured_;
  uint64_t space_free_ = 0;
  uint64_t refused_no_room_ = 0;
  // scanObjects: the sorted listing the pages of one walk are cut from
  // (listed again when a walk starts or the listing is old).
  std::shared_ptr<const std::vector<ObjectId>> fsck_listing_;
  TimePoint fsck_listed_at_{};
};

}  // namespace pvfs
