# The metadata service (pvfs-mds): namespace, attributes, layouts, and the
# registry of storage servers. Clients, storage servers and pvfs-ctl speak it.
#
# Every operation that needs permission checks carries a Caller. Inode
# numbers carry their file set id in the top 16 bits (shared/ids.h).
# Failures travel in Envelope.status; a reply body is set only on success.
@0xc401144156d87d97;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("pvfs::proto::mds");

using Common = import "common.capnp";
using Caller = Common.Caller;
using Timespec = Common.Timespec;
using Layout = Common.Layout;
using LayoutPolicy = Common.LayoutPolicy;
using ServerInfo = Common.ServerInfo;

# Full POSIX attributes of one inode.
struct Attr {
  ino @0 :UInt64;
  mode @1 :UInt32;        # type and permission bits, as st_mode
  uid @2 :UInt32;
  gid @3 :UInt32;
  size @4 :UInt64;
  nlink @5 :UInt32;
  rdev @6 :UInt32;
  atime @7 :Timespec;
  mtime @8 :Timespec;
  ctime @9 :Timespec;
  layout @10 :Layout;     # regular files only
  noSecurityXattrs @11 :Bool;  # hint: no security.* xattrs when read (false: unknown)
  blocks @12 :Int64 = -1; # regular files: 512-byte blocks the storage servers had allocated for
                          # the file's objects when a writer last published it (st_blocks);
                          # -1: not known (inodes older than the field): estimate from the size
  writtenElsewhere @13 :Bool;  # hint: another client writes this file and has not closed it, so
                               # `size` may be behind its data (the client asks the storage servers)
}

# Which Setattr fields to apply (bit mask).
const setMode :UInt32 = 1;
const setUid :UInt32 = 2;
const setGid :UInt32 = 4;
const setSize :UInt32 = 8;
const setAtime :UInt32 = 16;      # to `atime`
const setMtime :UInt32 = 32;      # to `mtime`
const setAtimeNow :UInt32 = 64;   # to the server's clock
const setMtimeNow :UInt32 = 128;
const setCtime :UInt32 = 256;     # to `ctime` (rarely used)

# Rename flags, as renameat2(2).
const renameFlagNoReplace :UInt32 = 1;
const renameFlagExchange :UInt32 = 2;

struct DirEntry {
  name @0 :Text;
  ino @1 :UInt64;
  mode @2 :UInt32;        # only the type bits are guaranteed without `attr`
  cookie @3 :UInt64;      # pass back as Readdir.cookie to continue after this entry
  attr @4 :Attr;          # set when Readdir.plus
}

struct Request {
  caller @0 :Caller;
  union {
    lookup @1 :Lookup;
    getattr @2 :Getattr;
    setattr @3 :Setattr;
    mknod @4 :Mknod;              # regular files (create), FIFOs, sockets, devices
    mkdir @5 :Mkdir;
    unlink @6 :Unlink;
    rmdir @7 :Rmdir;
    symlink @8 :Symlink;
    readlink @9 :Getattr;
    rename @10 :Rename;
    link @11 :Link;
    readdir @12 :Readdir;
    setxattr @13 :Setxattr;
    getxattr @14 :Getxattr;
    listxattr @15 :Getattr;
    removexattr @16 :Getxattr;
    statfs @17 :Void;
    access @18 :Access;
    open @19 :Access;             # checks permission for O_RDONLY/O_WRONLY/O_RDWR (mask R=4 W=2)
    updateSize @20 :UpdateSize;
    getServers @21 :Void;
    registerServer @22 :ServerInfo;
    heartbeat @23 :ServerInfo;
    status @24 :Void;
    setLayout @25 :SetLayout;
    getLayoutPolicy @26 :Getattr;
    releaseOrphan @27 :Getattr;   # an unlinked file the client held open is closed now
    metrics @28 :Void;            # reply: metrics
    setLogLevel @29 :Text;        # reply: none; "trace", "debug", "info", "warn", "error", "off"
    scanFiles @30 :ScanFiles;     # fsck; reply: files
    makeFileSet @31 :Getattr;     # root only: the empty directory `ino` becomes the root of a
                                  # new file set (a new inode number); reply: fileSet

