// Frame header encoding: the 16 bytes before every message on a pvfs
// connection (magic "PVF1", u32 message bytes, u64 bulk data bytes, all
// little-endian), and the limits that keep a hostile peer from making us
// allocate absurd amounts. Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "shared/status.h"

namespace pvfs::rpc {

inline constexpr size_t kFrameHeaderBytes = 16;
inline constexpr uint32_t kFrameMagic = 0x31465650;  // "PVF1" read as little-endian u32
// A Cap'n Proto message larger than this is a protocol error (readdir pages
// and xattr values are far smaller).
inline constexpr uint32_t kMaxMessageBytes = 4u << 20;
// Bulk data per frame; the client never sends pieces larger than a stripe.
inline constexpr uint64_t kMaxDataBytes = uint64_t{64} << 20;

struct FrameHeader {
  uint32_t message_bytes = 0;  // multiple of 8 (Cap'n Proto words), > 0
  uint64_t data_bytes = 0;
};

using HeaderBytes = std::array<std::byte, kFrameHeaderBytes>;

HeaderBytes encode_header(const FrameHeader& header);
// Fails with invalid_argument (detail says why) on a wrong magic, an empty or
// misaligned message, or sizes over the limits above.
Result<FrameHeader> decode_header(std::span<const std::byte, kFrameHeaderBytes> bytes);

}  // namespace pvfs::rpc
