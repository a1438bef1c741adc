// setLayout (pvfs-ctl layout set): a directory's policy for new files, or a
// new layout for an empty regular file, checked against the cluster first.
#include "mds/handlers/call.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include "shared/request_limits.h"
#include "shared/rpc/convert.h"
#include "shared/rpc/frame.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> set_layout(Call& c) {
  auto r = c.req.getSetLayout();
  InodeId ino(r.getIno());
  LayoutPolicy policy = rpc::from_wire(r.getPolicy());
  // A stripe must be whole pages and fit in one storage request (rpc/frame.h).
  if (policy.stripe_size % 4096 != 0 || policy.stripe_size > rpc::kMaxDataBytes)
    co_return Status(Errc::invalid_argument, fmt::format("stripe size {} is not a multiple of 4096 up to {}",
                                                         policy.stripe_size, rpc::kMaxDataBytes));
  if (policy.servers.size() > kMaxStripeCount || policy.stripe_count > kMaxStripeCount)
    co_return Status(Errc::invalid_argument,
                     fmt::format("layout policy names {} servers and {} stripes; the limit is {}",
                                 policy.servers.size(), policy.stripe_count, kMaxStripeCount));
  // A layout naming a server the cluster lacks would make every create
  // under it fail later; refuse it now, when the user can see why.
  if (Status st = check_policy(policy, c.mds.cluster_servers()); !st.ok()) co_return st;
  auto s = c.at(ino.value);
  if (!s) co_return s.status();
  auto attr = (*s)->getattr(ino);
  if (!attr) co_return attr.status();
  if (S_ISDIR(attr->mode)) co_return c.attr_or((*s)->set_layout_policy(c.caller, ino, policy));
  if (!S_ISREG(attr->mode)) co_return Status(Errc::invalid_argument, "only files and directories have layouts");
  Layout layout = c.mds.layout_for_policy(policy);
  if (!layout.valid()) co_return Status(Errc::invalid_argument, "no live storage server matches that layout");
  co_return c.attr_or((*s)->set_file_layout(c.caller, ino, layout));
}

}  // namespace pvfs::mds::handlers
