// Write-behind bookkeeping for one file (pvfsmount(8), write_behind=): the
// byte ranges a mount has acknowledged to write() but whose storage
// servers have not answered yet, and the first of those writes that failed.
// Pure: no I/O, no clock; the client (fs/client_data.cc) waits and wakes.
//
// The rules it keeps:
//  - bytes in flight stay within a limit, so a stalled server holds at
//    most that much of the caller's data in memory; a single write larger
//    than the limit still starts, alone;
//  - a write never starts while an earlier one overlaps its range, so two
//    writes of the same bytes reach the servers in the order the caller
//    made them (the last one wins, as POSIX requires);
//  - a failure is kept until it is reported (by a later write, and then by
//    fsync or close), never dropped.
#pragma once

#include <cstdint>
#include <vector>

#include "shared/status.h"

namespace pvfs {

class WriteWindow {
 public:
  // Whether a write of [offset, offset + length) may start now, with at
  // most `limit` bytes in flight.
  bool may_start(uint64_t offset, uint64_t length, uint64_t limit) const;
  void start(uint64_t offset, uint64_t length);
  // The write started as (offset, length) has ended with `result`.
  void finish(uint64_t offset, uint64_t length, const Status& result);

  bool idle() const { return ranges_.empty(); }
  uint64_t bytes() const { return bytes_; }
  // The end of the furthest write in flight (0 when none): the size the
  // caller has been told its file has, before the servers have it.
  uint64_t end() const;

  // The first failure not yet reported by fsync or close (ok when none).
  const Status& error() const { return error_; }
  // Returns that failure and forgets it: fsync and close report it once.
  Status take_error();

 private:
  struct Range {
    uint64_t begin;
    uint64_t end;
  };
  std::vector<Range> ranges_;  // in flight, in start order (a handful)
  uint64_t bytes_ = 0;
  Status error_;
};

}  // namespace pvfs
