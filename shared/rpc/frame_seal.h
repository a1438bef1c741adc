// Integrity, and on request secrecy, of the frames that follow the
// handshake. Every frame ends with a 16-byte Poly1305 tag over its header,
// message and bulk data, under a one-time key drawn from ChaCha20 keyed with
// the direction's session key (handshake.h) and the frame's number as nonce.
// Both ends count frames, so a frame changed, replayed, reordered or dropped
// on the path fails the check. Over a local socket both ends may agree to
// leave the bulk data out of the tag (handshake.h); the header, which
// carries its length, and the message stay covered. With encryption the message and data are
// ChaCha20-encrypted (each under its own nonce) before the tag is taken.
// The tag is computed over the caller's buffers in place: nothing is copied
// unless encrypting the sender's (const) data. The one-time key comes from
// libsodium; the bulk Poly1305 and ChaCha20 run in OpenSSL's libcrypto, whose
// AVX-512 code is 2-3x as fast here (docs/benchmarks.md). The bytes on the wire
// are the same as with libsodium alone (frame_seal_test checks it), so peers
// built before and after interoperate. Pure; one FrameSeal per direction,
// used by one thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "shared/rpc/frame.h"
#include "shared/secret.h"

// OpenSSL's context types (openssl/types.h), declared here so that users of
// this header need not see OpenSSL.
struct evp_mac_ctx_st;
struct evp_cipher_ctx_st;

namespace pvfs::rpc {

inline constexpr size_t kFrameTagBytes = 16;
using FrameTag = std::array<std::byte, kFrameTagBytes>;

class FrameSeal {
 public:
  // `tag_data` false: the tag leaves the bulk data out (never when encrypting).
  FrameSeal(const Secret& direction_key, bool encrypt, bool tag_data = true);
  ~FrameSeal();
  FrameSeal(const FrameSeal&) = delete;
  FrameSeal& operator=(const FrameSeal&) = delete;

  bool encrypts() const { return encrypt_; }
  bool tags_data() const { return tag_data_; }
  // Frames sealed or opened so far (the next frame's number).
  uint64_t frames() const { return counter_; }

  // Sender: seals the next frame. When encrypting, `message` is encrypted in
  // place and `data` into `data_out` (same size; unused otherwise). Returns
  // the tag to send after the data.
  FrameTag seal(std::span<const std::byte, kFrameHeaderBytes> header, std::span<std::byte> message,
                std::span<const std::byte> data, std::span<std::byte> data_out);
  // Receiver: checks the next frame's tag; on success decrypts `message` and
  // `data` in place (when encrypting) and returns true. False on a mismatch,
  // after which the stream is unusable (the caller closes it).
  [[nodiscard]] bool open(std::span<const std::byte, kFrameHeaderBytes> header,
                          std::span<std::byte> message, std::span<std::byte> data,
                          const FrameTag& tag);

 private:
  struct FreeMac {
    void operator()(evp_mac_ctx_st* c) const;
  };
  struct FreeCipher {
    void operator()(evp_cipher_ctx_st* c) const;
  };

  FrameTag tag(std::span<const std::byte, kFrameHeaderBytes> header,
               std::span<const std::byte> message, std::span<const std::byte> data);
  void crypt(uint32_t section, std::span<std::byte> out, std::span<const std::byte> in);

  Secret key_;
  bool encrypt_;
  bool tag_data_;
  uint64_t counter_ = 0;
  std::unique_ptr<evp_mac_ctx_st, FreeMac> mac_;
  std::unique_ptr<evp_cipher_ctx_st, FreeCipher> cipher_;  // only when encrypting
};

}  // namespace pvfs::rpc
