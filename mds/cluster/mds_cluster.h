// One member's part in the MDS cluster (issue 6; ANU, Wu and
// Burns): the ANU map it holds and persists, heartbeats to the
// other members, the delegate's duties when it is the live member with the
// lowest id (membership changes, tuning, distributing maps), the gate that
// tells clients to go elsewhere or come back later, file set moves (shipping
// an LMDB environment to its new owner, taking over a failed member's sets
// from its data directory) and the emulated slowness of --slowdown.
// The decisions are the pure Membership and placement code; this class does
// their I/O. With one [[mds]] in the config it is a one-member map that
// never changes, and everything behaves as a lone MDS.
// Fencing (issue 14): a member serves only under a lease (Membership::
// lease_valid()); when it lapses the member stops admitting requests, lets
// the ones in progress finish, syncs and drops its file sets' locks
// (mds/fileset_lock.h), so a member taking them over from shared storage
// copies everything acknowledged; with the lease back it takes the locks
// again and closes whatever was taken meanwhile.
// Not thread-safe: runs on the MDS's network thread; disk copies run on
// `disk_pool`.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>

#include <asio.hpp>

#include "policy/health/health.h"
#include "policy/membership/membership.h"
#include "mds/fileset_catalog.h"
#include "mds/qos_goals.h"
#include "mds/qos_models.h"
#include "config/config.h"
#include "shared/clock.h"
#include "shared/proto/mds.capnp.h"
#include "shared/rpc/network.h"
#include "shared/rpc/origin.h"
#include "shared/rpc/peer.h"

namespace pvfs::mds {

struct ClusterOptions {
  // --slowdown: 0 = off; F >= 1 serves routed client requests one at a time
  // on a virtual server taking F x service_us each (so queueing shows in
  // the latency, as on a slower machine) without burning CPU.
  double slowdown = 0;
  uint32_t service_us = 100;
};

class MdsCluster {
 public:
  // Membership, leases and intervals run on `clock`; the heartbeat, fence
  // and reconcile loops are paced by asio timers on the steady clock, as is
  // --slowdown's virtual server. Members are reached through `network`.
  // Both must outlive the cluster.
  MdsCluster(asio::io_context& io, const Config& config, const Secret& key, MdsId self,
             FileSetCatalog& filesets, asio::thread_pool& disk_pool, ClusterOptions options,
             const Clock& clock = real_clock(), rpc::Network& network = rpc::tcp_network());

  // The map this member starts with: the one it saved last, else the first
  // map of every configured member (the same on every member). Also tells
  // whether a lone MDS should create the namespace root (file set 0); in a
  // cluster the member that owns it makes it once every member has
  // answered and none holds it under a map that never changed. Call
  // before start().
  Status load();
  bool should_create_root() const { return create_root_; }
  void start();
  void stop();

  // ---- serving client requests ----
  // Whether this member serves a request for file set `set` now. Errors:
  // stale_map (another member owns it: the client refreshes its map),
  // again (it is moving here, or this member is still joining: retry),
  // not_found (no such file set: there is no other member to have it).
  Status admit(FileSetId set);
  // Marks a request on `set` in progress; a move of the set waits for none.
  struct InFlight {
    MdsCluster* cluster = nullptr;
    uint16_t set = 0;
    InFlight(MdsCluster* c, uint16_t s) : cluster(c), set(s) { ++cluster->in_flight_[set]; }
    InFlight(const InFlight&) = delete;
    ~InFlight() { --cluster->in_flight_[set]; }
  };
  // Marks a routed request on `set` arrived at `arrival` and not answered
  // yet, from before it queues (--slowdown) to its reply: the backlog and
  // the arrivals per file set reported to the delegate with each interval.
  struct Outstanding {
    MdsCluster* cluster = nullptr;
    SteadyTime arrival;
    Outstanding(MdsCluster* c, SteadyTime a, FileSetId set) : cluster(c), arrival(a) {
      cluster->meter_.arrived(a, set);
    }
    Outstanding(const Outstanding&) = delete;
    ~Outstanding() { cluster->meter_.finished(arrival, cluster->clock_.now()); }
  };
  // With --slowdown, waits until the virtual server has served a request
  // that arrived at `arrival`; returns at once otherwise.
  asio::awaitable<void> emulate(SteadyTime arrival);
  bool emulating() const { return options_.slowdown > 0; }
  // A routed request served, `latency` after it arrived: counted into this
  // member's current measuring interval.
  void record(std::chrono::nanoseconds latency);

