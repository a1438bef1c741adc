#include "shared/rpc/frame_seal.h"

#include <algorithm>

#include <openssl/evp.h>
#include <sodium.h>

namespace pvfs::rpc {

namespace {
// Nonce sections: the one-time MAC key, the message and the bulk data each
// take ChaCha20 keystream under a nonce of their own.
constexpr uint32_t kMacSection = 0;
constexpr uint32_t kMessageSection = 1;
constexpr uint32_t kDataSection = 2;

// OpenSSL's ChaCha20 takes the 32-bit block counter (little-endian) and the
// 96-bit nonce as one 16-byte IV: RFC 8439's layout, as libsodium's _ietf.
constexpr size_t kCipherIvBytes = 16;
// EVP_EncryptUpdate counts in int: bulk data goes in pieces of at most this.
constexpr size_t kCipherPiece = size_t{1} << 30;

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

// Fetched once per process and kept: the algorithm tables, not keys.
EVP_MAC* poly1305() {
  static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "POLY1305", nullptr);
  PVFS_CHECK(mac != nullptr && "OpenSSL offers no POLY1305: is its default provider loaded?");
  return mac;
}

EVP_CIPHER* chacha20() {
  static EVP_CIPHER* const cipher = EVP_CIPHER_fetch(nullptr, "ChaCha20", nullptr);
  PVFS_CHECK(cipher != nullptr && "OpenSSL offers no ChaCha20: is its default provider loaded?");
  return cipher;
}
}  // namespace

void FrameSeal::FreeMac::operator()(evp_mac_ctx_st* c) const { EVP_MAC_CTX_free(c); }
void FrameSeal::FreeCipher::operator()(evp_cipher_ctx_st* c) const { EVP_CIPHER_CTX_free(c); }

FrameSeal::FrameSeal(const Secret& direction_key, bool encrypt, bool tag_data)
    : key_(direction_key), encrypt_(encrypt), tag_data_(tag_data), mac_(EVP_MAC_CTX_new(poly1305())) {
  PVFS_CHECK(sodium_init() >= 0);
  PVFS_CHECK(tag_data_ || !encrypt_);
  PVFS_CHECK(mac_ != nullptr);
  if (encrypt_) {
    cipher_.reset(EVP_CIPHER_CTX_new());
    PVFS_CHECK(cipher_ != nullptr);
    PVFS_CHECK(EVP_EncryptInit_ex2(cipher_.get(), chacha20(), key_.data(), nullptr, nullptr) == 1);
  }
}

// The contexts wipe their key state when freed (OPENSSL_clear_free).
FrameSeal::~FrameSeal() { sodium_memzero(key_.data(), key_.size()); }

FrameTag FrameSeal::tag(std::span<const std::byte, kFrameHeaderBytes> header,
                        std::span<const std::byte> message, std::span<const std::byte> data) {
  std::array<uint8_t, crypto_onetimeauth_KEYBYTES> mac_key{};
  auto n = nonce_for(counter_, kMacSection);
  crypto_stream_chacha20_ietf(mac_key.data(), mac_key.size(), n.data(), key_.data());
  EVP_MAC_CTX* c = mac_.get();
  PVFS_CHECK(EVP_MAC_init(c, mac_key.data(), mac_key.size(), nullptr) == 1);
  sodium_memzero(mac_key.data(), mac_key.size());
  // The header carries both lengths, so the three parts cannot be re-cut.
  PVFS_CHECK(EVP_MAC_update(c, u8(header.data()), header.size()) == 1);
  if (!message.empty()) PVFS_CHECK(EVP_MAC_update(c, u8(message.data()), message.size()) == 1);
  if (tag_data_ && !data.empty()) PVFS_CHECK(EVP_MAC_update(c, u8(data.data()), data.size()) == 1);
  FrameTag out{};
  size_t len = 0;
  PVFS_CHECK(EVP_MAC_final(c, u8(out.data()), &len, out.size()) == 1 && len == out.size());
  return out;
}

void FrameSeal::crypt(uint32_t section, std::span<std::byte> out,
                      std::span<const std::byte> in) {
  if (in.empty()) return;
  PVFS_CHECK(out.size() == in.size());
  std::array<uint8_t, kCipherIvBytes> iv{};  // block counter 0, then the nonce
  auto n = nonce_for(counter_, section);
  std::copy(n.begin(), n.end(), iv.begin() + 4);
  PVFS_CHECK(EVP_EncryptInit_ex2(cipher_.get(), nullptr, nullptr, iv.data(), nullptr) == 1);
  for (size_t at = 0; at < in.size(); at += kCipherPiece) {
    const int len = static_cast<int>(std::min(kCipherPiece, in.size() - at));
    int done = 0;
    PVFS_CHECK(EVP_EncryptUpdate(cipher_.get(), u8(out.data() + at), &done, u8(in.data() + at),
                                 len) == 1 &&
               done == len);
  }
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
