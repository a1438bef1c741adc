// A job's profiling run and the training of its model (U-Shape paper,
// Zhang, Davis, Jiang, §3.1): the storage servers' per-epoch records of the
// job while it ran with a fixed share of service (B_profile per server and
// epoch), the run's execution time T_profile and I/O time, and the CART
// trained on them plus the paper's synthetic workload, from (AvgDist,
// AvgSize) to B_real = B_profile / alpha. Pure: the coordinator
// (mds/qos_host.h) gathers the records and times, and hands in the
// generator for the synthetic workload. Plain values; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "policy/qos/cart.h"
#include "policy/qos/client_span.h"
#include "policy/qos/locality.h"
#include "policy/qos/model.h"
#include "policy/qos/synthetic.h"
#include "shared/status.h"

namespace pvfs::qos {

// One storage server's record of the profiled job in one epoch (what
// LocalityTracker::close() gives, with the server's id).
struct ProfileEpoch {
  uint32_t server = 0;
  int64_t epoch = 0;          // the server's epoch index (its own steady clock)
  uint64_t requests = 0;      // > 0
  double avg_dist_bytes = 0;  // §3.1's AvgDist
  double avg_size_bytes = 0;  // §3.1's AvgSize
  uint64_t bytes = 0;
  Nanos service{0};           // §3.1's summed ServTime
  // B_profile: bytes per second of service; 0 when service is 0.
  double throughput() const;
  bool operator==(const ProfileEpoch&) const = default;
};

// Records kept per profiling run; later ones are counted, not kept (a run
// of 100 ms epochs on 4 servers fills this in about 100 s of I/O).
inline constexpr size_t kMaxProfileEpochs = 4096;

// Where a profile's I/O time comes from.
enum class IoSource : uint8_t {
  servers = 0,  // the busiest server's summed service time: a lower bound
  job = 1,      // the job's own figure (`qos profile JOB --end --io-time`)
  clients = 2,  // the clients' own timing of the job's requests
};

struct Profile {
  std::string job;
  uint32_t share_pct = 100;      // the job's share of every period while profiled, 1..100
  int64_t start_unix_ms = 0;     // `qos profile JOB`
  int64_t end_unix_ms = 0;       // `qos profile JOB --end`; 0: still running
  // The job's I/O time in the run (see with_io()); set here only from the
  // job's own figure (io_source job).
  Nanos io{0};
  IoSource io_source = IoSource::servers;
  uint64_t bytes = 0;            // all records' bytes, dropped ones included
  uint64_t dropped = 0;          // records past kMaxProfileEpochs
  std::vector<ProfileEpoch> epochs;
  std::map<uint64_t, ClientSpan> clients;  // by client id, at most kMaxProfileClients
  bool operator==(const Profile&) const = default;

  bool ended() const { return end_unix_ms > 0; }
  // T_profile: end - start (0 while running).
  Nanos total() const;
  // T_comp: T_profile less the I/O time, never negative.
  Nanos comp() const;
};

// Keeps `records` (up to kMaxProfileEpochs in all) and counts their bytes.
void add_epochs(Profile& profile, std::span<const ProfileEpoch> records);

// The busiest server's summed service time over the run: a lower bound of
// the job's I/O time (servers serve it in parallel, and their epochs are
// on different clocks, so they cannot be lined up).
Nanos busiest_server_service(const Profile& profile);

// Per server, the share of the job's I/O time during which the job had
// work there: its summed service time over the profile's I/O time, at most
// 1; 1 when the I/O time is unknown (0).
std::map<uint32_t, double> busy_fractions(const Profile& profile);

// The profile with its I/O time filled in: the job's own figure if it gave
// one; else the clients' (the longest of any client's spans: a job's
// processes on several nodes do their I/O side by side), when some client
// timed a nonzero span; else the busiest server's service time.
Profile with_io(Profile profile);

// A server's disk as the synthetic workload's requests see it: a request
// not starting where the previous one ended pays `seek`, then its length at
// `bytes_per_s`.
struct DiskCost {
  Nanos seek{0};
  double bytes_per_s = 0;  // > 0
  Nanos service(uint64_t distance, uint64_t length) const;
};

// A disk estimated from the profile: bytes_per_s the best throughput of an
// epoch whose requests followed each other (AvgDist below one block), or
// of any epoch if none did; seek the median over scattered epochs
// (AvgDist of a MiB or more) of the mean service time per request less
// its transfer time, 0 without such epochs. invalid_argument when no
// record has a service time.
Result<DiskCost> estimate_disk(const Profile& profile);

struct TrainOptions {
  GrowOptions grow;               // §3.1: grown until the CV error is below grow.max_error
  SyntheticOptions synthetic;     // the sweep's base (its sequential probability is swept)
  int synthetic_sets = 20;        // > 0: option sets of the sweep, sequential probability 0..1
  // Each set issues requests (larger ones split at 128 KiB) until its
  // disk time spans this many epochs, or synthetic_max_requests.
  int synthetic_epochs = 20;          // > 0
  int synthetic_max_requests = 20000; // > 0
  Nanos epoch = std::chrono::milliseconds(100);  // > 0
};

// The synthetic workload served back to back by `disk`, measured in
// epochs as a storage server measures them (§3.1, §4.1.1). A fast disk
// gives fewer epochs per set (synthetic_max_requests).
std::vector<EpochSample> synthetic_epochs(const DiskCost& disk, const TrainOptions& options, std::mt19937_64& rng);

struct Trained {
  Model model;
  size_t profile_samples = 0;    // records of the profile in the training set
  size_t synthetic_samples = 0;
  bool met = false;              // the CV error is below grow.max_error
};

// Trains the job's model for an execution time of `required`: alpha from
// the profile's times (model.h's alpha()), every record with a service
// time and every synthetic epoch as a sample ((AvgDist, AvgSize) ->
// throughput / alpha), grown with grow(). A record's throughput is §3.1's
// B_profile (bytes per second of service) times its server's busy
// fraction (busy_fractions()): the rate the job got from that server per
// second of its I/O time. §3.1's B_profile alone is that rate only for a
// job that keeps every server busy; the servers' bounds are summed into
// the job's and compared with the bytes it gets per second, so a job with
// few requests in flight (its servers idle between them) would be given
// more than its goal needs, taken from the others. The synthetic epochs
// describe the disk served back to back and are not scaled. Errors: invalid_argument when
// the profile has not ended, has fewer usable records than folds, when
// `disk` is unusable, or alpha()'s (a goal shorter than the profiling run).
Result<Trained> train(const Profile& profile, Nanos required, const DiskCost& disk, const TrainOptions& options,
                      std::mt19937_64& rng);

// The bound of a model trained for another execution time, for `required`:
// B_real scales with 1 / alpha, so bound * model.alpha / alpha(required).
// invalid_argument as alpha()'s.
Result<double> rescale(const Model& model, double bound, Nanos required);

}  // namespace pvfs::qos
