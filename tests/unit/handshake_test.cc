// The mutual challenge-response every connection runs first: both sides
// accept each other only when they hold the same key; each proof covers both
// hellos (so both roles, daemon ids, encryption requests and nonces), cannot
// be reflected, and the session keys are fresh per connection and per
// direction. Drives the pure message functions directly.
#include "shared/rpc/handshake.h"

#include <cstring>

#include <doctest/doctest.h>

namespace pvfs::rpc {
namespace {

Nonce nonce_of(uint8_t seed) {
  Nonce n{};
  for (size_t i = 0; i < n.size(); ++i) n[i] = static_cast<uint8_t>(seed * 31 + i * 7);
  return n;
}

Secret handshake_key(uint8_t seed) {
  Secret k{};
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(seed + i);
  return k;
}

const Identity kClient{};
const Identity kServer3{Kind::server, 3};

}  // namespace

TEST_CASE("a hello carries the magic, the version, who sends it, its encryption wish and its nonce") {
  const Nonce mine = nonce_of(1);
  Hello h = make_hello(kServer3, true, mine);
  CHECK(std::memcmp(h.data(), "PVFSAUTH", 8) == 0);
  auto f = parse_hello(h);
  REQUIRE(f.has_value());
  CHECK(f->who == kServer3);
  CHECK(f->encrypt);
  CHECK(f->nonce == mine);
  auto c = parse_hello(make_hello({Kind::mds, 0x01020304}, false, mine));
  REQUIRE(c.has_value());
  CHECK(c->who == Identity{Kind::mds, 0x01020304});
  CHECK_FALSE(c->encrypt);
}

TEST_CASE("a hello says whether its end is on a local socket; a hello without the flag says no") {
  auto local = parse_hello(make_hello(kServer3, false, nonce_of(1), true));
  REQUIRE(local.has_value());
  CHECK(local->local);
  CHECK_FALSE(local->encrypt);
  auto both = parse_hello(make_hello(kServer3, true, nonce_of(1), true));
  REQUIRE(both.has_value());
  CHECK(both->local);
  CHECK(both->encrypt);
  // What a peer built before the flag sends.
  auto plain = parse_hello(make_hello(kServer3, false, nonce_of(1)));
  REQUIRE(plain.has_value());
  CHECK_FALSE(plain->local);
}

TEST_CASE("hellos with a wrong magic, version or kind are refused") {
  Hello wrong_magic = make_hello(kClient, false, nonce_of(2));
  wrong_magic[0] = 'X';
  CHECK_FALSE(parse_hello(wrong_magic).has_value());
  Hello old_version = make_hello(kClient, false, nonce_of(2));
  old_version[8] = 1;  // the version that had no identities and unsealed frames
  CHECK_FALSE(parse_hello(old_version).has_value());
  Hello bad_kind = make_hello(kClient, false, nonce_of(2));
  bad_kind[9] = 'Z';
  CHECK_FALSE(parse_hello(bad_kind).has_value());
}

TEST_CASE("each side accepts the other's proof only under the same key") {
  const Secret key = handshake_key(1), other = handshake_key(2);
  const Hello hi = make_hello(kClient, false, nonce_of(1));
  const Hello hr = make_hello(kServer3, false, nonce_of(2));
  CHECK(check_proof(key, Side::initiator, hi, hr, make_proof(key, Side::initiator, hi, hr)));
  CHECK(check_proof(key, Side::responder, hi, hr, make_proof(key, Side::responder, hi, hr)));
  CHECK_FALSE(check_proof(key, Side::initiator, hi, hr, make_proof(other, Side::initiator, hi, hr)));
  CHECK_FALSE(check_proof(key, Side::responder, hi, hr, make_proof(other, Side::responder, hi, hr)));
}

TEST_CASE("a proof is not valid for the other side, so it cannot be reflected") {
  const Secret key = handshake_key(1);
  const Hello hi = make_hello(kClient, false, nonce_of(1));
  const Hello hr = make_hello(kServer3, false, nonce_of(2));
  CHECK_FALSE(check_proof(key, Side::responder, hi, hr, make_proof(key, Side::initiator, hi, hr)));
  CHECK_FALSE(check_proof(key, Side::initiator, hi, hr, make_proof(key, Side::responder, hi, hr)));
  // Both hellos in swapped places (an attacker echoing ours back) do not help either.
  CHECK_FALSE(check_proof(key, Side::responder, hi, hr, make_proof(key, Side::initiator, hr, hi)));
}

TEST_CASE("the role, the daemon id, the encryption wish, the local flag and both nonces are bound into the proof") {
  const Secret key = handshake_key(1);
  const Hello hi = make_hello(kClient, false, nonce_of(1));
  const Hello hr = make_hello(kServer3, false, nonce_of(2));
  const Mac proof = make_proof(key, Side::initiator, hi, hr);
  CHECK_FALSE(check_proof(key, Side::initiator, make_hello({Kind::mds, 0}, false, nonce_of(1)), hr, proof));
  CHECK_FALSE(check_proof(key, Side::initiator, hi, make_hello({Kind::server, 4}, false, nonce_of(2)), proof));
  CHECK_FALSE(check_proof(key, Side::initiator, hi, make_hello(kServer3, true, nonce_of(2)), proof));
  CHECK_FALSE(check_proof(key, Side::initiator, hi, make_hello(kServer3, false, nonce_of(2), true), proof));
  CHECK_FALSE(check_proof(key, Side::initiator, make_hello(kClient, false, nonce_of(9)), hr, proof));
  CHECK_FALSE(check_proof(key, Side::initiator, hi, make_hello(kServer3, false, nonce_of(9)), proof));
}

TEST_CASE("a single flipped bit anywhere in a proof is refused") {
  const Secret key = handshake_key(3);
  const Hello hi = make_hello(kClient, false, nonce_of(1));
  const Hello hr = make_hello(kServer3, false, nonce_of(2));
  const Mac good = make_proof(key, Side::initiator, hi, hr);
  for (size_t i = 0; i < good.size(); ++i) {
    Mac bad = good;
    bad[i] ^= 0x01;
    CHECK_FALSE(check_proof(key, Side::initiator, hi, hr, bad));
  }
}

TEST_CASE("session keys differ per direction, per key and per pair of hellos, and both ends agree") {
  const Secret key = handshake_key(1);
  const Hello hi = make_hello(kClient, false, nonce_of(1));
  const Hello hr = make_hello(kServer3, false, nonce_of(2));
  const SessionKeys a = derive_session_keys(key, hi, hr);
  const SessionKeys again = derive_session_keys(key, hi, hr);
  CHECK(a.initiator_to_responder == again.initiator_to_responder);
  CHECK(a.responder_to_initiator == again.responder_to_initiator);
  CHECK(a.initiator_to_responder != a.responder_to_initiator);
  CHECK(a.initiator_to_responder != key);
  const SessionKeys other_key = derive_session_keys(handshake_key(2), hi, hr);
  CHECK(other_key.initiator_to_responder != a.initiator_to_responder);
  const SessionKeys other_nonce = derive_session_keys(key, hi, make_hello(kServer3, false, nonce_of(3)));
  CHECK(other_nonce.initiator_to_responder != a.initiator_to_responder);
  CHECK(other_nonce.responder_to_initiator != a.responder_to_initiator);
}

}  // namespace pvfs::rpc
