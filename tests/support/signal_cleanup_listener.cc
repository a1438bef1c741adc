// doctest's side of CleanupOnSignal (tests/support/signal_cleanup.h).
// doctest handles SIGINT and SIGTERM itself while a test case runs (to
// report it as crashed): it saves the handlers it finds when the case
// starts and puts them back when the case ends or the signal comes, then
// raises the signal again. So ours must be in place at every case's start,
// or a cluster made in an earlier case (a shared one) is forgotten: this
// listener puts them back then. It is linked into every test program with
// doctest's main (tests/meson.build), since nothing refers to it by name.
#include <doctest/doctest.h>

#include "tests/support/signal_cleanup.h"

namespace pvfs::test {
namespace {

struct ReinstallAtCaseStart : doctest::IReporter {
  explicit ReinstallAtCaseStart(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override { reinstall_cleanup_handlers(); }
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
}  // namespace pvfs::test
