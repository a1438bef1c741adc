#include "shared/rpc/memory_stream.h"

namespace pvfs::rpc {

std::pair<MemoryStream, MemoryStream> MemoryStream::pair(const asio::any_io_executor& ex,
                                                         std::string initiator_address,
                                                         std::string responder_name) {
  auto state = std::make_shared<detail::MemoryLinkState>(ex);
  return {MemoryStream(state, 0, responder_name, ""),
          MemoryStream(state, 1, "memory:" + initiator_address, initiator_address)};
}

void MemoryStream::close() {
  if (!state_ || closed_) return;
  closed_ = true;
  out().closed = true;
  out().wake();
  in().wake();
}

void MemoryLink::cut() {
  for (auto& p : state_->pipes) {
    p.reset = true;
    p.held_bytes.clear();
    p.wake();
  }
}

void MemoryLink::hold(Direction d) { state_->pipes[static_cast<int>(d)].held = true; }

void MemoryLink::release(Direction d) {
  detail::MemoryPipe& p = state_->pipes[static_cast<int>(d)];
  p.held = false;
  p.bytes.insert(p.bytes.end(), p.held_bytes.begin(), p.held_bytes.end());
  p.held_bytes.clear();
  p.wake();
}

void MemoryLink::drop(Direction d, unsigned writes) { state_->pipes[static_cast<int>(d)].drop_writes += writes; }

size_t MemoryLink::pending(Direction d) const { return state_->pipes[static_cast<int>(d)].unread(); }

uint64_t MemoryLink::written(Direction d) const { return state_->pipes[static_cast<int>(d)].written; }

uint64_t MemoryLink::reads(Direction d) const { return state_->pipes[static_cast<int>(d)].reads; }

void MemoryLink::set_capacity(Direction d, size_t bytes) {
  detail::MemoryPipe& p = state_->pipes[static_cast<int>(d)];
  p.capacity = bytes;
  p.room.cancel();
}

}  // namespace pvfs::rpc
