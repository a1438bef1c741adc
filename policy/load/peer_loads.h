// What a storage server heard of its peers' loads (Dai et al., §III-B: the
// collaborative probe answers with the loads a server knows of others, so
// a client gets more choices at no extra round trip). Loads arrive with the
// writes (the figures the client saw when it chose) and are kept per peer,
// newest figure wins; probe answers carry the fresh ones with their age.
// Pure: time is passed in (nanoseconds since any fixed epoch); no I/O.
// Driven by the storage service (server/storage_sched.cc) and pvfs-sim.
// Not thread-safe: one owner thread.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "policy/load/preassign.h"

namespace pvfs::load {

// One peer's load as it reported it.
struct PeerLoad {
  uint32_t server = 0;
  uint32_t requests = 0;
  uint64_t bytes = 0;        // outstanding
  uint64_t preassigned = 0;  // expected bytes of pending probes
};

// A fresh figure and how old it is.
struct HeardLoad {
  PeerLoad load;
  Nanos age{0};
};

class PeerLoads {
 public:
  // `load` as measured `age` before `now` (a report's own age). Ignored
  // when an equally new or newer figure of that peer is kept. Callers drop
  // their own id and servers not in the config, so a peer's list cannot
  // grow this map.
  void learn(const PeerLoad& load, Nanos age, Nanos now);
  // Every figure measured less than `ttl` before `now`, in server order.
  std::vector<HeardLoad> fresh(Nanos now, Nanos ttl) const;
  size_t size() const { return heard_.size(); }

 private:
  struct Figure {
    PeerLoad load;
    Nanos at{0};
  };
  std::map<uint32_t, Figure> heard_;
};

}  // namespace pvfs::load
