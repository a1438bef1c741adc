// The U-Shape paper's synthetic training workload (Zhang, Davis, Jiang,
// §3.1 and §4.1.1): request sizes uniform from one 4 KiB block to 128 KiB,
// larger requests split into sequential pieces of at most 128 KiB, each
// request sequential after the previous one with a set probability and
// otherwise a jump whose length is spread evenly over its logarithm (finer
// steps at small distances, where a disk is most sensitive) up to a span
// (10 GiB in the paper), and a read/write mix. It says which requests to
// issue; whoever serves them (the storage servers, or pvfs-sim's disk)
// measures the epochs the tree is trained on. Pure: randomness comes from
// the generator passed in. Plain value; not thread-safe.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "shared/status.h"

namespace pvfs::qos {

struct SyntheticOptions {
  uint64_t block_bytes = 4096;                 // > 0
  uint64_t max_request_bytes = 128 * 1024;     // a multiple of block_bytes, >= block_bytes
  double sequential = 0.5;                     // probability in [0, 1]
  uint64_t span_bytes = uint64_t{10} << 30;    // the longest jump, >= block_bytes
  double read_fraction = 0.5;                  // in [0, 1]
};

// invalid_argument naming the first bad field.
Status validate(const SyntheticOptions& options);

struct SyntheticRequest {
  uint64_t lba = 0;     // byte address in the region [base, base + span]
  uint64_t length = 0;  // bytes
  bool write = false;
};

// Splits `request` into sequential pieces of at most max_bytes (> 0).
std::vector<SyntheticRequest> split(const SyntheticRequest& request, uint64_t max_bytes);

class SyntheticWorkload {
 public:
  // Requests in the region [base, base + options.span_bytes] (checks
  // validate(options)), the first at `base`.
  SyntheticWorkload(const SyntheticOptions& options, uint64_t base);

  // The next request, drawn with `rng`.
  SyntheticRequest next(std::mt19937_64& rng);

 private:
  SyntheticOptions options_;
  uint64_t base_;
  uint64_t next_lba_;
  bool first_ = true;
};

// Uniform in [0, 1) from 53 bits of `rng` (the standard distributions may
// differ between library builds; this does not).
double uniform01(std::mt19937_64& rng);

// A sweep covering the spectrum (§4.1.1): `count` (> 0) option sets whose
// sequential probability steps evenly over [0, 1] and whose read fraction
// is drawn uniformly in [0, 1]; other fields from `base`.
std::vector<SyntheticOptions> synthetic_sweep(const SyntheticOptions& base, int count, std::mt19937_64& rng);

}  // namespace pvfs::qos
