// The load detector of the two-choice paper (Dai et al., §V-D): a storage
// server's load is the number and the bytes of its outstanding data
// requests, queued or in service. Pure counters; the storage service calls
// begin() when a data request arrives and end() when its reply is sent.
// Not thread-safe: one owner thread.
#pragma once

#include <cstdint>

namespace pvfs::load {

class LoadDetector {
 public:
  void begin(uint64_t bytes) {
    ++requests_;
    bytes_ += bytes;
  }
  void end(uint64_t bytes) {
    --requests_;
    bytes_ -= bytes;
  }
  uint32_t requests() const { return requests_; }
  uint64_t bytes() const { return bytes_; }
  bool idle() const { return requests_ == 0; }

 private:
  uint32_t requests_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace pvfs::load
