#include "shared/rpc/frame_seal.h"

#include <sodium.h>

namespace pvfs::rpc {

namespace {
// Nonce sections: the one-time MAC key, the message and the bulk data each
// take ChaCha20 keystream under a nonce of their own.
constexpr uint32_t kMacSection = 0;
constexpr uint32_t kMessageSection = 1;
constexpr uint32_t kDataSection = 2;

using StreamNonce = std::array<uint8_t, crypto_stream_chacha20_ietf_NONCEBYTES>;
static_assert(crypto_stream_chacha20_ietf_NONCEBYTES == 12);
static_assert(crypto_onetimeauth_BYTES == kFrameTagBytes);

StreamNonce nonce_for(uint64_t frame, uint32_t section) {
  StreamNonce n{};
  for (int i = 0; i < 4; ++i) n[i] = static_cast<uint8_t>(section >> (8 * i));
  for (int i = 0; i < 8; ++i) n[4 + i] = static_cast<uint8_t>(frame >> (8 * i));
  return n;
}

const uint8_t* u8(const std::byte* p) { return reinterpret_cast<const uint8_t*>(p); }
uint8_t* u8(std::byte* p) { return reinterpret_cast<uint8_t*>(p); }
}  // namespace

FrameSeal::FrameSeal(const Secret& direction_key, bool encrypt)
    : key_(direction_key), encrypt_(encrypt) {
  PVFS_CHECK(sodium_init() >= 0);
}

FrameSeal::~FrameSeal() { sodium_memzero(key_.data(), key_.size()); }

FrameTag FrameSeal::tag(std::span<const std::byte, kFrameHeaderBytes> header,
                        std::span<const std::byte> message, std::span<const std::byte> data) const {
  std::array<uint8_t, crypto_onetimeauth_KEYBYTES> mac_key{};
  auto n = nonce_for(counter_, kMacSection);
  crypto_stream_chacha20_ietf(mac_key.data(), mac_key.size(), n.data(), key_.data());
  crypto_onetimeauth_state st;
  crypto_onetimeauth_init(&st, mac_key.data());
  // The header carries both lengths, so the three parts cannot be re-cut.
  crypto_onetimeauth_update(&st, u8(header.data()), header.size());
  crypto_onetimeauth_update(&st, u8(message.data()), message.size());
  if (!data.empty()) crypto_onetimeauth_update(&st, u8(data.data()), data.size());
  FrameTag out{};
  crypto_onetimeauth_final(&st, u8(out.data()));
  sodium_memzero(mac_key.data(), mac_key.size());
  sodium_memzero(&st, sizeof st);
  return out;
}

void FrameSeal::crypt(uint32_t section, std::span<std::byte> out,
                      std::span<const std::byte> in) const {
  if (in.empty()) return;
  auto n = nonce_for(counter_, section);
  crypto_stream_chacha20_ietf_xor_ic(u8(out.data()), u8(in.data()), in.size(), n.data(), 0,
                                     key_.data());
}

FrameTag FrameSeal::seal(std::span<const std::byte, kFrameHeaderBytes> header,
                         std::span<std::byte> message, std::span<const std::byte> data,
                         std::span<std::byte> data_out) {
  std::span<const std::byte> sent = data;
  if (encrypt_) {
    PVFS_CHECK(data_out.size() == data.size());
    crypt(kMessageSection, message, message);
    crypt(kDataSection, data_out, data);
    sent = data_out;
  }
  FrameTag t = tag(header, message, sent);
  ++counter_;
  return t;
}

bool FrameSeal::open(std::span<const std::byte, kFrameHeaderBytes> header,
                     std::span<std::byte> message, std::span<std::byte> data, const FrameTag& t) {
  FrameTag want = tag(header, message, data);
  if (crypto_verify_16(u8(want.data()), u8(t.data())) != 0) return false;
  if (encrypt_) {
    crypt(kMessageSection, message, message);
    crypt(kDataSection, data, data);
  }
  ++counter_;
  return true;
}

}  // namespace pvfs::rpc
