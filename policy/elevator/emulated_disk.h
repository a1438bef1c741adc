// A model of one spinning disk for experiments on machines without one
// (issue 5, "Emulated disk"): an access not contiguous with the previous
// one pays a seek, and every byte costs 1 / bandwidth. Pure: it computes
// how long an access takes and never sleeps; the storage service (which
// delays the real I/O by that much) and pvfs-sim (which advances virtual
// time) apply it. Not thread-safe: one owner, accesses in disk order.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "policy/elevator/deadline_estimator.h"
#include "shared/ids.h"

namespace pvfs::elevator {

// Defaults are the paper's simulated disk: 10 ms seek, 450 MB/s.
struct EmulatedDiskOptions {
  Nanos seek = std::chrono::milliseconds(10);
  uint64_t bytes_per_second = 450'000'000;  // > 0
};

class EmulatedDisk {
 public:
  // Requires options.bytes_per_second > 0 and options.seek >= 0 (checked).
  explicit EmulatedDisk(EmulatedDiskOptions options = {});

  // How long reading or writing [offset, offset + length) of `object`
  // takes, and moves the head to its end. The access is contiguous (no
  // seek) when it is on the same object as the previous access and starts
  // where that one ended; the first access always seeks. Direction does
  // not matter.
  Nanos service_time(ObjectId object, uint64_t offset, uint64_t length_bytes);

  // The transfer part alone: length / bandwidth, rounded to nanoseconds.
  Nanos transfer_time(uint64_t length_bytes) const;

  uint64_t accesses() const { return accesses_; }
  uint64_t seeks() const { return seeks_; }
  uint64_t bytes() const { return bytes_; }
  // Sum of every service_time() returned.
  Nanos busy() const { return busy_; }
  const EmulatedDiskOptions& options() const { return options_; }

 private:
  struct Head {
    ObjectId object;
    uint64_t offset = 0;
  };
  EmulatedDiskOptions options_;
  std::optional<Head> head_;
  uint64_t accesses_ = 0;
  uint64_t seeks_ = 0;
  uint64_t bytes_ = 0;
  Nanos busy_{0};
};

// What a calibration of random accesses in records of each size would
// measure on this model: r / (seek + r / bandwidth). Lets the simulator and
// tests build the deadline estimator's table for an emulated disk.
// Requires `record_sizes` non-empty, > 0 and increasing (checked).
BandwidthTable modelled_bandwidth(const EmulatedDiskOptions& options,
                                  const std::vector<uint64_t>& record_sizes);

}  // namespace pvfs::elevator
