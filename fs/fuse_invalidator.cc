#include "fs/fuse_invalidator.h"

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "shared/log.h"

namespace pvfs::fuse {

void EntryInvalidator::start(fuse_session* session) {
  session_ = session;
  thread_ = std::thread([this] { run(); });
}

void EntryInvalidator::post(uint64_t parent, std::string name, std::function<void()> done) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_ && thread_.joinable()) {
      queue_.push_back({parent, std::move(name), std::move(done)});
      done = nullptr;
    }
  }
  if (done) done();
  else wake_.notify_one();
}

void EntryInvalidator::post_pages(uint64_t ino, std::function<void()> done) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_ && thread_.joinable()) {
      queue_.push_back({ino, {}, std::move(done)});
      done = nullptr;
    }
  }
  if (done) done();
  else wake_.notify_one();
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
    Job job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    if (job.name.empty()) {
      // ENOENT: the kernel has nothing of it cached.
      int rc = fuse_lowlevel_notify_inval_inode(session_, job.ino, 0, 0);
      if (rc != 0 && rc != -ENOENT) spdlog::debug("forgetting the cached pages of {}: {}", job.ino, rc);
    } else {
      // ENOENT: the kernel had no such entry cached; nothing to forget.
      int rc = fuse_lowlevel_notify_inval_entry(session_, job.ino, job.name.c_str(), job.name.size());
      if (rc != 0 && rc != -ENOENT) spdlog::debug("forgetting entry '{}' of {}: {}", job.name, job.ino, rc);
    }
    if (job.done) job.done();
    lock.lock();
  }
}

}  // namespace pvfs::fuse
