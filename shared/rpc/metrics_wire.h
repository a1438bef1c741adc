// Metric families (shared/metrics) to and from their Cap'n Proto form
// (common.capnp MetricFamily), for the metrics replies of both services.
// Pure; thread-safe. Readers may throw kj::Exception on malformed input
// (callers outside a service dispatch catch it).
#pragma once

#include <string>
#include <vector>

#include <capnp/schema.h>

#include "shared/metrics/metrics.h"
#include "shared/proto/common.capnp.h"

namespace pvfs::rpc {

// Fills `list`, which must have exactly families.size() elements.
void to_wire(const metrics::Families& families, capnp::List<proto::MetricFamily>::Builder list);

// The families of a metrics reply; unknown types (a newer daemon) read as gauges.
metrics::Families from_wire(capnp::List<proto::MetricFamily>::Reader list);

// The names of the members of `schema`'s union, indexed by discriminant
// (which()), in snake_case ("readFragment" -> "read_fragment"): the request
// type labels of shared/metrics RequestStats.
std::vector<std::string> union_names(capnp::StructSchema schema);

}  // namespace pvfs::rpc
