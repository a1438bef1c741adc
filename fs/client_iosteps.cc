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
    step.last_io = rpc::Clock::now();
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
  it->second.last_io = rpc::Clock::now();
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
    io_ends.erase(job);
    io_start();
    return {};
  }
  if (verb == "end") {
    auto it = io_steps.find(job);
    if (it == io_steps.end())
      return Status(Errc::not_found, fmt::format("job {} has no I/O step on this client", job));
    io_ends[job] = it->second.written;
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

asio::awaitable<void> Client::Impl::io_sync() {
  const auto now = rpc::Clock::now();
  const milliseconds idle(config.iosched_idle_ms);
  for (auto it = io_steps.begin(); it != io_steps.end();) {
    const IoStep& s = it->second;
    bool close = false;
    if (!s.explicit_step && s.granted && idle.count() > 0 && s.in_flight == 0 && now - s.last_io >= idle) {
      close = true;
    } else if (s.explicit_step && s.granted && now - std::max(s.last_io, s.granted_at) >= io_lease) {
      spdlog::warn("job {}'s I/O step was begun but neither written nor ended for {} ms: ending it", it->first,
                   io_lease.count());
      close = true;
    }
    if (close) {
      io_ends[it->first] = s.written;
      it = io_steps.erase(it);
    } else {
      ++it;
    }
  }
  // What this message says, copied: the maps may change while it travels.
  std::vector<std::pair<std::string, IoStep>> claims(io_steps.begin(), io_steps.end());
  std::vector<std::pair<std::string, uint64_t>> ends(io_ends.begin(), io_ends.end());
  const uint64_t client = io_client;
  const auto sent = rpc::Clock::now();
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
      co_return;
    }
    if (reply.code() == Errc::not_supported && !io_fail_open) {
      io_fail_open = true;
      spdlog::warn("the metadata servers do not schedule I/O steps: writes go ahead unscheduled");
      co_return;
    }
    if (io_unreachable_since == rpc::Clock::time_point{}) io_unreachable_since = sent;
    if (!io_fail_open && sent - io_unreachable_since >= timeout) {
      io_fail_open = true;
      spdlog::warn("I/O scheduler unreachable for {} ms ({}): jobs' writes go ahead unscheduled until it answers",
                   timeout.count(), reply.status().to_string());
    }
    co_return;
  }
  if (io_fail_open) spdlog::info("I/O scheduler reachable again: jobs' writes wait for their tokens");
  io_fail_open = false;
  io_unreachable_since = {};
  auto body = (*reply)->body<mp::Reply>();
  if (!body.isIoStep()) co_return;
  auto r = body.getIoStep();
  if (r.getLeaseMs() > 0) io_lease = milliseconds(r.getLeaseMs());
  std::set<std::string> granted;
  for (auto g : r.getGranted()) granted.emplace(g.cStr());
  for (const auto& [job, bytes] : ends) io_ends.erase(job);
  for (const auto& [job, was] : claims) {
    auto it = io_steps.find(job);
    if (it == io_steps.end()) continue;
    IoStep& s = it->second;
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
}

asio::awaitable<void> Client::Impl::io_loop(std::shared_ptr<bool> alive_flag) {
  while (*alive_flag && (!io_steps.empty() || !io_ends.empty())) {
    co_await io_sync();
    if (!*alive_flag) co_return;
    bool waiting = !io_ends.empty();
    for (const auto& [job, s] : io_steps) waiting = waiting || !s.granted;
    milliseconds sleep = waiting ? kPendingPoll : io_lease / 3;
    if (config.iosched_idle_ms > 0) sleep = std::min(sleep, std::max(milliseconds(config.iosched_idle_ms / 4), kWaiterPoll));
    auto kick = io_kick;
    kick->expires_after(sleep);
    asio::error_code ec;
    co_await kick->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  if (*alive_flag) io_running = false;
}

}  // namespace pvfs
