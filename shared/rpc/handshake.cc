#include "shared/rpc/handshake.h"

#include <cstring>
#include <vector>

namespace pvfs::rpc {

namespace {
constexpr char kHelloMagic[8] = {'P', 'V', 'F', 'S', 'A', 'U', 'T', 'H'};
constexpr uint8_t kVersion = 1;
}  // namespace

Hello make_hello(const Nonce& nonce) {
  Hello h{};
  std::memcpy(h.data(), kHelloMagic, 8);
  h[8] = kVersion;
  std::memcpy(h.data() + 16, nonce.data(), nonce.size());
  return h;
}

bool parse_hello(const Hello& hello, Nonce& peer_nonce) {
  if (std::memcmp(hello.data(), kHelloMagic, 8) != 0 || hello[8] != kVersion) return false;
  std::memcpy(peer_nonce.data(), hello.data() + 16, peer_nonce.size());
  return true;
}

Mac make_proof(const Secret& key, Role role, const Nonce& peer_nonce, const Nonce& own_nonce) {
  std::vector<uint8_t> msg;
  msg.push_back(static_cast<uint8_t>(role));
  msg.insert(msg.end(), peer_nonce.begin(), peer_nonce.end());
  msg.insert(msg.end(), own_nonce.begin(), own_nonce.end());
  return keyed_hash(key, msg);
}

bool check_proof(const Secret& key, Role peer_role, const Nonce& own_nonce, const Nonce& peer_nonce,
                 const Mac& proof) {
  return mac_equal(make_proof(key, peer_role, own_nonce, peer_nonce), proof);
}

}  // namespace pvfs::rpc
