#include "utils/sim/elevator_server.h"

namespace pvfs::sim {

elevator::BandwidthTable calibrate(const elevator::EmulatedDiskOptions& disk) {
  std::vector<uint64_t> records;
  for (uint64_t r = uint64_t{64} << 10; r <= uint64_t{4} << 20; r *= 2) records.push_back(r);
  return elevator::modelled_bandwidth(disk, records);
}

ElevatorServer::ElevatorServer(EventQueue& queue, const elevator::ElevatorOptions& options,
                               const elevator::EmulatedDiskOptions& disk, Done done)
    : queue_(queue), elevator_(options, calibrate(disk)), disk_(disk), done_(std::move(done)) {}

void ElevatorServer::submit(const elevator::Request& request) {
  PVFS_CHECK(elevator_.enqueue(request, queue_.now()).ok());
  if (!busy_) start_next();
}

Nanos ElevatorServer::deadline_of(uint64_t request_id) const {
  const auto d = elevator_.deadline_of(request_id);
  return d ? *d : Nanos::max();
}

void ElevatorServer::start_next() {
  std::optional<elevator::Dispatch> d = elevator_.dispatch(queue_.now());
  if (!d) {
    busy_ = false;
    return;
  }
  busy_ = true;
  const Nanos took = disk_.service_time(d->object, d->offset, d->length);
  queue_.after(took, [this, ids = std::move(d->ids)] {
    elevator_.complete(ids, queue_.now());
    for (uint64_t id : ids) done_(id);
    start_next();
  });
}

}  // namespace pvfs::sim
