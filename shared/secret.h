// The cluster's shared secret and the keyed hash the connection handshake
// uses (HMAC-SHA-256 from libsodium). The key file holds 64 hex digits.
// Pure functions apart from the file reads/writes named below; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>

#include "shared/status.h"

namespace pvfs {

using Secret = std::array<uint8_t, 32>;
using Mac = std::array<uint8_t, 32>;

// Reads the key file; a missing, unreadable or malformed file is an error
// whose detail names the file. A file with any group or other permission
// bit is refused with access_denied, naming the file and its mode.
Result<Secret> load_secret(const std::filesystem::path& file);
// Writes a fresh random key with mode 0600; fails if the file exists.
Status generate_secret(const std::filesystem::path& file);
// HMAC-SHA-256 of `message` under `key`.
Mac keyed_hash(const Secret& key, std::span<const uint8_t> message);
// Constant-time comparison.
bool mac_equal(const Mac& a, const Mac& b);
// Fills `out` with cryptographically random bytes.
void random_bytes(std::span<uint8_t> out);

}  // namespace pvfs
