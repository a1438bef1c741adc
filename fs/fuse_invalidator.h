// Tells the kernel to forget directory entries (fuse_lowlevel_notify_inval_entry)
// and the cached pages and attributes of files (fuse_lowlevel_notify_inval_inode)
// from a thread of its own. The kernel may hold the directory's lock for a
// request that the client's threads must serve before the notification can
// complete, so neither a FUSE worker nor the client's io thread may send it
// (libfuse's documentation of the call). Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

struct fuse_session;

namespace pvfs::fuse {

class EntryInvalidator {
 public:
  EntryInvalidator() = default;
  ~EntryInvalidator() { stop(); }
  EntryInvalidator(const EntryInvalidator&) = delete;
  EntryInvalidator& operator=(const EntryInvalidator&) = delete;

  // Starts the thread; notifications go to `session`, which must outlive stop().
  void start(fuse_session* session);
  // Queues "forget entry `name` of directory `parent`"; `done`, if given,
  // runs on this object's thread once the kernel has (or at once when
  // stopped).
  void post(uint64_t parent, std::string name, std::function<void()> done = {});
  // Queues "forget the cached pages and attributes of `ino`"; `done` runs
  // on this object's thread once the kernel has (or at once when stopped).
  void post_pages(uint64_t ino, std::function<void()> done);
  // Sends what is queued, then ends the thread. Idempotent.
  void stop();

 private:
  void run();

  fuse_session* session_ = nullptr;
  std::mutex mutex_;
  std::condition_variable wake_;
  struct Job {
    uint64_t ino = 0;
    std::string name;             // an entry of directory `ino`; empty: the file's pages
    std::function<void()> done;   // run once the kernel has forgotten
  };
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace pvfs::fuse
