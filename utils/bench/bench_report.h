// The arithmetic and text side of pvfs-bench: size options ("4m"), the data
// pattern every rank writes and verifies, per-phase statistics and the human
// and JSON reports. Pure functions over plain values (no I/O, no clock), so
// they are thread-safe. The processes, barriers and I/O that produce the
// numbers are in utils/bench/pvfs_bench.cc.
#pragma once

#include "shared/text_format.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pvfs::bench {


// "16 MiB" when the value is a whole number of KiB/MiB/GiB/TiB, else "1000 B".
std::string exact_size(uint64_t bytes);

// The data pattern. The byte at file offset `offset` written by `rank` is
// byte (offset % 8) of the little-endian 64-bit word
// (rank << 48) | (offset rounded down to 8, low 48 bits), so data written by
// the wrong rank or at the wrong offset differs from what is expected.
uint8_t pattern_byte(uint32_t rank, uint64_t offset);
// Fills `buf[0, len)` with the pattern of the file bytes [offset, offset+len).
void fill_pattern(std::byte* buf, size_t len, uint32_t rank, uint64_t offset);

// The bytes of `buf[0, len)` (read from file offset `offset`) that differ
// from the pattern of `rank`.
struct Mismatch {
  uint64_t count = 0;          // differing bytes
  uint64_t first_offset = 0;   // file offset of the first one (count > 0)
  uint8_t expected = 0, found = 0;
};
Mismatch check_pattern(const std::byte* buf, size_t len, uint32_t rank, uint64_t offset);

// One phase (write or read) summed over the processes.
struct PhaseStats {
  std::string name;                    // "write" or "read"
  uint64_t bytes = 0;                  // moved by all processes together
  uint32_t failed_ranks = 0;           // ranks that stopped on an error
  std::vector<double> per_process_s;   // completion time of each rank, by rank
  double slowest_s = 0, fastest_s = 0, mean_s = 0;
  double aggregate_mib_s = 0;          // bytes / slowest_s, in MiB/s (0 if slowest_s is 0)
  std::array<double, 10> deciles_s{};  // nearest-rank p10, p20 ... p100 of per_process_s
};
// `completion_s[r]`: seconds from the barrier release to rank r being done
// (or having failed); `bytes`: moved by all ranks. Requires at least one value.
PhaseStats summarize(std::string name, uint64_t bytes, std::vector<double> completion_s,
                     uint32_t failed_ranks = 0);

// What the run was asked to do, for the report headers.
struct RunInfo {
  std::string path;
  uint32_t procs = 1;
  uint64_t transfer_bytes = 0, block_bytes = 0;
  uint64_t segments = 1;  // blocks per process
  bool file_per_process = false, fsync = false, verify = false;
  bool osync = false;  // written through O_DSYNC descriptors
};

// The outcome outside the numbers.
struct RunOutcome {
  uint64_t verify_errors = 0;    // differing bytes over all ranks
  uint64_t verified_bytes = 0;
  std::vector<std::string> errors;  // one line per failed rank, without a prefix
};

// A header line, the table (phase, bytes, slowest, fastest, mean, aggregate
// MiB/s, and how many ranks failed if any did) and one CDF line per phase; with `per_process`, a line of
// per-rank times per phase; a verify line when verifying. Ends in '\n'.
std::string human_report(const RunInfo& info, const std::vector<PhaseStats>& phases,
                         const RunOutcome& outcome, bool per_process);

// One JSON object on one line (ending in '\n'): the run's parameters (path,
// procs, transfer_bytes, block_bytes, segments, file_per_process, fsync,
// verify, osync), an object per phase run ("write", "read") with bytes,
// slowest_s, fastest_s, mean_s, aggregate_mib_s, per_process_s, cdf_s (the
// deciles) and failed_ranks, then verify_errors, errors and ok.
std::string json_report(const RunInfo& info, const std::vector<PhaseStats>& phases,
                        const RunOutcome& outcome);

using ::pvfs::json_string;  // shared/text_format.h

}  // namespace pvfs::bench
