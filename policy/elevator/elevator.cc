#include "policy/elevator/elevator.h"

#include <algorithm>

namespace pvfs::elevator {

std::string_view class_name(Class cls) {
  switch (cls) {
    case Class::normal: return "normal";
    case Class::urgent: return "urgent";
    case Class::background: return "background";
  }
  return "?";
}

std::string_view policy_name(Policy policy) {
  return policy == Policy::fcfs ? "fcfs" : "obrr";
}

std::optional<Policy> parse_policy(std::string_view text) {
  if (text == "fcfs") return Policy::fcfs;
  if (text == "obrr") return Policy::obrr;
  return std::nullopt;
}

std::string_view quantum_unit_name(QuantumUnit unit) {
  return unit == QuantumUnit::bytes ? "bytes" : "requests";
}

std::optional<QuantumUnit> parse_quantum_unit(std::string_view text) {
  if (text == "requests") return QuantumUnit::requests;
  if (text == "bytes") return QuantumUnit::bytes;
  return std::nullopt;
}

Status validate(const ElevatorOptions& options) {
  if (options.quantum == 0) return Status(Errc::invalid_argument, "elevator: quantum must be > 0");
  if (options.max_merge_bytes == 0)
    return Status(Errc::invalid_argument, "elevator: max merge size must be > 0");
  if (!(options.lambda >= 1.0)) return Status(Errc::invalid_argument, "elevator: lambda must be >= 1");
  if (options.urgent_margin && *options.urgent_margin < Nanos(0))
    return Status(Errc::invalid_argument, "elevator: urgent margin must be >= 0");
  return ok_status();
}

Elevator::Elevator(ElevatorOptions options, BandwidthTable bandwidth)
    : options_(options),
      estimator_(std::move(bandwidth), options.lambda),
      urgent_margin_(options.urgent_margin.value_or(
          saturating_add(estimator_.service_estimate(options.max_merge_bytes),
                         estimator_.service_estimate(options.max_merge_bytes)))) {
  PVFS_CHECK(validate(options_).ok());
}

Status Elevator::enqueue(const Request& request, Nanos now) {
  if (request.length == 0) return Status(Errc::invalid_argument, "elevator: zero-length request");
  if (request.offset > UINT64_MAX - request.length)
    return Status(Errc::invalid_argument, "elevator: range past 2^64");
  if (request.cls == Class::urgent && request.max_service <= Nanos(0))
    return Status(Errc::invalid_argument, "elevator: urgent request without a maximum service time");
  if (seq_of_.contains(request.id)) return Status(Errc::invalid_argument, "elevator: duplicate request id");

  const uint64_t seq = next_seq_++;
  Entry entry{request, std::nullopt, false};
  entry.request.arrival = now;
  const int tier = tier_of(request.cls);
  // Background bytes are not counted: they yield to client requests, so
  // they do not delay them.
  if (tier == kForeground) estimator_.add(request.length);
  if (request.cls == Class::normal) {
    const Nanos latest = dynamic_.empty() ? Nanos::min() : dynamic_.rbegin()->first;
    entry.deadline = estimator_.deadline(now, latest);
    dynamic_.insert({*entry.deadline, seq});
  } else if (request.cls == Class::urgent) {
    entry.deadline = saturating_add(now, request.max_service);
    mandatory_.insert({*entry.deadline, seq});
  }

  const QueueKey key = key_of(request);
  Queue& queue = queues_[key];
  queue.by_offset.insert({request.offset, seq});
  if (!queue.scheduled) {
    queue.scheduled = true;
    round_robin_[tier].push_back(key);
  }
  arrival_[tier].insert(seq);
  ObjectSpans& spans = spans_[request.object];
  (request.write ? spans.writes : spans.reads).insert({request.offset, seq});
  spans.max_length = std::max(spans.max_length, request.length);

  entries_.emplace(seq, std::move(entry));
  seq_of_.emplace(request.id, seq);
  ++queued_[index(request.cls)];
  return ok_status();
}

std::optional<Dispatch> Elevator::dispatch(Nanos now) {
  std::optional<Dispatch> d;
  if (options_.policy == Policy::obrr) {
    // Paper §3.2: deadlines first, the mandatory queue before the dynamic
    // one; otherwise elevator order.
    d = serve_urgent(now);
    if (!d) d = serve_expired(now);
    if (!d) d = serve_round(kForeground);
  } else {
    d = serve_arrival(kForeground);
  }
  if (!d && arrival_[kForeground].empty())
    d = options_.policy == Policy::obrr ? serve_round(kBackground) : serve_arrival(kBackground);
  return d;
}

void Elevator::complete(std::span<const uint64_t> ids, Nanos now) {
  for (uint64_t id : ids) {
    auto sit = seq_of_.find(id);
    PVFS_CHECK(sit != seq_of_.end());
    const uint64_t seq = sit->second;
    auto eit = entries_.find(seq);
    PVFS_CHECK(eit != entries_.end() && eit->second.in_service);
    const Request& r = eit->second.request;
    service_time_[index(r.cls)].add(now - r.arrival);
    if (tier_of(r.cls) == kForeground) estimator_.remove(r.length);
    auto oit = spans_.find(r.object);
    PVFS_CHECK(oit != spans_.end());
    (r.write ? oit->second.writes : oit->second.reads).erase({r.offset, seq});
    if (oit->second.writes.empty() && oit->second.reads.empty()) spans_.erase(oit);
    --in_service_[index(r.cls)];
    --in_service_total_;
    entries_.erase(eit);
    seq_of_.erase(sit);
  }
}

std::optional<Nanos> Elevator::deadline_of(uint64_t id) const {
  auto sit = seq_of_.find(id);
  if (sit == seq_of_.end()) return std::nullopt;
  const Entry& entry = entries_.at(sit->second);
  if (entry.in_service) return std::nullopt;
  return entry.deadline;
}

ElevatorStats Elevator::stats() const {
  ElevatorStats s;
  s.policy = options_.policy;
  for (size_t c = 0; c < kClasses; ++c) {
    ClassStats& cs = s.by_class[c];
    cs.queued = queued_[c];
    cs.in_service = in_service_[c];
    cs.completed = service_time_[c].count();
    cs.p50 = service_time_[c].quantile(0.50);
    cs.p99 = service_time_[c].quantile(0.99);
  }
  // Queue keys sort by object first, so one object's queues are adjacent.
  std::optional<ObjectId> previous;
  for (const auto& [key, queue] : queues_) {
    if (queue.by_offset.empty() || previous == key.object) continue;
    ++s.objects_queued;
    previous = key.object;
  }
  s.dispatches = dispatches_;
  s.seeks = seeks_;
  s.dynamic_expiries = dynamic_expiries_;
  s.mandatory_expiries = mandatory_expiries_;
  s.expiration = estimator_.expiration();
  s.dispatched_sizes = sizes_.buckets();
  return s;
}

// The earliest-arrived request (queued or in service) that `seq` must not
// overtake: same object, overlapping range, arrived before, one of the two
// a write. Scans only offsets that can overlap, using the longest request
// the object has seen.
std::optional<uint64_t> Elevator::earliest_conflict(uint64_t seq) const {
  const Request& r = entries_.at(seq).request;
  const ObjectSpans& spans = spans_.at(r.object);
  const uint64_t end = r.offset + r.length;
  const uint64_t from = r.offset > spans.max_length ? r.offset - spans.max_length : 0;
  std::optional<uint64_t> best;
  auto scan = [&](const std::set<Span>& set) {
    for (auto it = set.lower_bound({from, 0}); it != set.end() && it->first < end; ++it) {
      if (it->second >= seq || (best && it->second >= *best)) continue;
      const Request& other = entries_.at(it->second).request;
      if (other.offset + other.length > r.offset) best = it->second;
    }
  };
  scan(spans.writes);
  if (r.write) scan(spans.reads);
  return best;
}

// The request to serve in place of `seq`: `seq` itself, or the earliest
// request it conflicts with, recursively. nullopt when that chain ends at
// a request in service: nothing of this chain may start yet.
std::optional<uint64_t> Elevator::resolve(uint64_t seq) const {
  for (;;) {
    const std::optional<uint64_t> blocker = earliest_conflict(seq);
    if (!blocker) return seq;
    if (entries_.at(*blocker).in_service) return std::nullopt;
    seq = *blocker;
  }
}

std::optional<Dispatch> Elevator::serve_urgent(Nanos now) {
  // The latest start that still lets every urgent request, served in
  // deadline order, finish in time; checked one operation ahead.
  Nanos work{0};
  bool due = false;
  for (const auto& [deadline, seq] : mandatory_) {
    work = saturating_add(work, estimator_.service_estimate(entries_.at(seq).request.length));
    if (saturating_add(saturating_add(now, urgent_margin_), work) >= deadline) {
      due = true;
      break;
    }
  }
  if (!due) return std::nullopt;
  for (const auto& [deadline, seq] : mandatory_) {
    if (const std::optional<uint64_t> chosen = resolve(seq)) {
      Limit limit;
      limit.urgent_only = true;
      return take(*chosen, Reason::mandatory_deadline, limit);
    }
  }
  return std::nullopt;
}

std::optional<Dispatch> Elevator::serve_expired(Nanos now) {
  for (const auto& [deadline, seq] : dynamic_) {
    if (deadline > now) break;
    if (const std::optional<uint64_t> chosen = resolve(seq))
      return take(*chosen, Reason::dynamic_deadline, Limit{});
  }
  return std::nullopt;
}

std::optional<Dispatch> Elevator::serve_round(int tier) {
  std::deque<QueueKey>& fifo = round_robin_[tier];
  std::optional<Turn>& turn = turn_[tier];
  // Each queue is looked at most twice (popped, then put back when its
  // head is blocked), so this bound means "every queue is blocked".
  for (size_t tries = 2 * (fifo.size() + 1); tries > 0; --tries) {
    if (!turn) {
      if (fifo.empty()) return std::nullopt;
      turn = Turn{fifo.front(), options_.quantum};
      fifo.pop_front();
    }
    Queue& queue = queues_.at(turn->key);
    if (queue.by_offset.empty()) {
      end_turn(tier);
      continue;
    }
    // Elevator order within the queue: upward from where the last
    // dispatch ended, wrapping to the lowest offset.
    auto head = queue.by_offset.lower_bound({queue.position, 0});
    if (head == queue.by_offset.end()) head = queue.by_offset.begin();
    const std::optional<uint64_t> chosen = resolve(head->second);
    if (!chosen) {
      end_turn(tier);
      continue;
    }
    Limit limit;
    if (options_.quantum_unit == QuantumUnit::requests)
      limit.max_requests = turn->remaining;
    else
      limit.max_bytes = turn->remaining;
    Dispatch d = take(*chosen, Reason::round_robin, limit);
    const uint64_t used = options_.quantum_unit == QuantumUnit::requests ? d.ids.size() : d.length;
    turn->remaining -= std::min(turn->remaining, used);
    if (turn->remaining == 0 || queue.by_offset.empty()) end_turn(tier);
    return d;
  }
  return std::nullopt;
}

std::optional<Dispatch> Elevator::serve_arrival(int tier) {
  for (uint64_t seq : arrival_[tier]) {
    if (const std::optional<uint64_t> chosen = resolve(seq))
      return take(*chosen, Reason::arrival_order, Limit{.max_requests = 1});
  }
  return std::nullopt;
}

void Elevator::end_turn(int tier) {
  const QueueKey key = turn_[tier]->key;
  turn_[tier].reset();
  auto it = queues_.find(key);
  PVFS_CHECK(it != queues_.end());
  if (it->second.by_offset.empty())
    queues_.erase(it);
  else
    round_robin_[tier].push_back(key);
}

// The request a merge may continue with after `seq`: the next in offset
// order in its object queue.
std::optional<uint64_t> Elevator::follower(uint64_t seq) const {
  const Request& r = entries_.at(seq).request;
  const std::set<Span>& set = queues_.at(key_of(r)).by_offset;
  auto it = set.upper_bound({r.offset, seq});
  if (it == set.end()) return std::nullopt;
  return it->second;
}

// Moves `first`, merged with the adjacent requests that follow it, from
// queued to in service and accounts for the dispatch.
Dispatch Elevator::take(uint64_t first, Reason reason, Limit limit) {
  const Request& head = entries_.at(first).request;
  Dispatch d{head.object, head.write, head.offset, head.length, {head.id}, reason};
  std::vector<uint64_t> seqs{first};
  while (seqs.size() < limit.max_requests) {
    const std::optional<uint64_t> n = follower(seqs.back());
    if (!n) break;
    const Request& next = entries_.at(*n).request;
    if (next.object != d.object || next.write != d.write || next.offset != d.offset + d.length) break;
    if (limit.urgent_only && next.cls != Class::urgent) break;
    const uint64_t total = d.length + next.length;
    if (total > options_.max_merge_bytes || total > limit.max_bytes) break;
    if (earliest_conflict(*n)) break;
    seqs.push_back(*n);
    d.ids.push_back(next.id);
    d.length = total;
  }

  for (uint64_t seq : seqs) {
    Entry& e = entries_.at(seq);
    const Request& r = e.request;
    queues_.at(key_of(r)).by_offset.erase({r.offset, seq});
    arrival_[tier_of(r.cls)].erase(seq);
    if (e.deadline) (r.cls == Class::urgent ? mandatory_ : dynamic_).erase({*e.deadline, seq});
    e.in_service = true;
    --queued_[index(r.cls)];
    ++in_service_[index(r.cls)];
    ++in_service_total_;
  }
  queues_.at(key_of(head)).position = d.offset + d.length;

  ++dispatches_;
  sizes_.add(d.length);
  if (!last_ || last_->object != d.object || last_->end != d.offset) ++seeks_;
  last_ = Position{d.object, d.offset + d.length};
  if (reason == Reason::dynamic_deadline) ++dynamic_expiries_;
  if (reason == Reason::mandatory_deadline) ++mandatory_expiries_;
  return d;
}

}  // namespace pvfs::elevator
