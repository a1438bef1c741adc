// The client's side of job I/O steps (pvfs-mds(8), "I/O steps"): which jobs
// writing through this client are in a step, holding their data requests
// until the delegate's scheduler grants the job a token, renewing the
// lease, and re-registering every step with whichever member is the
// delegate, so a new delegate rebuilds its queues from what clients say.
// A token is used only while the delegate confirmed it less than a lease
// ago: a delegate that takes over grants nothing new for a lease, so a
// token a former delegate gave is never used beside a conflicting new one.
// Runs on the client's io thread; nothing here is held across a co_await.
#include <fmt/format.h>

#include <charconv>

#include "fs/client_impl.h"
#include "shared/log.h"
#include "shared/request_limits.h"

namespace pvfs {

namespace mp = proto::mds;

namespace {

constexpr milliseconds kPendingPoll(50);  // how often a waiting step asks again
constexpr milliseconds kWaiterPoll(10);   // how often a held request looks at its step

long long ms_between(rpc::Clock::time_point from, rpc::Clock::time_point to) {
  if (from == rpc::Clock::time_point{} || to == rpc::Clock::time_point{}) return -1;
  return std::chrono::duration_cast<milliseconds>(to - from).count();
}

// One line per step this client leaves: where its time went, so that a
// hand-over's cost (token wait, the idle time before the end) can be read
// off the log. -1: did not happen (no token, no write).
void log_step_end(const std::string& job, const Client::Impl::IoStep& s, rpc::Clock::time_point now,
                  std::string_view why) {
  spdlog::info("job {}'s I/O step ended ({}): token {} ms after the claim, first write {} ms after the token, "
               "writes {} ms (first admitted to last done, {} requests, {} bytes), ended {} ms after the last",
               job, why, s.granted ? ms_between(s.opened, s.granted_at) : -1,
               s.requests ? ms_between(s.granted_at, s.first_write) : -1,
               s.requests ? ms_between(s.first_write, s.last_done) : -1, s.requests, s.written,
               s.requests ? ms_between(s.last_done, now) : -1);
}

std::optional<uint64_t> parse_u64(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

bool Client::Impl::io_token_valid(const IoStep& step, rpc::Clock::time_point now) const {
  return step.granted && now - step.confirmed < io_lease;
}

std::string Client::Impl::io_state(const std::string& job) const {
  auto it = io_steps.find(job);
  if (it == io_steps.end()) return "none";
  return io_token_valid(it->second, rpc::Clock::now()) ? "granted" : "pending";
}

void Client::Impl::io_start() {
  if (io_client == 0) {
    std::random_device rd;
    while (io_client == 0) io_client = (uint64_t{rd()} << 32) | rd();
  }
  if (io_lease.count() == 0) io_lease = milliseconds(config.iosched_lease_ms);
  if (!io_kick) io_kick = std::make_shared<asio::steady_timer>(io);
  if (io_running) {
    io_kick->cancel();
    return;
  }
  io_running = true;
  asio::co_spawn(io, io_loop(alive), asio::detached);
}

asio::awaitable<bool> Client::Impl::io_admit(const std::string& job, const Layout& layout, uint64_t bytes,
                                             bool write, uint64_t declared) {
  if (job.empty() || (!write && !config.iosched_reads)) co_return false;
  if (auto known = io_steps.find(job); known != io_steps.end()) {
    if (known->second.declared == 0) known->second.declared = declared;
  } else {
    if (!write || config.iosched_idle_ms == 0) co_return false;
    IoStep step;
    step.declared = declared;
    for (ServerId s : layout.servers) step.servers.push_back(s.value);
    std::sort(step.servers.begin(), step.servers.end());
    step.servers.erase(std::unique(step.servers.begin(), step.servers.end()), step.servers.end());
    step.last_io = step.opened = rpc::Clock::now();
    io_steps.emplace(job, std::move(step));
    spdlog::debug("I/O step of job {} opened by its first write", job);
    io_start();
  }
  asio::steady_timer poll(io);
  for (;;) {
    auto it = io_steps.find(job);
    if (it == io_steps.end()) co_return false;  // ended meanwhile (user.pvfs.iostep end)
    const auto now = rpc::Clock::now();
    it->second.last_io = now;
    if (io_token_valid(it->second, now) || io_fail_open) {
      it->second.written += write ? bytes : 0;
      ++it->second.in_flight;
      if (it->second.requests++ == 0) it->second.first_write = now;
      co_return true;
    }
    poll.expires_after(kWaiterPoll);
    asio::error_code ec;
    co_await poll.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (!*alive) co_return false;
  }
}

void Client::Impl::io_done(const std::string& job) {
  auto it = io_steps.find(job);
  if (it == io_steps.end()) return;  // ended meanwhile (user.pvfs.iostep end, lease)
  if (it->second.in_flight > 0) --it->second.in_flight;
  it->second.last_io = it->second.last_done = rpc::Clock::now();
  // The loop times the step's end from this completion (idle_ms, or at
  // once when the declared bytes are all written).
  if (it->second.in_flight == 0 && !it->second.explicit_step && io_kick) io_kick->cancel();
}

Status Client::Impl::io_command(const std::string& caller_job, std::string_view command) {
  std::string verb;
  std::string job = caller_job;
  std::optional<uint64_t> bytes;
  std::optional<std::vector<uint32_t>> servers;
  size_t pos = 0;
  while (pos < command.size()) {
    while (pos < command.size() && (command[pos] == ' ' || command[pos] == '\n')) ++pos;
    size_t end = command.find_first_of(" \n", pos);
    if (end == std::string_view::npos) end = command.size();
    const std::string_view word = command.substr(pos, end - pos);
    pos = end;
    if (word.empty()) continue;
    const size_t eq = word.find('=');
    if (verb.empty() && eq == std::string_view::npos) {
      verb = std::string(word);
      continue;
    }
    if (eq == std::string_view::npos)
      return Status(Errc::invalid_argument, fmt::format("user.pvfs.iostep: unexpected \"{}\"", word));
    const std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "job") {
      if (value.empty() || value.size() > kMaxJobIdBytes)
        return Status(Errc::invalid_argument, "user.pvfs.iostep: job must be 1 to 64 bytes");
      job = std::string(value);
    } else if (key == "bytes") {
      bytes = parse_u64(value);
      if (!bytes) return Status(Errc::invalid_argument, "user.pvfs.iostep: bytes must be a whole number");
    } else if (key == "servers") {
      servers.emplace();
      size_t p = 0;
      while (p <= value.size() && !value.empty()) {
        size_t comma = value.find(',', p);
        if (comma == std::string_view::npos) comma = value.size();
        auto id = parse_u64(value.substr(p, comma - p));
        if (!id || *id > UINT32_MAX)
          return Status(Errc::invalid_argument, "user.pvfs.iostep: servers must be ids separated by commas");
        servers->push_back(static_cast<uint32_t>(*id));
        p = comma + 1;
      }
    } else {
      return Status(Errc::invalid_argument, fmt::format("user.pvfs.iostep: unknown key \"{}\"", key));
    }
  }
  if (job.empty()) return Status(Errc::invalid_argument, "user.pvfs.iostep: no job id (give job=...)");
  if (verb == "begin") {
    IoStep& step = io_steps[job];
    step.explicit_step = true;
    if (bytes) step.declared = *bytes;
    if (servers) {
      std::sort(servers->begin(), servers->end());
      servers->erase(std::unique(servers->begin(), servers->end()), servers->end());
      step.servers = std::move(*servers);
    }
    step.last_io = rpc::Clock::now();
    if (step.opened == rpc::Clock::time_point{}) step.opened = step.last_io;
    io_ends.erase(job);
    io_start();
    return {};
  }
  if (verb == "end") {
    auto it = io_steps.find(job);
    if (it == io_steps.end())
      return Status(Errc::not_found, fmt::format("job {} has no I/O step on this client", job));
    io_ends[job] = it->second.written;
    log_step_end(job, it->second, rpc::Clock::now(), "end");
    io_steps.erase(it);
    io_start();
    return {};
  }
  return Status(Errc::invalid_argument, "user.pvfs.iostep: say \"begin\" or \"end\"");
}

asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> Client::Impl::call_delegate(
    const std::function<void(rpc::OutMessage&)>& build) {
  std::vector<uint32_t> order;
  if (io_delegate) order.push_back(*io_delegate);
  for (const auto& m : config.mds)
    if (!io_delegate || m.id != *io_delegate) order.push_back(m.id);
  Status last(Errc::unavailable, "no metadata server hosts the I/O scheduler");
  for (uint32_t id : order) {
    rpc::Peer* peer = mds_peer(MdsId(id));
    if (!peer) continue;
    auto conn = co_await peer->connection();
    if (!conn) {
      last = conn.status();
      continue;
    }
    rpc::OutMessage out;
    build(out);
    auto reply = co_await (*conn)->call(out, {}, std::min(timeout, milliseconds(2000)));
    if (reply) {
      io_delegate = id;
      co_return reply;
    }
    last = reply.status();
    // A member that is not the delegate says so; any other answer is the
    // scheduler's.
    if (reply.code() != Errc::unavailable && reply.code() != Errc::timeout) co_return last;
  }
  io_delegate.reset();
  co_return last;
}

namespace {

// A transparent step whose declared bytes this client has all written,
// none in flight: it is over without waiting idle_ms. A job spread over
// several clients declares the whole step, more than any one of them
// writes, so its steps still end by idle time.
bool declared_done(const Client::Impl::IoStep& s) {
  return !s.explicit_step && s.declared > 0 && s.written >= s.declared && s.in_flight == 0;
}

}  // namespace

void Client::Impl::io_close_finished(rpc::Clock::time_point now) {
  const milliseconds idle(config.iosched_idle_ms);
  for (auto it = io_steps.begin(); it != io_steps.end();) {
    const IoStep& s = it->second;
    const char* why = nullptr;
    if (!s.explicit_step && s.granted && declared_done(s)) {
      why = "declared bytes written";
    } else if (!s.explicit_step && s.granted && idle.count() > 0 && s.in_flight == 0 && now - s.last_io >= idle) {
      why = "idle";
    } else if (s.explicit_step && s.granted && now - std::max(s.last_io, s.granted_at) >= io_lease) {
      spdlog::warn("job {}'s I/O step was begun but neither written nor ended for {} ms: ending it", it->first,
                   io_lease.count());
      why = "lease";
    }
    if (why) {
      log_step_end(it->first, s, now, why);
      io_ends[it->first] = s.written;
      it = io_steps.erase(it);
    } else {
      ++it;
    }
  }
}

rpc::Clock::time_point Client::Impl::io_next_due(rpc::Clock::time_point now) const {
  const milliseconds idle(config.iosched_idle_ms);
  // A waiting step asks every 50 ms, or every idle_ms/4 when shorter.
  milliseconds poll = kPendingPoll;
  if (idle.count() > 0) poll = std::min(poll, std::max(idle / 4, kWaiterPoll));
  // Renewals: three per lease.
  auto due = io_last_sync + std::max(io_lease / 3, kWaiterPoll);
  // Ends to tell, steps the delegate has not heard of: at once, unless the
  // last message went unanswered (then at the poll).
  bool news = !io_ends.empty();
  for (const auto& [job, s] : io_steps) {
    news = news || !s.told;
    if (!s.granted) due = std::min(due, io_last_sync + poll);
    if (s.explicit_step) {
      if (s.granted) due = std::min(due, std::max(s.last_io, s.granted_at) + io_lease);
    } else if (s.granted && declared_done(s)) {
      due = now;
    } else if (s.granted && idle.count() > 0) {
      // Nothing in flight: idle_ms after the last completion; otherwise
      // io_done() wakes the loop when the last one completes.
      if (s.in_flight == 0) due = std::min(due, s.last_io + idle);
    }
  }
  if (news) due = std::min(due, io_last_failed ? io_last_sync + poll : now);
  return due;
}

asio::awaitable<bool> Client::Impl::io_sync() {
  // What this message says, copied: the maps may change while it travels.
  std::vector<std::pair<std::string, IoStep>> claims(io_steps.begin(), io_steps.end());
  std::vector<std::pair<std::string, uint64_t>> ends(io_ends.begin(), io_ends.end());
  const uint64_t client = io_client;
  const auto sent = rpc::Clock::now();
  io_last_sync = sent;
  io_last_failed = true;  // until it is answered
  auto reply = co_await call_delegate([&](rpc::OutMessage& out) {
    auto req = out.init_body<mp::Request>().initIoStep();
    req.setClient(client);
    auto c = req.initClaims(static_cast<unsigned>(claims.size()));
    for (size_t i = 0; i < claims.size(); ++i) {
      auto o = c[static_cast<unsigned>(i)];
      o.setJob(claims[i].first);
      o.setDeclaredBytes(claims[i].second.declared);
      auto servers = o.initServers(static_cast<unsigned>(claims[i].second.servers.size()));
      for (size_t k = 0; k < claims[i].second.servers.size(); ++k)
        servers.set(static_cast<unsigned>(k), claims[i].second.servers[k]);
      o.setHoldsToken(claims[i].second.granted);
      o.setBytesWritten(claims[i].second.written);
    }
    auto e = req.initEnds(static_cast<unsigned>(ends.size()));
    for (size_t i = 0; i < ends.size(); ++i) {
      e[static_cast<unsigned>(i)].setJob(ends[i].first);
      e[static_cast<unsigned>(i)].setBytesWritten(ends[i].second);
    }
  });
  if (!reply) {
    if (reply.code() == Errc::not_found) {
      // An end the delegate does not know (it took over since): nothing
      // to end. Claims are sent again without them.
      for (const auto& [job, bytes] : ends) io_ends.erase(job);
      io_last_failed = false;
      co_return false;
    }
    if (reply.code() == Errc::not_supported && !io_fail_open) {
      io_fail_open = true;
      spdlog::warn("the metadata servers do not schedule I/O steps: writes go ahead unscheduled");
      co_return false;
    }
    if (io_unreachable_since == rpc::Clock::time_point{}) io_unreachable_since = sent;
    if (!io_fail_open && sent - io_unreachable_since >= timeout) {
      io_fail_open = true;
      spdlog::warn("I/O scheduler unreachable for {} ms ({}): jobs' writes go ahead unscheduled until it answers",
                   timeout.count(), reply.status().to_string());
    }
    co_return false;
  }
  if (io_fail_open) spdlog::info("I/O scheduler reachable again: jobs' writes wait for their tokens");
  io_fail_open = false;
  io_unreachable_since = {};
  io_last_failed = false;
  auto body = (*reply)->body<mp::Reply>();
  if (!body.isIoStep()) co_return true;
  auto r = body.getIoStep();
  if (r.getLeaseMs() > 0) io_lease = milliseconds(r.getLeaseMs());
  std::set<std::string> granted;
  for (auto g : r.getGranted()) granted.emplace(g.cStr());
  for (const auto& [job, bytes] : ends) io_ends.erase(job);
  for (const auto& [job, was] : claims) {
    auto it = io_steps.find(job);
    if (it == io_steps.end()) continue;
    IoStep& s = it->second;
    s.told = true;
    if (granted.contains(job)) {
      if (!s.granted) {
        s.granted_at = sent;
        spdlog::debug("job {} holds an I/O token", job);
      }
      s.granted = true;
      s.confirmed = sent;
    } else {
      s.granted = false;
    }
  }
  co_return true;
}

asio::awaitable<void> Client::Impl::io_loop(std::shared_ptr<bool> alive_flag) {
  while (*alive_flag && (!io_steps.empty() || !io_ends.empty())) {
    auto now = rpc::Clock::now();
    io_close_finished(now);
    if (io_next_due(now) <= now) {
      co_await io_sync();
      if (!*alive_flag) co_return;
      if (io_steps.empty() && io_ends.empty()) break;
      now = rpc::Clock::now();
    }
    // Until the next thing to do; io_start() and io_done() wake it sooner.
    const auto due = io_next_due(now);
    auto kick = io_kick;
    kick->expires_after(std::max(due - now, rpc::Clock::duration(std::chrono::milliseconds(1))));
    asio::error_code ec;
    co_await kick->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  if (*alive_flag) io_running = false;
}

}  // namespace pvfs
