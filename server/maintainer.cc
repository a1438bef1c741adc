#include "server/maintainer.h"

#include <fmt/format.h>

#include "shared/log.h"
#include "shared/rpc/convert.h"

namespace pvfs {

namespace sp = proto::storage;

namespace {

constexpr uint64_t kPullChunk = uint64_t{1} << 20;

// After a pull found this server's disk full: how long pulls wait before
// the next try, doubling up to the longest while it stays full.
constexpr std::chrono::milliseconds kNoRoomFirstWait{1000};
constexpr std::chrono::milliseconds kNoRoomLongestWait{60000};

}  // namespace

Maintainer::Maintainer(asio::any_io_executor ex, const Config& config, const Secret& key, uint32_t id,
                       StorageService& service, rpc::Network& network)
    : ex_(ex), config_(config), id_(id), service_(service) {
  for (const auto& s : config.servers)
    if (s.id != id)
      peers_[s.id] = std::make_unique<rpc::Peer>(ex, s.address,
                                                 rpc::Auth(key, {rpc::Kind::server, id}, config.encrypt),
                                                 std::chrono::milliseconds(config.connect_timeout_ms),
                                                 network);
}

void Maintainer::start() {
  for (uint32_t i = 0; i < config_.maintainer_threads; ++i)
    asio::co_spawn(ex_, pull_worker(), asio::detached);
  asio::co_spawn(ex_, collector(), asio::detached);
}

void Maintainer::stop() { stopped_ = true; }

asio::awaitable<void> Maintainer::pause(std::chrono::milliseconds d) {
  asio::steady_timer t(ex_, d);
  asio::error_code ec;
  co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> Maintainer::call(ServerId server,
                                                                          rpc::OutMessage& out) {
  auto it = peers_.find(server.value);
  if (it == peers_.end())
    co_return Status(Errc::not_found, fmt::format("server {} is not in the config", server.value));
  co_return co_await it->second->call(out, {}, std::chrono::milliseconds(config_.rpc_timeout_ms));
}

asio::awaitable<bool> Maintainer::remote_idle(ServerId server) {
  rpc::OutMessage out;
  out.init_body<sp::Request>().initProbe().setRound(0);
  auto reply = co_await call(server, out);
  if (!reply) co_return false;
  co_return (*reply)->body<sp::Reply>().getLoad().getSelf().getRequests() == 0;
}

asio::awaitable<void> Maintainer::pull_worker() {
  const auto interval = std::chrono::milliseconds(config_.maintainer_interval_ms);
  while (!stopped_) {
    co_await pause(interval);
    if (stopped_) break;
    co_await pull_round();
  }
}

asio::awaitable<unsigned> Maintainer::pull_round() {
  // A full disk: the fragments wait where they are (reads find them) rather
  // than be read again every round only to fail here.
  if (no_room_until_ && service_.clock().now() < *no_room_until_) co_return 0;
  // Pull while this server stays idle; each object's oldest entries first.
  unsigned pulled = 0;
  std::set<uint32_t> busy;
  for (ObjectId object : service_.table().objects()) {
    if (stopped_ || !service_.idle()) break;
    const auto* log = service_.table().find(object);
    if (!log) continue;
    // A copy: the log may change (or go) at every await below.
    const std::vector<redirect::Entry> entries = log->remote_entries();
    for (const redirect::Entry& e : entries) {
      if (busy.count(e.where.server.value) || in_progress_.count({object, e.seq})) continue;
      if (!co_await remote_idle(e.where.server)) {
        busy.insert(e.where.server.value);
        continue;
      }
      in_progress_.insert({object, e.seq});
      const bool done = co_await pull(object, e);
      in_progress_.erase({object, e.seq});
      if (done) ++pulled;
      else busy.insert(e.where.server.value);
      break;  // the log changed: look at it afresh
    }
  }
  co_return pulled;
}

asio::awaitable<bool> Maintainer::pull(ObjectId object, redirect::Entry e) {
  auto& table = service_.table();
  auto gate = co_await service_.lock_for_pull(object);
  if (!gate) co_return false;
  // Only the parts this entry still answers for: newer entries (local
  // writes, later redirects) keep theirs.
  uint64_t copied = 0;
  // One id for the whole pull-back, so the holder's log lines of its reads
  // can be matched with this server's.
  const rpc::Origin origin{{}, request_ids_()};
  for (const redirect::Segment& s : table.query(object, e.begin, e.end)) {
    if (!(s.where == e.where)) continue;
    for (uint64_t at = s.begin; at < s.end; at += kPullChunk) {
      if (!service_.idle() || stopped_) co_return false;  // client traffic first
      const uint64_t n = std::min(kPullChunk, s.end - at);
      rpc::OutMessage out;
      rpc::stamp(out.envelope(), origin);
      auto r = out.init_body<sp::Request>().initReadFragment();
      rpc::to_wire(object, r.initObject());
      r.setFragment(e.where.fragment);
      r.setOffset(at - e.where.fragment_base);
      r.setLength(static_cast<uint32_t>(n));
      r.setBackground(true);
      auto reply = co_await call(e.where.server, out);
      if (!reply) {
        spdlog::warn("req {:016x} pull-back of {:x}.{} [{}, {}) from server {}: {}", origin.request_id,
                     object.ino.value, object.index, e.begin, e.end, e.where.server.value,
                     reply.status().to_string());
        co_return false;
      }
      const Buffer& data = (*reply)->data();
      if (data.size() != n) {
        spdlog::warn("pull-back of {:x}.{}: fragment {:x} on server {} is short ({} of {} bytes)",
                     object.ino.value, object.index, e.where.fragment, e.where.server.value, data.size(), n);
        co_return false;
      }
      if (Status st = co_await service_.write_local(object, at, data.span()); !st.ok()) {
        if (st.code() == Errc::no_space) {
          no_room(st);
          co_return false;
        }
        spdlog::warn("pull-back of {:x}.{}: {}", object.ino.value, object.index, st.to_string());
        co_return false;
      }
      copied += n;
    }
  }
  Status st = service_.record(
      object, redirect::Entry{redirect::RedirectTable::pulled_seq(e.seq), e.begin, e.end,
                              redirect::Location::home()});
  if (!st.ok()) {
    spdlog::warn("pull-back of {:x}.{}: recording: {}", object.ino.value, object.index, st.to_string());
    co_return false;
  }
  service_.count_pull(copied);
  if (no_room_until_) {
    spdlog::info("pull-backs go on: this server's disk has room again");
    no_room_until_.reset();
    no_room_wait_ = kNoRoomFirstWait;
  }
  spdlog::debug("req {:016x} pulled {:x}.{} [{}, {}) home from server {} ({} bytes)", origin.request_id,
                object.ino.value, object.index, e.begin, e.end, e.where.server.value, copied);
  co_return true;
}

void Maintainer::no_room(const Status& why) {
  if (!no_room_until_)
    spdlog::warn("pull-backs wait: no room on this server's disk ({}); redirected bytes stay on the servers "
                 "holding them and are read from there, and pulls try again after {} s, then less often",
                 why.to_string(), no_room_wait_.count() / 1000);
  no_room_until_ = service_.clock().now() + no_room_wait_;
  no_room_wait_ = std::min(no_room_wait_ * 2, kNoRoomLongestWait);
}

asio::awaitable<void> Maintainer::collector() {
  const auto interval = std::max(std::chrono::milliseconds(config_.maintainer_interval_ms),
                                 std::chrono::milliseconds(200));
  while (!stopped_) {
    co_await pause(interval);
    if (stopped_) break;
    co_await collect_round();
  }
}

asio::awaitable<void> Maintainer::collect_round() {
  const auto grace = std::chrono::milliseconds(config_.fragment_gc_grace_ms);
  for (auto& [server, garbage] : service_.due_garbage(grace)) {
    rpc::OutMessage out;
    auto list = out.init_body<sp::Request>().initDropFragments(static_cast<unsigned>(garbage.size()));
    for (unsigned i = 0; i < garbage.size(); ++i) {
      rpc::to_wire(garbage[i].object, list[i].initObject());
      list[i].setFragment(garbage[i].fragment);
    }
    auto reply = co_await call(server, out);
    if (!reply) continue;  // try again next round
    if (Status st = service_.garbage_dropped(garbage); !st.ok())
      spdlog::warn("forgetting dropped fragments: {}", st.to_string());
  }
}

}  // namespace pvfs
