#include "policy/qos/locality.h"

#include <algorithm>
#include <cmath>

#include "shared/status.h"

namespace pvfs::qos {

namespace {

// SplitMix64's finaliser: every input bit reaches every output bit.
uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t object_slot(ObjectId object) {
  return mix(object.ino.value ^ mix(uint64_t{object.index} + 0x9e3779b97f4a7c15ULL)) >> (64 - 24);
}

uint64_t object_lba(ObjectId object, uint64_t offset) {
  constexpr uint64_t kMask = (uint64_t{1} << kExtentBits) - 1;
  return (object_slot(object) << kExtentBits) | (offset & kMask);
}

double EpochSample::throughput() const {
  const double seconds = std::chrono::duration<double>(service).count();
  return seconds > 0 ? static_cast<double>(bytes) / seconds : 0.0;
}

LocalityTracker::LocalityTracker(Nanos epoch) : epoch_(epoch) { PVFS_CHECK(epoch.count() > 0); }

EpochSample LocalityTracker::sample_of(const std::string& job, const Open& open) {
  EpochSample s;
  s.job = job;
  s.epoch = open.epoch;
  s.requests = open.requests;
  s.avg_dist_bytes = open.distances ? open.dist_sum / static_cast<double>(open.distances) : 0.0;
  s.avg_size_bytes = static_cast<double>(open.bytes) / static_cast<double>(open.requests);
  s.bytes = open.bytes;
  s.service = open.service;
  return s;
}

void LocalityTracker::record(std::string_view job, uint64_t lba, uint64_t length, Nanos arrival, Nanos done) {
  PVFS_CHECK(length > 0);
  PVFS_CHECK(done >= arrival);
  PVFS_CHECK(done >= last_done_);
  last_done_ = done;
  auto it = jobs_.find(job);
  if (it == jobs_.end()) it = jobs_.emplace(std::string(job), Job{}).first;
  Job& j = it->second;
  const int64_t epoch = epoch_of(done);
  if (j.open && j.current.epoch != epoch) {
    closed_.push_back(sample_of(it->first, j.current));
    j.open = false;
  }
  if (!j.open) {
    j.current = Open{};
    j.current.epoch = epoch;
    j.open = true;
  }
  Open& o = j.current;
  ++o.requests;
  o.bytes += length;
  if (j.has_last) {
    // |LBA_i - (LBA_{i-1} + S_{i-1})| without overflow.
    const uint64_t d = lba >= j.last_end ? lba - j.last_end : j.last_end - lba;
    o.dist_sum += static_cast<double>(d);
    ++o.distances;
  }
  o.service += done - std::max(arrival, j.has_last ? j.last_done : arrival);
  j.has_last = true;
  j.last_end = lba + length;
  j.last_done = done;
}

std::vector<EpochSample> LocalityTracker::close(Nanos now) {
  const int64_t current = epoch_of(now);
  for (auto& [name, j] : jobs_) {
    if (j.open && j.current.epoch < current) {
      closed_.push_back(sample_of(name, j.current));
      j.open = false;
    }
  }
  std::vector<EpochSample> out;
  std::vector<EpochSample> keep;
  for (EpochSample& s : closed_) (s.epoch < current ? out : keep).push_back(std::move(s));
  closed_ = std::move(keep);
  std::stable_sort(out.begin(), out.end(), [](const EpochSample& a, const EpochSample& b) {
    return a.epoch != b.epoch ? a.epoch < b.epoch : a.job < b.job;
  });
  return out;
}

void LocalityTracker::forget(std::string_view job) {
  if (auto it = jobs_.find(job); it != jobs_.end()) jobs_.erase(it);
  std::erase_if(closed_, [&](const EpochSample& s) { return s.job == job; });
}

}  // namespace pvfs::qos
