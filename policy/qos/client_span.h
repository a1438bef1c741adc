// What a client (pvfsmount) says of a job's I/O time, as a storage server
// and then the QoS coordinator gather it for a profiling run: of each
// client, its count of the job's I/O time (fs/job_io_clock.h) at the first
// and at the last request seen. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace pvfs::qos {

struct ClientSpan {
  uint64_t first_ns = 0;
  uint64_t last_ns = 0;  // >= first_ns
  bool operator==(const ClientSpan&) const = default;
};
// Clients kept per profiling run (and per server report); later ones are
// not counted.
inline constexpr size_t kMaxProfileClients = 1024;

// Joins `span` into what `spans` holds for `client`: the earliest first and
// the latest last (each server, each period, sees a part of the client's
// requests). A span that goes backwards, or a new client when `spans`
// holds kMaxProfileClients, is not kept.
inline void join_span(std::map<uint64_t, ClientSpan>& spans, uint64_t client, ClientSpan span) {
  if (span.last_ns < span.first_ns) return;
  auto it = spans.find(client);
  if (it == spans.end()) {
    if (spans.size() < kMaxProfileClients) spans.emplace(client, span);
    return;
  }
  if (span.first_ns < it->second.first_ns) it->second.first_ns = span.first_ns;
  if (span.last_ns > it->second.last_ns) it->second.last_ns = span.last_ns;
}

}  // namespace pvfs::qos
