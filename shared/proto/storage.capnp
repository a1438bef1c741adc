# The storage service (pvfs-server): objects on local disk. Clients, the MDS
# and other storage servers speak it. An object is named by (inode, index):
# stripe i of a file lives in object i mod stripe count, on its *home*
# server. A write the client's dispatcher sends elsewhere is stored there as
# a *fragment* (object, fragment id) and recorded in the home server's
# redirect log; reads ask home, which answers with its bytes plus where the
# redirected parts are. File contents travel as the frame's bulk data, never
# inside these messages.
@0xee729593c3ad937f;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("pvfs::proto::storage");

using Common = import "common.capnp";

struct ObjectId {
  ino @0 :UInt64;
  index @1 :UInt32;
}

struct FragmentRef {
  object @0 :ObjectId;
  fragment @1 :UInt64;
}

struct Request {
  union {
    write @0 :Write;              # data: the bytes to write
    read @1 :Read;                # reply data: the bytes read (short at end of object)
    truncate @2 :Truncate;
    remove @3 :Remove;
    fsync @4 :ObjectId;
    stat @5 :ObjectId;
    statfs @6 :Void;
    status @7 :Void;
    probe @8 :Probe;              # reply: load
    probeDone @9 :ProbeDone;      # reply: none
    redirect @10 :Redirect;       # reply: none
    readFragment @11 :ReadFragment;   # reply data: the bytes (short past the fragment's end)
    dropFragments @12 :List(FragmentRef);  # reply: none; missing fragments are not an error
    inject @13 :Inject;           # reply: none
    schedStatus @14 :Void;        # reply: schedStatus
    elevator @15 :ElevatorControl;  # reply: elevator
    metrics @16 :Void;            # reply: metrics
    setLogLevel @17 :Text;        # reply: none; "trace", "debug", "info", "warn", "error", "off"
    scanObjects @18 :Scan;        # fsck; reply: objects (the objects stored here)
    scanFragments @19 :Scan;      # fsck; reply: fragments (held here for other servers' objects)
    scanRedirects @20 :Scan;      # fsck; reply: redirects (remote entries of the logs here)
    dropRedirect @21 :FragmentRef;  # fsck --repair; reply: none. Forgets the entries naming
                                  # this fragment: reads of their ranges see home's bytes again
    allocate @22 :Allocate;       # fallocate; reply: none. not_supported when the server's file
                                  # system cannot (the client then says EOPNOTSUPP)
    seek @23 :Seek;               # lseek SEEK_DATA / SEEK_HOLE in one object; reply: seek
  }

  struct Allocate {               # one range of one object, sent to its home server
    object @0 :ObjectId;
    offset @1 :UInt64;            # the range [offset, offset + length) of the object
    length @2 :UInt64;            # 0 without punch: only make sure the object exists (a hole
                                  # spans it; fsck then does not take it for a lost one)
    punch @3 :Bool;               # false: reserve disk blocks for the range (the object's size
                                  # does not change; no_space when they cannot be had);
                                  # true: free them, the range reads as zeros afterwards,
                                  # redirected parts included
  }
  struct Seek {
    object @0 :ObjectId;
    offset @1 :UInt64;            # object offset to look from
    hole @2 :Bool;                # false: the first byte of data at or after `offset`;
                                  # true: the first byte of a hole (the object's end counts)
  }

  struct Scan {                   # one page of a listing in (ino, index) order
    after @0 :ObjectId;           # start after this object ((0, 0): from the start)
    max @1 :UInt32;               # at most this many items (the server may return fewer)
  }

