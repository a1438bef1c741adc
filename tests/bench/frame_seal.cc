// The CPU cost of sealing frames (tests/bench, not a test). First the
// candidate primitives alone, one 1 GiB pass (at most 10^6 frames) in frames
// of 80 bytes, 4 KiB and 1 MiB:
// libsodium's Poly1305 (what FrameSeal used up to now), OpenSSL's Poly1305,
// GMAC and AES-256-GCM with the data as AAD, libsodium's AES-256-GCM, and
// ChaCha20 from both; then the chosen MAC on data in cache and on data that
// comes from memory (a 256 MiB pool walked once). Then FrameSeal itself:
// seals and opens frames of a few sizes with the MAC alone and with
// encryption, on 4 KiB-aligned buffers, and prints MiB/s and microseconds
// per MiB for each side. Single thread; figures are this thread's CPU time,
// so a busy machine inflates them less than wall time would (caches and
// clock speed are still shared). See docs/benchmarks.md.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <vector>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <sodium.h>

#include "shared/buffer.h"
#include "shared/rpc/frame_seal.h"

namespace {

// CPU time of this thread, not wall time: on a shared machine the thread
// waits for a core, and that is not the cost of sealing.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

// --- candidate primitives ----------------------------------------------------

using Bytes = std::vector<unsigned char>;
using Primitive = std::function<void(const unsigned char* data, size_t n, unsigned char* out)>;

constexpr unsigned char kKey[32] = {1, 2, 3, 4, 5, 6, 7, 8};
unsigned char g_tag[16];

// One pass of 1 GiB through `f` in frames of `n` bytes, from one buffer.
void candidate(const char* name, size_t n, const Primitive& f) {
  pvfs::Buffer in(n), out(n);
  auto* p = reinterpret_cast<unsigned char*>(in.data());
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(i * 7);
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  const size_t frames = std::min<size_t>((size_t{1} << 30) / n, 1'000'000);
  for (int i = 0; i < 3; ++i) f(p, n, o);
  const double t = cpu_seconds();
  for (size_t i = 0; i < frames; ++i) f(p, n, o);
  const double s = cpu_seconds() - t;
  const double bytes = double(frames) * double(n);
  std::printf("%-34s %8zu  %6.2f GB/s  %7.1f us/MiB  %7.0f ns/frame\n", name, n,
              bytes / s / 1e9, s * 1e6 * double(1 << 20) / bytes, s * 1e9 / double(frames));
}

void check(bool ok) {
  if (!ok) {
    std::fprintf(stderr, "a crypto call failed\n");
    std::exit(1);
  }
}

Primitive sodium_poly1305() {
  return [](const unsigned char* p, size_t n, unsigned char*) {
    unsigned char k[32];
    unsigned char nonce[12] = {};
    crypto_stream_chacha20_ietf(k, sizeof k, nonce, kKey);  // the one-time key, as FrameSeal
    crypto_onetimeauth(g_tag, p, n, k);
  };
}

Primitive sodium_aes_gcm_aad() {
  return [](const unsigned char* p, size_t n, unsigned char*) {
    static crypto_aead_aes256gcm_state st = [] {
      crypto_aead_aes256gcm_state s;
      crypto_aead_aes256gcm_beforenm(&s, kKey);
      return s;
    }();
    unsigned char nonce[12] = {};
    unsigned long long len = 0;
    crypto_aead_aes256gcm_encrypt_afternm(g_tag, &len, nullptr, 0, p, n, nullptr, nonce, &st);
  };
}

Primitive openssl_poly1305() {
  return [](const unsigned char* p, size_t n, unsigned char*) {
    static EVP_MAC_CTX* c = EVP_MAC_CTX_new(EVP_MAC_fetch(nullptr, "POLY1305", nullptr));
    unsigned char k[32];
    unsigned char nonce[12] = {};
    crypto_stream_chacha20_ietf(k, sizeof k, nonce, kKey);
    size_t len = 0;
    check(EVP_MAC_init(c, k, sizeof k, nullptr) == 1 && EVP_MAC_update(c, p, n) == 1 &&
          EVP_MAC_final(c, g_tag, &len, sizeof g_tag) == 1);
  };
}

Primitive openssl_gmac() {
  return [](const unsigned char* p, size_t n, unsigned char*) {
    static EVP_MAC_CTX* c = EVP_MAC_CTX_new(EVP_MAC_fetch(nullptr, "GMAC", nullptr));
    unsigned char iv[12] = {};
    char cipher[] = "AES-256-GCM";
    OSSL_PARAM ps[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, cipher, 0),
                       OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_IV, iv, sizeof iv),
                       OSSL_PARAM_construct_end()};
    size_t len = 0;
    check(EVP_MAC_init(c, kKey, sizeof kKey, ps) == 1 && EVP_MAC_update(c, p, n) == 1 &&
          EVP_MAC_final(c, g_tag, &len, sizeof g_tag) == 1);
  };
}

EVP_CIPHER_CTX* keyed(const char* cipher) {
  EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
  check(EVP_EncryptInit_ex2(c, EVP_CIPHER_fetch(nullptr, cipher, nullptr), kKey, nullptr,
                            nullptr) == 1);
  return c;
}

// AES-256-GCM over `n` bytes: as AAD only (a MAC) or encrypting them.
Primitive openssl_aes_gcm(bool encrypt) {
  return [encrypt](const unsigned char* p, size_t n, unsigned char* o) {
    static EVP_CIPHER_CTX* c = keyed("AES-256-GCM");
    unsigned char iv[12] = {};
    int len = 0;
    check(EVP_EncryptInit_ex2(c, nullptr, nullptr, iv, nullptr) == 1 &&
          EVP_EncryptUpdate(c, encrypt ? o : nullptr, &len, p, static_cast<int>(n)) == 1 &&
          EVP_EncryptFinal_ex(c, o, &len) == 1 &&
          EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, sizeof g_tag, g_tag) == 1);
  };
}

