// Who caused a request: the job it counts against (per-job counters) and the
// request id that names one file system operation in the log of every
// daemon it reaches. Clients stamp both on every envelope they send; a
// daemon calling another on a request's behalf passes its origin on.
// Plain value; thread-safe to copy.
#pragma once

#include <cstdint>
#include <string>

#include "shared/request_limits.h"
#include "shared/rpc/message.h"
#include "shared/status.h"

namespace pvfs::rpc {

struct Origin {
  std::string job;              // empty: unknown
  uint64_t request_id = 0;      // 0: none
  // Data requests from pvfsmount: which mount, and the job's I/O time on it
  // so far (the envelope's clientId and jobIoNs); 0: not stamped.
  uint64_t client = 0;
  uint64_t job_io_ns = 0;
};

inline void stamp(proto::Envelope::Builder envelope, const Origin& origin) {
  envelope.setJobId(origin.job);
  envelope.setRequestId(origin.request_id);
  if (origin.client != 0) {
    envelope.setClientId(origin.client);
    envelope.setJobIoNs(origin.job_io_ns);
  }
}

// Whether a request's envelope is within the bounds every daemon enforces
// before a handler sees the request: a job id of at most kMaxJobIdBytes
// without control characters. Errors: invalid_argument naming the field
// and the limit. Pure.
Status check_envelope(proto::Envelope::Reader envelope);

inline Origin origin_of(const InMessage& message) {
  auto e = message.envelope();
  return Origin{std::string(e.getJobId().cStr(), e.getJobId().size()), e.getRequestId(), e.getClientId(),
                e.getJobIoNs()};
}

}  // namespace pvfs::rpc
