// Sealed frames: what one end seals the other opens, and a frame changed in
// any byte, replayed, reordered or dropped fails; encryption hides the
// contents and leaves the sender's buffer alone; the bytes on the wire are
// those of the libsodium-only seal of handshake version 2, so peers built
// before and after still talk. Drives FrameSeal directly.
#include "shared/rpc/frame_seal.h"

#include <array>
#include <vector>

#include <doctest/doctest.h>
#include <sodium.h>

namespace pvfs::rpc {
namespace {

using Bytes = std::vector<std::byte>;

Secret seal_key(uint8_t seed) {
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

// Frame `frame` of a direction as the libsodium-only seal put it on the wire
// (nonce: 32-bit section, then 64-bit frame number, little-endian; sections
// 0 MAC key, 1 message, 2 data), written out independently of FrameSeal.
Wire reference(const Secret& key, bool encrypt, uint64_t frame, const Bytes& message,
               const Bytes& data) {
  auto nonce = [&](uint32_t section) {
    std::array<uint8_t, 12> n{};
    for (int i = 0; i < 4; ++i) n[i] = static_cast<uint8_t>(section >> (8 * i));
    for (int i = 0; i < 8; ++i) n[4 + i] = static_cast<uint8_t>(frame >> (8 * i));
    return n;
  };
  auto u8 = [](Bytes& b) { return reinterpret_cast<uint8_t*>(b.data()); };
  Wire w{encode_header({static_cast<uint32_t>(message.size()), data.size()}), message, data, {}};
  if (encrypt) {
    if (!w.message.empty())
      crypto_stream_chacha20_ietf_xor_ic(u8(w.message), u8(w.message), w.message.size(),
                                         nonce(1).data(), 0, key.data());
    if (!w.data.empty())
      crypto_stream_chacha20_ietf_xor_ic(u8(w.data), u8(w.data), w.data.size(), nonce(2).data(),
                                         0, key.data());
  }
  std::array<uint8_t, 32> mac_key{};
  crypto_stream_chacha20_ietf(mac_key.data(), mac_key.size(), nonce(0).data(), key.data());
  Bytes all(w.header.begin(), w.header.end());
  all.insert(all.end(), w.message.begin(), w.message.end());
  all.insert(all.end(), w.data.begin(), w.data.end());
  crypto_onetimeauth(reinterpret_cast<uint8_t*>(w.tag.data()), u8(all), all.size(),
                     mac_key.data());
  return w;
}

}  // namespace

TEST_CASE("a sealed frame opens on the other end with the same key, in order") {
  FrameSeal tx(seal_key(1), false), rx(seal_key(1), false);
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
  FrameSeal tx(seal_key(1), false);
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
    FrameSeal rx(seal_key(1), false);
    CHECK_FALSE(open(rx, w));
  }
  FrameSeal rx(seal_key(1), false);
  CHECK(open(rx, good));
}

TEST_CASE("with the data left out of the tag, header and message stay covered and the data is not") {
  const Bytes msg = pattern(48, 1), data = pattern(4096, 2);
  FrameSeal tx(seal_key(1), false, false);
  const Wire good = seal(tx, msg, data);
  CHECK_FALSE(tx.tags_data());
  {
    Wire w = good;
    w.data[100] ^= std::byte{1};
    FrameSeal rx(seal_key(1), false, false);
    CHECK(open(rx, w));  // what a local socket's kernel already guarantees
  }
  for (size_t at : {size_t{0}, kFrameHeaderBytes - 1}) {
    Wire w = good;
    w.header[at] ^= std::byte{1};
    FrameSeal rx(seal_key(1), false, false);
    CHECK_FALSE(open(rx, w));
  }
  {
    Wire w = good;
    w.message[7] ^= std::byte{1};
    FrameSeal rx(seal_key(1), false, false);
    CHECK_FALSE(open(rx, w));
  }
  // An end that tags data refuses the frame: both ends must agree.
  FrameSeal tagging(seal_key(1), false);
  CHECK_FALSE(open(tagging, good));
  FrameSeal rx(seal_key(1), false, false);
  CHECK(open(rx, good));
}

TEST_CASE("a frame under another key fails") {
  FrameSeal tx(seal_key(1), false), rx(seal_key(2), false);
  CHECK_FALSE(open(rx, seal(tx, pattern(16, 1), {})));
}

TEST_CASE("a replayed frame fails") {
  FrameSeal tx(seal_key(1), false), rx(seal_key(1), false);
  Wire first = seal(tx, pattern(16, 1), pattern(100, 1));
  CHECK(open(rx, first));
  CHECK_FALSE(open(rx, first));
}

TEST_CASE("frames delivered out of order fail") {
  FrameSeal tx(seal_key(1), false), rx(seal_key(1), false);
  Wire a = seal(tx, pattern(16, 1), {});
  Wire b = seal(tx, pattern(16, 2), {});
  CHECK_FALSE(open(rx, b));
  FrameSeal rx2(seal_key(1), false);
  CHECK(open(rx2, a));
  CHECK(open(rx2, b));
}

TEST_CASE("a dropped frame makes the next one fail") {
  FrameSeal tx(seal_key(1), false), rx(seal_key(1), false);
  Wire a = seal(tx, pattern(16, 1), {});
  Wire b = seal(tx, pattern(16, 2), {});
  Wire c = seal(tx, pattern(16, 3), {});
  CHECK(open(rx, a));
  CHECK_FALSE(open(rx, c));
  (void)b;
}

TEST_CASE("frames on the wire are those of handshake version 2, with and without encryption") {
  REQUIRE(sodium_init() >= 0);
  for (bool encrypt : {false, true}) {
    CAPTURE(encrypt);
    FrameSeal tx(seal_key(6), encrypt), rx(seal_key(6), encrypt);
    // Lengths off the 16-byte Poly1305 block and 64-byte ChaCha20 block, and
    // a frame large enough for the wide vector code paths.
    const size_t message_sizes[] = {0, 13, 64, 64, 200, 7};
    const size_t data_sizes[] = {0, 1, 4096, 4099, 65536 + 17, size_t{1} << 20};
    for (uint64_t frame = 0; frame < 6; ++frame) {
      CAPTURE(frame);
      const Bytes msg = pattern(message_sizes[frame], 1), data = pattern(data_sizes[frame], 2);
      const Wire want = reference(seal_key(6), encrypt, frame, msg, data);
      const Wire got = seal(tx, msg, data);
      CHECK(got.tag == want.tag);
      CHECK(got.message == want.message);
      CHECK(got.data == want.data);
      Wire back = want;
      REQUIRE(rx.open(back.header, back.message, back.data, back.tag));
      CHECK(back.message == msg);
      CHECK(back.data == data);
    }
  }
}

TEST_CASE("encrypted frames hide message and data, leave the sender's data alone, and open back") {
  FrameSeal tx(seal_key(4), true), rx(seal_key(4), true);
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
