// The 16-byte frame header: its exact byte layout and the limits that keep
// a hostile peer from making a daemon allocate absurd amounts.
#include "shared/rpc/frame.h"

#include <cstring>
#include <limits>

#include <doctest/doctest.h>

namespace pvfs::rpc {
namespace {

HeaderBytes raw_header(uint32_t magic, uint32_t message_bytes, uint64_t data_bytes) {
  HeaderBytes out{};
  for (int i = 0; i < 4; ++i) out[i] = std::byte(magic >> (8 * i));
  for (int i = 0; i < 4; ++i) out[4 + i] = std::byte(message_bytes >> (8 * i));
  for (int i = 0; i < 8; ++i) out[8 + i] = std::byte(data_bytes >> (8 * i));
  return out;
}

}  // namespace

TEST_CASE("a header is the magic PVF1 followed by little-endian message and data lengths") {
  HeaderBytes h = encode_header({0x01020308, 0x0a0b0c0d0e0f1011});
  const unsigned char expected[16] = {'P',  'V',  'F',  '1',  0x08, 0x03, 0x02, 0x01,
                                      0x11, 0x10, 0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a};
  CHECK(std::memcmp(h.data(), expected, sizeof expected) == 0);
}

TEST_CASE("a header decodes to the lengths it was encoded with") {
  for (FrameHeader in : {FrameHeader{8, 0}, FrameHeader{4096, 1 << 20},
                         FrameHeader{kMaxMessageBytes, kMaxDataBytes}}) {
    auto out = decode_header(encode_header(in));
    REQUIRE(out.ok());
    CHECK(out->message_bytes == in.message_bytes);
    CHECK(out->data_bytes == in.data_bytes);
  }
}

TEST_CASE("a header with the wrong magic is refused") {
  auto out = decode_header(raw_header(0x31465651, 64, 0));
  CHECK(out.code() == Errc::invalid_argument);
  CHECK(out.status().detail().find("magic") != std::string::npos);
  // The handshake's hello is not a frame either.
  HeaderBytes hello{};
  std::memcpy(hello.data(), "PVFSAUTH\x01\0\0\0\0\0\0\0", 16);
  CHECK(decode_header(hello).code() == Errc::invalid_argument);
}

TEST_CASE("an empty message or one that is not whole Cap'n Proto words is refused") {
  CHECK(decode_header(raw_header(kFrameMagic, 0, 0)).code() == Errc::invalid_argument);
  for (uint32_t bad : {1u, 7u, 9u, 12u, 4095u})
    CHECK(decode_header(raw_header(kFrameMagic, bad, 0)).code() == Errc::invalid_argument);
}

TEST_CASE("a message over 4 MiB is refused and one of exactly 4 MiB is accepted") {
  CHECK(decode_header(raw_header(kFrameMagic, kMaxMessageBytes, 0)).ok());
  CHECK(decode_header(raw_header(kFrameMagic, kMaxMessageBytes + 8, 0)).code() ==
        Errc::invalid_argument);
  // The largest multiple of 8 a u32 can hold: a peer asking for ~4 GiB.
  CHECK(decode_header(raw_header(kFrameMagic, 0xFFFFFFF8u, 0)).code() == Errc::invalid_argument);
}

TEST_CASE("bulk data over 64 MiB is refused, however absurd the length") {
  CHECK(decode_header(raw_header(kFrameMagic, 8, kMaxDataBytes)).ok());
  for (uint64_t bad : {kMaxDataBytes + 1, uint64_t{1} << 32, uint64_t{1} << 63,
                       std::numeric_limits<uint64_t>::max()})
    CHECK(decode_header(raw_header(kFrameMagic, 8, bad)).code() == Errc::invalid_argument);
}

}  // namespace pvfs::rpc