    # ---- the MDS cluster (mds/cluster/): ANU placement of file sets ----
    getMap @32 :Void;             # reply: map (any member answers with the newest map it has)
    peerPing @33 :PeerPing;       # member to member, every heartbeat; reply: peer
    setMap @34 :Text;             # the delegate distributes a new map (AnuMap::serialize());
                                  # reply: none; an older or equal version is ignored
    shipFileSet @35 :ShipChunk;   # one piece of a file set moving here; data: the bytes; reply: none
    detachFileSet @36 :UInt16;    # the owner of a file set's root entry removes it (rmdir):
                                  # the owner of the set checks its root is empty and stops
                                  # taking creates in it; reply: none, or notEmpty
    clusterStatus @37 :Void;      # pvfs-ctl mds; reply: cluster

    # ---- durability ----
    syncFileSet @38 :Getattr;     # fsync/fdatasync of `ino` or fsync of directory `ino`: replies
                                  # (none) once every change to the file set of `ino` committed
                                  # before the request arrived is on the MDS's disk (one LMDB sync,
                                  # shared by the requests for that set that arrive meanwhile)

    # ---- job I/O steps under a global scheduler (mds/iosched; Thapaliya et
    # al., burst-buffer interference) ----
    ioStep @39 :IoStep;           # to the delegate (others answer unavailable, naming it);
                                  # reply: ioStep
    ioschedStatus @40 :Void;      # pvfs-ctl iosched, on the delegate; reply: iosched
    ioschedPolicy @41 :Text;      # pvfs-ctl iosched policy: "none", "fcfs", "sjf", "sa-fcfs",
                                  # "sa-sjf" until the delegate changes; reply: iosched

    # ---- locks across clients (mds/lock_host.h; pvfsmount(8), "Locks") ----
    lock @42 :Lock;               # to the owner of `ino`'s file set; reply: lock
    lockStatus @43 :UInt64;       # pvfs-ctl locks: the locks and waiters of inode N (0: of every
                                  # file set this member holds; routed by N otherwise); reply: locks

    # ---- per-job QoS from execution-time goals (mds/qos_host.h; U-Shape,
    # Zhang, Davis, Jiang). All go to the delegate; others answer
    # unavailable, naming it ----
    qosSet @44 :QosGoal;          # pvfs-ctl qos set: a job's goal, kept by every live member before
                                  # the reply; reply: qos
    qosClear @45 :Text;           # pvfs-ctl qos clear JOB; notFound for a job without a goal; reply: qos
    qosStatus @46 :Void;          # pvfs-ctl qos status / list; reply: qos
    qosPolicy @47 :Text;          # pvfs-ctl qos policy: "off", "average" or "ushape" until changed
                                  # again (outlives the delegate); reply: qos
    qosReport @48 :QosReport;     # a storage server's last period; reply: qosPlan
    qosProfile @49 :QosProfileRequest;  # pvfs-ctl qos profile: start or end a job's profiling run;
                                  # reply: qosModel (the end answers once the servers' last records
                                  # are in, about two periods later)
    qosTrain @50 :QosTrainRequest;  # pvfs-ctl qos train: trains the job's model from its ended
                                  # profile; reply: qosModel
    qosShow @51 :Text;            # pvfs-ctl qos show JOB; notFound for a job with neither profile
                                  # nor model; reply: qosModel

    # ---- durability, continued ----
    holdOrphan @52 :Getattr;      # the client still has unlinked file `ino` open (Unlink.keepOpen):
                                  # renews its lease (mds/orphan_holds.h); reply: orphanLease;
                                  # notFound once the file is no longer kept
    openFiles @53 :OpenFiles;     # the client has these files open still (mds/open_leases.h);
                                  # reply: openFiles
    appendAt @54 :AppendAt;       # an O_APPEND write: where its bytes go; reply: appendAt

    # ---- directory leases (mds/dir_lease_table.h; pvfsmount(8), CONSISTENCY) ----
    leaseDir @55 :LeaseDir;       # every name in directory `ino` (hashed), and the MDS's promise to
                                  # recall them (recallDirLease) before it adds a name there for
                                  # another connection; needs read and search permission; reply:
                                  # dirLease; notSupported when leases are off ([mds_tuning]
                                  # dir_lease_ms = 0), tooBig past dir_lease_max_entries
    recallDirLease @56 :UInt64;   # MDS to client, over the client's own connection: forget the
                                  # names leaseDir gave of directory N; reply: none
  }

  struct LeaseDir {
    ino @0 :UInt64;
    renew @1 :Bool;               # extend the lease this connection holds on `ino` by a term from
                                  # now, names unchanged (the reply lists none); notFound when it
                                  # holds none (recalled, or ended)
  }

