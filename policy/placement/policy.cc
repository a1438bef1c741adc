#include "policy/placement/policy.h"

namespace pvfs::placement {

std::optional<Policy> parse_policy(std::string_view name) {
  if (name == "anu") return Policy::anu;
  if (name == "hash") return Policy::hash;
  if (name == "round-robin") return Policy::round_robin;
  return std::nullopt;
}

std::string_view policy_name(Policy policy) {
  switch (policy) {
    case Policy::anu: return "anu";
    case Policy::hash: return "hash";
    case Policy::round_robin: return "round-robin";
  }
  return "?";
}

MdsId owner_of(const AnuMap& map, Policy policy, FileSetId set) {
  if (policy == Policy::round_robin) {
    const auto& members = map.servers();
    return members[set.value % members.size()];
  }
  return map.locate(set);
}

bool supersedes(const AnuMap& candidate, const AnuMap& current) {
  if (candidate.empty()) return false;
  if (candidate.version() != current.version()) return candidate.version() > current.version();
  const auto a = candidate.issuer(), b = current.issuer();
  if (a != b) {
    if (!a || !b) return a.has_value();
    return a->value < b->value;
  }
  return !(candidate == current) && candidate.serialize() < current.serialize();
}

}  // namespace pvfs::placement
