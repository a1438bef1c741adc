// Messages as the RPC layer hands them around: an outgoing Cap'n Proto
// builder whose root is an Envelope, and a received frame that owns its
// words, its reader and its bulk data. Owned by one coroutine at a time.
#pragma once

#include <chrono>

#include <optional>
#include <span>
#include <string_view>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "shared/buffer.h"
#include "shared/proto/common.capnp.h"
#include "shared/status.h"

namespace pvfs::rpc {

// A message under construction. The RPC layer fills id and isReply.
class OutMessage {
 public:
  OutMessage() : root_(builder_.initRoot<proto::Envelope>()) {}
  proto::Envelope::Builder envelope() { return root_; }
  // Starts the service body (e.g. proto::mds::Request) and returns its builder.
  template <typename T>
  typename T::Builder init_body() {
    return root_.getBody().initAs<T>();
  }
  capnp::MallocMessageBuilder& builder() { return builder_; }

 private:
  // Most messages (metadata requests and replies, data headers) take a few
  // hundred bytes; capnp's default first segment is 8 KiB, zeroed for every
  // message. Larger messages grow into further segments.
  static constexpr unsigned kFirstSegmentWords = 128;
  capnp::MallocMessageBuilder builder_{kFirstSegmentWords};
  proto::Envelope::Builder root_;
};

// A frame received from a peer. Field access on a malformed message throws
// kj::Exception; the service dispatch catches it (see Connection).
class InMessage {
 public:
  InMessage(kj::Array<capnp::word> words, Buffer data);
  proto::Envelope::Reader envelope() const { return envelope_; }
  template <typename T>
  typename T::Reader body() const {
    return envelope_.getBody().getAs<T>();
  }
  Buffer& data() { return data_; }
  uint64_t id() const { return id_; }
  // How long the frame took to arrive after its header (the message and its
  // bulk data read off the socket); zero for messages not read from a socket.
  std::chrono::steady_clock::duration receive_time() const { return receive_time_; }
  void set_receive_time(std::chrono::steady_clock::duration d) { receive_time_ = d; }

 private:
  kj::Array<capnp::word> words_;
  capnp::FlatArrayMessageReader reader_;
  proto::Envelope::Reader envelope_;
  Buffer data_;
  uint64_t id_ = 0;
  std::chrono::steady_clock::duration receive_time_{};
};

// Limits applied when reading a peer's message: bounded work per message.
capnp::ReaderOptions reader_options();

}  // namespace pvfs::rpc
