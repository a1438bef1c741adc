// The storage servers the MDS knows: who they are, where they listen, how
// full they are, and whether a heartbeat arrived recently enough to give
// them new files. Pure: time comes in as an argument; no I/O (the service
// persists changes through NamespaceStore::save_server).
// Not thread-safe: owned by the MDS's network thread.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "shared/ids.h"
#include "shared/status.h"

namespace pvfs::mds {

class ServerRegistry {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  struct Entry {
    ServerId id;
    std::string address;
    uint64_t capacity_bytes = 0, free_bytes = 0;
    TimePoint last_seen{};
  };

  explicit ServerRegistry(std::chrono::milliseconds heartbeat_timeout)
      : timeout_(heartbeat_timeout) {}

  // Records a registration or heartbeat at `now`. Returns true when the
  // server is new or its address changed (the caller then persists it).
  bool heard_from(const Entry& info, TimePoint now);
  // Ids of servers heard from within the heartbeat timeout, in id order.
  std::vector<ServerId> live(TimePoint now) const;
  bool is_live(ServerId id, TimePoint now) const;
  // The live servers (as live()) that may take objects of new files: those
  // less than `full_percent` full by their last report. A server that
  // reported no capacity counts as having room. When every live server is
  // that full, all of them: a write then fails with ENOSPC where there is
  // no room, rather than every create failing.
  std::vector<ServerId> with_room(TimePoint now, uint32_t full_percent) const;
  // Every known server, in id order.
  std::vector<Entry> all() const;
  const Entry* find(ServerId id) const;

 private:
  std::chrono::milliseconds timeout_;
  std::map<ServerId, Entry> servers_;
};

// Whether a storage server may register as `id` at `address`: `config` must
// list a [[server]] with that id whose address has the same host and the
// same port (any port when the configured one is 0). not_permitted, saying
// what was claimed and what is configured, otherwise.
Status check_registration(const Config& config, uint32_t id, const Endpoint& address);

}  // namespace pvfs::mds
