# The storage service (pvfs-server): objects on local disk. Clients and the
# MDS speak it. An object is named by (inode, index): stripe i of a file
# lives in object i mod stripe count. File contents travel as the frame's
# bulk data, never inside these messages.
@0xee729593c3ad937f;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("pvfs::proto::storage");

using Common = import "common.capnp";

struct ObjectId {
  ino @0 :UInt64;
  index @1 :UInt32;
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
  }

  struct Write {
    object @0 :ObjectId;
    offset @1 :UInt64;
    sync @2 :Bool;                # durable on disk before the reply (O_SYNC, O_DSYNC)
  }
  struct Read {
    object @0 :ObjectId;
    offset @1 :UInt64;
    length @2 :UInt32;
  }
  struct Truncate {
    object @0 :ObjectId;
    size @1 :UInt64;
  }
  struct Remove {
    objects @0 :List(ObjectId);   # missing objects are not an error
  }
}

struct Reply {
  union {
    none @0 :Void;                # truncate, remove, fsync
    written @1 :UInt64;           # write: bytes written (always all of them on success)
    read @2 :UInt64;              # read: bytes in the reply data (< length past end of object)
    stat @3 :ObjectStat;
    statfs @4 :Statfs;
    status @5 :Common.DaemonStatus;
  }

  struct ObjectStat {
    exists @0 :Bool;
    size @1 :UInt64;
  }
  struct Statfs {
    capacityBytes @0 :UInt64;
    freeBytes @1 :UInt64;
  }
}
