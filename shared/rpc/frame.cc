#include "shared/rpc/frame.h"

#include <fmt/format.h>

namespace pvfs::rpc {

namespace {
void put_le(std::byte* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<std::byte>(v >> (8 * i));
}
uint64_t get_le(const std::byte* in, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t(std::to_integer<uint8_t>(in[i])) << (8 * i);
  return v;
}
}  // namespace

HeaderBytes encode_header(const FrameHeader& header) {
  HeaderBytes out{};
  put_le(out.data(), kFrameMagic, 4);
  put_le(out.data() + 4, header.message_bytes, 4);
  put_le(out.data() + 8, header.data_bytes, 8);
  return out;
}

Result<FrameHeader> decode_header(std::span<const std::byte, kFrameHeaderBytes> bytes) {
  if (get_le(bytes.data(), 4) != kFrameMagic)
    return Status(Errc::invalid_argument, "bad frame magic");
  FrameHeader h;
  h.message_bytes = static_cast<uint32_t>(get_le(bytes.data() + 4, 4));
  h.data_bytes = get_le(bytes.data() + 8, 8);
  if (h.message_bytes == 0 || h.message_bytes % 8 != 0)
    return Status(Errc::invalid_argument,
                  fmt::format("message length {} is not a positive multiple of 8", h.message_bytes));
  if (h.message_bytes > kMaxMessageBytes)
    return Status(Errc::invalid_argument, fmt::format("message length {} over limit", h.message_bytes));
  if (h.data_bytes > kMaxDataBytes)
    return Status(Errc::invalid_argument, fmt::format("data length {} over limit", h.data_bytes));
  return h;
}

}  // namespace pvfs::rpc
