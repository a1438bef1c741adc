#include "utils/sim/event_queue.h"

#include <algorithm>

#include "shared/status.h"

namespace pvfs::sim {

void EventQueue::at(Nanos when, Action action) {
  PVFS_CHECK(when >= now_);
  heap_.push_back(Event{when, next_seq_++, std::move(action)});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

bool EventQueue::run_next() {
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  Event event = std::move(heap_.back());
  heap_.pop_back();
  now_ = event.when;
  ++executed_;
  // The action may schedule more events, so it runs after the heap is
  // consistent again.
  event.action();
  return true;
}

}  // namespace pvfs::sim
