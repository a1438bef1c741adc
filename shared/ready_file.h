// The ready file a daemon writes once it serves requests, so launchers and
// tests can wait for it (polling to a deadline) instead of sleeping.
#pragma once

#include <cstdint>
#include <filesystem>

#include "shared/status.h"

namespace pvfs {

// Atomically writes "<port>\n" to `path` (via a temporary file and rename).
Status write_ready_file(const std::filesystem::path& path, uint16_t port);

}  // namespace pvfs
