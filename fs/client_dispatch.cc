// Write dispatch (Dai et al., two-choice with collaborative probe and
// preassign): pieces pending at the same moment share one probe round; the
// pure dispatcher (policy/dispatch) picks a server per piece; a piece sent away
// from home is written there as a fragment and then recorded in its home
// server's redirect log. Runs on the client's io thread.
#include <fmt/format.h>

#include "fs/client_impl.h"
#include "shared/log.h"
#include "shared/rpc/fan_out.h"

namespace pvfs {

namespace sp = proto::storage;

namespace {

void set_loads(capnp::List<sp::ServerLoad>::Builder list, const std::vector<sched::ServerLoad>& loads) {
  for (unsigned i = 0; i < loads.size(); ++i) {
    list[i].setServer(loads[i].server.value);
    list[i].setRequests(loads[i].requests);
    list[i].setBytes(loads[i].bytes);
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

  const auto plan = sched::plan_probes(dispatch, pieces, all, rng);
  const milliseconds fresh_for(config.load_ttl_ms);
  const bool preassign = dispatch.policy == sched::Policy::preassign;
  const uint64_t piece_bytes = [&] {
    uint64_t sum = 0;
    for (const auto& p : pieces) sum += p.bytes;
    return sum / pieces.size();
  }();
  const auto remembered = loads_heard.remembered(all, piece_bytes, rpc::Clock::now(), fresh_for);
  auto choice = sched::choose_round(dispatch, pieces, plan, remembered, all, rng);
  uint64_t round = 0;
  std::vector<sched::ServerLoad> loads;
  std::vector<sched::ServerLoad> reported;  // loads as servers reported them, for the servers to learn
  if (choice.source == sched::RoundSource::probe) {
    round = rng() | 1;
    ++stats.rounds;
    stats.probes += plan.probe.size();
    const auto started = rpc::Clock::now();
    std::vector<std::optional<sched::ServerLoad>> answers(plan.probe.size());
    std::vector<asio::awaitable<Status>> probes;
    for (size_t i = 0; i < plan.probe.size(); ++i) {
      probes.push_back([](Impl& impl, ServerId server, uint64_t round, uint64_t piece_bytes, bool preassign,
                          std::optional<sched::ServerLoad>& answer) -> asio::awaitable<Status> {
        rpc::OutMessage out;
        auto p = out.init_body<sp::Request>().initProbe();
        p.setRound(round);
        p.setPieceBytes(piece_bytes);
        p.setPreassign(preassign);
        auto reply = co_await impl.call_storage(server, out, {},
                                                milliseconds(impl.config.probe_timeout_ms));
        if (!reply) co_return Status{};  // not answering: not a candidate
        auto report = (*reply)->body<sp::Reply>().getLoad();
        auto self = report.getSelf();
        answer = sched::ServerLoad{server, self.getBytes() + self.getPreassigned(), self.getRequests()};
        const auto now = rpc::Clock::now();
        impl.loads_heard.heard(*answer, now);
        for (auto o : report.getOthers())
          if (impl.server_info.count(o.getServer()))
            impl.loads_heard.heard(sched::ServerLoad{ServerId(o.getServer()), o.getBytes() + o.getPreassigned(),
                                                     o.getRequests()},
                                   now - milliseconds(o.getAgeMs()));
        co_return Status{};
      }(*this, plan.probe[i], round, piece_bytes, preassign, answers[i]));
    }
    co_await rpc::run_all(std::move(probes));
    stats.probe_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(rpc::Clock::now() - started).count();
    std::set<uint32_t> known;
    for (const auto& a : answers)
      if (a) {
        loads.push_back(*a);
        known.insert(a->server.value);
      }
    // Loads the probed servers had heard of their peers, and what this
    // client heard itself: more choices at no extra round trip
    // (collaborative probe).
    if (dispatch.policy == sched::Policy::collab || dispatch.policy == sched::Policy::preassign) {
      for (const auto& l : loads_heard.fresh_loads(all, rpc::Clock::now(), fresh_for))
        if (!known.count(l.server.value)) loads.push_back(l);
    }
    // A straggler's queue is no longer than the others' when every writer
    // waits for its write; what sets it apart is how slowly it drains.
    reported = loads;
    if (preassign) loads = loads_heard.in_time(loads, piece_bytes, rpc::Clock::now(), fresh_for);
  }
  const auto chosen = choice.source == sched::RoundSource::memory
                          ? std::move(choice.chosen)
                          : sched::assign(dispatch, pieces, plan, loads, all, rng);
  if (choice.source != sched::RoundSource::none)
    spdlog::trace("dispatch round of {} pieces: {} ({})", pieces.size(),
                  choice.source == sched::RoundSource::probe ? "probed" : "from memory", choice.why);
  for (size_t i = 0; i < chosen.size(); ++i)
    if (chosen[i] != pieces[i].home) loads_heard.sent(chosen[i], pieces[i].bytes);

  // Tell the probed servers that got nothing, so their preassigned load
  // goes at once (fire and forget; they also expire it themselves).
  if (round && dispatch.policy == sched::Policy::preassign) {
    std::set<uint32_t> used;
    for (const auto& c : chosen) used.insert(c.value);
    for (const auto& server : plan.probe) {
      if (used.count(server.value)) continue;
      asio::co_spawn(io, [](Impl& impl, ServerId server, uint64_t round) -> asio::awaitable<void> {
        rpc::OutMessage out;
        out.init_body<sp::Request>().initProbeDone().setRound(round);
        co_await impl.call_storage(server, out, {}, milliseconds(impl.config.probe_timeout_ms));
      }(*this, server, round), asio::detached);
    }
  }
  auto seen = std::make_shared<const std::vector<sched::ServerLoad>>(std::move(reported));
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
    impl.loads_heard.heard(sched::ServerLoad{server, l.getBytes() + l.getPreassigned(), l.getRequests()},
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
