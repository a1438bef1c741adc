// The CPU cost of sealing frames (tests/bench, not a test): seals and opens
// frames of a few sizes with the MAC alone and with encryption, on 4 KiB-
// aligned buffers, and prints MiB/s and microseconds per MiB for each side.
// Single thread; run on a quiet machine. See docs/benchmarks.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "shared/buffer.h"
#include "shared/rpc/frame_seal.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void run(size_t frame_bytes, bool encrypt) {
  using namespace pvfs;
  Secret key{};
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i);
  rpc::FrameSeal tx(key, encrypt), rx(key, encrypt);
  Buffer data(frame_bytes), out(frame_bytes);
  for (size_t i = 0; i < frame_bytes; ++i) data.data()[i] = static_cast<std::byte>(i * 7);
  std::vector<std::byte> message(64);
  const size_t total = size_t{2} << 30;
  const size_t frames = std::max<size_t>(1, total / frame_bytes);
  auto header = rpc::encode_header({64, frame_bytes});
  double seal_s = 0, open_s = 0;
  for (size_t i = 0; i < frames; ++i) {
    auto t = Clock::now();
    auto tag = tx.seal(header, message, data.span(), out.span());
    seal_s += seconds_since(t);
    t = Clock::now();
    bool ok = rx.open(header, message, encrypt ? out.span() : data.span(), tag);
    open_s += seconds_since(t);
    if (!ok) {
      std::fprintf(stderr, "frame %zu failed to open\n", i);
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
  std::printf("mode     frame B    sender                          receiver\n");
  for (bool encrypt : {false, true})
    for (size_t size : {size_t{4096}, size_t{65536}, size_t{1} << 20}) run(size, encrypt);
  return 0;
}
