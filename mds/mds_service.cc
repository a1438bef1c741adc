#include "mds/mds_service.h"
#include "mds/wall_clock.h"

#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "mds/handlers/table.h"
#include "mds/permissions.h"
#include "shared/log.h"
#include "shared/log_level.h"
#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"
#include "shared/request_limits.h"
#include "shared/rpc/blocking.h"
#include "shared/rpc/convert.h"
#include "shared/rpc/exchange.h"
#include "shared/rpc/fan_out.h"
#include "shared/rpc/frame.h"
#include "shared/rpc/local_socket.h"
#include "shared/rpc/request_log.h"
#include "shared/rpc/metrics_wire.h"
#include "shared/rpc/mds_route.h"
#include "shared/rpc/origin.h"

namespace pvfs::mds {

namespace mp = proto::mds;
using std::chrono::milliseconds;

MdsService::MdsService(asio::io_context& io, const Config& config, const Secret& key, uint32_t id,
                       FileSetCatalog& filesets, MdsCluster& cluster, asio::thread_pool& sync_pool,
                       const Clock& clock, rpc::Network& network)
    : io_(io),
      config_(config),
      clock_(clock),
      network_(network),
      key_(key),
      id_(id),
      filesets_(filesets),
      cluster_(cluster),
      sync_pool_(sync_pool),
      registry_(milliseconds(config.heartbeat_timeout_ms)),
      requests_(rpc::union_names(capnp::Schema::from<mp::Request>())),
      sync_timer_(io),
      orphan_timer_(io),
      orphan_holds_(milliseconds(config.orphan_lease_ms)),
      open_leases_(milliseconds(config.open_lease_ms)),
      writer_timer_(io),
      iosched_(io, config, cluster),
      qos_(io, config, cluster),
      locks_(io, config, filesets, cluster),
      started_(clock.now()) {
  for (const auto& text : config.root_squash_except) {
    asio::error_code ec;
    auto addr = asio::ip::make_address(text, ec);
    if (!ec) squash_exempt_.push_back(addr);  // Config::load checked the syntax
    if (!ec && rpc::is_local_address(addr)) local_exempt_ = true;
  }
}

bool MdsService::squashes(const rpc::Connection& conn) const {
  if (!config_.root_squash || conn.peer_identity().kind != rpc::Kind::client) return false;
  if (conn.peer_is_local()) return !local_exempt_;
  asio::error_code ec;
  auto from = asio::ip::make_address(conn.peer_address(), ec);
  if (ec) return true;
  return std::find(squash_exempt_.begin(), squash_exempt_.end(), from) == squash_exempt_.end();
}

void MdsService::start() {
  // Servers we knew before a restart count as alive until their heartbeat
  // is overdue, so files can be created right away.
  cluster_.detach_local = [this](FileSetId set) { return detach(set); };
  cluster_.before_leaving = [this](FileSetId set) { return recall_fileset_leases(set); };
  check_leases_marker();
  // The registry is kept in file set 0 by the member that holds it; the
  // others learn the servers from their heartbeats within a second.
  NamespaceStore* root = filesets_.find(kRootInode);
  if (auto known = root ? root->load_servers() : Result<std::vector<StoredServer>>(std::vector<StoredServer>{})) {
    auto now = clock_.now();
    for (const auto& s : *known)
      registry_.heard_from({ServerId(s.id), s.address, s.capacity_bytes, s.free_bytes, {}}, now);
  }
  asio::co_spawn(io_, sync_loop(), asio::detached);
  asio::co_spawn(io_, orphan_loop(), asio::detached);
  asio::co_spawn(io_, writer_loop(), asio::detached);
  iosched_.start();
  qos_.start();
  locks_.start();
}

void MdsService::stop() {
  stopped_ = true;
  sync_timer_.cancel();
  orphan_timer_.cancel();
  writer_timer_.cancel();
  iosched_.stop();
  qos_.stop();
  locks_.stop();
  for (auto& [id, peer] : storage_peers_) peer->close();
}

asio::awaitable<void> MdsService::sync_loop() {
  while (!stopped_) {
    sync_timer_.expires_after(milliseconds(config_.mds_sync_interval_ms));
    asio::error_code ec;
    co_await sync_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    // mdb_env_sync only flushes the file; it may run beside the writer thread.
    // Each store is held by this copy of the list while it syncs, even if
    // its file set is deleted meanwhile.
    auto stores = filesets_.stores();
    Status st = co_await rpc::run_blocking(sync_pool_, [&stores] {
      Status first;
      for (const auto& s : stores)
        if (Status one = s->sync(); !one.ok() && first.ok()) first = one;
      return first;
    });
    if (!st.ok()) spdlog::error("metadata sync failed: {}", st.to_string());
  }
}

std::shared_ptr<rpc::Peer> MdsService::storage_peer(ServerId id) {
  const auto* entry = registry_.find(id);
  if (!entry) return nullptr;
  auto ep = parse_endpoint(entry->address);
  if (!ep) return nullptr;
  auto& peer = storage_peers_[id];
  if (!peer || !(peer->address() == *ep)) {
    if (peer) peer->close();
    peer = std::make_shared<rpc::Peer>(io_.get_executor(), *ep,
                                       rpc::Auth(key_, {rpc::Kind::mds, id_}, config_.encrypt),
                                       milliseconds(config_.connect_timeout_ms), network_);
  }
  return peer;
}

std::vector<ServerId> MdsService::cluster_servers() const {
  std::vector<ServerId> out;
  for (const auto& s : config_.servers) out.push_back(ServerId(s.id));
  for (const auto& e : registry_.all())
    if (std::find(out.begin(), out.end(), e.id) == out.end()) out.push_back(e.id);
  return out;
}

Layout MdsService::layout_for_policy(const LayoutPolicy& policy) {
  LayoutPolicy defaults{config_.stripe_size, config_.stripe_count, {}};
  // Where the MDS chooses, a full server gets no part of a new file; a
  // layout that names its servers gets them while they are alive.
  const auto now = clock_.now();
  return choose_layout(policy, defaults,
                       policy.servers.empty() ? registry_.with_room(now, config_.full_percent)
                                              : registry_.live(now),
                       rng_());
}

Result<Layout> MdsService::layout_for_new_file(NamespaceStore& store, InodeId parent) {
  auto policy = store.get_layout_policy(parent);
  if (!policy) return policy.status();
  Layout layout = layout_for_policy(*policy);
  if (!layout.valid()) return Status(Errc::io, "no storage server is alive");
  return layout;
}

asio::awaitable<void> MdsService::handle(std::shared_ptr<rpc::Connection> conn,
                                         std::unique_ptr<rpc::InMessage> msg) {
  rpc::Exchange<mp::Request, mp::Reply> ex(std::move(conn), std::move(msg));
  const metrics::OpenRequests::Guard open(open_, ex.started());
  jobs_.count(ex.counted_job(), 0, 0);
  // Root squash applies to what clients ask, not to daemons' own requests.
  const Caller caller = squashes(*ex.conn) ? squash_root(rpc::from_wire(ex.req.getCaller()))
                                           : rpc::from_wire(ex.req.getCaller());
  const Timespec now = wall_now(clock_);
  const rpc::Origin origin = rpc::origin_of(*ex.msg);

  // The file set the request concerns must be served here (the client
  // routes by the same function); a slowed member first makes it wait.
  const std::optional<FileSetId> route = rpc::route_of(ex.req);
  const handlers::Entry* entry = rpc::find_handler(handlers::table(), ex.req.which());
  std::optional<MdsCluster::InFlight> in_flight;
  std::optional<MdsCluster::Outstanding> outstanding;
  if (route) {
    // Arrived and not answered until `outstanding` goes: the backlog each
    // interval reports (queued behind --slowdown included).
    if (!entry || entry->backlog) outstanding.emplace(&cluster_, ex.started(), *route);
    if (cluster_.emulating()) co_await cluster_.emulate(ex.started());  // no coroutine frame when off
    if (Status admitted = cluster_.admit(*route); !admitted.ok()) co_return co_await ex.refuse(admitted);
    if (detached_.count(route->value))
      co_return co_await ex.refuse(Status(Errc::not_found, fmt::format("file set {} was removed", route->value)));
    in_flight.emplace(&cluster_, route->value);
  }

  if (entry && entry->needs_room)
    if (Status room = admit_growth(); !room.ok()) co_return co_await ex.refuse(room);
  const std::optional<InodeId> gaining = dir_gaining_name(ex.req);
  if (gaining && adding_names_waits()) co_await before_adding_name();
  const std::optional<InodeId> replacing = leased_dir_replaced(ex.req);
  Status outcome(Errc::not_supported, "unknown metadata request");
  if (entry) {
    handlers::Call call{*this, ex.conn, *ex.msg, ex.req, ex.reply, caller, now, origin};
    outcome = co_await ex.run([&] { return entry->handler(call); });
  }
  // The name is in: other clients' leases on the directory end before the
  // reply says so (mds/dir_lease_table.h).
  if (gaining && outcome.ok() && dir_leases_.leased(*gaining, clock_.now()))
    co_await recall_dir_leases(*gaining, ex.conn.get());
  if (replacing && outcome.ok()) co_await recall_dir_leases(*replacing, nullptr);
  in_flight.reset();
  if (outcome.code() == Errc::no_space) space_.measured.reset();  // the disk filled: look again
  if (route && entry && entry->load_sample && outcome.code() != Errc::again)
    cluster_.record(ex.elapsed());
  co_await ex.finish(outcome, requests_);
}

}  // namespace pvfs::mds
