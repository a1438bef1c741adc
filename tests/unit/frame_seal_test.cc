// Sealed frames: what one end seals the other opens, and a frame changed in
// any byte, replayed, reordered or dropped fails; encryption hides the
// contents and leaves the sender's buffer alone. Drives FrameSeal directly.
#include "shared/rpc/frame_seal.h"

#include <vector>

#include <doctest/doctest.h>

namespace pvfs::rpc {
namespace {

using Bytes = std::vector<std::byte>;

Secret key_of(uint8_t seed) {
  Secret k{};
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(seed * 13 + i);
  return k;
}

Bytes pattern(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>(seed + i * 7);
  return b;
}

// One frame as it goes on the wire.
struct Wire {
  HeaderBytes header;
  Bytes message;
  Bytes data;
  FrameTag tag;
};

Wire seal(FrameSeal& s, const Bytes& message, const Bytes& data) {
  Wire w{encode_header({static_cast<uint32_t>(message.size()), data.size()}), message, data, {}};
  Bytes out(data.size());
  w.tag = s.seal(w.header, w.message, data, out);
  if (s.encrypts()) w.data = out;
  return w;
}

bool open(FrameSeal& s, Wire w) { return s.open(w.header, w.message, w.data, w.tag); }

}  // namespace

TEST_CASE("a sealed frame opens on the other end with the same key, in order") {
  FrameSeal tx(key_of(1), false), rx(key_of(1), false);
  for (int i = 0; i < 5; ++i) {
    const Bytes msg = pattern(64, static_cast<uint8_t>(i)), data = pattern(i * 1000, 9);
    Wire w = seal(tx, msg, data);
    CHECK(w.message == msg);  // MAC only: the bytes go as they are
    CHECK(w.data == data);
    CHECK(open(rx, w));
  }
  CHECK(rx.frames() == 5);
}

TEST_CASE("a frame changed in any byte of header, message, data or tag fails") {
  const Bytes msg = pattern(48, 1), data = pattern(4096, 2);
  FrameSeal tx(key_of(1), false);
  const Wire good = seal(tx, msg, data);
  const size_t total = kFrameHeaderBytes + msg.size() + data.size() + kFrameTagBytes;
  for (size_t at = 0; at < total; at += (at < 80 || at > total - 40) ? 1 : 97) {
    CAPTURE(at);
    Wire w = good;
    size_t i = at;
    std::byte* p;
    if (i < kFrameHeaderBytes) p = &w.header[i];
    else if ((i -= kFrameHeaderBytes) < w.message.size()) p = &w.message[i];
    else if ((i -= w.message.size()) < w.data.size()) p = &w.data[i];
    else p = &w.tag[i - w.data.size()];
    *p ^= std::byte{0x20};
    FrameSeal rx(key_of(1), false);
    CHECK_FALSE(open(rx, w));
  }
  FrameSeal rx(key_of(1), false);
  CHECK(open(rx, good));
}

TEST_CASE("a frame under another key fails") {
  FrameSeal tx(key_of(1), false), rx(key_of(2), false);
  CHECK_FALSE(open(rx, seal(tx, pattern(16, 1), {})));
}

TEST_CASE("a replayed frame fails") {
  FrameSeal tx(key_of(1), false), rx(key_of(1), false);
  Wire first = seal(tx, pattern(16, 1), pattern(100, 1));
  CHECK(open(rx, first));
  CHECK_FALSE(open(rx, first));
}

TEST_CASE("frames delivered out of order fail") {
  FrameSeal tx(key_of(1), false), rx(key_of(1), false);
  Wire a = seal(tx, pattern(16, 1), {});
  Wire b = seal(tx, pattern(16, 2), {});
  CHECK_FALSE(open(rx, b));
  FrameSeal rx2(key_of(1), false);
  CHECK(open(rx2, a));
  CHECK(open(rx2, b));
}

TEST_CASE("a dropped frame makes the next one fail") {
  FrameSeal tx(key_of(1), false), rx(key_of(1), false);
  Wire a = seal(tx, pattern(16, 1), {});
  Wire b = seal(tx, pattern(16, 2), {});
  Wire c = seal(tx, pattern(16, 3), {});
  CHECK(open(rx, a));
  CHECK_FALSE(open(rx, c));
  (void)b;
}

TEST_CASE("encrypted frames hide message and data, leave the sender's data alone, and open back") {
  FrameSeal tx(key_of(4), true), rx(key_of(4), true);
  const Bytes msg = pattern(64, 3), data = pattern(8192, 5);
  const Bytes data_before = data;
  Wire w = seal(tx, msg, data);
  CHECK(data == data_before);
  CHECK(w.message != msg);
  CHECK(w.data != data);
  // The same plaintext in the next frame encrypts differently.
  Wire w2 = seal(tx, msg, data);
  CHECK(w2.data != w.data);
  Wire opened = w;
  REQUIRE(rx.open(opened.header, opened.message, opened.data, opened.tag));
  CHECK(opened.message == msg);
  CHECK(opened.data == data);
  Wire tampered = w2;
  tampered.data[100] ^= std::byte{1};
  CHECK_FALSE(rx.open(tampered.header, tampered.message, tampered.data, tampered.tag));
}

}  // namespace pvfs::rpc
