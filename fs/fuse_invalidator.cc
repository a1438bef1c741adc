#include "fs/fuse_invalidator.h"

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "shared/log.h"

namespace pvfs::fuse {

void EntryInvalidator::start(fuse_session* session) {
  session_ = session;
  thread_ = std::thread([this] { run(); });
}

void EntryInvalidator::post(uint64_t parent, std::string name) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || !thread_.joinable()) return;
    queue_.emplace_back(parent, std::move(name));
  }
  wake_.notify_one();
}

void EntryInvalidator::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void EntryInvalidator::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    auto [parent, name] = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    // ENOENT: the kernel had no such entry cached; nothing to forget.
    int rc = fuse_lowlevel_notify_inval_entry(session_, parent, name.c_str(), name.size());
    if (rc != 0 && rc != -ENOENT) spdlog::debug("forgetting entry '{}' of {}: {}", name, parent, rc);
    lock.lock();
  }
}

}  // namespace pvfs::fuse
