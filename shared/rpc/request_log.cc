#include "shared/rpc/request_log.h"

#include <capnp/pretty-print.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "shared/log_limiter.h"

namespace pvfs::rpc {

namespace {

// Long requests (a readdir's cookie list, a setxattr value) are cut here.
constexpr size_t kMaxLoggedChars = 240;

// Failures that say something is wrong with the daemon or its disk, as
// opposed to answers (not found, permission denied, stale map, ...).
bool operator_must_know(Errc code) {
  return code == Errc::io || code == Errc::corrupt || code == Errc::no_space;
}

}  // namespace

std::string request_name(capnp::DynamicStruct::Reader body) {
  try {
    KJ_IF_MAYBE(field, body.which()) { return field->getProto().getName().cStr(); }
  } catch (const kj::Exception&) {
  }
  return "unknown";
}

void log_request(InMessage& message, capnp::DynamicStruct::Reader body, const Status& outcome,
                 std::chrono::steady_clock::duration took) {
  const bool warn = !outcome.ok() && operator_must_know(outcome.code());
  const auto level = warn ? spdlog::level::warn : spdlog::level::debug;
  if (!spdlog::should_log(level)) return;
  // A full disk fails every create or write that comes: one warning a
  // second for each request type and error, with the count held back.
  LogLimiter::Verdict verdict{true, 0};
  if (warn && !spdlog::should_log(spdlog::level::debug)) {
    thread_local LogLimiter limiter;
    verdict = limiter.admit(fmt::format("{} {}", request_name(body), errc_name(outcome.code())),
                            std::chrono::steady_clock::now());
    if (!verdict.log) return;
  }
  auto envelope = message.envelope();
  std::string text;
  try {
    KJ_IF_MAYBE(field, body.which()) { text = kj::str(body.get(*field)).cStr(); }
  } catch (const kj::Exception& e) {
    text = fmt::format("(malformed: {})", e.getDescription().cStr());
  }
  if (text.size() > kMaxLoggedChars) text = text.substr(0, kMaxLoggedChars) + "...";
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(took).count();
  const std::string held =
      verdict.suppressed ? fmt::format(" ({} more like it in the last seconds not logged)", verdict.suppressed) : "";
  spdlog::log(level, "req {:016x} job {} {} {} bytes={} -> {} {}us{}", envelope.getRequestId(),
              envelope.getJobId().size() ? envelope.getJobId().cStr() : "-", request_name(body),
              text, message.data().size(), outcome.ok() ? "ok" : outcome.to_string(), us, held);
}

}  // namespace pvfs::rpc
