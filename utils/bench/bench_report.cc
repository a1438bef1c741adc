#include "utils/bench/bench_report.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include <fmt/format.h>

namespace pvfs::bench {

namespace {

constexpr uint64_t kOffsetMask = (uint64_t{1} << 48) - 1;
constexpr double kMiB = 1024.0 * 1024.0;

uint64_t pattern_word(uint32_t rank, uint64_t offset) {
  return (uint64_t{rank} << 48) | (offset & ~uint64_t{7} & kOffsetMask);
}

uint64_t to_little_endian(uint64_t word) {
  if constexpr (std::endian::native == std::endian::big) return __builtin_bswap64(word);
  return word;
}

// The bytes of [offset, offset+len) before the first 8-aligned offset, capped at len.
size_t head_bytes(uint64_t offset, size_t len) {
  return std::min<size_t>(len, (8 - offset % 8) % 8);
}

std::string seconds_list(const std::vector<double>& values) {
  std::string out;
  for (double v : values) out += fmt::format("{}{:.6f}", out.empty() ? "" : ",", v);
  return out;
}

}  // namespace

std::string exact_size(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{} {}", bytes, kUnits[unit]);
}

uint8_t pattern_byte(uint32_t rank, uint64_t offset) {
  return static_cast<uint8_t>(pattern_word(rank, offset) >> (8 * (offset % 8)));
}

void fill_pattern(std::byte* buf, size_t len, uint32_t rank, uint64_t offset) {
  size_t i = head_bytes(offset, len);
  for (size_t h = 0; h < i; ++h) buf[h] = std::byte{pattern_byte(rank, offset + h)};
  for (; i + 8 <= len; i += 8) {
    uint64_t word = to_little_endian(pattern_word(rank, offset + i));
    std::memcpy(buf + i, &word, 8);
  }
  for (; i < len; ++i) buf[i] = std::byte{pattern_byte(rank, offset + i)};
}

Mismatch check_pattern(const std::byte* buf, size_t len, uint32_t rank, uint64_t offset) {
  Mismatch m;
  auto check_bytes = [&](size_t from, size_t to) {
    for (size_t j = from; j < to; ++j) {
      uint8_t want = pattern_byte(rank, offset + j);
      uint8_t got = static_cast<uint8_t>(buf[j]);
      if (want == got) continue;
      if (m.count++ == 0) {
        m.first_offset = offset + j;
        m.expected = want;
        m.found = got;
      }
    }
  };
  size_t i = head_bytes(offset, len);
  check_bytes(0, i);
  for (; i + 8 <= len; i += 8) {
    uint64_t want = to_little_endian(pattern_word(rank, offset + i)), got;
    std::memcpy(&got, buf + i, 8);
    if (want != got) check_bytes(i, i + 8);
  }
  check_bytes(i, len);
  return m;
}

PhaseStats summarize(std::string name, uint64_t bytes, std::vector<double> completion_s,
                     uint32_t failed_ranks) {
  PhaseStats s;
  s.name = std::move(name);
  s.bytes = bytes;
  s.failed_ranks = failed_ranks;
  s.per_process_s = completion_s;
  std::sort(completion_s.begin(), completion_s.end());
  const size_t n = completion_s.size();
  s.fastest_s = completion_s.front();
  s.slowest_s = completion_s.back();
  s.mean_s = std::accumulate(completion_s.begin(), completion_s.end(), 0.0) / static_cast<double>(n);
  s.aggregate_mib_s = s.slowest_s > 0 ? static_cast<double>(bytes) / kMiB / s.slowest_s : 0;
  for (size_t d = 0; d < s.deciles_s.size(); ++d) {
    // Nearest rank: the smallest value with at least (d+1)*10 % of the values at or below it.
    size_t rank = ((d + 1) * n + 9) / 10;
    s.deciles_s[d] = completion_s[std::max<size_t>(rank, 1) - 1];
  }
  return s;
}

std::string human_report(const RunInfo& info, const std::vector<PhaseStats>& phases,
                         const RunOutcome& outcome, bool per_process) {
  std::string out = fmt::format(
      "pvfs-bench: {} process{}, {}, transfer {}, block {}{}{}{}: {}\n", info.procs,
      info.procs == 1 ? "" : "es", info.file_per_process ? "file per process" : "one shared file",
      exact_size(info.transfer_bytes), exact_size(info.block_bytes),
      info.segments > 1 ? fmt::format(" x {} segments", info.segments) : "", info.fsync ? ", fsync" : "",
      info.osync ? ", O_DSYNC" : "", info.path);
  out += fmt::format("{:<6} {:>12} {:>10} {:>10} {:>10} {:>16}\n", "phase", "bytes", "slowest s",
                     "fastest s", "mean s", "aggregate MiB/s");
  for (const auto& p : phases) {
    out += fmt::format("{:<6} {:>12} {:>10.4f} {:>10.4f} {:>10.4f} {:>16.1f}", p.name,
                       exact_size(p.bytes), p.slowest_s, p.fastest_s, p.mean_s, p.aggregate_mib_s);
    if (p.failed_ranks) out += fmt::format("  ({} of {} ranks failed)", p.failed_ranks, p.per_process_s.size());
    out += "\n";
  }
  for (const auto& p : phases) {
    out += fmt::format("{} CDF s:", p.name);
    for (size_t d = 0; d < p.deciles_s.size(); ++d)
      out += fmt::format(" p{}={:.4f}", (d + 1) * 10, p.deciles_s[d]);
    out += "\n";
  }
  if (per_process) {
    for (const auto& p : phases) {
      out += fmt::format("{} per process s:", p.name);
      for (double v : p.per_process_s) out += fmt::format(" {:.4f}", v);
      out += "\n";
    }
  }
  if (info.verify)
    out += fmt::format("verify: {} of {} bytes differ\n", outcome.verify_errors, outcome.verified_bytes);
  return out;
}

std::string json_report(const RunInfo& info, const std::vector<PhaseStats>& phases,
                        const RunOutcome& outcome) {
  std::string out = fmt::format(
      "{{\"path\":{},\"procs\":{},\"transfer_bytes\":{},\"block_bytes\":{},\"segments\":{},"
      "\"file_per_process\":{},\"fsync\":{},\"verify\":{},\"osync\":{}",
      json_string(info.path), info.procs, info.transfer_bytes, info.block_bytes, info.segments,
      info.file_per_process, info.fsync, info.verify, info.osync);
  for (const auto& p : phases) {
    std::vector<double> cdf(p.deciles_s.begin(), p.deciles_s.end());
    out += fmt::format(
        ",{}:{{\"bytes\":{},\"slowest_s\":{:.6f},\"fastest_s\":{:.6f},\"mean_s\":{:.6f},"
        "\"aggregate_mib_s\":{:.3f},\"per_process_s\":[{}],\"cdf_s\":[{}],\"failed_ranks\":{}}}",
        json_string(p.name), p.bytes, p.slowest_s, p.fastest_s, p.mean_s, p.aggregate_mib_s,
        seconds_list(p.per_process_s), seconds_list(cdf), p.failed_ranks);
  }
  out += fmt::format(",\"verified_bytes\":{},\"verify_errors\":{},\"errors\":[", outcome.verified_bytes,
                     outcome.verify_errors);
  for (size_t i = 0; i < outcome.errors.size(); ++i)
    out += (i ? "," : "") + json_string(outcome.errors[i]);
  out += fmt::format("],\"ok\":{}}}\n", outcome.errors.empty() && outcome.verify_errors == 0);
  return out;
}

}  // namespace pvfs::bench
