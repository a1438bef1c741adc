#include "shared/rpc/origin.h"

#include <fmt/format.h>

namespace pvfs::rpc {

Status check_envelope(proto::Envelope::Reader envelope) {
  // A job id is kept (per-job counters, the busiest on /metrics) and
  // logged: unbounded ones grew a daemon by their size per job.
  const auto job = envelope.getJobId();
  if (job.size() > kMaxJobIdBytes)
    return Status(Errc::invalid_argument,
                  fmt::format("jobId is {} bytes; the limit is {} bytes", job.size(), kMaxJobIdBytes));
  for (char c : job)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return Status(Errc::invalid_argument, "jobId holds a control character; none are allowed");
  return {};
}

}  // namespace pvfs::rpc
