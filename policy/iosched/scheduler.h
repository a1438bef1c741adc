// The global I/O-step scheduler of Thapaliya et al. (burst-buffer
// interference paper, §V): jobs' I/O steps (one checkpoint each) wait in one
// queue and get a token in the order of a policy, either one job system-wide
// (FCFS, SJF) or every job whose servers no token holder uses (Algorithm 1,
// sharing-aware). Owns the queue, the holders' leases and each job's step
// history; does not talk to clients or keep time. Pure: events and `now`
// in, decisions out as values. Driven by the MDS delegate, the unit tests
// and pvfs-sim. Not thread-safe: owned by one executor.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "shared/ids.h"
#include "shared/status.h"

namespace pvfs::iosched {

using Nanos = std::chrono::nanoseconds;

enum class Policy : uint8_t {
  none,     // every step runs at once: no scheduling (the paper's NS)
  fcfs,     // one step system-wide, in arrival order
  sjf,      // one step system-wide, smallest first
  sa_fcfs,  // Algorithm 1 in arrival order: steps on disjoint servers run together
  sa_sjf,   // Algorithm 1, smallest first
};
// "none", "fcfs", "sjf", "sa-fcfs", "sa-sjf" (as in pvfs.toml and pvfs-ctl).
std::string_view policy_name(Policy policy);
// Inverse of policy_name(); nullopt for any other text.
std::optional<Policy> parse_policy(std::string_view text);

// Where a step's size, by which SJF orders, comes from.
enum class SizeSource : uint8_t {
  declared,   // told by the job (pvfs-ctl iostep begin --bytes, PVFS_IOSTEP_BYTES)
  predicted,  // the mean of the job's last completed steps
  unknown,    // neither: queued behind every sized step, in arrival order
};
std::string_view size_source_name(SizeSource source);

// A client session, chosen by the driver (unique among live clients).
using ClientKey = uint64_t;

struct Options {
  Policy policy = Policy::none;
  // A holder that neither renews nor ends for this long is dropped.
  Nanos lease = std::chrono::seconds(10);
  // Starvation guard (ours, not the paper's): a step pending longer than
  // this goes next whatever its size, and no later step may take a server
  // it waits for. Zero turns it off.
  Nanos max_wait = std::chrono::seconds(0);
  // Gathering (ours, not the paper's): when steps arrive while no step
  // holds a token, the first grant waits until this long after the
  // earliest of them arrived, so that jobs starting within that window
  // are ordered by the policy instead of the first taking the token (SJF
  // does not preempt). The window closes early once no job remembered
  // from earlier steps, absent now, would be served before the head of
  // the queue (on a server it uses, under sa-*): a lone job that is the
  // smallest known, or any job under FCFS, is not delayed. With no job
  // remembered it lasts its whole length. Zero turns it off; never
  // applies under `none`.
  Nanos gather = Nanos(0);
  // Completed steps per job that the size prediction averages.
  size_t history = 4;
  // Bounds on what clients can make the scheduler hold.
  size_t max_steps = 4096;
  size_t max_holders_per_step = 4096;
  size_t max_servers_per_step = 65536;
  size_t max_jobs = 4096;  // jobs remembered for prediction and statistics
};

struct BeginRequest {
  std::string job;  // non-empty
  ClientKey client = 0;
  std::optional<uint64_t> declared_bytes;
  // The servers the step writes to; empty means every server (the step
  // conflicts with every other under sharing-aware policies).
  std::vector<ServerId> servers;
  // Re-registration after failover: the client was granted this step by a
  // former delegate. It gets its token back at once unless that conflicts
  // with a step already holding one (then it queues like any other).
  bool holds_token = false;
};

// A step as the driver and pvfs-ctl see it.
struct StepView {
  uint64_t id = 0;
  std::string job;
  uint64_t bytes = 0;  // declared or predicted; 0 when unknown
  SizeSource source = SizeSource::unknown;
  std::vector<ServerId> servers;  // sorted; empty = all
  Nanos arrived{0};
  std::optional<Nanos> granted;  // when the token was given
  uint64_t bytes_written = 0;    // reported by its holders so far
  std::vector<ClientKey> holders;
  bool starved = false;  // waited past max_wait (pending steps only)
};

// Per job, over the scheduler's life (until the job is forgotten): its
// finished steps plus, in a snapshot, the step it has now so far (so a job
// stuck waiting shows its wait growing).
struct JobStats {
  std::string job;
  uint64_t steps = 0;        // completed or lapsed
  Nanos wait{0};             // summed arrival-to-grant (a pending step: arrival to now)
  Nanos io{0};               // summed grant-to-end (a holding step: grant to now)
  uint64_t bytes_written = 0;
  bool in_step = false;      // the job has a step now (pending or holding)
};

struct Snapshot {
  Policy policy = Policy::none;
  std::vector<StepView> active;   // by grant order
  std::vector<StepView> pending;  // in the order the policy would serve them
  std::vector<JobStats> jobs;     // by job id: every job with a finished or a current step
};

// What begin() tells the caller.
struct Admission {
  uint64_t step = 0;
  bool granted = false;
};

// A step that left the scheduler (every holder ended or lapsed).
struct Finished {
  StepView step;
  Nanos ended{0};
  bool lapsed = false;  // the last holder's lease ran out rather than ending
};

class Scheduler {
 public:
  explicit Scheduler(Options options);