  struct QosProfileRequest {
    job @0 :Text;
    sharePct @1 :UInt32;          # start: the job's share of every period, 1..100 (0: 100)
    end @2 :Bool;                 # end the running profile of `job`
    ioTimeNs @3 :UInt64;          # end: the job's own measured I/O time; 0: the busiest server's
                                  # summed service time
  }
  struct QosTrainRequest {
    job @0 :Text;
    runtimeMs @1 :UInt64;         # T_real the model is trained for; 0: the job's goal, or else
                                  # the profiled time (alpha 1); rescaled to each goal at run time
  }

  # A job's execution-time goal.
  struct QosGoal {
    job @0 :Text;                 # non-empty, at most kMaxJobIdBytes
    runtimeMs @1 :UInt64;         # the required execution time, > 0
    startUnixMs @2 :Int64;        # when the clock starts; 0: at the job's first I/O a server reports
    bytes @3 :UInt64;             # the job's total I/O, for the `average` bound; 0: unknown
    fromEnv @4 :Bool;             # set by the job's client from PVFS_QOS_RUNTIME: an existing goal
                                  # is kept as it is (reply: qos all the same)
  }

  # What one storage server saw of each job in the period just ended.
  struct QosReport {
    server @0 :UInt32;
    periodMs @1 :UInt32;          # the length it measured over
    jobs @2 :List(QosJobReport);
    seq @3 :UInt64;               # increases with each report of the server, across its restarts; a
                                  # report resent because no answer came keeps its number, and the
                                  # coordinator counts a number once (0: unnumbered, always counted)
  }
  struct QosJobReport {
    job @0 :Text;                 # "": requests without a job id (best effort)
    bytes @1 :UInt64;             # served for it
    windowBytes @2 :UInt64;       # of those, the part whose service fell in its own window (by time)
    requests @3 :UInt64;
    queued @4 :Bool;              # it has requests waiting now
    avgDistBytes @5 :Float64;     # §3.1's AvgDist over the period's epochs (request-weighted)
    avgSizeBytes @6 :Float64;     # §3.1's AvgSize likewise
    serviceNs @7 :UInt64;         # §3.1's summed service time
    seekCostNs @8 :UInt64;        # what a request of it pays when served among others (a seek)
    idleCostNs @9 :UInt64;        # mean gap from one completion to its next arrival here
    epochs @10 :List(QosEpoch);   # each epoch's record of a job being profiled (QosPlan.profiling)
                                  # or, under ushape, with a goal (QosPlan.goals)
    goalBytes @11 :UInt64;        # served for it since this server learned of its goal (a job in
                                  # QosPlan.goals), in every report while the goal lasts: what a new
                                  # delegate counts the job's bytes done from (0: no goal known)
    clientSpans @12 :List(QosClientSpan);  # a job being profiled: the clients' I/O time stamps
                                  # (Envelope.jobIoNs) on its requests served this period
    goalId @13 :UInt64;           # the goal goalBytes counts for (QosPlan.goalIds); the coordinator
                                  # takes goalBytes only for the job's current goal
  }
  struct QosClientSpan {
    client @0 :UInt64;            # Envelope.clientId
    firstNs @1 :UInt64;           # the lowest jobIoNs seen from it
    lastNs @2 :UInt64;            # the highest
  }
  # policy/qos/locality.h's EpochSample of one job at the reporting server.
  struct QosEpoch {
    epoch @0 :Int64;              # index on the server's steady clock
    requests @1 :UInt64;
    avgDistBytes @2 :Float64;
    avgSizeBytes @3 :Float64;
    bytes @4 :UInt64;
    serviceNs @5 :UInt64;
  }

  # One lock operation of a client process. Every one renews the client's
  # lease in the file set's lock table; a client that sends nothing to it
  # for a lease loses its locks there and their waiters are granted.
  struct Lock {
    ino @0 :UInt64;
    client @1 :UInt64;            # random per pvfsmount process, never 0: the lease holder
    owner @2 :UInt64;             # the kernel's lock owner (a process's files, or an open file)
    op @3 :LockOp;
    flock @4 :Bool;               # flock(2)'s namespace (whole file); false: POSIX and OFD locks
    exclusive @5 :Bool;           # F_WRLCK / LOCK_EX; false: F_RDLCK / LOCK_SH
    first @6 :UInt64;             # the range's first byte
    last @7 :UInt64;              # its last byte, inclusive; 2^64-1: to the end of the file
    pid @8 :UInt32;               # the locking process on its client (getlk reports it)
    waiter @9 :UInt64;            # setlkw, cancel: the waiter the previous answer named (0: none)
  }
  enum LockOp {
    getlk @0;                     # the first conflicting lock, if any (reply: conflict)
    setlk @1;                     # granted, or conflict
    setlkw @2;                    # granted, deadlock, or waiting: the member holds the answer
                                  # until the waiter is granted or ~200 ms passed; the client
                                  # asks again with `waiter` (renewing it) until granted
    unlock @3;                    # [first, last] of the owner's locks of the namespace
    cancel @4;                    # withdraw `waiter` (an interrupted F_SETLKW); one granted
                                  # meanwhile gives its range back
    release @5;                   # close: every lock and waiter of the owner on `ino`
    renew @6;                     # only renews the lease (reply: holds)
  }

