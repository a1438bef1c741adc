#include "fs/mds_router.h"

#include <algorithm>
#include <utility>

namespace pvfs {

MdsRouter::MdsRouter(std::vector<MdsId> members, placement::Policy policy)
    : members_(std::move(members)), policy_(policy) {
  PVFS_CHECK(!members_.empty());  // Client::create() refuses a config without [[mds]]
  auto guess = placement::AnuMap::uniform(members_, placement::kDefaultRounds, 0);
  PVFS_CHECK(guess.ok());  // config ids are distinct (Config::load checks)
  map_ = std::move(*guess);
}

bool MdsRouter::adopt(placement::AnuMap map) {
  if (!placement::supersedes(map, map_)) return false;
  map_ = std::move(map);
  return true;
}

MdsId MdsRouter::target(std::optional<FileSetId> route, size_t skip) const {
  if (members_.size() == 1) return members_.front();
  if (route) return placement::owner_of(map_, policy_, *route);
  return members_[(preferred_ + skip) % members_.size()];
}

void MdsRouter::answered(MdsId member) {
  auto it = std::find(members_.begin(), members_.end(), member);
  if (it != members_.end()) preferred_ = static_cast<size_t>(it - members_.begin());
}

MdsRetry::MdsRetry(bool idempotent, bool routed, size_t members)
    : idempotent_(idempotent), routed_(routed), members_(std::max<size_t>(members, 1)) {}

MdsNext MdsRetry::after(MdsMiss miss, bool newer_map) {
  switch (miss) {
    case MdsMiss::stale_map:
      if (newer_map) return {};
      return {.ask_others = true, .pause = kStalePause};
    case MdsMiss::again:
      again_pause_ = again_pause_.count() == 0 ? kAgainFirst : std::min(kAgainMax, again_pause_ * 2);
      return {.pause = again_pause_};
    case MdsMiss::lost:
      if (!idempotent_) return {.give_up = true};
      return unreachable();
    case MdsMiss::unreachable:
      return unreachable();
  }
  return {.give_up = true};
}

MdsNext MdsRetry::unreachable() {
  if (routed_) return {.ask_others = members_ > 1, .pause = kUnreachablePause};
  ++skip_;
  if (skip_ % members_ != 0) return {};
  return {.pause = kUnreachablePause};
}

}  // namespace pvfs
