// The wall clock the MDS stamps namespace changes with (atime, mtime,
// ctime). Read by the service and cluster drivers only: the namespace store
// takes `now` as an argument and never reads a clock.
#pragma once

#include <time.h>

#include "shared/attr.h"

namespace pvfs::mds {

inline Timespec wall_now() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return Timespec{ts.tv_sec, static_cast<uint32_t>(ts.tv_nsec)};
}

}  // namespace pvfs::mds