  # One client's whole view of its I/O steps, sent when it opens, joins or
  # ends a step, every 100 ms while one waits for its token, and every
  # third of a lease otherwise. Every claim renews the client's lease on
  # that step; a delegate that does not know a claimed step (it just took
  # over) opens it from the claim, so queues survive failover.
  struct IoStep {
    client @0 :UInt64;            # random per client process, never 0: the lease holder
    claims @1 :List(StepClaim);   # steps the client is in (opened or joined if new)
    ends @2 :List(StepEnd);       # steps the client leaves
  }
  struct StepClaim {
    job @0 :Text;                 # non-empty, at most kMaxJobIdBytes
    declaredBytes @1 :UInt64;     # the step's size for SJF; 0: not declared (predicted or unknown)
    servers @2 :List(UInt32);     # storage servers it writes to; empty: all
    holdsToken @3 :Bool;          # the client was granted this step (by this or a former delegate)
    bytesWritten @4 :UInt64;      # so far, by this client
  }
  struct StepEnd {
    job @0 :Text;
    bytesWritten @1 :UInt64;      # by this client in the step
  }

  struct PeerPing {
    from @0 :UInt32;              # the sender's MDS id
    map @1 :Text;                 # the newest map the sender has (the receiver adopts a newer one)
    setting @2 :ClusterSetting;   # the sender's newest I/O scheduling policy (pvfs-ctl iosched policy)
  }

  # A run-time setting every member keeps, so that it outlives the delegate
  # that took it: the higher version wins (equal versions: the smaller value).
  struct ClusterSetting {
    ioschedPolicy @0 :Text;       # empty: the configuration's [iosched] policy
    version @1 :UInt64;           # 0: never switched at run time
    qos @2 :Text;                 # the QoS goals and policy (mds/qos_goals.h's file format)
    qosVersion @3 :UInt64;        # 0: none ever set; the higher wins
    qosModels @4 :Text;           # the QoS profiles and models (mds/qos_models.h's file format),
                                  # only to a member known to hold an older version; else empty
    qosModelsVersion @5 :UInt64;  # the sender's version of them (0: none); the higher wins
  }

  struct ShipChunk {
    set @0 :UInt16;
    shipId @1 :UInt64;            # random per attempt; a repeated last chunk of the same
                                  # attempt is answered ok again (the reply may have been lost)
    offset @2 :UInt64;
    totalBytes @3 :UInt64;
    last @4 :Bool;                # the receiver syncs, opens and serves the set, then replies
  }

  struct ScanFiles {              # one page of the regular files, in inode order
    after @0 :UInt64;             # start after this inode (0: from the start)
    max @1 :UInt32;               # at most this many (the server may return fewer)
  }

