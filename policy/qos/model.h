// A job's QoS model: the goal's correction factor alpha (U-Shape paper,
// Zhang, Davis, Jiang, §3.1), the constant bound of the `average` baseline,
// and the trained tree from an epoch's locality to B_real, with the
// versioned text file the metadata cluster keeps it in. Pure values and
// functions; thread-safe to read.
#pragma once

#include <charconv>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "policy/qos/cart.h"
#include "shared/status.h"

namespace pvfs::qos {

using Nanos = std::chrono::nanoseconds;

// alpha = (T_real - T_comp) / (T_profile - T_comp): how much longer the
// job's I/O may take than in its profiling run. invalid_argument when
// T_comp < 0, T_profile <= T_comp (no I/O measured), or the goal is
// shorter than the profiling run (alpha < 1): pvfs refuses a goal it
// cannot meet rather than accept it as best effort, so that a user learns
// it at `qos set` and not at the deadline.
Result<double> alpha(Nanos required, Nanos profile, Nanos comp);

// The paper's baseline (§4.3): one constant bound, the job's bytes over
// the I/O time its goal allows, T_real - T_comp. invalid_argument when
// required <= comp.
Result<double> average_bound(uint64_t bytes, Nanos required, Nanos comp);

struct Model {
  static constexpr int kVersion = 1;
  std::string job;        // no whitespace or control characters, 1..256 bytes
  double alpha = 1;       // >= 1
  Nanos profile{0};       // T_profile
  Nanos comp{0};          // T_comp
  Nanos epoch{0};         // the epoch length the features were measured over
  uint64_t bytes = 0;     // the job's bytes in the profiling run
  double cv_error = 0;    // the tree's cross-validated error when trained
  RegressionTree tree;    // (AvgDist, AvgSize) -> B_real, bytes/s

  // B_real for one server's epoch; never negative.
  double bound(double avg_dist_bytes, double avg_size_bytes) const;
};

// The model file: text, one field per line, a tree node per line, and a
// closing checksum (FNV-1a 64 of every byte before the "checksum" line):
//
//   pvfs-qos-model 1
//   job <id>
//   alpha <x>  profile_ns <n>  comp_ns <n>  epoch_ns <n>  bytes <n>  cv_error <x>   (one per line)
//   nodes <count>
//   <feature> <threshold> <left> <right> <value> <samples>      (count lines, root first)
//   checksum <16 hex digits>
//
// Numbers are written so that they parse back to the same bits.
std::string serialize(const Model& model);

// The pieces of this text format that the metadata cluster's file of
// profiles and models (mds/qos_models.h) uses too: FNV-1a 64 of `bytes`;
// the shortest text of `v` that parses back to the same bits; a line split
// at single spaces (a trailing space makes an empty last word, so a line
// written otherwise fails its word count); and a number that is the whole
// of `text`.
uint64_t text_checksum(std::string_view bytes);
std::string exact_number(double v);
std::vector<std::string_view> words(std::string_view line);
template <typename T>
bool read_number(std::string_view text, T& out) {
  if (text.empty()) return false;
  auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

// Parses what serialize() wrote. corrupt, naming the line and what is
// wrong, for a wrong magic, a version this build does not read (saying
// which), a missing or malformed field, a checksum mismatch (a truncated
// or edited file), or a tree RegressionTree::from_nodes() refuses.
Result<Model> parse_model(std::string_view text);

}  // namespace pvfs::qos
