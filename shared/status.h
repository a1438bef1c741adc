// Status and Result<T>: how every expected outcome travels through pvfs.
// A closed set of codes; mapping to errno happens only in errc_to_errno()
// (used by the FUSE bridge) and to the wire only in rpc/wire_status.
// Plain values, thread-safe to copy.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace pvfs {

// Every failure pvfs knows how to report. Adding one means adding it to the
// wire enum in proto/common.capnp and to errc_to_errno().
enum class Errc : uint16_t {
  ok = 0,
  not_found,          // ENOENT
  exists,             // EEXIST
  not_empty,          // ENOTEMPTY
  not_dir,            // ENOTDIR
  is_dir,             // EISDIR
  invalid_argument,   // EINVAL
  name_too_long,      // ENAMETOOLONG
  cross_device,       // EXDEV
  no_space,           // ENOSPC
  io,                 // EIO
  timeout,            // ETIMEDOUT
  unavailable,        // EHOSTDOWN-ish: peer not reachable
  corrupt,            // EUCLEAN: stored data failed a check
  stale_map,          // ESTALE: caller's view is out of date, retry
  access_denied,      // EACCES
  not_permitted,      // EPERM
  too_many_links,     // EMLINK
  read_only,          // EROFS
  no_data,            // ENODATA (missing xattr)
  range,              // ERANGE (buffer too small)
  not_supported,      // EOPNOTSUPP
  busy,               // EBUSY
  too_big,            // EFBIG
  loop,               // ELOOP
  bad_handle,         // EBADF
  again,              // EAGAIN
  stale,              // ESTALE: the inode a request names no longer exists
  kLast = stale,
};

// Short lowercase name for logs and CLI messages ("not found").
std::string_view errc_name(Errc code);
// The errno a POSIX caller expects for this code. Errc::ok maps to 0.
int errc_to_errno(Errc code);
// Inverse used when a local syscall fails; unknown errnos become Errc::io.
Errc errno_to_errc(int err);

// Outcome of an operation: a code plus an optional human detail.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Errc code, std::string detail = {}) : code_(code), detail_(std::move(detail)) {}
  static Status from_errno(int err, std::string detail = {}) {
    return Status(errno_to_errc(err), std::move(detail));
  }

  bool ok() const { return code_ == Errc::ok; }
  explicit operator bool() const { return ok(); }
  Errc code() const { return code_; }
  const std::string& detail() const { return detail_; }
  // "not found: /a/b" style, for one-line error messages.
  std::string to_string() const;

 private:
  Errc code_ = Errc::ok;
  std::string detail_;
};

inline Status ok_status() { return {}; }

// A value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  // An error placeholder; exists because some Asio completion paths need a
  // default-constructible result.
  Result() : v_(Status(Errc::io, "no result")) {}
  Result(T value) : v_(std::move(value)) {}
  Result(Status status) : v_(std::move(status)) {}
  Result(Errc code, std::string detail = {}) : v_(Status(code, std::move(detail))) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  // The failure; Status{} (ok) when a value is held.
  Status status() const { return ok() ? Status{} : std::get<1>(v_); }
  Errc code() const { return ok() ? Errc::ok : std::get<1>(v_).code(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace pvfs

// Aborts with file and line when a broken invariant (a bug) is detected.
// Not for bad input: that returns Errc::invalid_argument.
#define PVFS_CHECK(cond)                                                  \
  do {                                                                    \
    if (!(cond)) ::pvfs::check_failed(__FILE__, __LINE__, #cond);         \
  } while (0)

namespace pvfs {
[[noreturn]] void check_failed(const char* file, int line, const char* what);
}
