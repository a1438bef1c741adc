#include "shared/layout.h"

#include <algorithm>

#include <fmt/format.h>

#include "shared/status.h"

namespace pvfs {

std::vector<Piece> split_range(const Layout& layout, uint64_t offset, uint64_t length) {
  PVFS_CHECK(layout.valid());
  std::vector<Piece> pieces;
  const uint64_t stripe = layout.stripe_size;
  const uint64_t count = layout.stripe_count();
  uint64_t pos = offset;
  const uint64_t end = offset + length;
  while (pos < end) {
    const uint64_t stripe_no = pos / stripe;
    const uint64_t within = pos % stripe;
    const uint64_t len = std::min(stripe - within, end - pos);
    Piece p{static_cast<uint32_t>(stripe_no % count), (stripe_no / count) * stripe + within, pos,
            len, pos - offset};
    if (!pieces.empty()) {
      Piece& last = pieces.back();
      if (last.object_index == p.object_index &&
          last.object_offset + last.length == p.object_offset) {
        last.length += len;
        pos += len;
        continue;
      }
    }
    pieces.push_back(p);
    pos += len;
  }
  return pieces;
}

uint64_t object_size_for_file_size(const Layout& layout, uint32_t index, uint64_t file_size) {
  PVFS_CHECK(layout.valid() && index < layout.stripe_count());
  const uint64_t stripe = layout.stripe_size;
  const uint64_t count = layout.stripe_count();
  const uint64_t full_stripes = file_size / stripe;  // stripes entirely below file_size
  const uint64_t tail = file_size % stripe;          // bytes of the last, partial stripe
  // Full stripes owned by this object: those with number % count == index.
  uint64_t owned = full_stripes / count + (index < full_stripes % count ? 1 : 0);
  uint64_t size = owned * stripe;
  if (tail > 0 && full_stripes % count == index) size += tail;
  return size;
}

uint64_t file_size_for_object_size(const Layout& layout, uint32_t index, uint64_t object_bytes) {
  PVFS_CHECK(layout.valid() && index < layout.stripe_count());
  if (object_bytes == 0) return 0;
  const uint64_t last = object_bytes - 1;  // the object's last byte
  const uint64_t stripe = (last / layout.stripe_size) * layout.stripe_count() + index;
  return stripe * layout.stripe_size + last % layout.stripe_size + 1;
}

Layout choose_layout(const LayoutPolicy& policy, const LayoutPolicy& defaults,
                     const std::vector<ServerId>& live, uint64_t random_start) {
  Layout layout;
  layout.stripe_size = policy.stripe_size ? policy.stripe_size
                       : defaults.stripe_size ? defaults.stripe_size
                                              : kDefaultStripeSize;
  std::vector<ServerId> pool = policy.servers.empty() ? live : policy.servers;
  if (!policy.servers.empty()) {
    // An explicit list is used in the order given; only servers that exist count.
    std::erase_if(pool, [&](ServerId id) {
      return std::find(live.begin(), live.end(), id) == live.end();
    });
  }
  if (pool.empty()) return layout;
  uint32_t count = policy.stripe_count ? policy.stripe_count : defaults.stripe_count;
  if (count == 0 || count > pool.size()) count = static_cast<uint32_t>(pool.size());
  const size_t start = policy.servers.empty() ? random_start % pool.size() : 0;
  for (uint32_t i = 0; i < count; ++i) layout.servers.push_back(pool[(start + i) % pool.size()]);
  return layout;
}

Status check_policy(const LayoutPolicy& policy, const std::vector<ServerId>& cluster) {
  auto names = [](const std::vector<ServerId>& ids) {
    std::vector<ServerId> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    std::string out;
    for (ServerId id : sorted) out += (out.empty() ? "" : ",") + std::to_string(id.value);
    return out.empty() ? std::string("none") : out;
  };
  for (size_t i = 0; i < policy.servers.size(); ++i) {
    const ServerId id = policy.servers[i];
    if (std::find(cluster.begin(), cluster.end(), id) == cluster.end())
      return Status(Errc::invalid_argument,
                    fmt::format("storage server {} is not in the cluster (its servers: {})", id.value,
                                names(cluster)));
    if (std::find(policy.servers.begin(), policy.servers.begin() + static_cast<ptrdiff_t>(i), id) !=
        policy.servers.begin() + static_cast<ptrdiff_t>(i))
      return Status(Errc::invalid_argument, fmt::format("storage server {} is listed twice", id.value));
  }
  const size_t usable = policy.servers.empty() ? cluster.size() : policy.servers.size();
  if (policy.stripe_count > usable)
    return Status(Errc::invalid_argument,
                  policy.servers.empty()
                      ? fmt::format("stripe count {} is more than the cluster's {} storage server(s)",
                                    policy.stripe_count, usable)
                      : fmt::format("stripe count {} is more than the {} storage server(s) listed",
                                    policy.stripe_count, usable));
  return {};
}

}  // namespace pvfs
