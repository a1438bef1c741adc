// Who caused a request: the job it counts against (per-job counters) and the
// request id that names one file system operation in the log of every
// daemon it reaches. Clients stamp both on every envelope they send; a
// daemon calling another on a request's behalf passes its origin on.
// Plain value; thread-safe to copy.
#pragma once

#include <cstdint>
#include <string>

#include "shared/rpc/message.h"

namespace pvfs::rpc {

struct Origin {
  std::string job;              // empty: unknown
  uint64_t request_id = 0;      // 0: none
};

inline void stamp(proto::Envelope::Builder envelope, const Origin& origin) {
  envelope.setJobId(origin.job);
  envelope.setRequestId(origin.request_id);
}

inline Origin origin_of(const InMessage& message) {
  auto e = message.envelope();
  return Origin{std::string(e.getJobId().cStr(), e.getJobId().size()), e.getRequestId()};
}

}  // namespace pvfs::rpc
