// The backend bandwidth per record size that the elevator's dynamic
// deadlines are computed from (OBRR paper, §3.2): measured the first time a
// server starts on a data directory and stored with it in
// data_dir/bandwidth; `pvfs-server --calibrate` measures again. An
// emulated disk needs no measurement: its table is the model's.
#pragma once

#include <chrono>
#include <filesystem>

#include "policy/elevator/deadline_estimator.h"
#include "shared/status.h"

namespace pvfs {

// Record sizes calibrated: a request is costed at the bandwidth of the
// largest size not above it, so the steps are kept close.
inline constexpr uint64_t kCalibratedRecordSizes[] = {
    uint64_t{4} << 10,   uint64_t{16} << 10, uint64_t{64} << 10, uint64_t{256} << 10,
    uint64_t{512} << 10, uint64_t{1} << 20,  uint64_t{2} << 20,  uint64_t{4} << 20};

// Writes records of each of kCalibratedRecordSizes sequentially to a
// scratch file in `data_dir` (up to `budget` or 8 MiB per size, then
// fdatasync) and returns bytes per second per size. Errors: io, no_space.
Result<elevator::BandwidthTable> measure_bandwidth(const std::filesystem::path& data_dir,
                                                   std::chrono::milliseconds budget);

// The stored table, or a fresh measurement that is then stored.
// Errors: corrupt (a malformed stored table), io.
Result<elevator::BandwidthTable> load_or_calibrate(const std::filesystem::path& data_dir, bool force);

}  // namespace pvfs
