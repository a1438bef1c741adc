// One log line per request a daemon served, so one file system operation
// can be followed across daemons by its request id (Envelope.requestId):
//   req 5f2a9c0000000031 job 4711 write object=... -> ok 812us
// At debug level every request is logged (pvfs-ctl loglevel DAEMON debug);
// at any level, failures the operator must act on (I/O errors, corruption,
// a full disk) are logged as warnings, at most one a second for each
// request type and error on each thread, the next one saying how many were
// held back (all of them at debug level). Thread-safe (spdlog; a limiter
// per thread).
#pragma once

#include <chrono>

#include <capnp/dynamic.h>

#include "shared/rpc/message.h"
#include "shared/status.h"

namespace pvfs::rpc {

// `body`: the service's Request (its union names the operation).
void log_request(InMessage& message, capnp::DynamicStruct::Reader body, const Status& outcome,
                 std::chrono::steady_clock::duration took);

// The name of the request's operation ("write", "lookup"), or "unknown".
std::string request_name(capnp::DynamicStruct::Reader body);

}  // namespace pvfs::rpc