  // Opens the job's I/O step or joins the one it has (pending or active),
  // as `request.client`, whose lease starts now. A holder beginning again
  // only renews. Grants nothing by itself: the driver calls schedule() after
  // every event (begin, end, expire, drop_client, a deadline). `granted` in
  // the answer says whether the job already held a token. A declaration given on a join replaces an
  // unknown or predicted size. invalid_argument for an empty job, a client
  // key of 0, or too many servers; again when max_steps or
  // max_holders_per_step would be exceeded.
  Result<Admission> begin(const BeginRequest& request, Nanos now);

  // `client` leaves the job's step, having written `bytes_written` in it
  // (in all: the larger of this and what it reported before counts).
  // The step ends when its last holder leaves (returned). not_found when the job has no step or the client does not
  // hold it.
  Result<std::optional<Finished>> end(std::string_view job, ClientKey client, uint64_t bytes_written,
                                      Nanos now);

  // Extends every lease `client` holds to now + lease.
  void renew(ClientKey client, Nanos now);
  // What `client` says it has written in the job's step so far (for
  // visibility; a smaller figure than one reported before is ignored).
  void report_written(std::string_view job, ClientKey client, uint64_t bytes);

  // Drops holders whose leases lapsed at or before now and ends the steps
  // they leave empty; also removes every holder of `gone` (a client known
  // dead). Returns the steps that ended.
  std::vector<Finished> expire(Nanos now);
  std::vector<Finished> drop_client(ClientKey gone, Nanos now);

  // Gives tokens by the policy (Algorithm 1 under sa-*): pending steps in
  // policy order, each granted unless it conflicts with a token holder or
  // with a starved step ahead of it. Returns the steps granted now. Under
  // `none` every pending step is granted. Grants nothing while a gathering
  // window (Options::gather) is open.
  std::vector<StepView> schedule(Nanos now);

  // Switches policy; tokens already given stay, pending steps are ordered
  // by the new policy from the next schedule() on.
  void set_policy(Policy policy) { options_.policy = policy; }
  Policy policy() const { return options_.policy; }
  const Options& options() const { return options_; }

  // Whether the job's step holds a token; nullopt when it has no step.
  std::optional<bool> granted(std::string_view job) const;
  // The job's step, or nullopt.
  std::optional<StepView> step_of(std::string_view job, Nanos now) const;
  // The earliest time at which expire() or schedule() could change
  // something by time alone (a lease lapsing, a step starving, a gathering
  // window closing), or nullopt.
  std::optional<Nanos> next_deadline() const;
  // The size SJF would use for a new step of `job` without a declaration.
  std::optional<uint64_t> predicted_bytes(std::string_view job) const;

  Snapshot snapshot(Nanos now) const;
  size_t step_count() const { return steps_.size(); }

 private:
  struct Step {
    uint64_t id = 0;
    uint64_t seq = 0;  // arrival order
    std::string job;
    std::optional<uint64_t> declared;
    std::optional<uint64_t> predicted;
    std::vector<ServerId> servers;  // sorted, unique; empty = all
    Nanos arrived{0};
    std::optional<Nanos> granted;
    uint64_t granted_seq = 0;
    std::map<ClientKey, Nanos> holders;  // lease expiry
    std::map<ClientKey, uint64_t> written;
    bool ended_cleanly = false;  // a holder ended it rather than lapsing
  };
  struct JobRecord {
    std::deque<uint64_t> sizes;  // completed steps' bytes, newest last
    std::vector<ServerId> servers;  // of the last step that fed `sizes`
    JobStats stats;
    uint64_t last_used = 0;
  };

  bool starved(const Step& step, Nanos now) const;
  // Whether an open gathering window should go on holding the first grant.
  bool worth_gathering(Nanos now) const;
  // Whether `step` shares a server with a token holder under the policy.
  bool conflicts_with_active(const Step& step) const;
  void grant(Step& step, Nanos now);
  bool before(const Step& a, const Step& b, Nanos now) const;
  std::vector<const Step*> pending_order(Nanos now) const;
  StepView view(const Step& step, Nanos now) const;
  Finished finish(std::map<uint64_t, Step>::iterator it, Nanos now, bool lapsed);
  void forget_jobs();

  Options options_;
  std::map<uint64_t, Step> steps_;           // by id
  std::map<std::string, uint64_t, std::less<>> by_job_;  // job -> step id
  std::map<std::string, JobRecord, std::less<>> jobs_;
  uint64_t next_id_ = 1;
  uint64_t next_seq_ = 0;
  uint64_t next_grant_ = 0;
  std::optional<Nanos> gather_until_;  // set while a gathering window is open
  Nanos idle_since_ = Nanos::min();    // when the last token was given back
  uint64_t use_clock_ = 0;
};

// Algorithm 1's conflict test: whether two steps share a server. An empty
// set stands for every server, so it conflicts with any step.
bool conflicts(const std::vector<ServerId>& a, const std::vector<ServerId>& b);

}  // namespace pvfs::iosched