  struct Lookup { parent @0 :UInt64; name @1 :Text; }
  struct Getattr { ino @0 :UInt64; }
  struct Setattr {
    ino @0 :UInt64;
    mask @1 :UInt32;              # set* constants above
    mode @2 :UInt32;
    uid @3 :UInt32;
    gid @4 :UInt32;
    size @5 :UInt64;
    atime @6 :Timespec;
    mtime @7 :Timespec;
    ctime @8 :Timespec;
  }
  struct Mknod { parent @0 :UInt64; name @1 :Text; mode @2 :UInt32; rdev @3 :UInt32; exclusive @4 :Bool; }
  struct Mkdir { parent @0 :UInt64; name @1 :Text; mode @2 :UInt32; }
  struct Unlink {
    parent @0 :UInt64;
    name @1 :Text;
    keepOpen @2 :Bool;            # caller still has the file open: keep its data until releaseOrphan
                                  # (or until the caller fails to renew it by holdOrphan for a lease)
  }
  struct Rmdir { parent @0 :UInt64; name @1 :Text; }
  struct Symlink { parent @0 :UInt64; name @1 :Text; target @2 :Text; }
  struct Rename {
    parent @0 :UInt64;
    name @1 :Text;
    newParent @2 :UInt64;
    newName @3 :Text;
    flags @4 :UInt32;
    keepOpen @5 :Bool;            # caller has the replaced file open: keep its data until releaseOrphan
  }
  struct Link { ino @0 :UInt64; newParent @1 :UInt64; newName @2 :Text; }
  struct Readdir {
    ino @0 :UInt64;
    cookie @1 :UInt64;            # 0 = from the start
    maxEntries @2 :UInt32;
    plus @3 :Bool;                # include full attributes
  }
  struct Setxattr { ino @0 :UInt64; name @1 :Text; value @2 :Data; flags @3 :UInt32; }  # XATTR_CREATE=1, XATTR_REPLACE=2
  struct Getxattr { ino @0 :UInt64; name @1 :Text; }
  struct Access {
    ino @0 :UInt64;
    mask @1 :UInt32;              # R_OK=4 W_OK=2 X_OK=1, F_OK=0
    heldHere @2 :Bool;            # open only: the caller unlinked the file while holding it open
                                  # (a reopen through /proc/PID/fd), so it may open it after that
  }
  struct UpdateSize {
    ino @0 :UInt64;
    size @1 :UInt64;              # new size is max(current, size): writers only grow a file
    touchMtime @2 :Bool;          # data was written: set mtime and ctime to now
    writer @3 :Writer;            # whether the sender starts or stops writing `ino` (below)
    blocks @4 :Int64 = -1;        # 512-byte blocks the file's objects hold on the storage
                                  # servers, as the sender counted them after its writes (Attr.blocks);
                                  # -1: not counted, keep the recorded number
    base @5 :UInt64;              # the size the sender's view of the file started from (the MDS's
                                  # at its open or last publish). Above the recorded size, another
                                  # client cut the file since: `size` may count bytes that cut
                                  # removed, so the MDS takes no more than the storage servers
                                  # hold. 0: unknown (senders before this field)

    # A client that writes a file says so before its first write is
    # acknowledged, and says when it stops, both over the connection it
    # keeps to this MDS. If that connection ends while the client still
    # writes the file (the client died), the MDS sets the file's size from
    # what the storage servers hold, so acknowledged bytes stay visible.
    enum Writer {
      unchanged @0;               # only the size (and mtime)
      starts @1;                  # the sender may write `ino` from now on
      stops @2;                   # the sender has published its last size of `ino`
    }
  }
  struct SetLayout { ino @0 :UInt64; policy @1 :LayoutPolicy; }
  struct OpenFiles {
    inos @0 :List(UInt64);        # all in one file set (routed by the first); at most 4096
    check @1 :Bool;               # also say which of them are gone (the reply's `gone`)
  }

  # Appends from several clients to one file must not land on each other:
  # each asks the MDS, which owns the file's size, for the place of its
  # bytes. The MDS answers the end of the file (counting bytes other
  # clients wrote and have not published yet: it asks the storage servers
  # while another client writes the file) and grows the size past them
  # before it answers, so the next append lands after them.
  struct AppendAt {
    ino @0 :UInt64;
    length @1 :UInt64;            # bytes to append, > 0
    knownSize @2 :UInt64;         # the size the sender knows, its unpublished writes included
  }
}

struct Reply {
  union {
    attr @0 :Attr;                # lookup, getattr, setattr, mknod, mkdir, symlink, link, access, open, updateSize, setLayout
    none @1 :Void;                # rmdir, rename, setxattr, removexattr, registerServer, heartbeat, releaseOrphan
    unlink @2 :UnlinkReply;
    readlink @3 :Text;
    readdir @4 :ReaddirReply;
    xattr @5 :Data;               # getxattr
    xattrNames @6 :List(Text);    # listxattr
    statfs @7 :StatfsReply;
    servers @8 :List(ServerInfo);
    status @9 :Common.DaemonStatus;
    layoutPolicy @10 :LayoutPolicy;
    metrics @11 :List(Common.MetricFamily);
    files @12 :FileList;
    fileSet @13 :FileSetMade;
    map @14 :Text;                # getMap: AnuMap::serialize()
    peer @15 :PeerState;          # peerPing
    cluster @16 :ClusterState;    # clusterStatus
    ioStep @17 :IoStepReply;
    iosched @18 :IoschedState;    # ioschedStatus, ioschedPolicy
    lock @19 :LockReply;
    locks @20 :LockTableState;    # lockStatus
    qos @22 :QosState;            # qosSet, qosClear, qosStatus, qosPolicy
    qosPlan @23 :QosPlan;         # qosReport
    qosModel @25 :QosModelState;  # qosProfile, qosTrain, qosShow
    orphanLease @26 :UInt32;      # holdOrphan: ms the hold lasts unless renewed again
    openFiles @27 :OpenFilesReply;
    appendAt @28 :UInt64;         # appendAt: the file offset the bytes go to
    dirLease @29 :DirLease;       # leaseDir
  }

