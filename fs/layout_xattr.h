// The text form of layouts shown and set through the virtual xattr
// user.pvfs.layout (and pvfs-ctl getstripe/setstripe):
//   "stripe_size=1048576 stripe_count=4 servers=2,3,0,1"
// For a directory policy, 0 and an empty server list mean "cluster default".
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "shared/layout.h"
#include "shared/status.h"

namespace pvfs {

std::string format_layout(const Layout& layout);
std::string format_policy(const LayoutPolicy& policy);
// Accepts keys in any order, each at most once, separated by spaces or
// commas-free whitespace; missing keys are 0/empty. Errors: invalid_argument
// naming the bad part.
Result<LayoutPolicy> parse_policy(std::string_view text);

}  // namespace pvfs
