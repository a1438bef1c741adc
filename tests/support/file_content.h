// Test support: reading a whole file, and the deterministic content the
// integration tests write and check, any range of it on its own. Compiled
// once, optimized, in the test-files library: the test programs themselves
// build at -O0 (tests/meson.build), where a byte-at-a-time loop in a header
// costs tens of seconds on a suite that writes and checks gigabytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

namespace pvfs::test {

// The whole file, or nullopt when it cannot be opened or read.
std::optional<std::string> read_file(const std::filesystem::path& file);

// The whole file, or "" when it cannot be read (logs, /proc files).
std::string read_text(const std::filesystem::path& file);

// The pattern: file byte `pos` is byte pos%8 of splitmix64(seed, pos/8).
uint64_t pattern_word(uint64_t seed, uint64_t word);

// Fills `out` with the pattern for the file range starting at `offset`.
void fill_pattern(std::span<std::byte> out, uint64_t seed, uint64_t offset);

// The file offset of the first byte of `got` that is not the pattern.
std::optional<uint64_t> pattern_mismatch(std::span<const std::byte> got, uint64_t seed, uint64_t offset);

// The file offset of the first non-zero byte of `got`.
std::optional<uint64_t> nonzero_at(std::span<const std::byte> got, uint64_t offset);

}  // namespace pvfs::test
