// Which member of the MDS cluster owns a file set, under the configured
// placement policy ([mds_cluster] placement in pvfs.toml). Clients and
// members both call owner_of(), so they agree on every file set given the
// same map. Pure; thread-safe.
#pragma once

#include <array>
#include <optional>
#include <string_view>

#include "policy/placement/anu_map.h"

namespace pvfs::placement {

enum class Policy : uint8_t {
  anu,          // the ANU map, tuned by the delegate
  hash,         // the same map, never tuned: simple randomization
  round_robin,  // file set n on the (n mod k)-th member in id order
};

// Every policy, in the order error messages list them.
inline constexpr std::array<Policy, 3> kPolicies = {Policy::anu, Policy::hash, Policy::round_robin};

// "anu", "hash", "round-robin"; nullopt for anything else.
std::optional<Policy> parse_policy(std::string_view name);
std::string_view policy_name(Policy policy);
// Whether the delegate rescales the map under `policy`.
inline bool tunes(Policy policy) { return policy == Policy::anu; }

// The owner of `set`. Requires !map.empty().
MdsId owner_of(const AnuMap& map, Policy policy, FileSetId set);

// Whether `candidate` replaces `current`. Maps are ordered by (version,
// issuer): a newer version wins; of two maps of one version (two members
// that each believed itself the delegate) the one whose issuer has the
// lower id wins, as the delegate is the live member with the lowest id; a
// map with an issuer beats one without; the smaller serialized text
// settles what is left. So every member and client settles on the same
// map. An empty candidate never wins. Members and clients both decide by this.
bool supersedes(const AnuMap& candidate, const AnuMap& current);

}  // namespace pvfs::placement