  // ---- the cluster's own messages (mds/handlers/cluster_*.cc) ----
  // peerPing from member `from` holding `their_map`: notes it alive, adopts
  // the map if newer, and fills in this member's state.
  void answer_ping(MdsId from, std::string_view their_map,
                   proto::mds::Reply::PeerState::Builder out);
  // The I/O scheduling policy switched at run time, kept by every member
  // and sent with each heartbeat both ways, so that a new delegate hosts
  // the scheduler under it (empty: the configuration's). share_*() is the
  // delegate's switch; learn_*() takes a peer's if it is newer.
  struct IoschedSetting {
    std::string policy;
    uint64_t version = 0;
  };
  const IoschedSetting& iosched_setting() const { return iosched_setting_; }
  void share_iosched_policy(std::string policy);
  void learn_iosched_setting(proto::mds::Request::ClusterSetting::Reader theirs);
  // The QoS goals and run-time QoS policy (mds/qos_goals.h), kept by every
  // member in its data dir and sent with each heartbeat both ways, so that
  // they outlive the delegate that took them. share_qos() is the
  // delegate's change: it bumps the version and saves it here (errors:
  // io); replicate_qos() then hands it to every live member at once and
  // says how many members hold it (this one included).
  const QosGoals& qos() const { return qos_; }
  Status share_qos(QosGoals next);
  // Hands the goals and the QoS profiles and models to every live member
  // at once; says how many members hold both (this one included).
  asio::awaitable<uint32_t> replicate_qos();
  // The QoS profiles and models (mds/qos_models.h), kept like the goals but
  // sent with a heartbeat only to a member known to hold an older version.
  // share_qos_models() is the delegate's change: it bumps the version and
  // saves it here (errors: io); replicate_qos() hands it on.
  const QosModels& qos_models() const { return qos_models_; }
  Status share_qos_models(QosModels next);
  // A peer's heartbeat said it holds `version` of the profiles and models.
  void note_qos_models_version(MdsId member, uint64_t version) { models_held_[member] = version; }
  // setMap from the delegate: adopts `map_text` if newer. Errors: those of
  // parsing the map.
  Status take_map(std::string_view map_text);
  // shipFileSet: one piece of a file set moving here, `data` its bytes.
  asio::awaitable<Status> receive_chunk(proto::mds::Request::ShipChunk::Reader chunk,
                                        std::span<const std::byte> data);
  // detachFileSet: the owner of the root entry of `set` removes it. Errors:
  // those of admit(), not_empty.
  Status detach_request(FileSetId set);
  // clusterStatus (pvfs-ctl mds): the cluster as this member sees it.
  void fill_status(proto::mds::Reply::ClusterState::Builder out);

  // ---- operations that span members, for MdsService ----
  // Attributes of the root `ino` of a file set another member owns.
  asio::awaitable<Result<Attr>> remote_getattr(InodeId ino, const rpc::Origin& origin);
  // rmdir of the root of file set `set` held elsewhere: its owner checks the
  // set is empty and stops taking creates in it. Errors: not_empty, again.
  asio::awaitable<Status> remote_detach(FileSetId set, const rpc::Origin& origin);
  // Runs detachFileSet here (set by MdsService): ok, or not_empty.
  std::function<Status(FileSetId)> detach_local;
  // Runs before file set `set` is shipped, once no request runs on it (set
  // by MdsService: recalls its directory leases, which the next owner does
  // not know).
  std::function<asio::awaitable<void>(FileSetId)> before_leaving;
  // A new file set with an id no member holds (each member draws from its
  // own residue class of ids, so two members never pick the same one). It
  // is made here and shipped to its owner at once if that is another member.
  Result<NamespaceStore*> create_fileset(Timespec now);

  // Being shipped away, or this member is fenced: background work (orphan
  // collection, the server registry) leaves it alone.
  bool moving(FileSetId set) const {
    return fence_ != Fence::serving || leaving_.count(set.value) || committed_.count(set.value);
  }
  // Whether this member holds its lease and serves (always, alone).
  bool serving() const { return fence_ == Fence::serving; }
  const placement::AnuMap& map() const { return map_; }
  MdsId self() const { return self_; }
  // Where this member reads time (liveness, leases, the delegate's hosts).
  const Clock& clock() const { return clock_; }
  // The delegate as this member sees it now (itself when alone).
  MdsId delegate() const;
  // Whether this member is the delegate and may act as one now: alone, or
  // joined, holding its lease and the live member with the lowest id.
  // The I/O-step scheduler (mds/iosched_host.h) runs only here.
  bool acting_delegate() const;
  uint64_t moves_in() const { return moves_in_; }
  uint64_t moves_out() const { return moves_out_; }
  // Adds to `in` what this member knows of the cluster's health: the other
  // members (down when their heartbeats stopped), itself as fenced when it
  // holds no lease, and the file sets a dead member last held that no live
  // member holds.
  void add_health(health::Inputs& in) const;