  # A directory's names as they were when the MDS answered, valid termMs from
  # when the client sent leaseDir unless recalled first. Each name is hashed
  # with SipHash-2-4 (libsodium's crypto_shorthash) under `key`, drawn for
  # this lease: a name whose hash is not listed is not in the directory.
  struct DirLease {
    termMs @0 :UInt32;
    key @1 :Data;                 # crypto_shorthash_KEYBYTES (16)
    names @2 :List(UInt64);
  }

  # The plan a storage server enforces: `windows` in order from each period
  # start, periods of periodMs from startUnixNs on the delegate's wall
  # clock (the hosts' clocks agree: NTP or chrony), for `repeat` periods.
  struct QosPlan {
    policy @0 :Text;              # "off": clear any plan
    periodMs @1 :UInt32;
    startUnixNs @2 :Int64;        # 0: no plan yet (every job admitted)
    repeat @3 :UInt32;
    windows @4 :List(QosWindow);
    sharedMembers @5 :List(Text);
    goals @6 :List(Text);         # jobs with a goal (the others are best effort)
    profiling @7 :List(Text);     # jobs being profiled: report their epochs (QosJobReport.epochs)
    goalIds @8 :List(UInt64);     # goals[i]'s id: a job given a goal again gets a new one, and a
                                  # server then counts its goalBytes from 0 (shorter from an older
                                  # delegate: ids 0)
  }
  struct QosWindow {
    kind @0 :Text;                # "dedicated", "shared" or "best-effort"
    job @1 :Text;                 # dedicated only
    lengthNs @2 :Int64;
  }
  struct QosState {               # the delegate's coordinator
    delegate @0 :UInt32;
    policy @1 :Text;
    periodMs @2 :UInt32;
    epochMs @3 :UInt32;
    version @4 :UInt64;           # of the goals and policy every member keeps
    replicas @5 :UInt32;          # members that acknowledged this version (the delegate included)
    servers @6 :List(UInt32);     # storage servers that reported in the last two periods
    jobs @7 :List(QosJobState);   # by job id
    windows @8 :List(QosWindow);  # the plan in force
    planStartUnixNs @9 :Int64;
  }
  struct QosJobState {
    job @0 :Text;
    runtimeMs @1 :UInt64;         # the goal
    startUnixMs @2 :Int64;        # 0: not started (no I/O reported yet)
    bytes @3 :UInt64;             # the goal's declared total; 0: unknown
    elapsedMs @4 :UInt64;
    projectedMs @5 :UInt64;       # projected execution time; 0: unknown (no declared bytes)
    boundBps @6 :Float64;         # B_required now, all servers
    boundSource @7 :Text;         # "average", "none (no model and no --bytes)", "off"
    throughputBps @8 :Float64;    # achieved in the last period, all servers
    bytesDone @9 :UInt64;         # served since the goal started, all servers
    windowMs @10 :Float64;        # its dedicated window (0: shared or none)
    dedicated @11 :Bool;
    lossMs @12 :Float64;          # T_loss recorded and not yet made up
    cutMs @13 :Float64;           # T_cut taken from it in the last plan
    behind @14 :Bool;             # projected past the goal, or the goal's time is up (not done)
    doneMs @15 :UInt64;           # the job served its declared bytes this long after its start,
                                  # to within a period; 0: not done (or no declared bytes)
    promoted @16 :Bool;           # dedicated because it fell behind its bound in the shared window
  }
  # A job's profiling run and model as the metadata cluster keeps them.
  struct QosModelState {
    job @0 :Text;
    version @1 :UInt64;           # of the profiles and models every member keeps
    replicas @2 :UInt32;          # members that acknowledged it (the delegate included)
    hasProfile @3 :Bool;
    profiling @4 :Bool;           # the run has not ended
    sharePct @5 :UInt32;
    startUnixMs @6 :Int64;
    endUnixMs @7 :Int64;
    profileNs @8 :Int64;          # T_profile (0 while running)
    compNs @9 :Int64;             # T_comp
    ioFromJob @10 :Bool;          # the I/O time came from the job; false: the busiest server's
    records @11 :UInt64;          # per-server epoch records kept
    dropped @12 :UInt64;          # and not kept (past the limit)
    profileBytes @13 :UInt64;
    hasModel @14 :Bool;
    revision @15 :UInt64;         # the version it was trained in
    formatVersion @16 :UInt32;    # of the model file
    depth @17 :UInt32;
    leaves @18 :UInt32;
    nodes @19 :UInt32;
    cvError @20 :Float64;         # cross-validated mean relative error
    met @21 :Bool;                # below the threshold
    samples @22 :UInt64;          # training set size
    profileSamples @23 :UInt64;   # of those from the profile (the rest synthetic)
    alpha @24 :Float64;
    requiredNs @25 :Int64;        # T_real it was trained for
    trainedUnixMs @26 :Int64;
    model @27 :Text;              # the model file itself
    ioFromClients @28 :Bool;      # the I/O time came from the clients' timing (ioFromJob false)
    clients @29 :UInt32;          # clients that timed the job's requests in the run
  }
  # mknod, mkdir, symlink, link, unlink, rmdir: the parent directory's
  # attributes read just after the change (NFS's post-op attributes), so the
  # client can answer the kernel's GETATTR of the changed directory without
  # asking again. Unset: not known (older MDS, or the read failed).
  parentAttr @21 :Attr;
  # lookup: the entry's place in its directory's listing (its readdir
  # cookie), so a client walking a directory in listing order can fetch the
  # entries that follow (statahead). 0: not known (older MDS).
  entryCookie @24 :UInt64;

