#include "policy/qos/synthetic.h"

#include <algorithm>
#include <cmath>

namespace pvfs::qos {

double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

Status validate(const SyntheticOptions& o) {
  if (o.block_bytes == 0) return Status(Errc::invalid_argument, "block_bytes must be > 0");
  if (o.max_request_bytes < o.block_bytes || o.max_request_bytes % o.block_bytes != 0)
    return Status(Errc::invalid_argument, "max_request_bytes must be a multiple of block_bytes");
  if (!(o.sequential >= 0 && o.sequential <= 1)) return Status(Errc::invalid_argument, "sequential must be in [0, 1]");
  if (o.span_bytes < o.block_bytes) return Status(Errc::invalid_argument, "span_bytes must be >= block_bytes");
  if (!(o.read_fraction >= 0 && o.read_fraction <= 1))
    return Status(Errc::invalid_argument, "read_fraction must be in [0, 1]");
  return {};
}

std::vector<SyntheticRequest> split(const SyntheticRequest& request, uint64_t max_bytes) {
  PVFS_CHECK(max_bytes > 0);
  std::vector<SyntheticRequest> out;
  for (uint64_t done = 0; done < request.length; done += max_bytes)
    out.push_back({request.lba + done, std::min(max_bytes, request.length - done), request.write});
  return out;
}

SyntheticWorkload::SyntheticWorkload(const SyntheticOptions& options, uint64_t base)
    : options_(options), base_(base), next_lba_(base) {
  PVFS_CHECK(validate(options).ok());
}

SyntheticRequest SyntheticWorkload::next(std::mt19937_64& rng) {
  const uint64_t blocks = options_.max_request_bytes / options_.block_bytes;
  SyntheticRequest r;
  r.length = (1 + std::min(blocks - 1, static_cast<uint64_t>(uniform01(rng) * static_cast<double>(blocks)))) *
             options_.block_bytes;
  r.write = uniform01(rng) >= options_.read_fraction;
  const bool sequential = first_ || uniform01(rng) < options_.sequential;
  first_ = false;
  uint64_t lba = next_lba_;
  if (!sequential) {
    // A jump of block * (span / block)^u, u uniform: evenly spread over
    // log distance, one block at least.
    const double ratio = static_cast<double>(options_.span_bytes) / static_cast<double>(options_.block_bytes);
    const auto jump = static_cast<uint64_t>(static_cast<double>(options_.block_bytes) * std::pow(ratio, uniform01(rng)));
    const uint64_t top = base_ + options_.span_bytes;
    const bool forward = uniform01(rng) < 0.5;
    // Reflect at the region's ends so the jump keeps its length.
    if (forward) lba = lba + jump <= top ? lba + jump : (lba >= base_ + jump ? lba - jump : base_);
    else lba = lba >= base_ + jump ? lba - jump : (lba + jump <= top ? lba + jump : top);
  }
  if (lba + r.length > base_ + options_.span_bytes + options_.max_request_bytes) lba = base_;
  r.lba = lba;
  next_lba_ = lba + r.length;
  return r;
}

std::vector<SyntheticOptions> synthetic_sweep(const SyntheticOptions& base, int count, std::mt19937_64& rng) {
  PVFS_CHECK(count > 0);
  std::vector<SyntheticOptions> out;
  for (int i = 0; i < count; ++i) {
    SyntheticOptions o = base;
    o.sequential = count == 1 ? base.sequential : static_cast<double>(i) / (count - 1);
    o.read_fraction = uniform01(rng);
    out.push_back(o);
  }
  return out;
}

}  // namespace pvfs::qos