 private:
  struct MoveRecord {
    uint16_t set = 0;
    MdsId from, to;
    int64_t at_unix_ms = 0;
    uint64_t bytes = 0;
    uint32_t duration_ms = 0;
    std::string outcome;
  };
  struct TuningRecord {
    int64_t at_unix_ms = 0;
    uint64_t map_version = 0;
    placement::TuneResult result;
  };
  struct Incoming {
    uint64_t ship_id = 0;
    uint64_t received = 0;
    // Held from the first chunk until the set is open: a member that takes
    // over this one's file sets after it failed leaves a copy alone while
    // it is being received, and makes it uninstallable once it is not.
    FileSetLock lock;
  };

  // serving -> fencing -> fenced -> serving (see the file comment).
  enum class Fence : uint8_t { serving, fencing, fenced };

  asio::awaitable<void> heartbeat_loop();
  // Fences this member when its lease lapses and unfences it when it is back.
  asio::awaitable<void> fence_loop();
  asio::awaitable<void> fence();
  void unfence();
  bool lease_lapsed(SteadyTime now) const;
  asio::awaitable<void> ping(MdsId member);
  asio::awaitable<void> reconcile_loop();
  asio::awaitable<void> broadcast(std::string map_text);
  // Ships `set` to `to`; true when it is there.
  asio::awaitable<bool> ship(uint16_t set, MdsId to);
  // Serves the file sets of `failed` that now hash here, from its data dir.
  asio::awaitable<void> take_over(MdsId failed);
  // Settles the ships to `failed` whose answer was lost, from its data dir:
  // a set it installed is taken over from there (our copy goes); one it
  // never installed is ours again, once no process holds its partial copy.
  void settle_ships_to(MdsId failed, const std::filesystem::path& dir);
  void close_interval();
  void make_root_if_fresh();
  // Adopts `map` if it is newer (or the same version and smaller text, so
  // two delegates' maps of one version settle on one); true if adopted.
  bool adopt(const placement::AnuMap& map, const char* from);
  Status save_map() const;
  void remember_move(MoveRecord record);
  rpc::Peer& peer(MdsId member);
  MdsId owner(uint16_t set) const;

  asio::io_context& io_;
  const Config& config_;
  const Clock& clock_;
  rpc::Network& network_;
  Secret key_;
  MdsId self_;
  FileSetCatalog& filesets_;
  asio::thread_pool& disk_pool_;
  ClusterOptions options_;
  placement::Policy policy_;
  Membership membership_;
  placement::AnuMap map_;
  Fence fence_ = Fence::serving;
  SteadyTime started_;
  int shipping_ = 0;                  // ship() calls in progress
  std::set<uint16_t> held_elsewhere_;  // take-overs waiting for a live holder (logged once)
  std::set<MdsId> unreachable_dirs_;   // failed members whose data dir is not here (logged once)
  bool create_root_ = false;
  bool root_pending_ = false;  // a cluster member on a fresh data dir: see make_root_if_fresh()
  bool stopped_ = false;
  std::map<MdsId, std::unique_ptr<rpc::Peer>> peers_;
  std::set<MdsId> pinging_;
  std::map<MdsId, std::vector<uint16_t>> peer_sets_;  // file sets each member last said it holds
  std::map<uint16_t, int> in_flight_;
  std::set<uint16_t> leaving_;    // being shipped away: not served here
  std::set<uint16_t> committed_;  // last chunk sent, answer unknown: never served here again
  std::map<uint16_t, uint64_t> ship_ids_;  // per set being shipped: the attempt's id
  std::map<uint16_t, MdsId> ship_to_;      // per committed set: where its last chunk went
  std::map<uint16_t, Incoming> incoming_;
  std::map<uint16_t, uint64_t> received_;  // file sets shipped here: the ship id
  std::deque<MoveRecord> moves_;
  std::deque<TuningRecord> tunings_;
  IoschedSetting iosched_setting_;
  QosGoals qos_;
  QosModels qos_models_;
  std::map<MdsId, uint64_t> models_held_;  // the models version each peer last said it holds
  // `to`: the member it goes to (the models go only if it holds an older
  // version); nullopt: always include them.
  void fill_setting(proto::mds::Request::ClusterSetting::Builder out, std::optional<MdsId> to) const;
  void learn_qos(proto::mds::Request::ClusterSetting::Reader theirs);
  void learn_qos_models(proto::mds::Request::ClusterSetting::Reader theirs);
  uint64_t moves_in_ = 0, moves_out_ = 0;
  IntervalMeter meter_;  // this member's measuring intervals
  // The event loop thread's CPU time at the last close_interval(), from
  // which a real member's busy time is counted (unset before the first).
  // Members run in one test process on one thread share that thread's.
  std::optional<std::chrono::nanoseconds> loop_cpu_;
  SteadyTime next_free_{};  // --slowdown: when the virtual server is next idle
  asio::steady_timer heartbeat_timer_;
  asio::steady_timer reconcile_timer_;
  asio::steady_timer fence_timer_;
  bool reconcile_wanted_ = false;
  std::mt19937_64 rng_{std::random_device{}()};
};

}  // namespace pvfs::mds