  struct Write {
    object @0 :ObjectId;
    offset @1 :UInt64;
    sync @2 :Bool;                # durable on disk before the reply (O_SYNC, O_DSYNC)
    fragment @3 :UInt64;          # 0: write the object here (its home); else store the
                                  # data as this fragment of the object (a redirected write)
    round @4 :UInt64;             # the probe round that chose this server (0: none)
    seen @5 :List(ServerLoad);    # loads the client saw in that round, for this server to learn
    fallback @6 :Bool;            # sent home after a redirect failed (counted in schedStatus)
    urgent @7 :Bool;              # serve within maxServiceMs (mandatory deadline; O_SYNC writes)
    maxServiceMs @8 :UInt32;
  }
  struct Read {
    object @0 :ObjectId;
    offset @1 :UInt64;
    length @2 :UInt32;
    urgent @3 :Bool;              # a process is blocked on it and the server is overloaded
    maxServiceMs @4 :UInt32;
  }
  struct Probe {
    round @0 :UInt64;             # the client's probe round; 0: only asking (no preassign)
    pieceBytes @1 :UInt64;        # typical piece length of the round (preassign's len)
    preassign @2 :Bool;           # count P(load) x pieceBytes as expected load until decided
  }
  struct ProbeDone {
    round @0 :UInt64;             # the client gave this round's pieces to other servers
  }
  struct Redirect {               # sent to the home server after a fragment was written
    object @0 :ObjectId;
    offset @1 :UInt64;            # the range [offset, offset + length) of the object
    length @2 :UInt64;
    server @3 :UInt32;            # now lives on this server
    fragment @4 :UInt64;          # as this fragment, whose byte 0 is object offset `offset`
    sync @5 :Bool;                # the entry is on stable storage before the reply
  }
  struct ReadFragment {
    object @0 :ObjectId;
    fragment @1 :UInt64;
    offset @2 :UInt64;            # offset inside the fragment
    length @3 :UInt32;
    background @4 :Bool;          # a maintainer's pull-back: yields to client requests
  }
  struct ElevatorControl {
    policy @0 :Text;              # "obrr" or "fcfs" to switch; "" to only report
  }
  struct Inject {
    delayFactor @0 :Float64;      # serve data requests this many times slower (1: normal)
    seconds @1 :UInt32;           # for this long (0: until told otherwise)
  }
  struct Truncate {
    object @0 :ObjectId;
    size @1 :UInt64;
  }
  struct Remove {
    objects @0 :List(ObjectId);   # missing objects are not an error
  }
}

# A server's load as it reported it, or as another server learned it.
struct ServerLoad {
  server @0 :UInt32;
  requests @1 :UInt32;            # outstanding data requests (queued + in service)
  bytes @2 :UInt64;               # their bytes
  preassigned @3 :UInt64;         # expected bytes of probes not yet decided
  ageMs @4 :UInt32;               # how old the figure is (0: measured now)
}

# Where part of a read range lives when it is not at home.
struct RedirectedRange {
  offset @0 :UInt64;              # object offset
  length @1 :UInt64;
  server @2 :UInt32;
  fragment @3 :UInt64;
  fragmentOffset @4 :UInt64;      # where `offset` is inside the fragment
}

struct Reply {
  union {
    none @0 :Void;                # truncate, remove, fsync, probeDone, redirect, dropFragments, inject,
                                  # allocate
    written @1 :UInt64;           # write: bytes written (always all of them on success)
    read @2 :ReadResult;
    stat @3 :ObjectStat;
    statfs @4 :Statfs;
    status @5 :Common.DaemonStatus;
    load @6 :LoadReport;
    schedStatus @7 :SchedStatus;
    elevator @8 :ElevatorStatus;
    metrics @9 :List(Common.MetricFamily);
    objects @10 :ObjectList;
    fragments @11 :FragmentList;
    redirects @12 :RedirectList;
    seek @13 :SeekResult;
  }
  writeLoad @14 :ServerLoad;      # write replies (written): the server's load as the write left
                                  # it, this write not counted, so clients know every server's
                                  # load without probing; absent from servers before it existed


  struct SeekResult {             # redirected ranges count as data
    found @0 :Bool;               # false: no data at or after the offset (SEEK_DATA only)
    offset @1 :UInt64;            # object offset of what was looked for, when found
  }

