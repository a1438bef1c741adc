// The client's view of the metadata server cluster: which member each
// request goes to (the owner of its file set by the newest map the client
// has, or any member), and how one call reacts when a member answers "not
// mine" (stale map), "not yet" (the file set is still arriving) or cannot be
// reached. Pure: decisions only; the client (client_mds.cc) does the
// talking, the sleeping and the logging. Not thread-safe: owned by the
// client's io thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "policy/placement/anu_map.h"
#include "policy/placement/policy.h"
#include "shared/ids.h"

namespace pvfs {

class MdsRouter {
 public:
  // `members`: the configured metadata servers in config order (not empty,
  // distinct). Until a member sends its map, the router guesses one: every
  // configured member sharing the namespace equally, at version 0, so that
  // any map a member sends replaces it.
  MdsRouter(std::vector<MdsId> members, placement::Policy policy);

  const placement::AnuMap& map() const { return map_; }
  placement::Policy policy() const { return policy_; }
  const std::vector<MdsId>& members() const { return members_; }

  // Takes `map` when placement::supersedes() it over the current map, as
  // members do (newer, or the same version with the smaller text). True
  // when taken.
  bool adopt(placement::AnuMap map);

  // The member to send a request to. `route` is rpc::route_of() of the
  // request: a file set goes to its owner by the map under the policy (with
  // one configured member, always to that member, whatever the map says);
  // nullopt (any member answers) goes to the configured members in order,
  // starting with the one that last answered such a request and skipping
  // `skip` of them (the call's unreachable ones). The owner may be a member
  // the config does not name; the caller then finds no peer for it.
  MdsId target(std::optional<FileSetId> route, size_t skip = 0) const;
  // `member` answered a request any member answers: try it first next time.
  void answered(MdsId member);

 private:
  std::vector<MdsId> members_;
  placement::Policy policy_;
  placement::AnuMap map_;
  size_t preferred_ = 0;  // index into members_
};

// What went wrong with one attempt of a call, when no answer came back.
enum class MdsMiss {
  unreachable,  // could not connect (or the owner is not in the config): nothing was sent
  lost,         // sent, then the connection was lost: the member may have applied it
  stale_map,    // the member does not own the request's file set (Errc::stale_map)
  again,        // the member owns the set by the map but has not received it yet (Errc::again)
};

// What the call does next.
struct MdsNext {
  bool give_up = false;     // fail the call (a non-idempotent request that may have been applied)
  bool ask_others = false;  // fetch the other members' maps first; if that brings a newer
                            // map, retry at once instead of pausing
  std::chrono::milliseconds pause{0};  // then wait this long and try again
  bool operator==(const MdsNext&) const = default;
};

// The retry rules of one metadata call (one object per call):
// - staleMap: the member that said so has a newer map (the client fetches it
//   before asking here); with it, retry at once at the new owner; without
//   (the member is ahead of its peers' news, or the client of the member's),
//   ask the others and pause kStalePause.
// - again: the owner is receiving the set; back off from kAgainFirst,
//   doubling up to kAgainMax.
// - unreachable: a request any member answers tries the next member at once,
//   pausing kUnreachablePause after each full round; a routed one asks the
//   others for a newer map (the delegate removes a dead owner after
//   [mds_cluster] dead_after_ms and re-hashes its sets) and pauses.
// - lost: like unreachable for idempotent requests; others give up, since
//   the member may have applied them (retrying could apply them twice).
// staleMap and again mean the member did not apply the request, so every
// request is retried after them. The caller stops at its RPC deadline.
class MdsRetry {
 public:
  static constexpr std::chrono::milliseconds kStalePause{50};
  static constexpr std::chrono::milliseconds kAgainFirst{20};
  static constexpr std::chrono::milliseconds kAgainMax{500};
  static constexpr std::chrono::milliseconds kUnreachablePause{200};

  // `routed`: the request has a file set (rpc::route_of()); `members`: how
  // many members are configured.
  MdsRetry(bool idempotent, bool routed, size_t members);

  // After an attempt that brought no answer. `newer_map`: the client
  // adopted a newer map from the member that replied stale_map (false for
  // the other misses).
  MdsNext after(MdsMiss miss, bool newer_map);
  // Members to skip for the next attempt of a request any member answers
  // (pass to MdsRouter::target()).
  size_t skip() const { return skip_; }

 private:
  MdsNext unreachable();

  bool idempotent_;
  bool routed_;
  size_t members_;
  size_t skip_ = 0;
  std::chrono::milliseconds again_pause_{0};
};

}  // namespace pvfs
