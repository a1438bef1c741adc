#include "tests/support/signal_cleanup.h"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include <doctest/doctest.h>

namespace pvfs::test {

namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};

struct Registry {
  std::mutex mutex;
  std::map<uint64_t, std::function<void()>> undos;  // by id: registration order
  uint64_t next_id = 1;
  int pipe_write = -1;
  pid_t owner = 0;  // the process that installed the handler
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: the watcher may outlive main's statics
  return *r;
}

void on_signal(int signal) {
  if (::getpid() != registry().owner) {
    // A child forked without exec: its parent's undos are not its business.
    ::signal(signal, SIG_DFL);
    ::raise(signal);
    return;
  }
  const unsigned char byte = static_cast<unsigned char>(signal);
  // Nothing else is safe here; a full pipe means a signal is pending already.
  [[maybe_unused]] ssize_t n = ::write(registry().pipe_write, &byte, 1);
}

[[noreturn]] void watch(int pipe_read) {
  unsigned char byte = 0;
  while (::read(pipe_read, &byte, 1) != 1) {
  }
  const int signal = byte;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);  // held until the end: no owner frees what an undo reads
  std::fprintf(stderr, "test program stopped by signal %d: killing its daemons, unmounting\n", signal);
  for (auto it = r.undos.rbegin(); it != r.undos.rend(); ++it) {
    try {
      it->second();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cleanup after signal %d: %s\n", signal, e.what());
    }
  }
  std::signal(signal, SIG_DFL);
  std::raise(signal);
  std::_Exit(128 + signal);
}

void set_handlers() {
  for (int signal : kSignals) {
    struct sigaction action = {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(signal, &action, nullptr);
  }
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      std::perror("cleanup on signal: pipe2");
      return;
    }
    registry().pipe_write = fds[1];
    registry().owner = ::getpid();
    std::thread(watch, fds[0]).detach();
    set_handlers();
  });
}

// doctest handles SIGINT and SIGTERM itself while a test case runs (to
// report it as crashed): it saves the handlers it finds when the case
// starts and puts them back when the case ends or the signal comes, then
// raises the signal again. So ours must be in place at every case's start,
// or a cluster made in an earlier case (a shared one) is forgotten: this
// listener puts it back then, once anything was registered.
struct ReinstallAtCaseStart : doctest::IReporter {
  explicit ReinstallAtCaseStart(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override {
    if (registry().pipe_write >= 0) set_handlers();
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
DOCTEST_REGISTER_LISTENER("pvfs-cleanup-on-signal", 1, ReinstallAtCaseStart);

}  // namespace

CleanupOnSignal::CleanupOnSignal(std::function<void()> undo) {
  install_once();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  id_ = r.next_id++;
  r.undos.emplace(id_, std::move(undo));
}

void CleanupOnSignal::reset() {
  if (id_ == 0) return;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.undos.erase(id_);
  id_ = 0;
}

}  // namespace pvfs::test