  # Pages of the fsck scans. `eof`: nothing after the last item; otherwise ask
  # again with `after` set to the last item's object.
  struct ObjectList {
    objects @0 :List(ObjectSummary);
    eof @1 :Bool;
  }
  struct ObjectSummary {
    object @0 :ObjectId;
    size @1 :UInt64;              # bytes of the object file here (redirected ranges not included)
  }
  struct FragmentList {
    fragments @0 :List(HeldFragment);
    eof @1 :Bool;
  }
  struct HeldFragment {
    fragment @0 :FragmentRef;
    bytes @1 :UInt64;
    ageMs @2 :UInt64;             # since it was written
    onDisk @3 :Bool;              # false: recorded as held but its file is gone
  }
  struct RedirectList {
    entries @0 :List(RedirectEntry);
    eof @1 :Bool;
  }
  struct RedirectEntry {          # a range of `object` (homed here) that lives elsewhere;
                                  # length 0: no range, the fragment waits to be dropped (gc)
    object @0 :ObjectId;
    offset @1 :UInt64;
    length @2 :UInt64;
    server @3 :UInt32;
    fragment @4 :UInt64;
  }

  struct ReadResult {
    bytes @0 :UInt64;             # local bytes in the reply data (< length past the end of the
                                  # local object; the rest reads as zeros unless redirected)
    redirected @1 :List(RedirectedRange);  # parts to fetch from other servers instead
  }
  struct ElevatorStatus {
    policy @0 :Text;
    # Per class, indexed normal (0), urgent (1), background (2).
    queued @1 :List(UInt64);
    inService @2 :List(UInt64);
    completed @3 :List(UInt64);
    p50Us @4 :List(UInt64);       # service time, arrival to completion
    p99Us @5 :List(UInt64);
    objectsQueued @6 :UInt64;
    dispatches @7 :UInt64;        # backend operations, after merging
    seeks @8 :UInt64;             # dispatches not contiguous with the previous one
    dynamicExpiries @9 :UInt64;   # served because a dynamic deadline expired
    mandatoryExpiries @10 :UInt64;  # served early to meet an urgent maximum
    expirationUs @11 :UInt64;     # the dynamic deadline a request would get now
    dispatchedSizes @12 :List(UInt64);  # operations by size: bucket k holds [2^k, 2^(k+1)) bytes
    emulatedDisk @13 :Bool;
    emulatedSeeks @14 :UInt64;
    bandwidth @15 :Text;          # the calibration the deadlines use (pvfs-bandwidth-v1 ...)
    queueDepth @16 :UInt32;
  }
  struct LoadReport {
    self @0 :ServerLoad;
    others @1 :List(ServerLoad);  # loads this server learned recently (younger than the TTL)
  }
  struct SchedStatus {
    load @0 :ServerLoad;
    redirectObjects @1 :UInt64;   # objects whose redirect log is not empty
    redirectEntries @2 :UInt64;   # remote entries in those logs
    fragments @3 :UInt64;         # fragments held for other servers' objects
    fragmentBytes @4 :UInt64;
    pulledBytes @5 :UInt64;       # bytes the maintainers brought home since start
    pulls @6 :UInt64;
    redirectsRecorded @7 :UInt64; # redirect entries appended since start
    fallbacks @8 :UInt64;         # writes sent home after a failed redirect
    probes @9 :UInt64;
    gcPending @10 :UInt64;        # fragments elsewhere waiting to be dropped
    delayFactor @11 :Float64;     # straggler injection in force (1: none)
    delayRemainingMs @12 :UInt32; # 0: none or until told otherwise
    preassignProbability @13 :List(Float64);  # P(chosen) per load level
  }

  struct ObjectStat {
    exists @0 :Bool;
    size @1 :UInt64;
    blocks @2 :UInt64;            # 512-byte blocks the local object file has allocated
                                  # (st_blocks; fragments held elsewhere not included)
    dataEnd @3 :UInt64;           # first object byte past its data here and in the fragments
                                  # its redirect log names (>= size); the MDS sets a file's size
                                  # from it when the writing client died (pvfs-mds(8))
  }
  struct Statfs {
    capacityBytes @0 :UInt64;
    freeBytes @1 :UInt64;
  }
}
