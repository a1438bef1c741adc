// The client's side of the metadata server cluster: one peer per configured
// [[mds]], the map of file sets to members, and call_mds(), which sends each
// request to the owner of its file set and follows map changes and file set
// moves without the caller noticing. The decisions are MdsRouter's and
// MdsRetry's (mds_router.h); this file talks, sleeps and logs. Runs on the
// client's io thread.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fs/client_impl.h"
#include "shared/log.h"
#include "shared/rpc/fan_out.h"
#include "shared/rpc/mds_route.h"

namespace pvfs {

namespace mp = proto::mds;

namespace {

std::string member_ids(const placement::AnuMap& map) {
  std::vector<uint32_t> ids;
  for (MdsId m : map.servers()) ids.push_back(m.value);
  return fmt::format("{}", fmt::join(ids, ","));
}

milliseconds left_until(rpc::Clock::time_point deadline) {
  return std::chrono::duration_cast<milliseconds>(deadline - rpc::Clock::now());
}

}  // namespace

rpc::Peer* Client::Impl::mds_peer(MdsId member) {
  auto it = mds_peers.find(member.value);
  return it == mds_peers.end() ? nullptr : it->second.get();
}

asio::awaitable<Status> Client::Impl::start_mds() {
  Status last(Errc::unavailable, "config names no metadata server");
  for (const auto& m : config.mds) {
    rpc::Peer& peer = *mds_peers.at(m.id);
    auto conn = co_await peer.connection();
    if (conn) {
      // A member without the cluster protocol answers getMap with
      // not_supported; the router's guess then stands (one member: exact).
      co_await fetch_map(MdsId(m.id), timeout);
      co_return Status{};
    }
    last = Status(conn.code(), fmt::format("cannot reach metadata server {}: {}",
                                           peer.address().to_string(), conn.status().detail()));
    if (conn.code() == Errc::access_denied) break;
  }
  co_return last;
}

asio::awaitable<void> Client::Impl::fetch_map(MdsId member, milliseconds limit) {
  // Many calls learn of a new map at once (every one in flight to a member
  // that just lost a set): one getMap per member at a time, the others wait.
  if (auto it = map_fetches.find(member.value); it != map_fetches.end()) {
    auto running = it->second;
    asio::error_code ec;
    co_await running->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    co_return;
  }
  auto done = std::make_shared<asio::steady_timer>(io, rpc::Clock::time_point::max());
  map_fetches[member.value] = done;
  co_await ask_map(member, limit);
  map_fetches.erase(member.value);
  done->cancel();
}

asio::awaitable<void> Client::Impl::ask_map(MdsId member, milliseconds limit) {
  rpc::Peer* peer = mds_peer(member);
  if (!peer || limit <= milliseconds(0)) co_return;
  auto conn = co_await peer->connection();
  if (!conn) co_return;
  rpc::OutMessage out;
  begin_mds(out, Credentials{}).setGetMap();
  auto reply = co_await (*conn)->call(out, {}, limit);
  if (!reply) co_return;
  auto body = (*reply)->body<mp::Reply>();
  if (!body.isMap()) co_return;
  auto map = placement::AnuMap::parse(body.getMap().cStr());
  if (!map) {
    spdlog::warn("metadata server {} sent a map that does not parse: {}", peer->address().to_string(),
                 map.status().to_string());
    co_return;
  }
  member_map_versions[member.value] = map->version();
  const uint64_t was = router.map().version();
  if (!router.adopt(std::move(*map))) co_return;
  spdlog::debug("metadata map version {} (was {}) from mds{}: members {}, placement {}",
                router.map().version(), was, member.value, member_ids(router.map()),
                placement::policy_name(router.policy()));
}

asio::awaitable<void> Client::Impl::fetch_maps(std::optional<MdsId> except, milliseconds limit) {
  // All at once: a member that is down costs its connect timeout once, not
  // once per member after it.
  std::vector<asio::awaitable<Status>> asks;
  for (const auto& m : config.mds) {
    if (except && except->value == m.id) continue;
    asks.push_back([](Impl& impl, MdsId member, milliseconds limit) -> asio::awaitable<Status> {
      co_await impl.fetch_map(member, limit);
      co_return Status{};
    }(*this, MdsId(m.id), limit));
  }
  (void)co_await rpc::run_all(std::move(asks));
}

void Client::Impl::warn_if_placement_differs(MdsId member, FileSetId set, uint64_t version) {
  auto it = member_map_versions.find(member.value);
  if (warned_placement || it == member_map_versions.end() || it->second != version) return;
  // Same map, yet not the owner by it: the two compute owners differently.
  warned_placement = true;
  spdlog::warn("metadata server {} says file set {} is not its own under map version {}, which "
               "gives it to that server under placement \"{}\": check that [mds_cluster] placement "
               "is the same in its configuration and this client's{}",
               member.value, set.value, version, placement::policy_name(router.policy()),
               config.path.empty() ? "" : " (" + config.path.string() + ")");
}

asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> Client::Impl::call_mds(
    rpc::OutMessage& out, bool idempotent, std::weak_ptr<rpc::Connection>* answered_on) {
  const auto began = rpc::Clock::now();
  auto deadline = began + timeout;
  // Time a member held an attempt before it answered staleMap or again (a
  // queue it said it was busy with, then a file set moved) does not count
  // against the timeout, up to the busy limit: the members were alive.
  const auto latest = began + std::max(timeout, busy_limit);
  const auto route = rpc::route_of(out.envelope().getBody().getAs<mp::Request>().asReader());
  MdsRetry retry(idempotent, route.has_value(), mds_peers.size());
  auto name = [&](MdsId member) {
    rpc::Peer* peer = mds_peer(member);
    return peer ? fmt::format("metadata server {}", peer->address().to_string())
                : fmt::format("metadata server {} (not in {})", member.value, config.path.string());
  };
  Status last;  // why the last attempt brought no answer
  MdsId to = router.target(route, retry.skip());
  for (;;) {
    const milliseconds left = left_until(deadline);
    if (left <= milliseconds(0)) {
      // Out of time without reaching the owner (a member paused or cut
      // off: connecting can outlast the call). Learn the newest map from
      // the others before failing, or every later call to this file set
      // would wait out the same member again.
      const bool owner_silent = !last.ok() && last.code() != Errc::again && last.code() != Errc::stale_map;
      if (route && owner_silent && mds_peers.size() > 1) co_await fetch_maps(to, timeout);
      std::string why = last.ok() ? "" : ": " + last.to_string();
      if (route) why += fmt::format(" (file set {})", route->value);
      co_return Status(Errc::timeout, fmt::format("{} did not answer in time{}", name(to), why));
    }
    const uint64_t seen = router.map().version();  // the map this attempt is routed by
    to = router.target(route, retry.skip());
    rpc::Peer* peer = mds_peer(to);
    MdsMiss miss = MdsMiss::unreachable;
    if (!peer) {
      last = Status(Errc::unavailable, "owns the file set by the map");
    } else if (auto conn = co_await peer->connection(); !conn) {
      if (conn.code() == Errc::access_denied) co_return conn.status();
      last = conn.status();
    } else {
      const auto sent = rpc::Clock::now();
      auto reply = co_await (*conn)->call(out, {}, left, busy_limit);
      // As in call_storage (client.cc): none without a busy limit.
      if (busy_limit.count() > 0 && reply.code() != Errc::timeout && rpc::Clock::now() - sent > left)
        ++mount_stats.busy_waits;
      switch (reply.code()) {
        case Errc::stale_map: miss = MdsMiss::stale_map; break;
        case Errc::again: miss = MdsMiss::again; break;
        case Errc::unavailable: miss = MdsMiss::lost; break;
        case Errc::timeout: {
          // No answer in time: the member may be cut off or paused while
          // the others move its file sets on. The request is not retried
          // (it may have been applied), but the newest map is learned from
          // the others first, so the next call (the release's flush after
          // a failed close, the next create) goes to the owner by it
          // instead of waiting out the timeout at the same member again.
          const Status failed(Errc::io, fmt::format("{}: {}", name(to), reply.status().to_string()));
          if (mds_peers.size() > 1) co_await fetch_maps(to, timeout);
          co_return failed;
        }
        default:
          if (!route) router.answered(to);
          if (answered_on) *answered_on = *conn;
          co_return reply;
      }
      last = reply.status();
      if (miss == MdsMiss::stale_map || miss == MdsMiss::again)
        deadline = std::min(latest, deadline + (rpc::Clock::now() - sent));
    }
    // A member that says the set is not its own has seen a newer map
    // (unless another call has fetched it meanwhile).
    if (miss == MdsMiss::stale_map && router.map().version() == seen)
      co_await fetch_map(to, left_until(deadline));
    if (miss == MdsMiss::stale_map && router.members().size() == 1 && router.map().servers().size() > 1) {
      Status lone(Errc::io, fmt::format(
          "{} does not serve file set {}, and this client knows no other of the {} metadata servers of "
          "the cluster: mount with the cluster's configuration file, not one server's address",
          name(to), route ? route->value : 0, router.map().servers().size()));
      if (!warned_lone_member) spdlog::error("{}", lone.detail());
      warned_lone_member = true;
      co_return lone;
    }
    if (miss == MdsMiss::stale_map && route && router.map().version() == seen)
      warn_if_placement_differs(to, *route, seen);
    const MdsNext next = retry.after(miss, router.map().version() > seen);
    if (next.give_up) co_return Status(Errc::io, fmt::format("{}: {}", name(to), last.to_string()));
    if (miss == MdsMiss::stale_map) ++mount_stats.mds_redirects;
    ++mount_stats.mds_retries;
    if (next.ask_others) {
      co_await fetch_maps(to, left_until(deadline));
      if (router.map().version() > seen) continue;
    }
    const milliseconds pause_for = std::min(next.pause, left_until(deadline));
    if (pause_for > milliseconds(0)) co_await pause(pause_for);
  }
}

}  // namespace pvfs
