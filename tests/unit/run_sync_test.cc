// rpc::run_sync, the one way tools and tests run a coroutine to its end:
// values come back, an exception of any kind comes back as an io error that
// names it (nothing escapes), and the caller's io_context stays usable.
#include "shared/rpc/run_sync.h"

#include <stdexcept>

#include <doctest/doctest.h>
#include <kj/exception.h>
#include <kj/string.h>

namespace pvfs::rpc {
namespace {

asio::awaitable<Result<int>> answer(int value) { co_return value; }

asio::awaitable<Status> refuse() { co_return Status(Errc::not_found, "no such thing"); }

asio::awaitable<Result<int>> throw_std() {
  throw std::runtime_error("boom");
  co_return 0;
}

asio::awaitable<Status> throw_kj() {
  throw kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::str("malformed pointer"));
  co_return Status{};
}

asio::awaitable<Status> throw_int() {
  throw 42;
  co_return Status{};
}

// Suspends once, so the value comes from a later turn of the event loop.
asio::awaitable<Result<int>> after_a_turn(int value) {
  co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
  co_return value;
}

}  // namespace

TEST_CASE("run_sync returns the coroutine's value or status") {
  auto got = run_sync(answer(7));
  REQUIRE(got.ok());
  CHECK(*got == 7);
  Status st = run_sync(refuse());
  CHECK(st.code() == Errc::not_found);
  CHECK(st.detail() == "no such thing");
  auto later = run_sync(after_a_turn(9));
  REQUIRE(later.ok());
  CHECK(*later == 9);
}

TEST_CASE("an exception escaping the coroutine comes back as an io error naming it") {
  auto from_std = run_sync(throw_std());
  CHECK(from_std.status().code() == Errc::io);
  CHECK(from_std.status().detail() == "internal error: boom");

  Status from_kj = run_sync(throw_kj());
  CHECK(from_kj.code() == Errc::io);
  CHECK(from_kj.detail().find("malformed pointer") != std::string::npos);

  Status unknown = run_sync(throw_int());
  CHECK(unknown.code() == Errc::io);
  CHECK(unknown.detail() == "internal error: an exception of unknown type");
}

TEST_CASE("the caller's io_context runs the next task after one that threw") {
  asio::io_context io(1);
  CHECK(run_sync(io, throw_std()).status().code() == Errc::io);
  auto next = run_sync(io, after_a_turn(3));
  REQUIRE(next.ok());
  CHECK(*next == 3);
  CHECK(run_sync(io, answer(4)).value() == 4);
}

}  // namespace pvfs::rpc
