// The wall clock the MDS stamps namespace changes with (atime, mtime,
// ctime). Read by the service and cluster drivers only, from their injected
// Clock: the namespace store takes `now` as an argument and never reads a
// clock.
#pragma once

#include <time.h>

#include "shared/attr.h"
#include "shared/clock.h"

namespace pvfs::mds {

inline Timespec to_timespec(WallTime t) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  const int64_t sec = ns >= 0 ? ns / 1000000000 : (ns - 999999999) / 1000000000;
  return Timespec{sec, static_cast<uint32_t>(ns - sec * 1000000000)};
}
inline Timespec wall_now(const Clock& clock) { return to_timespec(clock.wall()); }
// The machine's calendar (startup, before any driver exists).
inline Timespec wall_now() { return wall_now(real_clock()); }

}  // namespace pvfs::mds