  struct LockReply {
    outcome @0 :LockOutcome;
    waiter @1 :UInt64;            # waiting: ask again with this
    leaseMs @2 :UInt32;           # renew well within this
    holds @3 :Bool;               # the client still holds or awaits a lock in this file set
    conflict @4 :LockInfo;        # getlk: the conflicting lock, when hasConflict
    hasConflict @5 :Bool;
  }
  enum LockOutcome {
    granted @0;                   # also: done (getlk, unlock, cancel, release, renew)
    conflict @1;                  # setlk: another owner holds a conflicting lock (EAGAIN)
    waiting @2;                   # setlkw: queued as `waiter`
    deadlock @3;                  # setlkw: waiting would close a cycle of owners (EDEADLK)
  }
  struct LockInfo {               # a lock held, or a waiter
    ino @0 :UInt64;
    client @1 :UInt64;
    owner @2 :UInt64;
    flock @3 :Bool;
    exclusive @4 :Bool;
    first @5 :UInt64;
    last @6 :UInt64;
    pid @7 :UInt32;
    waiter @8 :UInt64;            # waiters: their id (0 for a lock held)
    waitMs @9 :UInt64;            # waiters: since they queued
  }
  struct LockTableState {         # lockStatus, as one member sees its file sets
    member @0 :UInt32;
    leaseMs @1 :UInt32;
    held @2 :List(LockInfo);      # by inode, namespace, first byte
    waiters @3 :List(LockInfo);   # by inode, namespace, arrival
  }

  struct IoStepReply {
    granted @0 :List(Text);       # jobs of the request's claims whose step holds a token
    leaseMs @1 :UInt32;           # renew well within this
    ended @2 :List(Text);         # jobs of the request's ends whose step is over
  }
  struct IoschedState {           # the delegate's scheduler
    delegate @0 :UInt32;
    policy @1 :Text;
    leaseMs @2 :UInt32;
    maxWaitS @3 :Float64;         # starvation guard; 0: off
    active @4 :List(IoStepState); # holding tokens, in grant order
    pending @5 :List(IoStepState);  # in the order the policy would serve them
    jobs @6 :List(IoJobTotals);
    graceMs @7 :UInt32;           # > 0: just took over, grants wait this long for re-registration
    gatherMs @8 :UInt32;          # [iosched] gather_ms; 0: off
  }
  struct IoStepState {
    job @0 :Text;
    bytes @1 :UInt64;             # declared or predicted; 0: unknown
    source @2 :Text;              # "declared", "predicted" or "unknown"
    servers @3 :List(UInt32);     # empty: all
    waitMs @4 :UInt64;            # arrival to grant (pending: to now)
    runningMs @5 :UInt64;         # since the grant (pending: 0)
    bytesWritten @6 :UInt64;
    holders @7 :UInt32;           # clients in the step
    starved @8 :Bool;             # waited past max_wait_s
  }
  struct IoJobTotals {
    job @0 :Text;
    steps @1 :UInt64;
    waitMs @2 :UInt64;            # summed token wait: finished steps, plus the current one's so far
    ioMs @3 :UInt64;              # summed grant-to-end: finished steps, plus the current one's so far
    bytesWritten @4 :UInt64;
  }

