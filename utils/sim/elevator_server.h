// One storage server as the OBRR scenarios model it: the daemon's own
// elevator (policy/elevator) ordering requests for an emulated disk that
// does one operation at a time, as server/io_queue does with an emulated
// disk (depth 1).
// Models nothing of the network: the scenario delivers requests and
// carries replies. Not thread-safe: lives in one EventQueue's simulation.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "policy/elevator/elevator.h"
#include "policy/elevator/emulated_disk.h"
#include "utils/sim/event_queue.h"

namespace pvfs::sim {

// The calibration a server would store for an emulated disk: random
// accesses in records of 64 KiB to 4 MiB (elevator::modelled_bandwidth).
elevator::BandwidthTable calibrate(const elevator::EmulatedDiskOptions& disk);

class ElevatorServer {
 public:
  // Called once per request when the disk operation that carried it ends.
  using Done = std::function<void(uint64_t request_id)>;

  // Checks elevator::validate(options) (scenarios validate first).
  ElevatorServer(EventQueue& queue, const elevator::ElevatorOptions& options,
                 const elevator::EmulatedDiskOptions& disk, Done done);
  ElevatorServer(const ElevatorServer&) = delete;
  ElevatorServer& operator=(const ElevatorServer&) = delete;

  // `request` arrives now. Its id must be unique among outstanding ones
  // and the request valid (checked: scenarios make only valid ones).
  void submit(const elevator::Request& request);

  const elevator::Elevator& elevator() const { return elevator_; }
  const elevator::EmulatedDisk& disk() const { return disk_; }
  // The deadline of a queued normal or urgent request; Nanos::max() for
  // one not queued (dispatched already, or unknown).
  Nanos deadline_of(uint64_t request_id) const;

 private:
  void start_next();

  EventQueue& queue_;
  elevator::Elevator elevator_;
  elevator::EmulatedDisk disk_;
  Done done_;
  bool busy_ = false;
};

}  // namespace pvfs::sim
