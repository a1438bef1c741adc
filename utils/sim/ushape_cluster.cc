#include "utils/sim/ushape_cluster.h"

#include <cmath>

namespace pvfs::sim::ushape {

Nanos Disk::position_time(uint64_t distance) const {
  if (distance == 0) return Nanos(0);
  const double f = std::sqrt(std::min(1.0, static_cast<double>(distance) / static_cast<double>(capacity)));
  return seek_min + Nanos(std::llround(static_cast<double>((seek_max - seek_min).count()) * f)) + rotation;
}

Nanos Disk::service(uint64_t head, uint64_t lba, uint64_t length) const {
  const uint64_t d = lba >= head ? lba - head : head - lba;
  return position_time(d) + Nanos(std::llround(static_cast<double>(length) / bytes_per_s * 1e9));
}

Cluster::Cluster(EventQueue& queue, const ClusterSetup& setup, std::vector<Program> programs, bool gated,
                 uint64_t seed)
    : queue_(queue), setup_(setup), programs_(std::move(programs)), gated_(gated), rng_(seed) {
  const size_t n = programs_.size();
  for (int s = 0; s < setup_.servers; ++s) {
    servers_.emplace_back(setup_.epoch);
    Server& sv = servers_.back();
    sv.pending.resize(n);
    sv.period.resize(n);
    sv.last_done.resize(n);
    sv.has_done.resize(n);
  }
  live_procs_.resize(n);
  finished_.resize(n);
  done_bytes_.resize(n);
  in_flight_.resize(n);
  io_time_.resize(n);
  io_since_.resize(n);
  for (size_t p = 0; p < n; ++p) {
    for (const Phase& ph : programs_[p].phases) PVFS_CHECK(ph.request > 0 && static_cast<size_t>(ph.file) < setup_.file_base.size());
    for (int i = 0; i < programs_[p].procs; ++i) {
      procs_.push_back({p, i, 0, 0, 0, 0});
      ++live_procs_[p];
    }
  }
  for (size_t k = 0; k < procs_.size(); ++k) queue_.at(Nanos(0), [this, k] { step(k); });
}

size_t Cluster::index_of(const std::string& name) const {
  for (size_t p = 0; p < programs_.size(); ++p)
    if (programs_[p].name == name) return p;
  PVFS_CHECK(false);
  return 0;
}

bool Cluster::goals_done() const {
  for (size_t p = 0; p < programs_.size(); ++p)
    if (programs_[p].goal && !finished_[p]) return false;
  return true;
}

void Cluster::install(const qos::Plan& plan) {
  for (size_t s = 0; s < servers_.size(); ++s) {
    servers_[s].gate.install(plan, queue_.now());
    start(s);
  }
}

std::vector<std::vector<ServerPeriod>> Cluster::take_period() {
  std::vector<std::vector<ServerPeriod>> out;
  for (Server& sv : servers_) {
    for (size_t p = 0; p < programs_.size(); ++p)
      if (!sv.pending[p].empty()) sv.period[p].active = true;
    out.push_back(sv.period);
    for (ServerPeriod& sp : sv.period) sp = ServerPeriod{};
  }
  return out;
}

std::vector<std::vector<qos::EpochSample>> Cluster::take_epochs() {
  std::vector<std::vector<qos::EpochSample>> out;
  for (Server& sv : servers_) out.push_back(sv.tracker.close(queue_.now()));
  return out;
}

Nanos Cluster::take_io_time(size_t p) {
  if (in_flight_[p] > 0) {
    io_time_[p] += queue_.now() - io_since_[p];
    io_since_[p] = queue_.now();
  }
  const Nanos t = io_time_[p];
  io_time_[p] = Nanos(0);
  return t;
}

void Cluster::outstanding_change(size_t p, int delta) {
  if (in_flight_[p] == 0 && delta > 0) io_since_[p] = queue_.now();
  in_flight_[p] += delta;
  if (in_flight_[p] == 0 && delta < 0) io_time_[p] += queue_.now() - io_since_[p];
}

void Cluster::step(size_t k) {
  Proc& pr = procs_[k];
  const Program& prog = programs_[pr.program];
  const auto P = static_cast<uint64_t>(prog.procs);
  while (pr.phase < prog.phases.size()) {
    const Phase& ph = prog.phases[pr.phase];
    if (!(prog.goal || !stopping_)) break;
    std::optional<uint64_t> offset;
    switch (ph.kind) {
      case Phase::Kind::collective: {
        const uint64_t o = (static_cast<uint64_t>(pr.index) + P * pr.next) * ph.request;
        if (o < ph.bytes) offset = o;
        break;
      }
      case Phase::Kind::regions: {
        const uint64_t region = ph.bytes / P;
        if (pr.next * ph.request < region) offset = static_cast<uint64_t>(pr.index) * region + pr.next * ph.request;
        break;
      }
      case Phase::Kind::random:
        if (pr.next < ph.bytes / P / ph.request) offset = rng_.below(ph.bytes / ph.request) * ph.request;
        break;
    }
    if (!offset) {
      pr.next = 0;
      if (!ph.loop) ++pr.phase;
      continue;
    }
    ++pr.next;
    const uint64_t length = std::min(ph.request, ph.bytes - *offset);
    const size_t phase = pr.phase;
    const Nanos pause =
        ph.compute + Nanos(static_cast<int64_t>(rng_.uniform() * static_cast<double>(setup_.jitter.count())));
    if (pause.count() > 0)
      queue_.after(pause, [this, k, phase, o = *offset, length] {
        issue(k, programs_[procs_[k].program].phases[phase], o, length);
      });
    else
      issue(k, ph, *offset, length);
    return;
  }
  if (--live_procs_[pr.program] == 0) {
    finished_[pr.program] = queue_.now();
    if (goals_done()) stopping_ = true;
  }
}

void Cluster::issue(size_t k, const Phase& ph, uint64_t offset, uint64_t length) {
  Proc& pr = procs_[k];
  const auto S = static_cast<uint64_t>(setup_.servers);
  const uint64_t start = static_cast<uint64_t>(ph.file) % S;
  pr.bytes = length;
  pr.outstanding = 0;
  outstanding_change(pr.program, +1);
  for (uint64_t o = offset; o < offset + length;) {
    const uint64_t stripe = o / setup_.stripe;
    const uint64_t within = o % setup_.stripe;
    const uint64_t piece = std::min(setup_.stripe - within, offset + length - o);
    const auto server = static_cast<size_t>((start + stripe) % S);
    Piece pc;
    pc.id = next_piece_++;
    pc.program = pr.program;
    pc.lba = setup_.file_base[static_cast<size_t>(ph.file)] + (stripe / S) * setup_.stripe + within;
    pc.length = piece;
    pc.parent = k;
    ++pr.outstanding;
    queue_.after(setup_.latency, [this, server, pc] { arrive(server, pc); });
    o += piece;
  }
}

void Cluster::arrive(size_t s, const Piece& piece) {
  Server& sv = servers_[s];
  Piece pc = piece;
  pc.arrival = queue_.now();
  pieces_[pc.id] = pc;
  sv.pending[pc.program].insert({pc.lba, pc.id});
  ServerPeriod& sp = sv.period[pc.program];
  sp.active = true;
  if (sv.has_done[pc.program]) {
    sp.gap_sum_s += std::chrono::duration<double>(queue_.now() - sv.last_done[pc.program]).count();
    ++sp.gaps;
  }
  start(s);
}

void Cluster::start(size_t s) {
  Server& sv = servers_[s];
  if (sv.busy) return;
  // C-SCAN over the requests of the programs the gate admits: the nearest
  // at or after the head, wrapping round (unsigned distance does that).
  std::optional<std::pair<uint64_t, size_t>> best;  // (distance, program)
  for (const qos::Admission pass : {qos::Admission::yes, qos::Admission::if_idle}) {
    for (size_t p = 0; p < programs_.size(); ++p) {
      const auto& q = sv.pending[p];
      if (q.empty()) continue;
      const qos::Admission a = gated_ ? sv.gate.admit(programs_[p].name, queue_.now()) : qos::Admission::yes;
      if (a != pass) continue;
      auto it = q.lower_bound({sv.head, 0});
      if (it == q.end()) it = q.begin();
      const uint64_t d = it->first - sv.head;
      if (!best || d < best->first) best = {d, p};
    }
    if (best) break;
  }
  if (!best) {
      if (gated_ && !sv.wake_scheduled) {
      const Nanos ends = sv.gate.current(queue_.now()).ends;
      if (ends != Nanos::max() && ends > queue_.now()) {
        sv.wake_scheduled = true;
        queue_.at(ends, [this, s] {
          servers_[s].wake_scheduled = false;
          start(s);
        });
      }
    }
    return;
  }
  auto& q = sv.pending[best->second];
  auto it = q.lower_bound({sv.head, 0});
  if (it == q.end()) it = q.begin();
  const uint64_t id = it->second;
  q.erase(it);
  const Piece pc = pieces_.at(id);
  pieces_.erase(id);
  sv.busy = true;
  const Nanos took = setup_.disk.service(sv.head, pc.lba, pc.length);
  sv.head = pc.lba + pc.length;
  const Nanos started = queue_.now();
  queue_.after(took, [this, s, pc, started] {
    Server& v = servers_[s];
    const std::string& name = programs_[pc.program].name;
    v.tracker.record(name, pc.lba, pc.length, pc.arrival, queue_.now());
    ServerPeriod& sp = v.period[pc.program];
    sp.bytes += pc.length;
    // As the daemons count it (server/io_queue.cc): the part of the
    // request's service that fell in its program's own windows.
    sp.window_bytes += gated_ ? v.gate.own_bytes(name, pc.length, started, queue_.now()) : pc.length;
    ++sp.requests;
    sp.lba_sum += static_cast<double>(pc.lba);
    v.last_done[pc.program] = queue_.now();
    v.has_done[pc.program] = true;
    v.busy = false;
    const auto proc = static_cast<size_t>(pc.parent);
    queue_.after(setup_.latency, [this, proc] { piece_done(proc); });
    start(s);
  });
}

void Cluster::piece_done(size_t k) {
  Proc& pr = procs_[k];
  if (--pr.outstanding > 0) return;
  done_bytes_[pr.program] += pr.bytes;
  outstanding_change(pr.program, -1);
  step(k);
}

}  // namespace pvfs::sim::ushape