  struct PeerState {
    id @0 :UInt32;
    map @1 :Text;                 # the member's newest map
    ready @2 :Bool;               # has joined the cluster's view (serves requests)
    fileSets @3 :List(UInt16);    # file sets it holds and serves
    interval @4 :Latency;         # its last complete measuring interval
    setting @5 :Request.ClusterSetting;  # as in PeerPing
  }

  struct Latency {                # one member, one tuning interval
    server @0 :UInt32;
    seq @1 :UInt64;               # interval number since the member started
    latencyMs @2 :Float64;        # mean request latency (0: no requests)
    requests @3 :UInt64;
    backlog @4 :UInt64;           # routed requests arrived and not answered at the interval's end
    backlogAgeMs @5 :Float64;     # their mean age then (0: none; members before issue 21 send neither)
    busy @6 :Float64;             # fraction of the interval its event loop worked on requests (--slowdown: the virtual server's) (0: unknown)
    serviceMs @7 :Float64;        # that busy time per request completed (0: unknown)
    sets @8 :List(SetArrivals);   # routed requests arrived per file set (empty: members before this field)
    intervalMs @9 :Float64;       # the interval's length (0: unknown)
  }
  struct SetArrivals { set @0 :UInt16; requests @1 :UInt64; }

  struct ClusterState {           # as one member sees the cluster
    self @0 :UInt32;
    delegate @1 :UInt32;          # the live member of the map with the lowest id
    map @2 :Text;
    members @3 :List(Member);
    history @4 :List(Tuning);     # the delegate's recent tuning steps, oldest first
    moves @5 :List(Move);         # this member's recent file set moves, oldest first
    placement @6 :Text;           # "anu", "hash" or "round-robin"
    serving @7 :Bool = true;      # this member holds its lease and serves; false: fenced
  }
  struct Member {
    id @0 :UInt32;
    address @1 :Text;
    alive @2 :Bool;
    share @3 :Float64;            # of the mapped half, per the map
    fileSets @4 :List(UInt16);    # as last reported
    latency @5 :Latency;          # last complete interval
    slowdown @6 :Float64;         # its --slowdown factor (1: none)
  }
  struct Tuning {                 # one tuning step of the delegate
    atUnixMs @0 :Int64;
    averageMs @1 :Float64;
    mapVersion @2 :UInt64;        # the map it produced (or the unchanged one)
    servers @3 :List(TunedServer);
  }
  struct TunedServer {
    server @0 :UInt32;
    latencyMs @1 :Float64;
    decision @2 :Text;            # placement::decision_name()
    oldShare @3 :Float64;
    newShare @4 :Float64;
  }
  struct Move {
    set @0 :UInt16;
    from @1 :UInt32;
    to @2 :UInt32;
    atUnixMs @3 :Int64;
    bytes @4 :UInt64;
    durationMs @5 :UInt32;
    outcome @6 :Text;             # "shipped", "taken over", or the error
  }

  struct FileSetMade {            # makeFileSet: the directory's entry now names `root`
    parent @0 :UInt64;
    name @1 :Text;
    root @2 :Attr;
  }

  struct FileList {               # scanFiles; eof: no file after the last one
    files @0 :List(FileSummary);
    eof @1 :Bool;
  }
  struct FileSummary {            # a regular file, linked or unlinked but still open
    ino @0 :UInt64;
    size @1 :UInt64;
    layout @2 :Layout;
    orphan @3 :Bool;              # unlinked, kept while a client has it open
  }

  struct OpenFilesReply {
    leaseMs @0 :UInt32;           # renew well within this
    gone @1 :List(UInt64);        # with `check`: those deleted, or unlinked and no longer kept
  }
  struct UnlinkReply {
    ino @0 :UInt64;
    nlink @1 :UInt32;             # links left; 0 = the file is gone (or orphaned if keepOpen)
  }
  struct ReaddirReply {
    entries @0 :List(DirEntry);
    eof @1 :Bool;
  }
  struct StatfsReply {
    totalBytes @0 :UInt64;        # sum over live storage servers
    freeBytes @1 :UInt64;
    totalInodes @2 :UInt64;
    freeInodes @3 :UInt64;
    blockSize @4 :UInt32;
    nameMax @5 :UInt32;
  }
}
