// One write dispatch round; see round.h. Pure.
#include "policy/dispatch/round.h"

#include <algorithm>
#include <set>

namespace pvfs::sched {

Round::Round(const Options& options, std::vector<Piece> pieces, std::vector<ServerId> servers,
             const LoadMemory& memory, TimePoint now, std::chrono::nanoseconds fresh_for, std::mt19937_64& rng)
    : options_(options), pieces_(std::move(pieces)), servers_(std::move(servers)), fresh_for_(fresh_for) {
  plan_ = plan_probes(options_, pieces_, servers_, rng);
  uint64_t sum = 0;
  for (const Piece& p : pieces_) sum += p.bytes;
  piece_bytes_ = pieces_.empty() ? 0 : sum / pieces_.size();
  const std::vector<ServerLoad> remembered = memory.remembered(servers_, piece_bytes_, now, fresh_for_);
  choice_ = choose_round(options_, pieces_, plan_, remembered, servers_, rng);
}

void Round::answered(const ServerLoad& self, TimePoint now, LoadMemory& memory) {
  answers_.push_back(self);
  memory.heard(self, now);
}

std::vector<ServerId> Round::decide(LoadMemory& memory, TimePoint now, std::mt19937_64& rng) {
  std::vector<ServerId> chosen;
  if (choice_.source == RoundSource::memory) {
    chosen = std::move(choice_.chosen);
  } else {
    std::vector<ServerLoad> loads = answers_;
    if (choice_.source == RoundSource::probe && options_.policy == Policy::collab) {
      // What this client heard of servers that did not answer (from the
      // peers' loads in the answers, or earlier): more choices at no
      // extra round trip (collaborative probe). Not for preassign: a
      // server it did not probe preassigns nothing, so every client that
      // heard it was light sends it a piece (pvfs-sim, nodes starting over
      // 100 ms: 2.9x fixed's time with no straggler, 0.93x without them).
      std::set<ServerId> known;
      for (const ServerLoad& l : answers_) known.insert(l.server);
      for (const ServerLoad& l : memory.fresh_loads(servers_, now, fresh_for_))
        if (!known.contains(l.server)) loads.push_back(l);
    }
    reported_ = loads;
    // A straggler's queue is no longer than the others' when every writer
    // waits for its write; what sets it apart is how slowly it drains.
    if (preassign()) loads = memory.in_time(loads, piece_bytes_, now, fresh_for_);
    chosen = assign(options_, pieces_, plan_, loads, servers_, rng);
  }
  for (size_t i = 0; i < chosen.size(); ++i)
    if (chosen[i] != pieces_[i].home) memory.sent(chosen[i], pieces_[i].bytes);
  return chosen;
}

std::vector<ServerId> Round::probe_done(std::span<const ServerId> chosen) const {
  if (!probes() || !preassign()) return {};
  const std::set<ServerId> used(chosen.begin(), chosen.end());
  std::vector<ServerId> out;
  for (ServerId s : plan_.probe)
    if (!used.contains(s)) out.push_back(s);
  return out;
}

}  // namespace pvfs::sched
