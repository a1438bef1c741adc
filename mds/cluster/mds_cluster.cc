// MdsCluster: the map, heartbeats, the delegate, the gate and status.
// File set moves are in fileset_moves.cc.
#include "mds/cluster/mds_cluster.h"
#include "mds/wall_clock.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "shared/log.h"
#include "shared/rpc/blocking.h"
#include "shared/rpc/convert.h"
#include "shared/rpc/message.h"

namespace pvfs::mds {

namespace mp = proto::mds;
using std::chrono::milliseconds;

namespace {

constexpr const char* kMapFile = "anu-map";
constexpr const char* kQosFile = "qos-goals";  // mds/qos_goals.h
constexpr const char* kQosModelsFile = "qos-models";  // mds/qos_models.h
constexpr size_t kKeptMoves = 64;
constexpr size_t kKeptTunings = 32;

using rpc::text;

MembershipOptions membership_options(const Config& config, placement::Policy policy) {
  MembershipOptions o;
  o.dead_after = milliseconds(config.mds_dead_after_ms);
  o.lease = milliseconds(config.mds_lease());
  o.tune_interval = milliseconds(config.mds_tune_interval_ms);
  o.policy = policy;
  o.tuner = config.anu;
  return o;
}

std::vector<MdsId> member_ids(const Config& config) {
  std::vector<MdsId> out;
  for (const auto& m : config.mds) out.push_back(MdsId(m.id));
  return out;
}

// A peer's backlog age as the tuner may take it: a negative or non-finite
// figure (a broken peer) counts as no backlog rather than stalling tuning.
double sane_age(double ms) { return std::isfinite(ms) && ms >= 0 ? ms : 0; }
// The same for a busy fraction: outside [0, 1] counts as unknown.
double sane_busy(double busy) { return busy >= 0 && busy <= 1 ? busy : 0; }

// A peer's last interval from its heartbeat reply. A file set named twice
// counts once with both counts.
IntervalReport interval_from_wire(mp::Reply::Latency::Reader l) {
  IntervalReport r;
  r.seq = l.getSeq();
  r.latency_ms = l.getLatencyMs();
  r.requests = l.getRequests();
  r.backlog = l.getBacklog();
  r.backlog_age_ms = sane_age(l.getBacklogAgeMs());
  r.busy = sane_busy(l.getBusy());
  r.service_ms = sane_age(l.getServiceMs());
  r.interval_ms = sane_age(l.getIntervalMs());
  std::map<FileSetId, uint64_t> sets;
  for (auto s : l.getSets()) sets[FileSetId(s.getSet())] += s.getRequests();
  for (const auto& [set, requests] : sets) r.sets.push_back({set, requests});
  return r;
}

// The arrivals per file set and the length of `r`, as interval_from_wire() reads them.
void fill_sets(mp::Reply::Latency::Builder l, const IntervalReport& r) {
  auto list = l.initSets(static_cast<unsigned>(r.sets.size()));
  for (size_t i = 0; i < r.sets.size(); ++i) {
    list[static_cast<unsigned>(i)].setSet(r.sets[i].set.value);
    list[static_cast<unsigned>(i)].setRequests(r.sets[i].requests);
  }
  l.setIntervalMs(r.interval_ms);
}

}  // namespace

MdsCluster::MdsCluster(asio::io_context& io, const Config& config, const Secret& key, MdsId self,
                       FileSetCatalog& filesets, asio::thread_pool& disk_pool, ClusterOptions options,
                       const Clock& clock, rpc::Network& network)
    : io_(io),
      config_(config),
      clock_(clock),
      network_(network),
      key_(key),
      self_(self),
      filesets_(filesets),
      disk_pool_(disk_pool),
      options_(options),
      policy_(config.mds_placement),
      membership_(member_ids(config), self, clock.now(), membership_options(config, policy_)),
      started_(clock.now()),
      meter_(clock.now(), milliseconds(config.mds_tune_interval_ms)),
      heartbeat_timer_(io),
      reconcile_timer_(io),
      fence_timer_(io) {}

Status MdsCluster::load() {
  // A damaged goals file costs this member its copy, not its start: the
  // other members' heartbeats bring the goals back.
  if (auto goals = load_goals(filesets_.data_dir() / kQosFile)) qos_ = std::move(*goals);
  else spdlog::error("QoS goals not loaded (the other members' copies replace them): {}", goals.status().to_string());
  if (auto models = load_models(filesets_.data_dir() / kQosModelsFile)) qos_models_ = std::move(*models);
  else
    spdlog::error("QoS profiles and models not loaded (the other members' copies replace them; pvfs-ctl qos "
                  "train rebuilds a model from a profile): {}",
                  models.status().to_string());
  const auto path = filesets_.data_dir() / kMapFile;
  std::ifstream in(path);
  if (in) {
    std::string line;
    std::getline(in, line);
    auto saved = placement::AnuMap::parse(line);
    if (!saved) return Status(saved.code(), fmt::format("{}: {}", path.string(), saved.status().detail()));
    map_ = std::move(*saved);
    create_root_ = false;
    // A cluster stopped before its members first met has a map but no
    // root yet: it is still fresh, and make_root_if_fresh() decides.
    root_pending_ = config_.mds.size() > 1 && map_.version() == 1 && !filesets_.has(FileSetId(0));
    // A member no longer in the config leaves the map at once.
    for (MdsId m : map_.servers())
      if (!config_.find_mds(m.value) && map_.servers().size() > 1)
        if (auto next = map_.remove_server(m)) map_ = std::move(*next);
    return {};
  }
  auto first = placement::AnuMap::uniform(member_ids(config_));
  if (!first) return first.status();
  map_ = std::move(*first);
  // A lone MDS makes the root on a fresh data dir (one from before clusters
  // has it already). In a cluster the root is made only once every member
  // has answered (see make_root_if_fresh()): a member added to an existing
  // cluster must not make a second one.
  if (config_.mds.size() == 1) create_root_ = true;
  else root_pending_ = !filesets_.has(FileSetId(0));
  return save_map();
}

Status MdsCluster::save_map() const {
  const auto path = filesets_.data_dir() / kMapFile;
  const auto tmp = filesets_.data_dir() / (std::string(kMapFile) + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << map_.serialize() << "\n";
    if (!out) return Status(Errc::io, "cannot write " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status(Errc::io, "cannot rename " + tmp.string() + ": " + ec.message());
  return {};
}

void MdsCluster::start() {
  spdlog::info("MDS cluster: {} member(s), placement {}, map version {}", config_.mds.size(),
               placement::policy_name(policy_), map_.version());
  // A lone MDS runs it too: it pings nobody, but closes its latency
  // intervals for pvfs-ctl mds.
  asio::co_spawn(io_, heartbeat_loop(), asio::detached);
  asio::co_spawn(io_, reconcile_loop(), asio::detached);
  if (config_.mds.size() > 1) asio::co_spawn(io_, fence_loop(), asio::detached);
}

void MdsCluster::stop() {
  stopped_ = true;
  heartbeat_timer_.cancel();
  reconcile_timer_.cancel();
  fence_timer_.cancel();
  for (auto& [id, p] : peers_) p->close();
}

MdsId MdsCluster::owner(uint16_t set) const { return placement::owner_of(map_, policy_, FileSetId(set)); }

rpc::Peer& MdsCluster::peer(MdsId member) {
  auto& p = peers_[member];
  if (!p) {
    const DaemonEntry* entry = config_.find_mds(member.value);
    Endpoint address = entry ? entry->address : Endpoint{"127.0.0.1", 0};
    p = std::make_unique<rpc::Peer>(io_.get_executor(), address,
                                    rpc::Auth(key_, {rpc::Kind::mds, self_.value}, config_.encrypt),
                                    milliseconds(config_.connect_timeout_ms), network_);
  }
  return *p;
}

// ---- serving ---------------------------------------------------------------

Status MdsCluster::admit(FileSetId set) {
  const bool lone = config_.mds.size() == 1;
  if (!lone) {
    const auto now = clock_.now();
    if (!membership_.ready(now)) return Status(Errc::again, "this metadata server is joining the cluster");
    // Checked on every request, not only by the fence loop: after a pause
    // the requests that queued up may run before any timer does.
    if (fence_ != Fence::serving || !membership_.lease_valid(map_, now)) {
      if (fence_ == Fence::serving) fence_timer_.cancel();
      return Status(Errc::again, fmt::format("mds {} holds no lease: it has not heard from the delegate "
                                             "(or a quorum) lately",
                                             self_.value));
    }
  }
  const MdsId by_map = owner(set.value);
  if (by_map != self_)
    return Status(Errc::stale_map, fmt::format("file set {} is served by mds {} (map version {})",
                                               set.value, by_map.value, map_.version()));
  if (leaving_.count(set.value) || committed_.count(set.value))
    return Status(Errc::again, fmt::format("file set {} is moving", set.value));
  if (!filesets_.has(set)) {
    if (lone) return Status(Errc::not_found, fmt::format("no file set {}", set.value));
    return Status(Errc::again, fmt::format("file set {} is not here yet", set.value));
  }
  return {};
}

asio::awaitable<void> MdsCluster::emulate(SteadyTime arrival) {
  if (options_.slowdown <= 0) co_return;
  const auto cost = std::chrono::duration_cast<SteadyTime::duration>(
      std::chrono::duration<double, std::micro>(options_.slowdown * options_.service_us));
  const SteadyTime begin = std::max(arrival, next_free_);
  next_free_ = begin + cost;
  meter_.serving(begin, next_free_);  // the emulated server's busy time is what the tuner balances
  asio::steady_timer timer(io_, next_free_);
  asio::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

void MdsCluster::record(std::chrono::nanoseconds latency) { meter_.record(latency); }

void MdsCluster::close_interval() {
  // A real member's busy time is its event loop's work on requests: this
  // thread's CPU time, which covers every request's handling and its LMDB
  // transaction (the periodic and fsync-driven flushes run on the sync
  // pool), up to the time a request was outstanding (IntervalMeter::worked).
  // An emulated member's is its emulated server's (emulate()).
  if (!emulating()) {
    timespec ts{};
    if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) {
      const auto cpu = std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
      if (loop_cpu_) meter_.worked(cpu - *loop_cpu_);
      loop_cpu_ = cpu;
    }
  }
  if (auto report = meter_.close(clock_.now())) membership_.own_report(*report);
}

// ---- fencing ---------------------------------------------------------------------

bool MdsCluster::lease_lapsed(SteadyTime now) const {
  // A member just started has had no chance to get a lease yet.
  return !membership_.lease_valid(map_, now) && now - started_ > milliseconds(config_.mds_lease());
}

asio::awaitable<void> MdsCluster::fence_loop() {
  const auto period = milliseconds(std::max<uint32_t>(config_.heartbeat_interval_ms / 4, 20));
  while (!stopped_) {
    const auto now = clock_.now();
    if (fence_ == Fence::serving && lease_lapsed(now)) co_await fence();
    else if (fence_ == Fence::fenced && membership_.lease_valid(map_, now)) unfence();
    fence_timer_.expires_after(period);
    asio::error_code ec;
    co_await fence_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

asio::awaitable<void> MdsCluster::fence() {
  fence_ = Fence::fencing;
  spdlog::warn("no lease: mds {} has not heard from the delegate (or a quorum) for {} ms; it stops "
               "serving and lets go of its file sets",
               self_.value, config_.mds_lease());
  // What was admitted finishes under the locks, so a member that takes a
  // file set over copies every acknowledged change.
  auto busy = [this] {
    if (shipping_ > 0) return true;
    for (const auto& [set, n] : in_flight_)
      if (n > 0) return true;
    return false;
  };
  const auto deadline = clock_.now() + milliseconds(config_.rpc_timeout_ms);
  while (busy() && !stopped_) {
    if (clock_.now() > deadline) {
      spdlog::error("fencing: requests still in progress after {} ms; keeping the file sets locked",
                    config_.rpc_timeout_ms);
      break;
    }
    asio::steady_timer t(io_, milliseconds(2));
    asio::error_code ec;
    co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  if (busy()) {
    fence_ = Fence::serving;  // the loop tries again; admit() keeps refusing without a lease
    co_return;
  }
  // A named list: it must outlive every co_await in the loop.
  const auto stores = filesets_.stores();
  for (const auto& store : stores) {
    Status synced = co_await rpc::run_blocking(disk_pool_, [s = store.get()] { return s->sync(); });
    if (!synced.ok()) spdlog::error("fencing: syncing file set {}: {}", store->fileset().value, synced.to_string());
  }
  filesets_.release_locks();
  fence_ = Fence::fenced;
}

void MdsCluster::unfence() {
  for (uint16_t set : filesets_.reacquire_locks()) {
    spdlog::warn("file set {} was taken over while mds {} was fenced; it no longer serves it", set,
                 self_.value);
    leaving_.erase(set);
    committed_.erase(set);
    ship_ids_.erase(set);
    ship_to_.erase(set);
  }
  fence_ = Fence::serving;
  spdlog::info("lease back: mds {} serves again", self_.value);
  reconcile_wanted_ = true;
  reconcile_timer_.cancel();
}

// ---- heartbeats and the delegate -----------------------------------------------

asio::awaitable<void> MdsCluster::heartbeat_loop() {
  while (!stopped_) {
    close_interval();
    for (const auto& m : config_.mds) {
      const MdsId member(m.id);
      if (member == self_ || pinging_.count(member)) continue;
      pinging_.insert(member);
      asio::co_spawn(io_, ping(member), asio::detached);
    }
    make_root_if_fresh();
    const auto now = clock_.now();
    // The delegate's turn (a no-op on the other members).
    auto next = membership_.step(map_, now);
    if (next) next->map.set_issuer(self_);
    if (auto tuning = membership_.take_tuning()) {
      if (tuning->taken < 1)
        spdlog::info("delegate: the overload guard took {} of the tuning step: the rest would overload a member "
                     "with the file sets it gained",
                     tuning->taken == 0 ? std::string("none") : fmt::format("1/{:.0f}", 1 / tuning->taken));
      if (const auto& h = tuning->hand_over)
        spdlog::info("delegate: mds {}'s queue stands: it hands partition {} of {} over to mds {}", h->from.value,
                     h->index, h->partitions, h->to.value);
      tunings_.push_back({clock_.unix_ms(), next ? next->map.version() : map_.version(), std::move(*tuning)});
      if (tunings_.size() > kKeptTunings) tunings_.pop_front();
    }
    if (next) {
      const char* why = next->why == MapChange::removed ? "removed"
                        : next->why == MapChange::added ? "added"
                                                        : "tuned";
      spdlog::info("delegate: map version {} ({} mds {})", next->map.version(), why,
                   next->member.value);
      if (adopt(next->map, "the delegate (this member)"))
        asio::co_spawn(io_, broadcast(map_.serialize()), asio::detached);
    }
    heartbeat_timer_.expires_after(milliseconds(config_.heartbeat_interval_ms));
    asio::error_code ec;
    co_await heartbeat_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

void MdsCluster::make_root_if_fresh() {
  if (!root_pending_ || peer_sets_.size() + 1 < config_.mds.size()) return;
  root_pending_ = false;
  // Every member answered: a fresh cluster is one whose map never changed
  // and where nobody holds file set 0.
  for (const auto& [member, sets] : peer_sets_)
    if (std::find(sets.begin(), sets.end(), 0) != sets.end()) return;
  if (map_.version() != 1 || owner(0) != self_ || filesets_.has(FileSetId(0))) return;
  auto made = filesets_.create(FileSetId(0), wall_now(clock_));
  if (made) spdlog::info("a fresh cluster: made the namespace root (file set 0)");
  else spdlog::error("making the namespace root: {}", made.status().to_string());
}

asio::awaitable<void> MdsCluster::ping(MdsId member) {
  rpc::OutMessage out;
  auto p = out.init_body<mp::Request>().initPeerPing();
  p.setFrom(self_.value);
  p.setMap(map_.serialize());
  fill_setting(p.initSetting(), member);
  // Shorter than the failure timeout, so a hung member is not counted alive.
  const auto timeout = milliseconds(std::max<uint32_t>(config_.mds_dead_after_ms / 2, 100));
  const auto sent = clock_.now();
  auto reply = co_await peer(member).call(out, {}, timeout);
  pinging_.erase(member);
  if (stopped_) co_return;
  if (!reply) {
    // No answer in time: after a partition heals, TCP resends on the old
    // connection only when its back-off (seconds, doubling while cut off)
    // runs out, and until then this member would hold no lease from that
    // peer. The next heartbeat connects afresh instead.
    if (reply.code() == Errc::timeout) peer(member).close();
    co_return;
  }
  membership_.answered(member, sent);
  auto state = (*reply)->body<mp::Reply>().getPeer();
  membership_.heard(member, clock_.now(), interval_from_wire(state.getInterval()));
  learn_iosched_setting(state.getSetting());
  models_held_[member] = state.getSetting().getQosModelsVersion();
  auto& sets = peer_sets_[member];
  sets.clear();
  for (uint16_t s : state.getFileSets()) sets.push_back(s);
  if (auto theirs = placement::AnuMap::parse(text(state.getMap())))
    adopt(*theirs, "a peer's heartbeat reply");
}

asio::awaitable<void> MdsCluster::broadcast(std::string map_text) {
  for (const auto& m : config_.mds) {
    if (MdsId(m.id) == self_) continue;
    rpc::OutMessage out;
    out.init_body<mp::Request>().setSetMap(map_text);
    (void)co_await peer(MdsId(m.id)).call(out, {}, milliseconds(config_.heartbeat_interval_ms));
  }
}

bool MdsCluster::adopt(const placement::AnuMap& map, const char* from) {
  if (!placement::supersedes(map, map_)) return false;
  const placement::AnuMap old = std::move(map_);
  map_ = map;
  if (Status st = save_map(); !st.ok()) spdlog::warn("saving the map: {}", st.to_string());
  spdlog::info("map version {} from {}: {}", map_.version(), from, map_.serialize());
  // The reconcile loop ships what this member no longer owns and takes
  // over the file sets of members that left the map.
  reconcile_wanted_ = true;
  reconcile_timer_.cancel();
  return true;
}

// ---- the cluster's messages -------------------------------------------------------

void MdsCluster::answer_ping(MdsId from, std::string_view their_map, mp::Reply::PeerState::Builder state) {
  membership_.heard(from, clock_.now(), {});
  if (auto theirs = placement::AnuMap::parse(their_map)) adopt(*theirs, "a peer's heartbeat");
  state.setId(self_.value);
  state.setMap(map_.serialize());
  state.setReady(membership_.ready(clock_.now()));
  auto ids = filesets_.ids();
  auto list = state.initFileSets(static_cast<unsigned>(ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) list.set(static_cast<unsigned>(i), ids[i]);
  auto l = state.initInterval();
  l.setServer(self_.value);
  l.setSeq(meter_.last().seq);
  l.setLatencyMs(meter_.last().latency_ms);
  l.setRequests(meter_.last().requests);
  l.setBacklog(meter_.last().backlog);
  l.setBacklogAgeMs(meter_.last().backlog_age_ms);
  l.setBusy(meter_.last().busy);
  l.setServiceMs(meter_.last().service_ms);
  fill_sets(l, meter_.last());
  fill_setting(state.initSetting(), from);
}

void MdsCluster::share_iosched_policy(std::string policy) {
  iosched_setting_.policy = std::move(policy);
  ++iosched_setting_.version;
}

void MdsCluster::fill_setting(mp::Request::ClusterSetting::Builder out, std::optional<MdsId> to) const {
  out.setIoschedPolicy(iosched_setting_.policy);
  out.setVersion(iosched_setting_.version);
  if (qos_.version > 0) {
    out.setQos(serialize(qos_));
    out.setQosVersion(qos_.version);
  }
  out.setQosModelsVersion(qos_models_.version);
  if (qos_models_.version == 0) return;
  const auto held = to ? models_held_.find(*to) : models_held_.end();
  if (!to || held == models_held_.end() || held->second < qos_models_.version) out.setQosModels(serialize(qos_models_));
}

Status MdsCluster::share_qos_models(QosModels next) {
  next.version = qos_models_.version + 1;
  if (Status st = save_models(filesets_.data_dir() / kQosModelsFile, next); !st.ok()) return st;
  qos_models_ = std::move(next);
  return {};
}

Status MdsCluster::share_qos(QosGoals next) {
  next.version = qos_.version + 1;
  if (Status st = save_goals(filesets_.data_dir() / kQosFile, next); !st.ok()) return st;
  qos_ = std::move(next);
  return {};
}

asio::awaitable<uint32_t> MdsCluster::replicate_qos() {
  const uint64_t version = qos_.version;
  const uint64_t models_version = qos_models_.version;
  uint32_t holders = 1;
  for (MdsId member : membership_.alive_members(clock_.now())) {
    if (member == self_) continue;
    rpc::OutMessage out;
    auto p = out.init_body<mp::Request>().initPeerPing();
    p.setFrom(self_.value);
    p.setMap(map_.serialize());
    fill_setting(p.initSetting(), std::nullopt);
    auto reply = co_await peer(member).call(out, {}, milliseconds(std::max<uint32_t>(config_.mds_dead_after_ms / 2, 100)));
    if (stopped_) co_return holders;
    if (!reply) continue;
    const auto theirs = (*reply)->body<mp::Reply>().getPeer().getSetting();
    models_held_[member] = theirs.getQosModelsVersion();
    if (theirs.getQosVersion() >= version && theirs.getQosModelsVersion() >= models_version) ++holders;
  }
  co_return holders;
}

void MdsCluster::learn_qos(mp::Request::ClusterSetting::Reader theirs) {
  if (theirs.getQosVersion() <= qos_.version) return;
  auto goals = parse_goals(text(theirs.getQos()));
  if (!goals || goals->version != theirs.getQosVersion()) return;  // a damaged copy: the next heartbeat
  if (Status st = save_goals(filesets_.data_dir() / kQosFile, *goals); !st.ok())
    spdlog::warn("saving the QoS goals: {}", st.to_string());
  qos_ = std::move(*goals);
}

void MdsCluster::learn_qos_models(mp::Request::ClusterSetting::Reader theirs) {
  if (theirs.getQosModelsVersion() <= qos_models_.version || !theirs.hasQosModels()) return;
  auto models = parse_models(text(theirs.getQosModels()));
  if (!models || models->version != theirs.getQosModelsVersion()) return;  // a damaged copy: the next heartbeat
  if (Status st = save_models(filesets_.data_dir() / kQosModelsFile, *models); !st.ok())
    spdlog::warn("saving the QoS profiles and models: {}", st.to_string());
  qos_models_ = std::move(*models);
}

void MdsCluster::learn_iosched_setting(mp::Request::ClusterSetting::Reader theirs) {
  learn_qos(theirs);
  learn_qos_models(theirs);
  const std::string_view policy = text(theirs.getIoschedPolicy());
  const bool newer = theirs.getVersion() > iosched_setting_.version ||
                     (theirs.getVersion() == iosched_setting_.version && policy < iosched_setting_.policy);
  if (!newer || policy.size() > 64) return;  // a policy name is short; anything longer is not one
  iosched_setting_ = {std::string(policy), theirs.getVersion()};
}

Status MdsCluster::take_map(std::string_view map_text) {
  auto map = placement::AnuMap::parse(map_text);
  if (!map) return map.status();
  adopt(*map, "the delegate");
  return Status{};
}

Status MdsCluster::detach_request(FileSetId set) {
  if (Status st = admit(set); !st.ok()) return st;
  if (!detach_local) return Status(Errc::not_supported, "no detach handler");
  return detach_local(set);
}

MdsId MdsCluster::delegate() const {
  if (config_.mds.size() == 1) return self_;
  return membership_.delegate(map_, clock_.now());
}

bool MdsCluster::acting_delegate() const {
  if (config_.mds.size() == 1) return true;
  const auto now = clock_.now();
  return fence_ == Fence::serving && membership_.ready(now) && membership_.lease_valid(map_, now) &&
         membership_.is_delegate(map_, now);
}

void MdsCluster::add_health(health::Inputs& in) const {
  if (config_.mds.size() == 1) return;
  const auto now = clock_.now();
  const auto name = [](MdsId id) { return fmt::format("mds{}", id.value); };
  std::set<uint16_t> held;
  for (uint16_t s : filesets_.ids()) held.insert(s);
  for (const auto& m : config_.mds) {
    const MdsId id(m.id);
    if (id == self_) continue;
    health::Daemon d;
    d.name = name(id);
    d.address = m.address.to_string();
    d.is_mds = true;
    d.reachable = membership_.alive(id, now);
    d.why = "no heartbeat within dead_after_ms";
    in.daemons.push_back(std::move(d));
    if (auto it = peer_sets_.find(id); it != peer_sets_.end() && membership_.alive(id, now))
      held.insert(it->second.begin(), it->second.end());
  }
  if (!(fence_ == Fence::serving && membership_.lease_valid(map_, now))) in.fenced.push_back(name(self_));
  std::set<uint16_t> listed;
  for (const auto& [id, sets] : peer_sets_) {
    if (membership_.alive(id, now)) continue;
    for (uint16_t s : sets)
      if (!held.count(s) && listed.insert(s).second) in.unserved.push_back({s, name(id)});
  }
}

void MdsCluster::fill_status(mp::Reply::ClusterState::Builder out) {
  const auto now = clock_.now();
  out.setSelf(self_.value);
  out.setDelegate(membership_.delegate(map_, now).value);
  out.setMap(map_.serialize());
  out.setPlacement(std::string(placement::policy_name(policy_)));
  out.setServing(config_.mds.size() == 1 ||
                 (fence_ == Fence::serving && membership_.lease_valid(map_, now)));
  auto members = out.initMembers(static_cast<unsigned>(config_.mds.size()));
  for (size_t i = 0; i < config_.mds.size(); ++i) {
    const MdsId id(config_.mds[i].id);
    auto m = members[static_cast<unsigned>(i)];
    m.setId(id.value);
    m.setAddress(config_.mds[i].address.to_string());
    m.setAlive(membership_.alive(id, now));
    m.setShare(map_.share(id));
    std::vector<uint16_t> sets = id == self_ ? filesets_.ids() : peer_sets_[id];
    auto list = m.initFileSets(static_cast<unsigned>(sets.size()));
    for (size_t j = 0; j < sets.size(); ++j) list.set(static_cast<unsigned>(j), sets[j]);
    auto l = m.initLatency();
    l.setServer(id.value);
    if (const IntervalReport* r = membership_.report(id)) {
      l.setSeq(r->seq);
      l.setLatencyMs(r->latency_ms);
      l.setRequests(r->requests);
      l.setBacklog(r->backlog);
      l.setBacklogAgeMs(r->backlog_age_ms);
      l.setBusy(r->busy);
      l.setServiceMs(r->service_ms);
      fill_sets(l, *r);
    }
    m.setSlowdown(id == self_ ? std::max(options_.slowdown, 1.0) : 0);
  }
  auto history = out.initHistory(static_cast<unsigned>(tunings_.size()));
  for (size_t i = 0; i < tunings_.size(); ++i) {
    const auto& t = tunings_[i];
    auto h = history[static_cast<unsigned>(i)];
    h.setAtUnixMs(t.at_unix_ms);
    h.setAverageMs(t.result.average_ms);
    h.setMapVersion(t.map_version);
    auto servers = h.initServers(static_cast<unsigned>(t.result.servers.size()));
    for (size_t j = 0; j < t.result.servers.size(); ++j) {
      const auto& s = t.result.servers[j];
      auto b = servers[static_cast<unsigned>(j)];
      b.setServer(s.server.value);
      b.setLatencyMs(s.latency_ms);
      b.setDecision(std::string(placement::decision_name(s.decision)));
      b.setOldShare(s.old_share);
      b.setNewShare(s.new_share);
    }
  }
  auto moves = out.initMoves(static_cast<unsigned>(moves_.size()));
  for (size_t i = 0; i < moves_.size(); ++i) {
    const auto& r = moves_[i];
    auto b = moves[static_cast<unsigned>(i)];
    b.setSet(r.set);
    b.setFrom(r.from.value);
    b.setTo(r.to.value);
    b.setAtUnixMs(r.at_unix_ms);
    b.setBytes(r.bytes);
    b.setDurationMs(r.duration_ms);
    b.setOutcome(r.outcome);
  }
}

void MdsCluster::remember_move(MoveRecord record) {
  moves_.push_back(std::move(record));
  if (moves_.size() > kKeptMoves) moves_.pop_front();
}

// ---- operations spanning members ---------------------------------------------------

asio::awaitable<Result<Attr>> MdsCluster::remote_getattr(InodeId ino, const rpc::Origin& origin) {
  const MdsId to = owner(ino.fileset().value);
  if (to == self_) co_return Status(Errc::again, fmt::format("file set {} is not here yet", ino.fileset().value));
  rpc::OutMessage out;
  rpc::stamp(out.envelope(), origin);
  auto req = out.init_body<mp::Request>();
  req.initCaller();
  req.initGetattr().setIno(ino.value);
  auto reply = co_await peer(to).call(out, {}, milliseconds(config_.rpc_timeout_ms));
  if (!reply) {
    // The client retries the whole operation: the owner may be moving the set or failing.
    if (reply.code() == Errc::stale_map || reply.code() == Errc::unavailable || reply.code() == Errc::timeout)
      co_return Status(Errc::again, fmt::format("mds {}: {}", to.value, reply.status().to_string()));
    co_return reply.status();
  }
  co_return rpc::from_wire((*reply)->body<mp::Reply>().getAttr());
}

asio::awaitable<Status> MdsCluster::remote_detach(FileSetId set, const rpc::Origin& origin) {
  const MdsId to = owner(set.value);
  if (to == self_) co_return Status(Errc::again, fmt::format("file set {} is not here yet", set.value));
  rpc::OutMessage out;
  rpc::stamp(out.envelope(), origin);
  auto req = out.init_body<mp::Request>();
  req.initCaller();
  req.setDetachFileSet(set.value);
  auto reply = co_await peer(to).call(out, {}, milliseconds(config_.rpc_timeout_ms));
  if (!reply && (reply.code() == Errc::stale_map || reply.code() == Errc::unavailable ||
                 reply.code() == Errc::timeout))
    co_return Status(Errc::again, fmt::format("mds {}: {}", to.value, reply.status().to_string()));
  co_return reply.status();
}

Result<NamespaceStore*> MdsCluster::create_fileset(Timespec now) {
  // Each member draws from its own block of ids (by its position in the
  // config), so no two members pick the same one, and takes them in turn
  // (the last one drawn is kept in data_dir/fileset-counter): consecutive
  // file sets get consecutive ids, which is what round-robin placement
  // (id mod k) needs, and the id of a removed file set comes back only after
  // the whole block, so a client's stale inode number does not name a new
  // file. The ANU hash spreads consecutive ids like any others.
  size_t index = 0;
  const size_t count = config_.mds.size();
  for (size_t i = 0; i < count; ++i)
    if (config_.mds[i].id == self_.value) index = i;
  std::set<uint16_t> known;
  for (const auto& [member, sets] : peer_sets_) known.insert(sets.begin(), sets.end());
  const uint32_t block = 0xfffe / static_cast<uint32_t>(count);
  const uint32_t first = 1 + static_cast<uint32_t>(index) * block;
  const auto counter_file = filesets_.data_dir() / "fileset-counter";
  uint32_t last = 0;
  if (std::ifstream in(counter_file); in) in >> last;
  for (uint32_t i = 1; i <= block; ++i) {
    const uint32_t id = first + (last < first ? i - 1 : (last - first + i) % block);
    const FileSetId set(static_cast<uint16_t>(id));
    if (filesets_.has(set) || known.count(set.value) || incoming_.count(set.value)) continue;
    {
      std::ofstream out(counter_file, std::ios::trunc);
      out << id << "\n";
      if (!out) return Status(Errc::io, "cannot write " + counter_file.string());
    }
    auto made = filesets_.create(set, now);
    if (made && owner(set.value) != self_) {
      reconcile_wanted_ = true;
      reconcile_timer_.cancel();
    }
    return made;
  }
  return Status(Errc::no_space, "every file set id of this metadata server is taken");
}

}  // namespace pvfs::mds
