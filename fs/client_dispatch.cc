// Write dispatch (Dai et al., two-choice with collaborative probe and
// preassign): pieces pending at the same moment share one probe round; the
// pure dispatcher (policy/dispatch) picks a server per piece; a piece sent away
// from home is written there as a fragment and then recorded in its home
// server's redirect log. A piece whose home is full goes the same way to a
// server with room (spill). Runs on the client's io thread.
#include <algorithm>

#include <fmt/format.h>

#include "fs/client_impl.h"
#include "policy/dispatch/round.h"
#include "shared/log.h"
#include "shared/rpc/fan_out.h"

namespace pvfs {

namespace sp = proto::storage;

namespace {

void set_loads(capnp::List<sp::ServerLoad>::Builder list, const std::vector<sched::ServerLoad>& loads) {
  for (unsigned i = 0; i < loads.size(); ++i) {
    list[i].setServer(loads[i].server.value);
    list[i].setRequests(loads[i].requests);
    // The wire keeps the queue and the preassigned bytes apart.
    const uint64_t preassigned = std::min(loads[i].bytes, loads[i].preassigned);
    list[i].setBytes(loads[i].bytes - preassigned);
    list[i].setPreassigned(preassigned);
  }
}

}  // namespace

void Client::set_dispatch_policy(sched::Policy policy) { impl_->dispatch.policy = policy; }

bool Client::Impl::overloaded(ServerId server) const {
  const auto load = loads_heard.fresh(server, rpc::Clock::now(), milliseconds(config.load_ttl_ms));
  return load && load->bytes >= kOverloadedBytes;
}
const sched::Options& Client::dispatch_options() const { return impl_->dispatch; }
const DispatchStats& Client::dispatch_stats() const { return impl_->stats; }
MountStats& Client::mount_stats() { return impl_->mount_stats; }

asio::awaitable<Client::Impl::Placement> Client::Impl::place(sched::Piece piece) {
  auto pending = std::make_shared<PendingPlacement>();
  pending->piece = piece;
  pending->done = std::make_shared<asio::steady_timer>(io, rpc::Clock::time_point::max());
  unplaced.push_back(pending);
  if (!round_scheduled) {
    round_scheduled = true;
    // Posted, so every piece queued by handlers already waiting on this
    // thread joins the same round.
    asio::post(io, [this] { asio::co_spawn(io, run_round(), asio::detached); });
  }
  while (!pending->ready) {
    asio::error_code ec;
    co_await pending->done->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return pending->result;
}

asio::awaitable<void> Client::Impl::run_round() {
  auto batch = std::move(unplaced);
  unplaced.clear();
  round_scheduled = false;
  std::vector<sched::Piece> pieces;
  for (const auto& p : batch) pieces.push_back(p->piece);
  std::vector<ServerId> all;
  for (const auto& [id, info] : server_info)
    if (info.alive) all.push_back(ServerId(id));

  const milliseconds fresh_for(config.load_ttl_ms);
  // The rule (probe or not, assign, ProbeDone, what the writes carry) is
  // sched::Round's, the one pvfs-sim runs; this sends its RPCs.
  sched::Round dispatch_round(dispatch, std::move(pieces), std::move(all), loads_heard, rpc::Clock::now(),
                              fresh_for, rng);
  uint64_t round = 0;
  if (dispatch_round.probes()) {
    round = rng() | 1;
    ++stats.rounds;
    if (dispatch_round.stale()) ++stats.stale_rounds;
    const auto& plan = dispatch_round.plan();
    stats.probes += plan.probe.size();
    const auto started = rpc::Clock::now();
    std::vector<asio::awaitable<Status>> probes;
    for (size_t i = 0; i < plan.probe.size(); ++i) {
      probes.push_back([](Impl& impl, sched::Round& r, ServerId server, uint64_t round) -> asio::awaitable<Status> {
        rpc::OutMessage out;
        auto p = out.init_body<sp::Request>().initProbe();
        p.setRound(round);
        p.setPieceBytes(r.piece_bytes());
        p.setPreassign(r.preassign());
        auto reply = co_await impl.call_storage(server, out, {},
                                                milliseconds(impl.config.probe_timeout_ms));
        if (!reply) co_return Status{};  // not answering: not a candidate
        auto report = (*reply)->body<sp::Reply>().getLoad();
        auto self = report.getSelf();
        const auto now = rpc::Clock::now();
        r.answered(sched::ServerLoad{server, self.getBytes() + self.getPreassigned(), self.getRequests(),
                                     self.getPreassigned()},
                   now, impl.loads_heard);
        for (auto o : report.getOthers())
          if (impl.server_info.count(o.getServer()))
            impl.loads_heard.heard(sched::ServerLoad{ServerId(o.getServer()), o.getBytes() + o.getPreassigned(),
                                                     o.getRequests(), o.getPreassigned()},
                                   now - milliseconds(o.getAgeMs()));
        co_return Status{};
      }(*this, dispatch_round, plan.probe[i], round));
    }
    co_await rpc::run_all(std::move(probes));
    stats.probe_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(rpc::Clock::now() - started).count();
  }
  const auto chosen = dispatch_round.decide(loads_heard, rpc::Clock::now(), rng);
  if (dispatch_round.source() != sched::RoundSource::none)
    spdlog::trace("dispatch round of {} pieces: {} ({})", chosen.size(),
                  dispatch_round.probes() ? "probed" : "from memory", dispatch_round.why());

  // Tell the probed servers that got nothing, so their preassigned load
  // goes at once (fire and forget; they also expire it themselves).
  for (ServerId server : dispatch_round.probe_done(chosen)) {
    asio::co_spawn(io, [](Impl& impl, ServerId server, uint64_t round) -> asio::awaitable<void> {
      rpc::OutMessage out;
      out.init_body<sp::Request>().initProbeDone().setRound(round);
      co_await impl.call_storage(server, out, {}, milliseconds(impl.config.probe_timeout_ms));
    }(*this, server, round), asio::detached);
  }
  auto seen = std::make_shared<const std::vector<sched::ServerLoad>>(dispatch_round.reported());
  for (size_t i = 0; i < batch.size(); ++i) {
    batch[i]->result = Placement{chosen[i], round, seen};
    batch[i]->ready = true;
    batch[i]->done->cancel();
  }
}

namespace {

// Writes `data` to `server`: the object itself (fragment 0) or a fragment of it.
asio::awaitable<Status> send_write(Client::Impl& impl, ServerId server, InodeId ino, uint32_t index,
                                   uint64_t offset, uint64_t fragment, std::span<const std::byte> data,
                                   bool sync, const Client::Impl::Placement* placement, bool fallback,
                                   const rpc::Origin& origin, milliseconds timeout) {
  rpc::OutMessage out;
  rpc::stamp(out.envelope(), origin);
  auto w = out.init_body<sp::Request>().initWrite();
  set_object(w.initObject(), ino, index);
  w.setOffset(offset);
  w.setSync(sync);
  w.setFragment(fragment);
  w.setFallback(fallback);
  if (sync) {
    // A process waits on every O_SYNC/O_DSYNC write: the server must not
    // let it sit behind a long queue (mandatory deadline).
    w.setUrgent(true);
    w.setMaxServiceMs(impl.config.urgent_max_service_ms);
  }
  if (placement && placement->round) {
    w.setRound(placement->round);
    set_loads(w.initSeen(static_cast<unsigned>(placement->seen->size())), *placement->seen);
  }
  const auto sent = rpc::Clock::now();
  auto reply = co_await impl.call_storage(server, out, data, timeout);
  if (!reply) co_return reply.status();
  const auto answered = rpc::Clock::now();
  if (data.size() >= impl.dispatch.min_bytes)
    impl.loads_heard.wrote(server, data.size(), answered - sent, answered);
  // The server's load as this write left it: keeps the dispatcher's memory
  // fresh without probes (servers that predate the field send none).
  auto body = (*reply)->body<sp::Reply>();
  if (body.hasWriteLoad()) {
    auto l = body.getWriteLoad();
    impl.loads_heard.heard(sched::ServerLoad{server, l.getBytes() + l.getPreassigned(), l.getRequests(),
                                             l.getPreassigned()},
                           rpc::Clock::now() - milliseconds(l.getAgeMs()));
  }
  co_return Status{};
}

asio::awaitable<Status> send_redirect(Client::Impl& impl, ServerId home, InodeId ino, uint32_t index,
                                      uint64_t offset, uint64_t length, ServerId holder,
                                      uint64_t fragment, bool sync, const rpc::Origin& origin) {
  rpc::OutMessage out;
  rpc::stamp(out.envelope(), origin);
  auto r = out.init_body<sp::Request>().initRedirect();
  set_object(r.initObject(), ino, index);
  r.setOffset(offset);
  r.setLength(length);
  r.setServer(holder.value);
  r.setFragment(fragment);
  r.setSync(sync);
  auto reply = co_await impl.call_storage(home, out, {});
  co_return reply.status();
}

}  // namespace

asio::awaitable<Status> Client::Impl::write_piece(InodeState& state, uint32_t index, uint64_t offset,
                                                  std::span<const std::byte> data, bool sync,
                                                  rpc::Origin origin) {
  Status st = co_await write_placed(state, index, offset, data, sync, origin);
  if (st.code() != Errc::no_space) co_return st;
  co_return co_await spill(state, index, offset, data, sync, origin, st);
}

asio::awaitable<Status> Client::Impl::spill(InodeState& state, uint32_t index, uint64_t offset,
                                            std::span<const std::byte> data, bool sync, rpc::Origin origin,
                                            Status full) {
  const ServerId home = state.layout.servers[index];
  // The other servers that answer: those with room (as the MDS last
  // heard) before the rest, each group least loaded (as last heard) first.
  std::vector<std::tuple<bool, uint64_t, ServerId>> others;
  const auto now = rpc::Clock::now();
  for (const auto& [id, info] : server_info) {
    if (!info.alive || id == home.value) continue;
    const auto load = loads_heard.fresh(ServerId(id), now, milliseconds(config.load_ttl_ms));
    others.emplace_back(info.free_bytes < data.size(), load ? load->bytes : 0, ServerId(id));
  }
  std::sort(others.begin(), others.end());
  const milliseconds away_timeout = std::max(milliseconds(2000), timeout / 5);
  for (size_t i = 0; i < others.size() && i < kSpillTries; ++i) {
    const ServerId holder = std::get<ServerId>(others[i]);
    uint64_t fragment = 0;
    while (fragment == 0) fragment = rng();
    Status st = co_await send_write(*this, holder, state.ino, index, offset, fragment, data, sync, nullptr, false,
                                    origin, away_timeout);
    if (!st.ok()) continue;  // full as well, or not answering
    state.fragment_servers.insert({index, holder.value});
    st = co_await send_redirect(*this, home, state.ino, index, offset, data.size(), holder, fragment, sync, origin);
    // A home that cannot even record the entry is full indeed.
    if (!st.ok()) break;
    ++stats.pieces_spilled;
    co_return st;
  }
  co_return full;
}

asio::awaitable<Status> Client::Impl::write_placed(InodeState& state, uint32_t index, uint64_t offset,
                                                   std::span<const std::byte> data, bool sync,
                                                   rpc::Origin origin) {
  const ServerId home = state.layout.servers[index];
  const InodeId ino = state.ino;
  if (dispatch.policy == sched::Policy::fixed || data.size() < dispatch.min_bytes) {
    ++stats.pieces_home;
    co_return co_await send_write(*this, home, ino, index, offset, 0, data, sync, nullptr, false, origin, timeout);
  }
  const Placement placement = co_await place(sched::Piece{home, data.size()});
  if (placement.server == home) {
    ++stats.pieces_home;
    co_return co_await send_write(*this, home, ino, index, offset, 0, data, sync, &placement, false, origin,
                                  timeout);
  }
  // Away from home: the fragment first, then the entry that points to it;
  // the write succeeds only when both did.
  uint64_t fragment = 0;
  while (fragment == 0) fragment = rng();
  const ServerId holder = placement.server;
  // A fragment holder that does not answer soon is given up for home.
  const milliseconds away_timeout = std::max(milliseconds(2000), timeout / 5);
  Status st = co_await send_write(*this, holder, ino, index, offset, fragment, data, sync, &placement,
                                  false, origin, away_timeout);
  if (st.ok()) {
    state.fragment_servers.insert({index, holder.value});
    st = co_await send_redirect(*this, home, ino, index, offset, data.size(), holder, fragment, sync, origin);
    if (st.ok()) {
      ++stats.pieces_redirected;
      co_return st;
    }
  }
  spdlog::debug("redirect of {:x}.{} [{}, +{}) to server {} failed ({}); writing home", ino.value, index,
                offset, data.size(), holder.value, st.to_string());
  ++stats.fallbacks;
  co_return co_await send_write(*this, home, ino, index, offset, 0, data, sync, nullptr, true, origin, timeout);
}

}  // namespace pvfs
