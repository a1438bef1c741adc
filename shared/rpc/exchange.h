// The request envelope both daemons share: one request from its arrival to
// its one reply, and the table from request kind to handler that each
// service (mds/handlers/table.cc, server/storage_service.cc) looks requests
// up in. What is checked before any service sees a request (the job id's
// length) is Connection's (rpc/origin.h); what a service checks before a
// handler runs (the MDS's file set admission, the storage server's read
// budget) is its own, through refuse(). Owned by the coroutine serving the
// request, on the service's network thread.
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string_view>

#include <asio.hpp>
#include <capnp/dynamic.h>
#include <fmt/format.h>

#include "shared/buffer.h"
#include "shared/metrics/request_stats.h"
#include "shared/rpc/connection.h"
#include "shared/rpc/job_counters.h"
#include "shared/rpc/message.h"
#include "shared/rpc/request_log.h"
#include "shared/status.h"

namespace pvfs::rpc {

// One request of a service whose messages are `Request` and `Reply`
// (e.g. proto::storage::Request and Reply).
template <class Request, class Reply>
class Exchange {
 public:
  // Starts the clock and the reply. Throws kj::Exception when the body is
  // malformed (Connection answers it).
  Exchange(std::shared_ptr<Connection> connection, std::unique_ptr<InMessage> message)
      : conn(std::move(connection)),
        msg(std::move(message)),
        req(msg->body<Request>()),
        reply(out_.init_body<Reply>()) {}

  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  // The job the request counts against (its envelope's jobId).
  std::string_view job() const {
    auto j = msg->envelope().getJobId();
    return {j.begin(), j.size()};
  }
  // The row it counts in for pvfs-ctl jobs and /metrics: the job; without
  // one, kDaemonsJob for another daemon's own traffic (heartbeats,
  // registrations, pulls, file set moves) and kNoJob for a client's (the
  // kernel's writeback and readahead, tools).
  std::string_view counted_job() const {
    if (std::string_view j = job(); !j.empty()) return j;
    return conn->peer_identity().kind == Kind::client ? kNoJob : kDaemonsJob;
  }

  // Runs `handler` (an awaitable<Status>), turning a kj::Exception from
  // reading a malformed field into invalid_argument.
  template <class Handler>
  asio::awaitable<Status> run(Handler handler) {
    try {
      co_return co_await handler();
    } catch (const kj::Exception& e) {
      co_return Status(Errc::invalid_argument,
                       fmt::format("malformed request: {}", e.getDescription().cStr()));
    }
  }

  // Answers a request no handler ran for (refused before it): logged, not
  // counted in the request statistics.
  asio::awaitable<void> refuse(const Status& why) {
    log_request(*msg, capnp::toDynamic(req), why, elapsed());
    co_await conn->reply_error(msg->id(), why);
  }

  // Logs the request with its `outcome`, counts it in `stats` (by its kind,
  // with `bulk_in` and the reply data), and sends exactly one reply: the error,
  // or `reply` followed by `reply_data`.
  asio::awaitable<void> finish(const Status& outcome, metrics::RequestStats& stats) {
    const auto took = elapsed();
    log_request(*msg, capnp::toDynamic(req), outcome, took);
    stats.record(static_cast<size_t>(req.which()), !outcome.ok(), bulk_in,
                 outcome.ok() ? reply_data.size() : 0, took);
    if (!outcome.ok()) co_return co_await conn->reply_error(msg->id(), outcome);
    co_await conn->reply(msg->id(), out_, reply_data.span());
  }

  std::chrono::steady_clock::time_point started() const { return started_; }
  std::chrono::steady_clock::duration elapsed() const {
    return std::chrono::steady_clock::now() - started_;
  }

  const std::shared_ptr<Connection> conn;
  const std::unique_ptr<InMessage> msg;
  const typename Request::Reader req;

 private:
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  OutMessage out_;

 public:
  // What the handler answers: the reply message, and bulk data sent after it.
  typename Reply::Builder reply;
  Buffer reply_data;
  // The request's bulk data counted as received (file data written).
  uint64_t bulk_in = 0;
};

// The entry of `table` for request kind `kind`, or nullptr when the table
// has none (a kind this build does not know: a newer peer's request).
// `Entry` has a `kind` member; tables are short, a scan is cheapest.
template <class Entry, class Which>
const Entry* find_handler(std::span<const Entry> table, Which kind) {
  for (const Entry& e : table)
    if (e.kind == kind) return &e;
  return nullptr;
}

}  // namespace pvfs::rpc
