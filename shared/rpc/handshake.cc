#include "shared/rpc/handshake.h"

#include <cstring>

#include <fmt/format.h>
#include <sodium.h>

namespace pvfs::rpc {

namespace {
constexpr char kHelloMagic[8] = {'P', 'V', 'F', 'S', 'A', 'U', 'T', 'H'};
// 2: hello carries kind, id and flags; initiator proves first; frames are sealed.
constexpr uint8_t kVersion = 2;
constexpr uint8_t kFlagEncrypt = 1;
constexpr uint8_t kFlagLocal = 2;
constexpr char kSessionLabel[] = "pvfs session keys v2";

bool known_kind(uint8_t k) {
  return k == static_cast<uint8_t>(Kind::client) || k == static_cast<uint8_t>(Kind::mds) ||
         k == static_cast<uint8_t>(Kind::server);
}
}  // namespace

std::string to_string(const Identity& who) {
  switch (who.kind) {
    case Kind::mds: return fmt::format("mds {}", who.id);
    case Kind::server: return fmt::format("server {}", who.id);
    case Kind::client: break;
  }
  return "client";
}

Hello make_hello(const Identity& who, bool encrypt, const Nonce& nonce, bool local) {
  Hello h{};
  std::memcpy(h.data(), kHelloMagic, 8);
  h[8] = kVersion;
  h[9] = static_cast<uint8_t>(who.kind);
  h[10] = static_cast<uint8_t>((encrypt ? kFlagEncrypt : 0) | (local ? kFlagLocal : 0));
  for (int i = 0; i < 4; ++i) h[12 + i] = static_cast<uint8_t>(who.id >> (8 * i));
  std::memcpy(h.data() + 16, nonce.data(), nonce.size());
  return h;
}

std::optional<HelloFields> parse_hello(const Hello& hello) {
  if (std::memcmp(hello.data(), kHelloMagic, 8) != 0 || hello[8] != kVersion ||
      !known_kind(hello[9]))
    return std::nullopt;
  HelloFields f;
  f.who.kind = static_cast<Kind>(hello[9]);
  f.encrypt = (hello[10] & kFlagEncrypt) != 0;
  f.local = (hello[10] & kFlagLocal) != 0;
  for (int i = 0; i < 4; ++i) f.who.id |= uint32_t{hello[12 + i]} << (8 * i);
  std::memcpy(f.nonce.data(), hello.data() + 16, f.nonce.size());
  return f;
}

Mac make_proof(const Secret& key, Side side, const Hello& initiator, const Hello& responder) {
  std::array<uint8_t, 1 + 2 * kHelloBytes> msg{};
  msg[0] = static_cast<uint8_t>(side);
  std::memcpy(msg.data() + 1, initiator.data(), kHelloBytes);
  std::memcpy(msg.data() + 1 + kHelloBytes, responder.data(), kHelloBytes);
  return keyed_hash(key, msg);
}

bool check_proof(const Secret& key, Side side, const Hello& initiator, const Hello& responder,
                 const Mac& proof) {
  return mac_equal(make_proof(key, side, initiator, responder), proof);
}

SessionKeys derive_session_keys(const Secret& key, const Hello& initiator, const Hello& responder) {
  PVFS_CHECK(sodium_init() >= 0);
  std::array<uint8_t, 64> both{};
  crypto_generichash_state st;
  crypto_generichash_init(&st, key.data(), key.size(), both.size());
  crypto_generichash_update(&st, reinterpret_cast<const uint8_t*>(kSessionLabel),
                            sizeof kSessionLabel);
  crypto_generichash_update(&st, initiator.data(), initiator.size());
  crypto_generichash_update(&st, responder.data(), responder.size());
  crypto_generichash_final(&st, both.data(), both.size());
  SessionKeys keys;
  std::memcpy(keys.initiator_to_responder.data(), both.data(), 32);
  std::memcpy(keys.responder_to_initiator.data(), both.data() + 32, 32);
  sodium_memzero(both.data(), both.size());
  return keys;
}

}  // namespace pvfs::rpc
