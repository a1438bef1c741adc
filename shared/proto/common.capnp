# Types shared by every pvfs service, and the envelope every frame carries.
#
# A frame on the wire is: a 16-byte header (magic "PVF1", u32 message bytes,
# u64 data bytes, little-endian), then one Cap'n Proto message whose root is
# an Envelope, then the bulk data bytes. Bulk data (file contents) is never
# put inside the message. See shared/rpc/frame.h.
@0xd63a27aa0c93e754;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("pvfs::proto");

# Outcome codes. The order matches pvfs::Errc in shared/status.h; the
# conversion lives only in shared/rpc/wire_status.cc (and is tested there).
enum Errc {
  ok @0;
  notFound @1;
  exists @2;
  notEmpty @3;
  notDir @4;
  isDir @5;
  invalidArgument @6;
  nameTooLong @7;
  crossDevice @8;
  noSpace @9;
  io @10;
  timeout @11;
  unavailable @12;
  corrupt @13;
  staleMap @14;
  accessDenied @15;
  notPermitted @16;
  tooManyLinks @17;
  readOnly @18;
  noXattr @19;                  # ENODATA (missing xattr); named so to dodge netdb.h's NO_DATA macro
  range @20;
  notSupported @21;
  busy @22;
  tooBig @23;
  loop @24;
  badHandle @25;
  again @26;
  stale @27;                    # ESTALE: the inode the request names no longer exists
}

# Root of every message. Requests and replies share it; `body` holds the
# service's Request or Reply struct (mds.capnp, storage.capnp).
struct Envelope {
  id @0 :UInt64;          # chosen by the caller, unique per connection; echoed in the reply
  isReply @1 :Bool;
  timeoutMs @2 :UInt32;   # request: how long the caller will wait (0 = no deadline)
  jobId @3 :Text;         # request: job of the process that caused it (PVFS_JOBID, SLURM_JOB_ID, ...)
  status @4 :Errc;        # reply: outcome; body is only meaningful when ok
  detail @5 :Text;        # reply: optional one-line explanation of a failure
  body @6 :AnyPointer;    # the service-specific Request or Reply
  requestId @7 :UInt64;   # request: names one file system operation in every daemon's log
                          # (0: none); a daemon passes it on to the calls it makes for it
  clientId @8 :UInt64;    # data request: the sending pvfsmount, a random number per mount (0: none)
  jobIoNs @9 :UInt64;     # data request: the job's I/O time on that client so far, as it counts it
                          # (fs/job_io_clock.h), for a profiling run's T_comp (pvfs-ctl qos profile)
  busy @10 :Bool;         # with isReply and id 0, no answer: the sender is still serving requests
                          # of this connection, and says so again within timeoutMs; calls that
                          # wait while busy get another timeout (shared/rpc/connection.h)
}

# Who is asking: the identity the FUSE kernel reported for the syscall.
struct Caller {
  uid @0 :UInt32;
  gid @1 :UInt32;
  groups @2 :List(UInt32);  # supplementary groups (may be empty)
  pid @3 :UInt32;
}

struct Timespec {
  sec @0 :Int64;
  nsec @1 :UInt32;
}

# Where a regular file's bytes live. Stripe i (bytes [i*stripeSize,
# (i+1)*stripeSize)) is in object i mod n, on servers[i mod n].
struct Layout {
  stripeSize @0 :UInt64;
  servers @1 :List(UInt32);   # storage server ids, in object order
}

# What a directory hands to files created in it. Zero means "cluster default".
struct LayoutPolicy {
  stripeSize @0 :UInt64;
  stripeCount @1 :UInt32;     # 0 = all live servers
  servers @2 :List(UInt32);   # optional explicit server ids; empty = choose
}

# A storage server as the MDS knows it.
struct ServerInfo {
  id @0 :UInt32;
  address @1 :Text;           # host:port clients connect to
  capacityBytes @2 :UInt64;
  freeBytes @3 :UInt64;
  alive @4 :Bool;             # heartbeat seen within the configured window
}

# Per-job counters a daemon keeps (pvfs-ctl jobs).
struct JobCounters {
  jobId @0 :Text;
  ops @1 :UInt64;
  bytesRead @2 :UInt64;
  bytesWritten @3 :UInt64;
}

# Generic daemon state for pvfs-ctl and pvfs-cluster status.
struct DaemonStatus {
  kind @0 :Text;              # "mds" or "server"
  id @1 :UInt32;
  version @2 :Text;
  uptimeMs @3 :UInt64;
  requests @4 :UInt64;        # requests served since start
  jobs @5 :List(JobCounters);
  # For pvfs-ctl health (issue 20); daemons before it send the defaults.
  unixMs @6 :Int64;           # the daemon's wall clock as it answered (clock skew between hosts); 0: not sent
  inProgress @7 :UInt32;      # requests it is serving now, this one included
  oldestRequestMs @8 :UInt64; # how long the oldest of them has been in progress
  orphans @9 :Int64 = -1;     # MDS: unlinked files whose objects are not deleted yet (the delete
                              # backlog, open files included); -1: not counted (a server, or LMDB failed)
  dataFreeBytes @10 :Int64 = -1;  # MDS: free space of its data directory's disk; -1: not measured
  reserveBytes @11 :UInt64;       # MDS: [mds_tuning] reserve_mb; under it new names get ENOSPC
}

# A daemon's counters and gauges, for pvfs-ctl stats/top and the /metrics
# endpoint (Prometheus text format; names follow its conventions, counters
# end in _total). A summary family's samples carry a "quantile" label, plus
# one sample each with suffix "_sum" and "_count".
enum MetricType {
  counter @0;
  gauge @1;
  summary @2;
}

struct MetricLabel {
  name @0 :Text;
  value @1 :Text;
}

struct MetricSample {
  labels @0 :List(MetricLabel);
  value @1 :Float64;
  suffix @2 :Text;            # appended to the family name ("_sum", "_count"); usually empty
}

struct MetricFamily {
  name @0 :Text;              # pvfs_..., without the sample suffix
  help @1 :Text;
  type @2 :MetricType;
  samples @3 :List(MetricSample);
}