Primitive sodium_chacha20() {
  return [](const unsigned char* p, size_t n, unsigned char* o) {
    unsigned char nonce[12] = {};
    crypto_stream_chacha20_ietf_xor_ic(o, p, n, nonce, 0, kKey);
  };
}

Primitive openssl_chacha20() {
  return [](const unsigned char* p, size_t n, unsigned char* o) {
    static EVP_CIPHER_CTX* c = keyed("ChaCha20");
    unsigned char iv[16] = {};
    int len = 0;
    check(EVP_EncryptInit_ex2(c, nullptr, nullptr, iv, nullptr) == 1 &&
          EVP_EncryptUpdate(c, o, &len, p, static_cast<int>(n)) == 1);
  };
}

// The chosen MAC on 1 MiB frames in cache against frames walked once
// through a pool larger than the caches: what tagging costs on the receive
// path, where the data arrived from the socket a little earlier.
void cache_effect() {
  const size_t n = size_t{1} << 20, pool_bytes = size_t{256} << 20;
  pvfs::Buffer pool(pool_bytes);
  std::fill_n(reinterpret_cast<unsigned char*>(pool.data()), pool_bytes, 5);
  const auto f = openssl_poly1305();
  double hot = 0, cold = 0;
  size_t frames = 0;
  for (size_t at = 0; at + n <= pool_bytes; at += n, ++frames) {
    const auto* p = reinterpret_cast<const unsigned char*>(pool.data()) + at;
    double t = cpu_seconds();
    f(p, n, nullptr);
    cold += cpu_seconds() - t;
    t = cpu_seconds();
    f(p, n, nullptr);
    hot += cpu_seconds() - t;
  }
  std::printf("openssl poly1305, 1 MiB frames: from memory %.1f us/MiB, in cache %.1f us/MiB\n",
              cold * 1e6 / double(frames), hot * 1e6 / double(frames));
}

void candidates() {
  std::printf("primitive                          frame B   speed       cost\n");
  // 80 bytes: a metadata frame (header and a small message, no data).
  for (size_t n : {size_t{80}, size_t{4096}, size_t{1} << 20}) {
    candidate("libsodium poly1305 (+key)", n, sodium_poly1305());
    if (crypto_aead_aes256gcm_is_available())
      candidate("libsodium aes256gcm, data as AAD", n, sodium_aes_gcm_aad());
    candidate("openssl poly1305 (+key)", n, openssl_poly1305());
    candidate("openssl gmac aes-256", n, openssl_gmac());
    candidate("openssl aes256gcm, data as AAD", n, openssl_aes_gcm(false));
    candidate("openssl aes256gcm, encrypting", n, openssl_aes_gcm(true));
    candidate("libsodium chacha20", n, sodium_chacha20());
    candidate("openssl chacha20", n, openssl_chacha20());
  }
  cache_effect();
  std::printf("\n");
}

// --- FrameSeal ---------------------------------------------------------------

void run(size_t frame_bytes, bool encrypt) {
  using namespace pvfs;
  Secret key{};
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i);
  rpc::FrameSeal tx(key, encrypt), rx(key, encrypt);
  Buffer data(frame_bytes);
  for (size_t i = 0; i < frame_bytes; ++i) data.data()[i] = static_cast<std::byte>(i * 7);
  // Timed in batches of frames (up to 4 MiB) so that reading the clock costs
  // nothing next to them; each frame of a batch has its own message and
  // ciphertext, as on the wire.
  const size_t batch = std::clamp<size_t>((size_t{4} << 20) / frame_bytes, 1, 64);
  struct Sealed {
    std::vector<std::byte> message = std::vector<std::byte>(64);
    Buffer out;
    rpc::FrameTag tag{};
  };
  std::vector<Sealed> sealed;
  for (size_t i = 0; i < batch; ++i) sealed.push_back({{}, Buffer(frame_bytes), {}});
  const size_t total = size_t{2} << 30;
  const size_t frames = std::max<size_t>(batch, total / frame_bytes / batch * batch);
  auto header = rpc::encode_header({64, frame_bytes});
  double seal_s = 0, open_s = 0;
  for (size_t done = 0; done < frames; done += batch) {
    double t = cpu_seconds();
    for (auto& f : sealed) f.tag = tx.seal(header, f.message, data.span(), f.out.span());
    seal_s += cpu_seconds() - t;
    t = cpu_seconds();
    size_t opened = 0;
    for (auto& f : sealed)
      opened += rx.open(header, f.message, encrypt ? f.out.span() : data.span(), f.tag) ? 1 : 0;
    open_s += cpu_seconds() - t;
    if (opened != batch) {
      std::fprintf(stderr, "a frame after %zu failed to open\n", done);
      std::exit(1);
    }
  }
  const double mib = double(frames) * double(frame_bytes) / (1 << 20);
  std::printf("%-8s %9zu  seal %7.0f MiB/s %6.0f us/MiB   open %7.0f MiB/s %6.0f us/MiB\n",
              encrypt ? "encrypt" : "mac", frame_bytes, mib / seal_s, seal_s * 1e6 / mib,
              mib / open_s, open_s * 1e6 / mib);
}

}  // namespace

int main() {
  if (sodium_init() < 0) return 1;
  candidates();
  std::printf("FrameSeal\nmode     frame B    sender                          receiver\n");
  for (bool encrypt : {false, true})
    for (size_t size : {size_t{4096}, size_t{65536}, size_t{1} << 20}) run(size, encrypt);
  return 0;
}
