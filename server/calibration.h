// The backend bandwidth per record size that the elevator's dynamic
// deadlines are computed from (OBRR paper, §3.2): measured the first time a
// server starts on a data directory and stored with it in
// data_dir/bandwidth; `pvfs-server --calibrate` measures again. An
// emulated disk needs no measurement: its table is the model's.
#pragma once

#include <chrono>
#include <filesystem>

#include "server/elevator/deadline_estimator.h"
#include "shared/status.h"

namespace pvfs {

// Writes records of 4 KiB, 64 KiB, 1 MiB and 4 MiB sequentially to a
// scratch file in `data_dir` (up to `budget` or 64 MiB per size, then
// fdatasync) and returns bytes per second per size. Errors: io, no_space.
Result<elevator::BandwidthTable> measure_bandwidth(const std::filesystem::path& data_dir,
                                                   std::chrono::milliseconds budget);

// The stored table, or a fresh measurement that is then stored.
// Errors: corrupt (a malformed stored table), io.
Result<elevator::BandwidthTable> load_or_calibrate(const std::filesystem::path& data_dir, bool force);

}  // namespace pvfs
