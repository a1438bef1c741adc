// pvfs-bench --mode md, an mdtest-like metadata benchmark: where each
// rank's files go (its own directory or one shared by all, optionally a
// tree of directories), one rank's work in one timed phase (create, stat,
// read, remove of its files), and the report of ops/s per phase. The
// processes, barriers and timing are pvfs_bench.cc's, shared with the I/O
// mode. Path arithmetic and reports are pure; md_rank_phase does the
// file system calls. Thread-safe (no state).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace pvfs::bench {

struct MdPlan {
  std::string root;         // the run's own directory (made and removed by the parent)
  uint32_t procs = 1;
  uint32_t files = 1000;    // per rank
  bool shared_dir = false;  // every rank's files in one tree, instead of one tree per rank
  uint32_t depth = 0;       // levels of directories below each tree's top (0: files at the top)
  uint32_t fanout = 10;     // directories per level
  uint64_t file_bytes = 0;  // written at create, read back by the read phase
};

enum class MdPhase { create, stat, read, remove };
inline constexpr MdPhase kMdPhases[] = {MdPhase::create, MdPhase::stat, MdPhase::read, MdPhase::remove};
const char* md_phase_name(MdPhase phase);

// Every directory the plan needs, parents before children (the parent
// makes them before the timed phases).
std::vector<std::string> md_directories(const MdPlan& plan);
// The path of file `i` of `rank`: its tree's leaf i mod fanout^depth.
std::string md_file(const MdPlan& plan, uint32_t rank, uint32_t i);

// Runs `phase` over the files of `rank`, counting each done in `done`.
// Returns "" or the first error ("stat PATH: reason"), after which it stops.
std::string md_rank_phase(const MdPlan& plan, MdPhase phase, uint32_t rank, std::atomic<uint64_t>& done);

// One timed phase over all ranks.
struct MdStats {
  std::string name;
  uint64_t ops = 0;        // files done by all ranks
  double slowest_s = 0;    // release to the last rank done
  uint32_t failed_ranks = 0;
  double ops_per_s() const { return slowest_s > 0 ? static_cast<double>(ops) / slowest_s : 0; }
};

// A header line naming the plan, then one row per phase: ops, seconds, ops/s.
std::string md_human_report(const MdPlan& plan, const std::vector<MdStats>& phases);
// One JSON object on one line: the plan, an object per phase (ops,
// slowest_s, ops_per_s, failed_ranks), errors and ok.
std::string md_json_report(const MdPlan& plan, const std::vector<MdStats>& phases,
                           const std::vector<std::string>& errors);

}  // namespace pvfs::bench
